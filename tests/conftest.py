"""Shared pytest setup.

Hypothesis profiles: "ci" (small budgets; loaded when the environment variable CI is set),
"dev" (the default, more examples) and "thorough" (bug hunting); HYPOTHESIS_PROFILE=name or
pytest's --hypothesis-profile=name picks one explicitly. Test files that pass their own
``@settings(...)`` keep them; the profile only sets what a test leaves unset.

``NDENGINE_TEST_CONTEXT=gpu``: the whole run places arrays on ``gpu(0)`` by default (MXNet's
``set_default_context``: the CPU tests run again on a GPU): the real GPU when CuPy finds one,
else a fake GPU (NumPy standing in for CuPy, ndengine/engine/devices.py).

``NDENGINE_TEST_ENGINES=A,B``: the engines ``nd_engine`` runs each test under (default: all
three).

``nd_engine``: runs a test under each of the three engines (a fresh engine with two CPU
workers, made the process-wide one for the test). The NDArray test modules use it for every
test (``pytestmark = pytest.mark.usefixtures("nd_engine")``).
"""
import os

import pytest
from hypothesis import HealthCheck, settings

import ndengine
from ndengine import engine as _engine
from ndengine.ops.runtime import compile_log as _compile_log

# the suite's compiles pass a second early: the once-per-process CompileTimeNotice would land in
# whichever test's warnings record is open then (tests/ops/test_compile_log.py tests it)
_compile_log.NOTICE_AFTER_SECONDS = float("inf")

settings.register_profile(
    "ci", max_examples=10, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                           HealthCheck.data_too_large])
# dev: the README's test command without CI set (two pytest workers, -n 2); 40 examples keep
# the default suite at about 7 minutes on a 2-core machine (about 12 on one worker)
settings.register_profile(
    "dev", max_examples=40, deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                           HealthCheck.data_too_large])
settings.register_profile(
    "thorough", max_examples=400, deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                           HealthCheck.data_too_large])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI")
                                                                else "dev"))

# Element-wise signatures run NumPy's loop until their Numba loop is worth compiling
# (ops/runtime/deferred_loops.py; users' default: after 16 calls). Tests call most signatures a few
# dozen times at most: from the 64th call on, a cold run compiles the ~50 signatures tests
# use often instead of ~230. Each Numba loop is checked against NumPy's ufunc in
# test_ops_deferred_loops.py. NDENGINE_JIT_AFTER set in the environment wins.
if "NDENGINE_JIT_AFTER" not in os.environ:
    from ndengine.ops.runtime import deferred_loops as _deferred_loops
    _deferred_loops.set_jit_after(64)

ENGINE_KINDS = tuple(os.environ.get("NDENGINE_TEST_ENGINES", "").split(",")) \
    if os.environ.get("NDENGINE_TEST_ENGINES") else \
    ("NaiveEngine", "ThreadedEnginePooled", "ThreadedEnginePerDevice")

TEST_CONTEXT = os.environ.get("NDENGINE_TEST_CONTEXT", "cpu")
if TEST_CONTEXT == "gpu":
    from ndengine.engine import devices as _devices
    if _devices.device_count() == 0:
        _devices.use_fake_gpus(1)
    _engine.set_default_context(_engine.gpu(0))
elif TEST_CONTEXT != "cpu":
    raise ValueError(f"NDENGINE_TEST_CONTEXT must be cpu or gpu, got {TEST_CONTEXT!r}")


def pytest_collection_modifyitems(config, items):
    """On a GPU run, the tests of CPU-only behaviour (marked ``cpu_only``) are skipped."""
    if TEST_CONTEXT == "cpu":
        return
    skip = pytest.mark.skip(reason="CPU-only behaviour (NDENGINE_TEST_CONTEXT=gpu)")
    for item in items:
        if item.get_closest_marker("cpu_only"):
            item.add_marker(skip)


@pytest.fixture(params=ENGINE_KINDS)
def nd_engine(request):
    """A fresh engine of each kind as the process-wide engine for the test; afterwards every
    pushed op must have finished cleanly (an error nobody waited for fails the test)."""
    eng = _engine.create(request.param, num_cpu_workers=2)
    prev = _engine.set_engine(eng)
    failed = None
    try:
        yield eng
    finally:
        try:
            ndengine.waitall()
        except BaseException as exc:  # noqa: B902 - reported below, after cleanup
            failed = exc
        try:
            ndengine.waitall()  # a second waitall must always be clean
        except BaseException as exc:  # noqa: B902
            failed = failed or AssertionError(f"second waitall raised {exc!r}")
        _engine.set_engine(prev)
        eng.notify_shutdown()
    if failed is not None:
        pytest.fail(f"{request.param}: an error was left on the engine after the test: "
                    f"{type(failed).__name__}: {failed}", pytrace=False)


@pytest.fixture
def no_waits(monkeypatch):
    """Reading an NDArray's values (a wait) fails the test until ``no_waits.undo()``: the
    functions called meanwhile must return at once."""
    def boom(self, *args, **kwargs):
        raise AssertionError("waited for an NDArray's values")
    monkeypatch.setattr(ndengine.NDArray, "asnumpy", boom)
    monkeypatch.setattr(ndengine.NDArray, "wait_to_read", boom)
    return monkeypatch
