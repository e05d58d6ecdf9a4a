"""ndengine's dependency engine: MXNet's engine API in Python. Knows nothing about arrays.

Push functions with the vars they read and write; the engine runs them in parallel where the
vars allow and in push order where they conflict::

    from ndengine import engine
    eng = engine.create("ThreadedEnginePerDevice", num_cpu_workers=2)
    a, b = eng.new_variable(), eng.new_variable()
    eng.push_sync(lambda rc: ..., engine.cpu(), mutable_vars=[a])          # writes a
    eng.push_sync(lambda rc: ..., engine.cpu(), const_vars=[a], mutable_vars=[b])
    eng.wait_for_var(b)

Modules: context.py (Context, RunContext, FnProperty), var.py (the dependency algorithm),
threaded.py (the pooled and per-device engines and their state), naive.py (the synchronous one).
"""
import atexit
import os
import threading
import weakref

from .context import Context, FnProperty, RunContext, cpu, current_context, gpu
from .naive import NaiveEngine
from .threaded import (OpRecord, ThreadedEngine, ThreadedEnginePerDevice, ThreadedEnginePooled,
                       default_stream_factory, env_int)

__all__ = ["create", "get", "set_engine", "Context", "cpu", "gpu", "current_context",
           "RunContext", "FnProperty", "OpRecord", "NaiveEngine", "ThreadedEnginePooled",
           "ThreadedEnginePerDevice", "KINDS", "default_stream_factory"]

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
    num_gpu_workers, num_copy_workers, stream_factory(ctx, is_copy), max_pending."""
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
    NDENGINE_GPU_WORKER_NTHREADS and NDENGINE_MAX_PENDING."""
    global _global
    engine = _global
    if engine is None:
        with _global_lock:
            if _global is None:
                options = {"num_cpu_workers": env_int("NDENGINE_CPU_WORKER_NTHREADS")}
                gpu_workers = env_int("NDENGINE_GPU_WORKER_NTHREADS")
                if gpu_workers is not None:
                    options["num_gpu_workers"] = gpu_workers
                _global = create(os.environ.get("NDENGINE_ENGINE_TYPE",
                                                "ThreadedEnginePerDevice"), **options)
            engine = _global
    return engine


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
    # Pending work finishes before the interpreter goes: no lost writes. Errors nobody waited
    # for stay unraised, as at any other time; the workers are daemons, so nothing can hang on
    # them once the work is done.
    for engine in list(_engines):
        try:
            engine.notify_shutdown()
        except BaseException:  # noqa: B902 - exit must stay quiet
            pass


def _before_fork():
    for engine in list(_engines):
        engine._before_fork()


def _after_fork_in_parent():
    for engine in list(_engines):
        engine._after_fork_in_parent()


def _after_fork_in_child():
    global _global_lock
    _global_lock = threading.Lock()
    for engine in list(_engines):
        engine._after_fork_in_child()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                        after_in_child=_after_fork_in_child)
