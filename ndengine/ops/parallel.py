"""How large kernels use every core, safely while several engine workers run at once.

Numba kernels: the engine runs kernels from several worker threads at once.
Numba's default "workqueue" layer is not thread-safe: two threads entering
``parallel=True`` code at the same time abort the whole process.  TBB ("safe")
and OpenMP ("threadsafe") are safe under concurrent calls, so we ask for one of
them before any parallel kernel runs.  If neither loads, large ops use the
serial kernels instead of risking a crash.

Kernels that call NumPy (``split_run``): NumPy releases the GIL inside a ufunc
loop, so a large call is split into one contiguous chunk per core, run at the
same time on a small shared thread pool, the calling thread doing one chunk
itself.  Concurrent callers are safe (the chunk calls are independent and share
nothing but the pool), and element-wise results equal a single call's, bit for bit.
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

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


# ------------------------------------------------------ splitting NumPy calls

_CPU_COUNT = max(1, os.cpu_count() or 1)
_SPLIT_ALIGN = 1024  # chunk boundaries at multiples of this many elements (whole cache lines)

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _get_pool() -> ThreadPoolExecutor:
    global _pool
    pool = _pool
    if pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(max_workers=_CPU_COUNT,
                                           thread_name_prefix="ndengine-split")
            pool = _pool
    return pool


def _forget_pool_in_child() -> None:
    # A forked child has the pool object but none of its threads: start afresh.
    global _pool, _pool_lock
    _pool = None
    _pool_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool_in_child)


def split_parts(size: int) -> int:
    """How many chunks ``split_run`` cuts ``size`` elements into (1: no split)."""
    if size < PARALLEL_MIN_SIZE or _CPU_COUNT == 1:
        return 1
    return min(_CPU_COUNT, size // _SPLIT_ALIGN)


def split_run(fn, arrays) -> None:
    """``fn(*arrays)`` for 1-D arrays of equal length, as ``fn`` on matching chunks at once.

    ``fn`` must be element-wise (chunk i of the output depends only on chunk i of
    the inputs) and release the GIL to gain anything (NumPy ufuncs do).  Returns
    only when every chunk is finished, even if one raised (the first error is
    re-raised), so the caller may release the buffers at once.  Chunks the pool
    has not started when the caller finishes its own are run by the caller, so a
    busy pool (many concurrent callers, or a forked child) costs time, never a hang.
    """
    size = len(arrays[-1])
    parts = split_parts(size)
    if parts <= 1:
        fn(*arrays)
        return
    step = -(-size // parts)
    step = -(-step // _SPLIT_ALIGN) * _SPLIT_ALIGN
    chunks = [[a[lo:lo + step] for a in arrays] for lo in range(0, size, step)]
    pending = []
    try:
        pool = _get_pool()
        for args in chunks[1:]:
            pending.append((pool.submit(fn, *args), args))
    except RuntimeError:  # interpreter shutting down: no new pool work; run the rest here
        pending += [(None, args) for args in chunks[1 + len(pending):]]
    error = None
    try:
        fn(*chunks[0])
    except BaseException as exc:  # noqa: BLE001 - re-raised once every chunk is done
        error = exc
    for future, args in pending:
        if future is None or future.cancel():  # not started: run it here
            if error is None:
                try:
                    fn(*args)
                except BaseException as exc:  # noqa: BLE001
                    error = exc
        else:
            exc = future.exception()  # waits for the chunk to finish
            if exc is not None and error is None:
                error = exc
    if error is not None:
        raise error
