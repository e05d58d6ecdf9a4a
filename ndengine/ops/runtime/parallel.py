"""How large kernels use every core, safely while several engine workers run at once.

Numba kernels: the engine runs kernels from several worker threads at once, and
users fork worker processes (``multiprocessing``) after large ops.  Only Numba's
TBB layer is safe under both.  Numba's "workqueue" layer aborts the process when
two threads enter ``parallel=True`` code at once, and GNU OpenMP ("omp") spins
against the engine's workers and makes a forked child that runs a parallel
kernel terminate ("fork() called from a process already using GNU OpenMP").

The ``tbb`` wheel puts ``libtbb.so.12`` in the environment's ``lib/`` folder,
which the loader does not search in a virtual environment, so Numba would fall
back to OpenMP.  On import we therefore load that library ourselves (by path,
RTLD_GLOBAL, so Numba's ``tbbpool`` finds it) and ask Numba for TBB first and
the workqueue second, never OpenMP.  If TBB cannot be loaded, the first large op
warns once (``TBBUnavailableWarning``) and Numba kernels run serially (the
workqueue cannot run concurrently); NumPy-backed kernels still split.  A layer
the user chose (``NUMBA_THREADING_LAYER``, ``NUMBA_THREADING_LAYER_PRIORITY``)
is respected.

Sharing the cores: ``run_parallel`` and ``split_run`` count the threads inside a
large kernel at once (``active_parallel_calls``) and give each caller
``cores // callers`` threads, so engine workers x intra-op threads stay within
the core count; a large op that runs alone still uses every core.

Kernels that call NumPy (``split_run``): NumPy releases the GIL inside a ufunc
loop, so a large call is split into one contiguous chunk per share of the
cores, run at the same time on the helper threads, the calling thread doing one
chunk itself.  Concurrent callers are safe (the chunk calls are independent and
share nothing but the helpers), and element-wise results equal a single call's,
bit for bit.

The helper threads (``run_each``): one group of ``cpu_count() - 1`` threads for the
whole process, which runs the chunks of split calls and the blocks of fused programs
(``fusion/blocks``) alike, each item under its caller's NumPy error state; a forked
child starts a group of its own.

State: ``tbb_status`` (how loading TBB went, for the warning and for users),
``_enabled`` (None until the first large op decides), ``_active_calls`` (threads
inside a large kernel now), ``_local.threads`` (the Numba thread count last set
in this thread), ``_helpers`` (the helper threads).
"""
from __future__ import annotations

import ctypes
import os
import queue
import sys
import threading
import warnings

import numba

from ...engine import hold_across_fork
from .fp_status import current_state as _fp_current_state, run_under as _fp_run_under

# Element counts from which a kernel is worth spreading over all cores:
# below this, waking the thread pool costs more than it saves.
PARALLEL_MIN_SIZE = 1 << 18

# Numba's TBB layer needs TBB_INTERFACE_VERSION >= 12060 (oneTBB 2021.6); see
# numba.np.ufunc.parallel._check_tbb_version_compatible.
TBB_MIN_INTERFACE_VERSION = 12060
_TBB_SONAME = {"win32": "tbb12.dll", "darwin": "libtbb.12.dylib"}.get(sys.platform, "libtbb.so.12")
_NUMBA_DEFAULT_PRIORITY = ["tbb", "omp", "workqueue"]
_OUR_PRIORITY = ["tbb", "workqueue", "omp"]  # omp last: "workqueue" always loads


class TBBUnavailableWarning(RuntimeWarning):
    """Numba's TBB layer could not be loaded: large ops run Numba kernels serially."""


def _tbb_candidates() -> list[str]:
    """Paths where the ``tbb`` wheel may have put the library, best first."""
    paths = []
    try:
        from importlib import metadata
        files = metadata.files("tbb") or []
        paths += [str(f.locate()) for f in files if f.name == _TBB_SONAME]
    except Exception:  # noqa: BLE001 - tbb not installed, or odd metadata
        pass
    lib_dir = os.path.join("Library", "bin") if os.name == "nt" else "lib"
    for prefix in (sys.prefix, sys.exec_prefix, sys.base_prefix):
        paths.append(os.path.join(prefix, lib_dir, _TBB_SONAME))
    return [os.path.realpath(p) for p in dict.fromkeys(paths) if os.path.isfile(p)]


