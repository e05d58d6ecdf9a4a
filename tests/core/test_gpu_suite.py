"""The NumPy-differential test modules, run again with every array on a GPU: the real one
when CuPy finds a GPU, else a fake one (NumPy standing in for CuPy, the same GPU code path:
kernels from ops/gpu/*.py, streams, events, copies). One engine, the per-device one, which is
the engine of GPUs (the engine's own rules are tested under all three on the CPU)."""
import glob
import os
import subprocess
import sys

import pytest

MODULES = ["test_ndarray_operators.py", "test_ndarray_functions.py", "test_ufuncs_elementwise.py",
           "test_ufuncs_functions.py", "test_ufuncs_examples.py", "test_stats_reductions.py",
           "test_stats_ops.py", "test_sorting_search.py", "test_linalg_functions.py",
           "test_fft_functions.py", "test_extended_dtypes.py", "test_shaping_views.py",
           "test_shaping_pushed.py", "test_ndarray_indexing.py", "test_random_generator.py",
           "test_gpu_arrays.py", "test_autograd.py", "test_autograd_rules.py",
           "test_autograd_numeric.py", "test_autograd_hypothesis.py",
           "test_functions_api.py", "test_numpy_scripts.py", "test_random_safety.py",
           "test_array_api_namespace.py", "test_stats_distributions.py",
           "test_stats_async.py", "test_reliability_bad_inputs.py"]
TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _module_paths():
    """Each module's path: the modules live in the folders of the package they test."""
    paths = {os.path.basename(p): p for p in glob.glob(os.path.join(TESTS, "*", "test_*.py"))}
    missing = sorted(set(MODULES) - set(paths))
    assert not missing, f"no such test modules: {missing}"
    return [paths[m] for m in MODULES]


def _workers():
    """pytest-xdist's options for the rerun: two processes (this one only waits for them)."""
    try:
        import xdist  # noqa: F401 - the test extra installs it
    except ImportError:
        return []
    return ["-n", "2"]


def test_the_differential_modules_pass_on_a_gpu():
    env = dict(os.environ, NDENGINE_TEST_CONTEXT="gpu",
               NDENGINE_TEST_ENGINES="ThreadedEnginePerDevice", CI="1")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", *_workers(),
         *_module_paths()],
        cwd=os.path.dirname(TESTS), env=env, capture_output=True, text=True, timeout=1800)
    tail = "\n".join(done.stdout.splitlines()[-30:])
    if done.returncode != 0:
        pytest.fail(f"the GPU run failed:\n{tail}\n{done.stderr[-2000:]}", pytrace=False)
    assert " passed" in tail
