"""The engine core: one engine API for every engine kind, composed of parts that each own their
state; the kinds differ only in placement (threaded.py, naive.py).

How a push goes. ``push_sync``/``push_async``/``push`` first push the deletions deferred while
the lock was held (deletions.py) and normalize the vars (transitions.py); then:

* inline, when the placement allows it (every op on the NaiveEngine, ASYNC ops on the threaded
  engines), no run hook needs a block, and ``claim_inline`` finds the vars free and sound: the
  op runs at once in the pushing thread (``Executor.run_now``) and ``release_inline`` gives the
  vars back. No block is made unless the op fails or another thread queued on its vars
  meanwhile.
* otherwise as an `OprBlock` pushed by the executor (``Executor.push``), which runs it when its
  vars allow, in the pushing thread or on a pool (executor.py).

Why one lock. Every state change (var queues, wait counters, pool heaps, counters, failures)
happens under one engine-wide ``threading.Lock``, made here and handed to every part. Under
CPython's GIL only one thread runs Python at a time anyway, so a per-var mutex (MXNet's design)
buys no parallelism and costs an acquire per var; one lock held for a few microseconds per push
and per completion is cheaper, and it makes every transition atomic, so dispatch never races
with a completion. Op functions always run outside it. The lock lives as long as the engine:
held across a fork, it is released in the child.

The parts, each made once per engine (in this order: each is handed the ones before it) and
documented field by field in its module:
    _failures    `Failures` (failures.py): unraised errors, ``any_failed``, cancellation.
    _pools       `Pools` (pools.py): the worker pools, run contexts and GPU streams.
    _executor    `Executor` (executor.py): pushing and completing ops, and running them at
                 their push without a block; the pending counters, back-pressure limits,
                 sleepers and the run hook.
    _runner      `Runner` (running.py): running a block.
    bulking      `Bulk` (bulking.py): the bulk size and the per-part failure rule; public
                 because the core reads ``bulking.size`` per op (a plain slot, not the
                 ``bulk_size`` property's call)
    _deletions   `Deletions` (deletions.py): deleting vars, and the deferred deletions.
    _waits       `Waits` (waits.py): wait_for_var, read_and_wait, wait_for_all, wait_for_room.
    _lifecycle   `Lifecycle` (lifecycle.py): cancel, shutdown, the fork wait.

`EngineCore`'s own fields
    _lock        the one lock (above).
    _recorder    the engine's own `Recorder`, the hook behind ``profiling``/``take_records``.
    _var_ids     var ids, unique per engine (kept across a fork).
    _run_now, _push_block, _deferred, _seq   bound once from the executor and the deletions
                 for the push path (no attribute hop per push); ``_seq`` is bound again after a
                 fork, when the executor's push numbers start again.
    num_cpu_workers, num_gpu_workers, num_copy_workers, stream_factory   the options.
"""
import itertools
import os
import threading

from .bulking import Bulk
from .config import env_int, worker_count
from .context import FnProperty
from .deletions import Deletions
from .devices import checked_stream_factory
from .devices import stream_factory as _devices_stream_factory
from .errors import resolve_origin
from .executor import Executor
from .failures import Failures
from .lifecycle import Lifecycle
from .pools import Pools
from .recording import Recorder
from .running import Runner
from .transitions import normalize, normalize_vars
from .var import OP, TOLERANT, Operator, OprBlock, ThreadedVar
from .waits import Waits

__all__ = ["EngineCore", "NORMAL", "ASYNC", "default_stream_factory"]

NORMAL, ASYNC = FnProperty.NORMAL, FnProperty.ASYNC


def default_stream_factory(ctx, is_copy):
    """A stream for one worker on ``ctx``: CuPy's on a real GPU, a fake one on a fake GPU
    (devices.py); a GPU that cannot be used raises the error that says why."""
    return _devices_stream_factory(ctx, is_copy)


