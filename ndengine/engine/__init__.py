"""ndengine's dependency engine: MXNet's engine API in Python. Knows nothing about arrays.

Push functions with the vars they read and write; the engine runs them in parallel where the
vars allow and in push order where they conflict::

    from ndengine import engine
    eng = engine.create("ThreadedEnginePerDevice", num_cpu_workers=2)
    a, b = eng.new_variable(), eng.new_variable()
    eng.push_sync(lambda rc: ..., engine.cpu(), mutable_vars=[a])          # writes a
    eng.push_sync(lambda rc: ..., engine.cpu(), const_vars=[a], mutable_vars=[b])
    eng.wait_for_var(b)

Every engine takes the same calls:

    push_sync(fn, ctx, const_vars=(), mutable_vars=(), prop=NORMAL, priority=0, name=None,
              info=None, origin=None, overwrites=(), tolerant=False, work=1, throttle=True)
                                                          (push_async: fn(run_ctx, on_complete))
        info        profiler arguments for the run hook, or a callable returning them: a
                    hook calls it after the op ran (recording.py), so describing an op costs
                    nothing while no profiler is on.
        origin      where the push came from: None, a short string, (filename, line), or a
                    function returning one, called in the pushing thread only when needed
                    (``origin=caller_origin``: the first frame outside ndengine). When the op
                    fails, its error gets the note "raised by NAME, pushed at ORIGIN" (once
                    per exception object).
        overwrites  a subset of mutable_vars that the op overwrites completely (it must not
                    also read them). An op whose failed vars are all in ``overwrites`` (and
                    which reads no failed var) runs, and when it succeeds their error is gone.
        work        the queued work the op stands for (default 1; a window of ops pushed
                    as one gives more): back-pressure bounds the pending work, not the count
                    of ops (NDENGINE_MAX_PENDING, waits.py); ``throttle=False`` skips that
                    wait, for a push made under a lock: the caller then calls
                    ``wait_for_room()`` once it released the lock.
    wait_for_var(var), wait_for_all()
        An error raised by wait_for_var is not raised again by wait_for_all. A wait cut short
        by Ctrl-C raises KeyboardInterrupt with a note on how many ops are still queued.
    read_and_wait(fn, ctx, var, prop=ASYNC, name=None)
        Run fn(run_ctx), reading var, and wait for it: the wait ends once the ops pushed on var
        before it finished and it ran (not those other threads push meanwhile).
    cancel_pending() -> int
        Drop every op pushed so far that has not started; their outputs fail with `Cancelled`
        at the next wait. Returns about how many were dropped. ``cancel()`` below does it on
        the process-wide engine.
    delete_variable(delete_fn, ctx, var)
        Run delete_fn(run_ctx) once every op pushed on var has finished; var is unusable from
        now on. An idle CPU var is freed at once in the calling thread, without the engine lock.
        Safe from a garbage-collector finalizer at any moment, even one run inside the engine:
        a deletion that would need the lock while it is held is deferred, and the engine pushes
        it at its next push or wait.
    set_run_hook(hook) -> previous hook;  run_hook
        The profiler's entry: hook(name, ctx, reads, writes, info, start_ns, end_ns, failed) is
        called after every op run (recording.py). ``profiling = True`` installs the engine's
        own `Recorder`, read by ``take_records()``.

Placement is the only difference between the kinds (core.py): the NaiveEngine runs every op in
the pushing thread and raises its error at the push; the threaded engines run an ASYNC op ready
at its push in the pushing thread and everything else on worker pools (threaded.py).

Which error an op inherits when several of its vars failed: the earliest failure in push
order (`var.inherited_failure`), on every engine. Bad settings in the environment raise at
engine creation, naming the variable (config.py).

``get()`` is the cheap way to the process-wide engine (one global read once it exists).

Modules, in import order (each imports only those before it; no cycles):
    context.py      Context, RunContext, FnProperty.
    config.py       environment variables and worker counts.
    compiled.py     which core runs, compiled by Cython or pure Python (the same source);
                    decided here, before any module of the core is imported.
    errors.py       Cancelled, ForkedWhilePending, error notes and origins.
    var.py          the records: ThreadedVar, OprBlock, Operator, WAIT markers; the
                    dependency algorithm.
    transitions.py  the placement transitions every engine shares: normalizing a push,
                    claiming and releasing the vars of an op run inline, the failure rule.
    devices.py      GPUs, streams, events and the cross-stream order.
    recording.py    run hooks: OpRecord, Recorder, ``report``.
    threadstate.py  per-thread state: the executor a thread runs ops for, its pusher count.
    failures.py     `Failures`: unraised errors, ``any_failed``, cancellation.
    pools.py        `Pools`, `WorkerPool`, `Worker`: where ready blocks wait, run contexts,
                    GPU streams.
    executor.py     `Executor`: pushing and completing ops, running them at their push without
                    a block; the pending counters, back-pressure limits, sleepers, run hook.
    oncomplete.py   the on_complete of async ops.
    running.py      `Runner`: running a block (a worker's, or a pushing thread's).
    bulking.py      `Bulk`: the bulk size and the per-part failure rule of a bulk.
    deletions.py    `Deletions`: delete_variable and the deferred deletions.
    waits.py        `Waits`: wait_for_var, read_and_wait, wait_for_all, back-pressure waits.
    lifecycle.py    `Lifecycle`: cancel, shutdown, the fork wait; the forked child's vars.
    core.py         `EngineCore`: the engine API, composing the parts above (each owns its
                    state, documented field by field in its module).
    threaded.py     the pooled and per-device placements and their workers.
    naive.py        the run-in-the-pushing-thread placement.
    settings.py     `SettingsBlock`: run-time settings set now and restored by a with block
                    (``bulk`` below, ``ndengine.settings``).

Bulking at run time (MXNet's ``engine.bulk`` and ``engine.set_bulk_size``): ``with
engine.bulk(16): ...`` gathers up to 16 tiny ops per push inside the block, and restores the
previous size at its exit; ``bulk(1)`` pushes every op alone. Process-wide, for the
process-wide engine (settings.py says why); the NaiveEngine keeps 1.
"""
import atexit
import os
import sys
import threading
import warnings
import weakref

