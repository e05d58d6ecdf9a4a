"""NaiveEngine: runs every op at once, in the pushing thread. The debugging engine: an op's
error raises at its push call, with the op's own traceback.

It keeps the threaded engines' error rules so programs behave alike: a failed op marks the vars
it writes, and an op pushed later on a marked var is skipped and raises that same error at its
push (deletions still run); which error an op inherits when several of its vars failed is
`inherited_failure`'s rule; an op that overwrites its failed outputs completely (``overwrites``)
runs and clears their error; the error carries the note naming the op and its push ``origin``.
Since every error is raised at a push, wait_for_all has none left to raise, and nothing is ever
queued, so cancel_pending has nothing to drop. One re-entrant lock serialises ops pushed from
several threads; it is taken with ``with`` so Ctrl-C cannot leave it held, and an op
interrupted by Ctrl-C fails its outputs with an "interrupted" error.

State: ``_lock``; ``_run_ctxs`` (ctx -> RunContext); ``_stopped``; ``_seq`` (failure counter:
ops run at their push, so it orders failures as pushed, for ``ThreadedVar.error_seq``);
``_any_failed`` (set once an op failed: until then no op checks its vars' errors); ``profiling``
and ``_records``.
"""
import itertools
import threading
import time

from .config import worker_count
from .context import Context, RunContext
from .errors import interrupted, record_failure
from .threaded import (NORMAL, OpRecord, Operator, _normalize_overwrites, _normalize_vars,
                       _raise_stored, _synchronize, default_stream_factory)
from .var import DELETE, ThreadedVar, inherited_failure

__all__ = ["NaiveEngine"]