class EngineCore:
    """The machinery every engine shares; a subclass is a placement policy: ``_make_pool``
    (where a ready block runs) and ``_inline_all`` (run every op in the pushing thread), with
    ``_run_until_done`` and ``_run_queued`` for the latter."""

    kind = None
    _inline_all = False
    _sync_gpu_ops = False  # wait for a GPU op's stream after it (else: events, devices.py)
    FORK_STALL_SECONDS = 5.0  # a fork's wait gives up after this long without progress

    def __init__(self, num_cpu_workers=None, num_gpu_workers=2, num_copy_workers=1,
                 stream_factory=None, max_pending=None):
        self.num_cpu_workers = worker_count(
            (os.cpu_count() or 1) if num_cpu_workers is None else num_cpu_workers,
            "num_cpu_workers")
        self.num_gpu_workers = worker_count(num_gpu_workers, "num_gpu_workers")
        self.num_copy_workers = worker_count(num_copy_workers, "num_copy_workers")
        self.stream_factory = checked_stream_factory(stream_factory, default_stream_factory)
        if max_pending is None:
            max_pending = env_int("NDENGINE_MAX_PENDING", 10000, minimum=1)
        if isinstance(max_pending, bool) or not isinstance(max_pending, int) or max_pending < 1:
            raise ValueError(f"max_pending must be an integer of at least 1, got {max_pending!r}")
        bulk_size = 1 if self._inline_all else env_int("NDENGINE_BULK_SIZE", 64, minimum=1)
        self._lock = lock = threading.Lock()
        self._recorder = Recorder()
        self._var_ids = itertools.count()
        self._failures = failures = Failures(lock)
        self._pools = pools = Pools(self._make_pool, self.stream_factory, self._inline_all)
        self._executor = executor = Executor(
            lock, failures, pools, max_pending, self._recorder, self._inline_all,
            self._sync_gpu_ops, self._run_until_done, self._run_queued)
        self._runner = runner = Runner(executor, failures, pools, self._sync_gpu_ops)
        executor.run_inline = runner.run_inline
        self.bulking = Bulk(bulk_size, self._inline_all, executor, failures)
        self._deletions = deletions = Deletions(executor, failures)
        self._waits = waits = Waits(executor, failures, deletions, pools)
        executor.wait_for_room = waits.wait_for_room
        self._lifecycle = Lifecycle(executor, failures, waits)
        self._run_now = executor.run_now
        self._push_block = executor.push
        self._deferred = deletions.deferred
        self._seq = executor.seq

    def __repr__(self):
        return f"<{self.kind} cpu_workers={self.num_cpu_workers} pending={self._executor.pending}>"

    # ---------------------------------------------------------------- placement
    def _make_pool(self, ctx, prop):
        raise NotImplementedError

    def _run_until_done(self, block):
        """Placement ``_inline_all`` (naive.py): after the push of ``block``, run it in
        this thread and raise its error."""

    def _run_queued(self):
        """Placement ``_inline_all`` (naive.py): run the ready blocks nobody took."""

    # ---------------------------------------------------------------- run hook
    def set_run_hook(self, hook):
        """Install ``hook`` (recording.py), called after every op run from now on; None
        removes it. Returns the hook it replaces, or None."""
        if hook is not None and not callable(hook):
            raise TypeError(f"a run hook must be callable, got {hook!r}")
        executor = self._executor
        previous, executor.hook = executor.hook, hook
        return previous

    @property
    def run_hook(self):
        return self._executor.hook

    @property
    def profiling(self):
        """True while the engine's own `Recorder` is the run hook (``take_records`` reads it)."""
        return self._executor.hook is self._recorder

    @profiling.setter
    def profiling(self, on):
        executor = self._executor
        if on:
            executor.hook = self._recorder
        elif executor.hook is self._recorder:
            executor.hook = None

    def take_records(self):
        """The OpRecords of the engine's own recorder, oldest first; it forgets them."""
        return self._recorder.take()

    # ---------------------------------------------------------------- vars and operators
    def new_variable(self):
        return ThreadedVar(next(self._var_ids))

    def new_operator(self, fn, const_vars, mutable_vars, prop=NORMAL, name=None):
        const_vars, mutable_vars = normalize_vars(const_vars, mutable_vars)
        return Operator(fn, const_vars, mutable_vars, FnProperty(prop), name)

    def delete_operator(self, op):
        with self._lock:
            op.deleted = True
            if op.num_pending == 0:
                op.fn = None

    def delete_variable(self, delete_fn, ctx, var):
        """Run delete_fn(run_ctx) once every op pushed on var has finished (deletions.py)."""
        self._deletions.delete_variable(delete_fn, ctx, var)

    # ---------------------------------------------------------------- pushing
    def push(self, op, ctx, priority=0, profiling=False, origin=None):
        """Push a reusable Operator; ``profiling``: report this run to the engine's own
        recorder even when no run hook is installed."""
        if self._deferred:
            self._deletions.flush()
        if op.deleted:
            raise ValueError(f"{op!r} was deleted; it cannot be pushed")
        normalize_vars(op.const_vars, op.mutable_vars)  # raises on a deleted var
        self._push_block(OprBlock(op.fn, True, ctx, op.const_vars, op.mutable_vars, op.prop,
                                  priority, next(self._seq), op.name, None, OP, op, profiling,
                                  resolve_origin(origin)))

    def push_sync(self, fn, ctx, const_vars=(), mutable_vars=(), prop=NORMAL, priority=0,
                  name=None, info=None, origin=None, overwrites=(), tolerant=False, work=1,
                  throttle=True):
        """Push fn(run_ctx). ``origin``: where the push came from, named in the note of its
        error; ``overwrites``: written vars the op overwrites completely; ``info``: profiler
        arguments, or a callable giving them, called only by a run hook (see push docs in
        engine/__init__.py); ``tolerant``: the op runs even when a var it uses failed, unless it was
        cancelled: it handles failures per part itself (``any_failed``, ``inherit_failure``,
        ``fail_part``; core/segment.py); ``work``: the queued work it stands for (what
        back-pressure bounds); ``throttle=False``: no back-pressure wait (``wait_for_room``)."""
        if self._deferred:
            self._deletions.flush()
        if overwrites:
            const_vars, mutable_vars, overwrites = normalize(const_vars, mutable_vars,
                                                             overwrites)
        else:
            const_vars, mutable_vars = normalize_vars(const_vars, mutable_vars)
        if (prop is ASYNC or self._inline_all) and self._run_now(
                fn, ctx, const_vars, mutable_vars, name, info, origin):
            return
        block = OprBlock(fn, False, ctx, const_vars, mutable_vars, prop, priority,
                         next(self._seq), name, info, TOLERANT if tolerant else OP, None, False,
                         resolve_origin(origin), overwrites)
        block.work = work
        self._push_block(block, throttle)

    def push_async(self, fn, ctx, const_vars=(), mutable_vars=(), prop=NORMAL, priority=0,
                   name=None, info=None, origin=None, overwrites=()):
        """Push fn(run_ctx, on_complete); the op is over when on_complete(error=None) is
        called, from any thread. Arguments as for push_sync."""
        if self._deferred:
            self._deletions.flush()
        const_vars, mutable_vars, overwrites = normalize(const_vars, mutable_vars, overwrites)
        self._push_block(OprBlock(fn, True, ctx, const_vars, mutable_vars, prop, priority,
                                  next(self._seq), name, info, OP, None, False,
                                  resolve_origin(origin), overwrites))

    def wait_for_room(self):
        """Back-pressure: while too much work is pending, sleep until enough of it finished
        (waits.py). A thread that pushed with ``throttle=False`` calls it once it released
        the lock it held."""
        self._waits.wait_for_room()

    # ---------------------------------------------------------------- waiting
    def wait_for_var(self, var):
        """Return when every op pushed before this call that reads or writes var has finished;
        raise the error of the op that failed writing it, every time (and wait_for_all will
        not raise it again)."""
        self._waits.wait_for_var(var)

    def read_and_wait(self, fn, ctx, var, prop=ASYNC, name=None):
        """Run fn(run_ctx), an op that reads ``var``, and return once it ran; raise the error
        of a failed write to ``var``, as wait_for_var does (waits.py)."""
        self._waits.read_and_wait(fn, ctx, var, prop, name)

    def wait_for_all(self):
        """Return when no op is pending; raise the first failure no wait or push has raised
        yet (and forget the rest, so the next call is clean)."""
        self._waits.wait_for_all()

    def _drain(self):
        """Wait for all pending work without raising or forgetting errors."""
        self._waits.wait_idle()

    def take_unraised_errors(self):
        """The errors of failed ops that no wait or push has raised yet (what wait_for_all
        would raise first), oldest first, each once; forgets them."""
        return self._failures.take_unraised()

    # ---------------------------------------------------------------- bulking
    @property
    def bulk_size(self):
        """How many tiny ops a pushing thread may gather into one push (MXNet's bulk size; the
        gathering is core/segment.py's). 1: every op is pushed alone (always on the
        NaiveEngine, which runs each op at its push). Default: NDENGINE_BULK_SIZE, else 64."""
        return self.bulking.size

    def set_bulk_size(self, size):
        """Set ``bulk_size`` (an int >= 1); returns the previous one. The NaiveEngine keeps 1."""
        return self.bulking.set_size(size)

    def any_failed(self, vars):
        """True when one of ``vars`` holds the error of a failed op (bulking.py)."""
        return self.bulking.any_failed(vars)

    def inherit_failure(self, reads, writes):
        """From inside a TOLERANT op: True when one of its parts must not run (bulking.py)."""
        return self.bulking.inherit_failure(reads, writes)

    def fail_part(self, writes, exc, name, origin):
        """From inside a TOLERANT op: one of its parts raised ``exc`` (bulking.py)."""
        self.bulking.fail_part(writes, exc, name, origin)

    # ---------------------------------------------------------------- lifecycle
    def cancel_pending(self):
        """Drop every op pushed so far that has not started; returns about how many
        (lifecycle.py)."""
        return self._lifecycle.cancel_pending()

    def notify_shutdown(self):
        """Finish pending work, then stop the workers. Further pushes raise."""
        self._lifecycle.notify_shutdown()

    def _wait_before_fork(self):
        """Wait for the blocks this thread pushed, while they make progress (lifecycle.py);
        False when it gave up after ``FORK_STALL_SECONDS``."""
        return self._lifecycle.wait_before_fork(self.FORK_STALL_SECONDS)

    def _lock_for_fork(self):
        """Hold the lock across the fork (after ``_wait_before_fork``)."""
        self._lock.acquire()

    def _after_fork_in_parent(self):
        self._lock.release()

    def _after_fork_in_child(self):
        """Threads do not survive fork: each part drops what was pending and its threads;
        vars and errors are kept. Returns True when ops were pending at the fork (their vars
        need `fail_forked_vars`)."""
        executor = self._executor
        had_pending = bool(executor.pending or executor.pending_now)
        self._failures.after_fork_in_child(had_pending)
        self._pools.after_fork_in_child()
        executor.after_fork_in_child()
        self._deletions.after_fork_in_child()
        self._seq = executor.seq
        self._lock.release()  # held across the fork by this thread
        return had_pending