# First of all (config.py and compiled.py import only the standard library): which core runs,
# compiled or pure Python, decided before any of its modules is imported (compiled.py)
from .config import MAX_WORKERS, env_bool, env_choice, env_int
from . import compiled
compiled.choose(env_bool("NDENGINE_PURE_PYTHON", False))
from .context import (Context, FnProperty, RunContext, cpu, current_context, gpu,  # noqa: E402
                      set_default_context)
from .errors import Cancelled, ForkedWhilePending, caller_origin
from .core import default_stream_factory
from .lifecycle import fail_forked_vars, unraised_report
from .naive import NaiveEngine
from .recording import OpRecord, Recorder
from .settings import SettingsBlock
from .threaded import ThreadedEngine, ThreadedEnginePerDevice, ThreadedEnginePooled

__all__ = ["create", "get", "set_engine", "cancel", "Context", "cpu", "gpu",
           "current_context", "set_default_context", "RunContext", "FnProperty", "OpRecord", "Recorder", "NaiveEngine",
           "ThreadedEnginePooled", "ThreadedEnginePerDevice", "KINDS", "default_stream_factory",
           "Cancelled", "ForkedWhilePending", "caller_origin", "MAX_WORKERS", "hold_across_fork",
           "bulk", "set_bulk_size"]

KINDS = {
    "NaiveEngine": NaiveEngine,
    "ThreadedEnginePooled": ThreadedEnginePooled,
    "ThreadedEngine": ThreadedEnginePooled,  # MXNet's name for the pooled engine
    "ThreadedEnginePerDevice": ThreadedEnginePerDevice,
}

_engines = weakref.WeakSet()  # every live engine: drained at exit, repaired after fork
_global = None
_global_lock = threading.Lock()


def create(kind, **options):
    """A new, independent engine. ``kind`` is one of KINDS; options: num_cpu_workers,
    num_gpu_workers, num_copy_workers, stream_factory, max_pending.

    ``stream_factory(ctx, is_copy)`` makes the stream of one GPU worker (default: CuPy's, or
    a fake GPU's ``devices.FakeStream``). The stream protocol, what the engine calls on it:
    ``record()`` returns an event recorded after the work queued on the stream so far, whose
    ``synchronize()`` blocks the host until that work has run; ``wait_event(event)`` makes
    work queued afterwards wait for the event; ``synchronize()`` blocks the host until all
    its work has run. ``with stream:`` (CuPy's "current stream") is what array ops use.
    A factory that is not callable, or a class lacking a method, raises TypeError here; a
    stream lacking one raises TypeError naming it when the factory makes it, at the push
    that starts the worker's pool, before any op runs on it."""
    try:
        cls = KINDS[kind]
    except KeyError:
        raise ValueError(f"unknown engine kind {kind!r}; choose one of {sorted(KINDS)}") from None
    engine = cls(**options)
    _engines.add(engine)
    return engine


def get():
    """The process-wide engine, created on first use from the environment:
    NDENGINE_ENGINE_TYPE (default ThreadedEnginePerDevice), NDENGINE_CPU_WORKER_NTHREADS,
    NDENGINE_GPU_WORKER_NTHREADS and NDENGINE_MAX_PENDING (config.py). A bad value raises
    ValueError naming the variable. Cheap once it exists: call it per op."""
    return _global or _first_engine()


def _first_engine():
    global _global
    with _global_lock:
        if _global is None:
            _global = _from_environment()
        return _global