class NaiveEngine:
    kind = "NaiveEngine"

    def __init__(self, num_cpu_workers=None, num_gpu_workers=2, num_copy_workers=1,
                 stream_factory=None, max_pending=None):
        # Worker counts are accepted (and checked) so every engine takes the same options;
        # none are started.
        for value, what in ((num_cpu_workers, "num_cpu_workers"),
                            (num_gpu_workers, "num_gpu_workers"),
                            (num_copy_workers, "num_copy_workers")):
            if value is not None:
                worker_count(value, what)
        if max_pending is not None and (isinstance(max_pending, bool)
                                        or not isinstance(max_pending, int) or max_pending < 1):
            raise ValueError(f"max_pending must be an integer of at least 1, got {max_pending!r}")
        self.num_cpu_workers = 1
        self.stream_factory = stream_factory or default_stream_factory
        self.profiling = False
        self._records = []
        self._var_ids = itertools.count()  # kept across fork: ids stay unique
        self._seq = itertools.count(1)
        self._any_failed = False  # until an op fails, no op needs the failed-var check
        self._init_state()

    def _init_state(self):
        self._lock = threading.RLock()
        self._run_ctxs = {}
        self._stopped = False

    def __repr__(self):
        return "<NaiveEngine>"

    def new_variable(self):
        return ThreadedVar(next(self._var_ids))

    def new_operator(self, fn, const_vars, mutable_vars, prop=NORMAL, name=None):
        const_vars, mutable_vars = _normalize_vars(const_vars, mutable_vars)
        return Operator(fn, const_vars, mutable_vars, prop, name)

    def delete_operator(self, op):
        op.deleted = True
        op.fn = None  # nothing of it can be pending: every push ran at once

    def push(self, op, ctx, priority=0, profiling=False, origin=None):
        if op.deleted:
            raise ValueError(f"{op!r} was deleted; it cannot be pushed")
        _normalize_vars(op.const_vars, op.mutable_vars)  # raises on a deleted var
        self._run(op.fn, True, ctx, op.const_vars, op.mutable_vars, op.name, None, profiling,
                  origin=origin)

    def push_sync(self, fn, ctx, const_vars=(), mutable_vars=(), prop=NORMAL, priority=0,
                  name=None, info=None, origin=None, overwrites=()):
        if overwrites:
            const_vars, mutable_vars, overwrites = _normalize_overwrites(
                const_vars, mutable_vars, overwrites)
        else:
            const_vars, mutable_vars = _normalize_vars(const_vars, mutable_vars)
        self._run(fn, False, ctx, const_vars, mutable_vars, name, info, False, None, origin,
                  overwrites)

    def push_async(self, fn, ctx, const_vars=(), mutable_vars=(), prop=NORMAL, priority=0,
                   name=None, info=None, origin=None, overwrites=()):
        if overwrites:
            const_vars, mutable_vars, overwrites = _normalize_overwrites(
                const_vars, mutable_vars, overwrites)
        else:
            const_vars, mutable_vars = _normalize_vars(const_vars, mutable_vars)
        self._run(fn, True, ctx, const_vars, mutable_vars, name, info, False, None, origin,
                  overwrites)

    def delete_variable(self, delete_fn, ctx, var):
        if var.deleted:
            raise ValueError(f"{var!r} was already deleted")
        if not isinstance(ctx, Context):
            raise TypeError(f"ctx must be a Context such as cpu(0), got {ctx!r}")
        self._run_context(ctx)  # a missing GPU raises here, with the var still usable
        var.deleted = True
        self._run(delete_fn, False, ctx, (), (var,), "delete_variable", None, kind=DELETE)

    def _run_context(self, ctx):
        run_ctx = self._run_ctxs.get(ctx)
        if run_ctx is None:
            stream = self.stream_factory(ctx, False) if ctx.device_type == "gpu" else None
            run_ctx = self._run_ctxs[ctx] = RunContext(ctx, stream)
        return run_ctx

    def _run(self, fn, is_async, ctx, const_vars, mutable_vars, name, info, profiling=False,
             kind=None, origin=None, overwrites=()):
        if not isinstance(ctx, Context):
            raise TypeError(f"ctx must be a Context such as cpu(0), got {ctx!r}")
        if self._stopped:
            raise RuntimeError("the engine was shut down; no more ops can be pushed")
        with self._lock:
            run_ctx = self._run_ctxs.get(ctx) or self._run_context(ctx)
            failed = None
            if self._any_failed and kind is not DELETE:
                failed = inherited_failure(const_vars, mutable_vars, overwrites)
            record = self.profiling or profiling
            start = time.perf_counter_ns() if record else 0
            interrupt = None
            if failed is not None:
                error, traceback, seq = failed.error, failed.error_tb, failed.error_seq
            else:
                error, traceback = _call(fn, is_async, run_ctx)
                if isinstance(error, KeyboardInterrupt):
                    interrupt = error  # the outputs fail; Ctrl-C itself goes on to the user
                    error, traceback = interrupted(interrupt)
                elif error is not None:
                    traceback = record_failure(error, name or fn, origin, traceback is not None)
            if record:
                self._records.append(OpRecord(
                    name or getattr(fn, "__name__", "op"), ctx, threading.current_thread().name,
                    start, time.perf_counter_ns(), tuple(v.id for v in const_vars),
                    tuple(v.id for v in mutable_vars), info, error is not None))
            if error is not None:
                self._any_failed = True
                if failed is None:
                    seq = next(self._seq)  # ops run at their push: failure order is push order
                for var in mutable_vars:
                    if var.error is None or var in overwrites:
                        var.error, var.error_tb, var.error_seq = error, traceback, seq
                if interrupt is not None:
                    raise interrupt
                _raise_stored(error, traceback)
            if overwrites:
                for var in overwrites:  # rewritten completely: sound again
                    var.error = var.error_tb = None

    def wait_for_var(self, var):
        if var.error is not None:
            _raise_stored(var.error, var.error_tb)

    def wait_for_all(self):
        """Every op already ran, and every error was raised at its push."""

    def cancel_pending(self):
        """Nothing is ever queued: returns 0."""
        return 0

    def _drain(self):
        pass

    def take_records(self):
        records, self._records = self._records, []
        return records

    def notify_shutdown(self):
        self._stopped = True

    def _before_fork(self):
        self._lock.acquire()

    def _after_fork_in_parent(self):
        self._lock.release()

    def _after_fork_in_child(self):
        self._init_state()
        return False


def _call(fn, is_async, run_ctx):
    """Run fn to completion; return (error, traceback), both None on success. The traceback
    is that of an exception caught here (None for an error handed to on_complete), marking
    that its first entry is this engine's frame."""
    if not is_async:
        try:
            fn(run_ctx)
            if run_ctx.stream is not None:
                _synchronize(run_ctx.stream)  # a GPU op's errors belong to its push
        except BaseException as exc:  # noqa: B902 - stored on the vars, then raised
            return exc, exc.__traceback__
        return None, None
    outcome = []
    done = threading.Event()

    def on_complete(error=None):
        if done.is_set():
            raise RuntimeError("on_complete was called twice")
        if error is not None and not isinstance(error, BaseException):
            error = RuntimeError(f"on_complete was called with a non-exception: {error!r}")
        outcome.append(error)
        done.set()

    try:
        fn(run_ctx, on_complete)
    except BaseException as exc:  # noqa: B902
        if not done.is_set():
            return exc, exc.__traceback__
        raise
    done.wait()  # an async fn may finish on another thread; this engine still runs it "at once"
    error = outcome[0]
    return (error, None) if error is not None else (None, None)