def _load_tbb() -> str:
    """Loads libtbb for Numba; returns how it went ("ok: PATH" or the reason it did not)."""
    try:  # already on the loader's path (conda, system TBB, LD_LIBRARY_PATH)
        lib = ctypes.CDLL(_TBB_SONAME, mode=ctypes.RTLD_GLOBAL)
        where = _TBB_SONAME
    except OSError:
        lib = where = None
        reasons = []
        for path in _tbb_candidates():
            try:
                lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
                where = path
                break
            except OSError as exc:
                reasons.append(str(exc))
        if lib is None:
            return ("not found: " + "; ".join(reasons) if reasons else
                    f"{_TBB_SONAME} is neither on the loader's path nor in the 'tbb' package")
    try:
        version_of = lib.TBB_runtime_interface_version
        version_of.restype = ctypes.c_int
        version = version_of()
    except AttributeError:
        return f"{where} has no TBB_runtime_interface_version"
    if version < TBB_MIN_INTERFACE_VERSION:
        return (f"{where} has TBB_INTERFACE_VERSION {version}; Numba needs "
                f">= {TBB_MIN_INTERFACE_VERSION} (pip install 'tbb>=2021.6')")
    return f"ok: {where} (interface {version})"


def _request_layer() -> str:
    """Loads TBB and points Numba at TBB, then the workqueue (never OpenMP) unless the
    user chose a layer; returns how loading TBB went."""
    status = _load_tbb()
    user_chose = (numba.config.THREADING_LAYER != "default"
                  or "NUMBA_THREADING_LAYER_PRIORITY" in os.environ
                  or list(numba.config.THREADING_LAYER_PRIORITY) != _NUMBA_DEFAULT_PRIORITY)
    if not user_chose:
        numba.config.THREADING_LAYER_PRIORITY = list(_OUR_PRIORITY)
    return status


tbb_status = _request_layer()
_USER_LAYER = numba.config.THREADING_LAYER != "default" or (
    list(numba.config.THREADING_LAYER_PRIORITY) != _OUR_PRIORITY)

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
    if not _USER_LAYER:  # a config reload (NUMBA_* variables changed) may have reset it
        numba.config.THREADING_LAYER_PRIORITY = list(_OUR_PRIORITY)
    try:
        from numba.np.ufunc.parallel import _launch_threads
        _launch_threads()
        layer = numba.threading_layer()
    except Exception as exc:  # noqa: BLE001 - no layer could be loaded: stay serial
        warnings.warn(f"ndengine: no Numba threading layer could be loaded ({exc}); large ops "
                      "run Numba kernels serially", TBBUnavailableWarning, stacklevel=3)
        return False
    if layer in ("tbb", "omp"):  # omp only when the user asked for it
        return True
    warnings.warn(
        f"ndengine: Numba's TBB threading layer is unavailable ({tbb_status}); Numba uses "
        f"'{layer}', which cannot run kernels from several threads at once, so large ops run "
        "Numba kernels serially. Install TBB for parallel kernels: pip install 'tbb>=2021.6'",
        TBBUnavailableWarning, stacklevel=3)
    return False


# ------------------------------------------------------------- sharing the cores

_NUMBA_THREADS = max(1, int(numba.config.NUMBA_NUM_THREADS))
_active_calls = 0
_active_lock = threading.Lock()
_local = threading.local()


def active_parallel_calls() -> int:
    """Threads inside a large kernel (``run_parallel`` or ``split_run``) right now."""
    return _active_calls