def _from_environment():
    kind = env_choice("NDENGINE_ENGINE_TYPE", KINDS, "ThreadedEnginePerDevice")
    options = {}
    for name, option in (("NDENGINE_CPU_WORKER_NTHREADS", "num_cpu_workers"),
                         ("NDENGINE_GPU_WORKER_NTHREADS", "num_gpu_workers")):
        value = env_int(name, minimum=1)
        if value is not None:
            if value > MAX_WORKERS:
                warnings.warn(f"environment variable {name}={value} is more threads than can "
                              f"help; using {MAX_WORKERS} (4 per core, at least 64)",
                              RuntimeWarning, stacklevel=3)
                value = MAX_WORKERS
            options[option] = value
    options["max_pending"] = env_int("NDENGINE_MAX_PENDING", 10000, minimum=1)
    return create(kind, **options)


def cancel():
    """Drop the queued (not started) ops of the process-wide engine; returns about how many.
    Their outputs fail with `Cancelled` at the next wait; the engine keeps working."""
    engine = _global
    return engine.cancel_pending() if engine is not None else 0


def bulk(size):
    """MXNet's ``engine.bulk``: ``with engine.bulk(size): ...`` makes the process-wide engine
    gather up to ``size`` tiny ops per push (an integer >= 1; 1 pushes each op alone, which
    also turns fusion off) and restores its previous bulk size at the block's exit. Applied
    at the call, so ``bulk(size)`` alone is a plain setter too. The NaiveEngine keeps 1."""
    engine = get()
    return SettingsBlock([(("bulk_size", engine), engine.set_bulk_size, size)])


def set_bulk_size(size):
    """MXNet's ``engine.set_bulk_size``: set the process-wide engine's bulk size (see
    `bulk`); returns the previous one."""
    return get().set_bulk_size(size)


def set_engine(engine):
    """Make ``engine`` the process-wide one (draining the previous one first); returns the
    previous engine, or None."""
    global _global
    with _global_lock:
        previous, _global = _global, engine
    if previous is not None and previous is not engine:
        previous._drain()
    return previous


@atexit.register
def _finish_at_exit():
    # Pending work finishes before the interpreter goes: no lost writes; the workers are
    # daemons, so nothing can hang on them once the work is done. Then the failures no wait
    # raised (what waitall would raise) are reported on stderr, one line each, as Python
    # reports an exception raised in a thread or an asyncio task's exception never retrieved:
    # the exit status stays the script's own.
    for engine in list(_engines):
        try:
            engine.notify_shutdown()
            for line in unraised_report(engine.take_unraised_errors()):
                print(line, file=sys.stderr)
        except BaseException:  # noqa: B902 - exit must not fail
            pass


# Fork (lifecycle.py, "Fork", says what the child gets). One fork at a time. Every engine first
# waits for the work the forking thread pushed, then the locks of ``hold_across_fork`` are
# taken, then every engine's lock: the waited-for work may need those locks, and a handler of
# their own (run in reverse registration order, so in an order that depends on imports) would
# hold them during the wait. The engines of the fork are remembered, so the after-fork handlers
# release exactly the locks taken.
_fork_lock = threading.Lock()
_forking = []
_held_across_fork = []  # (acquire, release), in registration order
_gave_up_waiting = []  # engines whose fork wait stopped before the forking thread's work ended


def hold_across_fork(acquire, release):
    """Have the engine's fork handler call ``acquire()`` after it waited for the forking
    thread's work, and ``release()`` after the fork, in the parent and in the child. For a lock
    that ops may need and that must not be held by another thread in the child (Numba's
    compiler lock): an ``os.register_at_fork`` handler of its own could hold it while the
    engine waits for an op that needs it, and the fork would never return."""
    _held_across_fork.append((acquire, release))


def _before_fork():
    _fork_lock.acquire()
    _forking[:] = list(_engines)
    _gave_up_waiting[:] = [engine for engine in _forking if not engine._wait_before_fork()]
    for acquire, _ in _held_across_fork:
        acquire()
    for engine in _forking:
        engine._lock_for_fork()


def _release_held_across_fork():
    for _, release in reversed(_held_across_fork):
        release()


def _after_fork_in_parent():
    for engine in _forking:
        engine._after_fork_in_parent()
    _release_held_across_fork()
    _forking.clear()
    gave_up, _gave_up_waiting[:] = list(_gave_up_waiting), []
    _fork_lock.release()
    for engine in gave_up:
        warnings.warn(
            f"os.fork() went on after the ops this thread pushed on {engine!r} made no "
            f"progress for {engine.FORK_STALL_SECONDS} s (blocked on a lock that a fork "
            "handler holds?); in the child their outputs raise ForkedWhilePending. Wait for "
            "them (ndengine.waitall()) before forking", RuntimeWarning, stacklevel=2)


def _after_fork_in_child():
    global _global_lock, _fork_lock
    _global_lock = threading.Lock()
    _fork_lock = threading.Lock()
    _gave_up_waiting.clear()
    had_pending = False
    for engine in _forking:
        had_pending |= bool(engine._after_fork_in_child())
    _release_held_across_fork()
    _forking.clear()
    if had_pending:
        fail_forked_vars()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                        after_in_child=_after_fork_in_child)
