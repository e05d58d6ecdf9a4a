#!/usr/bin/env bash
# Everything that needs a real GPU, in one run (a machine with CUDA, CuPy and pytest-xdist):
#   bash bench/gpu_check.sh [OUT_DIR]
# 1. the whole test suite with every array on gpu(0) (NDENGINE_TEST_CONTEXT=gpu), in parallel;
# 2. bench/gpu.py (ratios to CuPy); 3. the quickstart demo on gpu(0) against NumPy on the CPU.
# Logs go to OUT_DIR (default: the current folder).
set -uo pipefail
out=${1:-.}
mkdir -p "$out"
here=$(cd "$(dirname "$0")/.." && pwd)
export PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
workers=$(python3 -c "import os; print(max(1, min(12, (os.cpu_count() or 2) - 2)))")
echo "== 1. the test suite on gpu(0) ($workers processes)"
NDENGINE_TEST_CONTEXT=gpu CI=1 python3 -m pytest -q -p no:cacheprovider -n "$workers" \
    "$here/tests" --deselect "$here/tests/project/test_packaging.py" 2>&1 | tee "$out/gpu_tests.log" | tail -15
echo "== 2. bench/gpu.py"
(cd "$here/bench" && python3 gpu.py 2>&1 | tee "$out/gpu_bench.log")
echo "== 3. the demo on gpu(0)"
python3 -m ndengine --ctx 'gpu(0)' --out "$out/demo" 2>&1 | tail -4 | tee "$out/gpu_demo.log"