def _enter(total: int) -> int:
    """Counts this thread in; returns its share of ``total`` threads (at least 1).
    Re-entrant: a nested call (``split_run`` inside ``run_parallel``) keeps the outer share."""
    global _active_calls
    depth = getattr(_local, "depth", 0)
    _local.depth = depth + 1
    if depth:
        return max(1, total * _local.share_num // _local.share_den)
    with _active_lock:
        _active_calls += 1
        callers = _active_calls
    _local.share_num, _local.share_den = 1, callers
    return max(1, total // callers)


def _leave() -> None:
    global _active_calls
    _local.depth -= 1
    if not _local.depth:
        with _active_lock:
            _active_calls -= 1
        _chunk_slots.forget(threading.get_ident())  # what an interrupt left taken (CoreSlots)


def run_parallel(kernel, *args):
    """``kernel(*args)`` for a Numba ``parallel=True`` kernel, on this thread's share of the
    cores: ``NUMBA_NUM_THREADS // (threads inside a large kernel now)``, at least 1."""
    threads = _enter(_NUMBA_THREADS)
    try:
        if getattr(_local, "threads", None) != threads:
            numba.set_num_threads(threads)  # per calling thread in Numba
            _local.threads = threads
        return kernel(*args)
    finally:
        _leave()


def use_parallel(size: int) -> bool:
    return size >= PARALLEL_MIN_SIZE and parallel_enabled()


def share_cores(kernel):
    """``kernel`` (a Numba ``parallel=True`` kernel) as a function that runs it through
    ``run_parallel``, for LoopKernels built once and called at many sites."""
    def shared(*args):
        return run_parallel(kernel, *args)
    shared.kernel = kernel
    return shared


# ------------------------------------------------------ splitting NumPy calls

_CPU_COUNT = max(1, os.cpu_count() or 1)
_SPLIT_ALIGN = 1024  # chunk boundaries at multiples of this many elements (whole cache lines)

class CoreSlots:
    """At most ``count`` chunks run at once in the process (a slot per core), safe against a
    KeyboardInterrupt at any bytecode. ``threading.BoundedSemaphore`` is not: its acquire is
    Python code, and a Ctrl-C landing inside it, after the count went down, took a slot for
    good; two such and every later split call waited forever (a Ctrl-C storm hung NaiveEngine,
    whose ops run in the main thread, the one Python interrupts). Here a slot is taken by one
    C-level call, appending the taker's thread id to ``holders``, under a C lock (``with`` on a
    C lock cannot leave it held). An interrupt between that append and the ``try`` that gives
    the slot back leaves a record naming its thread, and ``forget(thread)``, called when the
    thread leaves its outermost large kernel (where it holds no slot), gives it back. Waits poll
    (``_POLL`` s), so a wake-up lost to an interrupt costs time, never a hang.

    State: ``holders``, one thread id per slot taken (at most ``count``), read and written
    under ``_lock`` only."""

    _POLL = 0.05

    def __init__(self, count: int):
        self.count = count
        self.holders: list = []
        self._lock = threading.Lock()
        self._freed = threading.Condition(self._lock)

    def take(self, me: int) -> None:
        with self._lock:
            while len(self.holders) >= self.count:
                self._freed.wait(self._POLL)
            self.holders.append(me)

    def give(self, me: int) -> None:
        with self._lock:
            self.holders.remove(me)
            self._freed.notify()

    def forget(self, me: int) -> None:
        """Give back every slot ``me`` still holds (it holds none by now: those leaked)."""
        with self._lock:
            if me in self.holders:
                self.holders[:] = [holder for holder in self.holders if holder != me]
                self._freed.notify_all()


_chunk_slots = CoreSlots(_CPU_COUNT)


def cpu_count() -> int:
    """The cores large kernels spread over (``os.cpu_count()``, at least 1)."""
    return _CPU_COUNT


class _Task:
    """One item handed to helper threads: whoever takes ``claim`` first runs it (a helper, or
    the caller taking back what no helper started); ``done`` is released once a helper ran it."""

    # fp_state, owner: the caller's NumPy error state and thread (fp_status.run_under: a
    # helper runs its part of the caller's op under the op's state, its reports the caller's)
    __slots__ = ("fn", "item", "claim", "done", "error", "fp_state", "owner")

    def __init__(self, fn, item):
        self.fn = fn
        self.item = item
        self.claim = threading.Lock()
        self.done = threading.Lock()
        self.done.acquire()
        self.error = None
        self.fp_state = _fp_current_state()
        self.owner = threading.get_ident()

    def run(self):
        try:
            _fp_run_under(self.fp_state, self.owner, self.fn, self.item)
        except BaseException as exc:  # noqa: B902 - re-raised by the caller of run_each
            self.error = exc


def _serve(tasks):
    while True:
        task = tasks.get()
        if task.claim.acquire(False):
            task.run()
            task.done.release()


class HelperThreads:
    """Up to ``count`` daemon threads, started at first use, that run what ``run_each`` hands
    them. Not concurrent.futures' ThreadPoolExecutor: its ``submit`` takes a lock that its own
    fork handler holds across ``os.fork()``, so an op submitting work while another thread
    forks blocks there, and a fork that waits for that op never returns. Nothing here takes a
    lock that a fork handler holds."""

    def __init__(self, name: str, count: int):
        self.name = name
        self.count = max(1, count)
        self._reset()

    def _reset(self) -> None:
        """Forget the threads (a forked child has none of them) and what was handed to them."""
        self._tasks = queue.SimpleQueue()
        self._started = False
        self._start_lock = threading.Lock()

    def _start(self) -> bool:
        with self._start_lock:
            if not self._started:
                try:
                    for i in range(self.count):
                        threading.Thread(target=_serve, args=(self._tasks,), daemon=True,
                                         name=f"{self.name}-{i}").start()
                except RuntimeError:  # interpreter shutting down: the caller runs it all
                    return False
                self._started = True
        return True

    def run_each(self, fn, items) -> None:
        """``fn(item)`` for every item: the first in this thread, the others on the helpers,
        except those no helper has started when this thread is done with its own (it runs
        them: a busy group, or a forked child's, costs time, never a hang). Returns when every
        item has run, even if one raised; re-raises the first error in item order, and skips
        the items not yet started once an error is known."""
        tasks = [_Task(fn, item) for item in items[1:]]
        if tasks and (self._started or self._start()):
            for task in tasks:
                self._tasks.put(task)
        error = None
        try:
            fn(items[0])
        except BaseException as exc:  # noqa: B902 - re-raised once every item is done
            error = exc
        for task in tasks:
            if task.claim.acquire(False):  # no helper started it: run it here
                if error is None:
                    task.run()
            else:
                task.done.acquire()
            if error is None:
                error = task.error
        if error is not None:
            raise error


_helpers = HelperThreads("ndengine-helper", _CPU_COUNT - 1)


def run_each(fn, items) -> None:
    """``fn(item)`` for every item at once: the first in this thread, the others on the
    process's helper threads (``HelperThreads.run_each``: returns when all have run, re-raises
    the first error, never waits for a helper that has not started)."""
    _helpers.run_each(fn, items)


def _forget_threads_in_child() -> None:
    # A forked child has the helpers' objects but none of their threads, and none of the
    # other threads that were inside a large kernel: start afresh.
    global _lock, _active_calls, _active_lock, _chunk_slots
    _lock = threading.Lock()
    _helpers._reset()
    _active_calls = 0
    _active_lock = threading.Lock()
    _chunk_slots = CoreSlots(_CPU_COUNT)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_threads_in_child)
# Numba's compiler lock, held across the fork: a child forked while another thread was
# compiling a kernel would otherwise inherit it locked and hang at its first compile. Taken by
# the engine's fork handler after it waited for the forking thread's ops, which may need it.
from numba.core.compiler_lock import global_compiler_lock as _compiler_lock  # noqa: E402
hold_across_fork(_compiler_lock.acquire, _compiler_lock.release)


def split_parts(size: int, callers: int = 1) -> int:
    """How many chunks ``split_run`` cuts ``size`` elements into (1: no split) while
    ``callers`` threads (this one included) are inside a large kernel."""
    if size < PARALLEL_MIN_SIZE or _CPU_COUNT == 1:
        return 1
    return max(1, min(_CPU_COUNT // callers, size // _SPLIT_ALIGN))


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
    if size < PARALLEL_MIN_SIZE or _CPU_COUNT == 1:
        fn(*arrays)
        return
    share = _enter(_CPU_COUNT)
    try:
        parts = min(share, size // _SPLIT_ALIGN)
        if parts <= 1:
            _run_chunk(fn, arrays)
        else:
            _split_run(fn, arrays, size, parts)
    finally:
        _leave()


def _run_chunk(fn, args) -> None:
    # A core slot per running chunk: callers that entered at once cannot together run
    # more chunks than there are cores (a share is fixed on entry; slots hold at every moment).
    me = threading.get_ident()
    _chunk_slots.take(me)
    try:
        fn(*args)
    finally:
        _chunk_slots.give(me)


def _split_run(fn, arrays, size: int, parts: int) -> None:
    step = -(-size // parts)
    step = -(-step // _SPLIT_ALIGN) * _SPLIT_ALIGN
    chunks = [[a[lo:lo + step] for a in arrays] for lo in range(0, size, step)]
    run_each(lambda args: _run_chunk(fn, args), chunks)
