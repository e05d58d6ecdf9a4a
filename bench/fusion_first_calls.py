"""The first calls of fused programs in a new process, with a cold then a warm cache directory.

    python bench/fusion_first_calls.py [--quick] [--calls 12]

Each run is a fresh subprocess (NDENGINE_CACHE_DIR set to one temporary directory for both):
the workload is 2 light chains x 10 x (a*1.0001+0.5) on 20M float32 (``fusion_targets``'
"affine"), run ``--calls`` times, each call timed to its results.  The first run finds an
empty cache (kernels compiled, evaluators measured); the second finds what the first left
(kernels loaded from disk, and the evaluator kept per program).  Printed per run: calls 1-5
in ms, the steady state (median of the calls from the 6th on), the ratio of calls 1-3's mean
to it (target: <= 2 with a warm cache), and the evaluator runs the fused programs made
("tries": blocked-evaluator runs of a program whose compiled kernel is chosen, and the
reverse).  Also printed: the time to first touch fresh memory of the outputs' size in that
process (a first call writes its outputs into fresh pages: a floor for call 1 that the
steady state, reusing memory, does not pay).  NumPy's time of the same body is printed for scale.
--quick divides the size by 10 (a smoke run, figures not comparable to the target).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fusion_targets import affine  # noqa: E402

TARGET = 2.0    # calls 1-3 / steady state, warm cache
FIRST = 3       # the calls the target is about
SHOWN = 5       # the calls printed one by one
TIMEOUT = 600

CHILD = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    sys.path.insert(0, {bench!r})
    from fusion_targets import affine
    import ndengine as nd
    from ndengine.ops.fusion import kernel as fusion
    rng = np.random.default_rng(0)
    n, calls = {n}, {calls}
    start = time.perf_counter()
    np.ones(2 * n, np.float32)  # fresh memory of the outputs' size (freed: mmap'd, returned)
    first_touch = time.perf_counter() - start
    a0, b0 = rng.random(n, np.float32), rng.random(n, np.float32)
    times = []
    for _ in range(calls):
        a, b = nd.array(a0), nd.array(b0)
        nd.waitall()
        start = time.perf_counter()
        for r in affine(nd, a, b):
            r.wait_to_read()
        times.append(time.perf_counter() - start)
    stats = fusion.stats()
    runs = {{}}
    for report in stats["kernels"].values():
        for name, count in report["runs"].items():
            runs[name] = runs.get(name, 0) + count
    print(json.dumps({{"times": times, "runs": runs, "first_touch": first_touch, "compiles": stats["compiles"],
                      "disk_loads": stats["disk_loads"]}}))
""")


def run_child(cache, n, calls):
    """One fresh process's call times (s) and its fused programs' evaluator runs."""
    env = dict(os.environ, NDENGINE_CACHE_DIR=cache)
    code = CHILD.format(bench=os.path.dirname(os.path.abspath(__file__)), n=n, calls=calls)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=TIMEOUT)
    if done.returncode:
        raise RuntimeError(f"the benchmark process failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def numpy_ms(n, repeat=3):
    rng = np.random.default_rng(0)
    a, b = rng.random(n, np.float32), rng.random(n, np.float32)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        affine(np, a, b)
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def report(label, result):
    times = [t * 1e3 for t in result["times"]]
    steady = statistics.median(times[SHOWN:])
    first = statistics.mean(times[:FIRST])
    calls = " ".join(f"{t:7.1f}" for t in times[:SHOWN])
    print(f"{label:6s} {calls}   {steady:7.1f}   {first / steady:6.2f}   "
          f"{result['runs']}  compiled {result['compiles']}, loaded {result['disk_loads']}; "
          f"first touch of the outputs' memory {result['first_touch'] * 1e3:.0f} ms")
    return first / steady


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--calls", type=int, default=12)
    args = parser.parse_args()
    if args.calls <= SHOWN:
        parser.error(f"--calls must be above {SHOWN} (the steady state is the calls after)")
    n = 20_000_000 // (10 if args.quick else 1)
    print(f"== first calls of fused programs: 2 chains x 10 x (a*1.0001+0.5), {n:,} float32, "
          f"{os.cpu_count()} cores")
    print(f"NumPy: {numpy_ms(n):.1f} ms a call")
    print(f"{'cache':6s} {'call 1':>7s} {'2':>7s} {'3':>7s} {'4':>7s} {'5':>7s}   "
          f"{'steady':>7s}   {'1-3/st':>6s}   evaluator runs")
    with tempfile.TemporaryDirectory(prefix="ndengine-first-calls-") as cache:
        report("cold", run_child(cache, n, args.calls))
        ratio = report("warm", run_child(cache, n, args.calls))
    print(f"warm calls 1-{FIRST} / steady state: {ratio:.2f} (target <= {TARGET:g}): "
          f"{'PASS' if ratio <= TARGET else 'MISS'}")


if __name__ == "__main__":
    main()
