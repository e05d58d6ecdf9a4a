"""Choose a Numba threading layer that survives concurrent calls.

The engine runs kernels from several worker threads at once.  Numba's default
"workqueue" layer is not thread-safe: two threads entering ``parallel=True``
code at the same time abort the whole process.  TBB ("safe") and OpenMP
("threadsafe") are safe under concurrent calls, so we ask for one of them
before any parallel kernel runs.  If neither loads, large ops use the serial
kernels instead of risking a crash.
"""
from __future__ import annotations

import threading

import numba

# Element counts from which a kernel is worth spreading over all cores:
# below this, waking the thread pool costs more than it saves.
PARALLEL_MIN_SIZE = 1 << 18

_SAFE_LAYERS = ("safe", "threadsafe", "tbb", "omp")


def _request_safe_layer() -> None:
    if numba.config.THREADING_LAYER in _SAFE_LAYERS:
        return  # the user already chose a safe layer (e.g. NUMBA_THREADING_LAYER=tbb)
    try:
        from numba.np.ufunc import tbbpool  # noqa: F401  (loads libtbb, checks its version)
        numba.config.THREADING_LAYER = "safe"
    except Exception:
        numba.config.THREADING_LAYER = "threadsafe"


_request_safe_layer()

_lock = threading.Lock()
_enabled: bool | None = None


def parallel_enabled() -> bool:
    """True once a thread-safe layer is running; decided on first use."""
    global _enabled
    if _enabled is None:
        with _lock:
            if _enabled is None:
                _enabled = _launch_safe_layer()
    return _enabled


def _launch_safe_layer() -> bool:
    try:
        from numba.np.ufunc.parallel import _launch_threads
        _launch_threads()
        return numba.threading_layer() in ("tbb", "omp")
    except Exception:  # no safe layer could be loaded: stay serial
        return False


def use_parallel(size: int) -> bool:
    return size >= PARALLEL_MIN_SIZE and parallel_enabled()
