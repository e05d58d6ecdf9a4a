"""The engine core: one push path for every engine kind; the kinds differ only in placement.

How a push goes. ``push_sync``/``push_async``/``push`` normalize the vars (transitions.py), then:

* inline, when the placement allows it (every op on the NaiveEngine, ASYNC ops on the threaded
  engines), no run hook needs a block, and ``claim_inline`` finds the vars free and sound: the
  op runs at once in the pushing thread (``_run_now``) and ``release_inline`` gives the vars
  back. No block is made unless the op fails or another thread queued on its vars meanwhile;
  then its completion goes through a block like any other (``_finish_now``).
* otherwise as an `OprBlock` appended to each var (var.py). Once its wait counter reaches zero
  it is ready: an ASYNC block ready at its push (any block, on the NaiveEngine) runs at once in
  the pushing thread; any other goes to the priority queue of the pool its placement chose,
  where a worker takes it (threaded.py) or, on the NaiveEngine, a pushing or waiting thread
  (naive.py). Every block runs through one executor (executor.py): the same failure rules
  (``skip_error``), the same error notes, the same completion.

Why one lock. Every state change (var queues, wait counters, pool queues, counters) happens under
one engine-wide ``threading.Lock``. Under CPython's GIL only one thread runs Python at a time
anyway, so a per-var mutex (MXNet's design) buys no parallelism and costs an acquire per var;
one lock held for a few microseconds per push and per completion is cheaper, and it makes every
transition atomic, so dispatch never races with a completion. Op functions always run outside it.

Ctrl-C. KeyboardInterrupt reaches only the main thread, between bytecodes (see var.py for where).
So the lock is only ever taken with ``with`` (an interrupt cannot fall between the acquire and
the block that releases it), and each transition made under it (push, completion, dispatch) is
restartable: it records its progress on the block (``stage``, ``done``), and when an interrupt
lands inside it, the handler calls it again, still under the lock, until it is finished, then
lets the interrupt go on. An op interrupted while it runs in the pushing thread fails its
outputs with an "interrupted" error; one interrupted before it started runs later (on a worker,
or on the NaiveEngine at the next push or wait). Waits: lifecycle.py.

Engine state, field by field (all guarded by ``_lock``, except as noted)
    _pending         blocks pushed and not finished (WAIT markers excluded).
    _pending_work    the work those blocks stand for (``OprBlock.work``): what back-pressure
                     bounds (pressure.py).
    _pending_now     ops running inline without a block (``_run_now``).
    _max_pending     back-pressure (``wait_for_room``): a push made while this much work or
                     more is pending waits until ``_resume_at`` or less remains.
    _bulk_size       how many tiny ops a pushing thread may gather into one push (``bulk_size``;
                     read without the lock).
    _sleepers        locks of threads sleeping in a wait, in back-pressure or in a fork; a
                     completion releases them all when the engine goes idle, when
                     ``_pending_work`` falls to ``_resume_at``, while ``_forking``, or always
                     on the NaiveEngine.
    _errors          (exception, traceback) of failed ops that no wait or push has raised yet,
                     in the order they failed; a wait or push that raises one removes it.
    _pools           ctx -> [pool or None per FnProperty], filled lazily by ``_select_pool``
                     (a list indexed by the property keeps the lookup in C).
    _inline_run_ctxs ctx -> RunContext for ops run in a pushing thread; set with the ctx's
                     first pool, so the first push on a ctx goes through ``_select_pool`` (a
                     missing GPU raises there).
    _any_failed      set once any op failed or was cancelled; until then blocks skip the check.
    _cancel_below    blocks with a smaller seq that have not started are cancelled.
    _forking         True while a fork waits: every completion wakes the sleepers.
    _all_pools       every pool started, for shutdown.
    _seq             push counter: ties between equal priorities go to the earlier push.
    _hook            the run hook (recording.py), or None: read once per op, no lock.
    _deferred        deletions asked for while the lock was held (a finalizer run by the
                     garbage collector inside the engine): [(delete_fn, ctx, var)], appended
                     without the lock, pushed by the next push or wait (lifecycle.py).
    _streams         every GPU stream made for this engine's workers (appended without the
                     lock): wait_for_all synchronises them; while it is empty, host ops skip
                     the cross-stream checks of devices.py.
"""
import itertools
import os
import threading
import time
import warnings as _warnings

from .config import env_int, worker_count
from .context import Context, FnProperty, RunContext
from .errors import resolve_origin
from .bulk import BulkMixin
from .pressure import PressureMixin
from .devices import check_stream, checked_stream_factory
from .devices import stream_factory as _devices_stream_factory
from .executor import ExecutorMixin, failure_of
from .lifecycle import POLL, LifecycleMixin, Operator, tls
from .recording import Recorder
from .transitions import (RUNNING_INLINE, claim_inline, normalize, normalize_vars,
                          release_inline)
from .var import DISPATCHED, OP, TOLERANT, WAIT, OprBlock, ThreadedVar

__all__ = ["EngineCore", "NORMAL", "ASYNC", "default_stream_factory"]

NORMAL, ASYNC = FnProperty.NORMAL, FnProperty.ASYNC
_perf_ns = time.perf_counter_ns


class _Pusher:
    __slots__ = ("pending",)

    def __init__(self):
        self.pending = 0


def _this_pusher():
    pusher = tls.pusher
    if pusher is None:
        pusher = tls.pusher = _Pusher()
    return pusher


def default_stream_factory(ctx, is_copy):
    """A stream for one worker on ``ctx``: CuPy's on a real GPU, a fake one on a fake GPU
    (devices.py); a GPU that cannot be used raises the error that says why."""
    return _devices_stream_factory(ctx, is_copy)


class EngineCore(ExecutorMixin, LifecycleMixin, BulkMixin, PressureMixin):
    """The machinery every engine shares; a subclass is a placement policy: ``_make_pool``
    (where a ready block runs) and ``_inline_all`` (run every op in the pushing thread)."""

    kind = None
    _inline_all = False
    _sync_gpu_ops = False  # wait for a GPU op's stream after it (else: events, devices.py)

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
        self._max_pending = max_pending
        self._resume_at = max_pending * 3 // 4
        self._bulk_size = 1 if self._inline_all else env_int("NDENGINE_BULK_SIZE", 64, minimum=1)
        self._hook = None
        self._recorder = Recorder()  # the hook behind ``profiling`` and ``take_records``
        self._any_failed = False  # kept across fork, like the errors on the vars
        self._var_ids = itertools.count()  # kept across fork: ids stay unique
        self._init_state()

    def _init_state(self):
        self._lock = threading.Lock()
        self._pending = 0
        self._pending_work = 0
        self._pending_now = 0
        self._sleepers = []
        self._errors = []
        self._pools = {}
        self._all_pools = []
        self._inline_run_ctxs = {}
        self._seq = itertools.count(1)  # 0 is the WAIT markers'
        self._stopped = False
        self._cancel_below = 0
        self._forking = False
        self._deferred = []
        self._streams = []  # every GPU stream made for this engine's workers (devices.py)

    def __repr__(self):
        return f"<{self.kind} cpu_workers={self.num_cpu_workers} pending={self._pending}>"

    # ---------------------------------------------------------------- run hook
    def set_run_hook(self, hook):
        """Install ``hook`` (recording.py), called after every op run from now on; None
        removes it. Returns the hook it replaces, or None."""
        if hook is not None and not callable(hook):
            raise TypeError(f"a run hook must be callable, got {hook!r}")
        previous, self._hook = self._hook, hook
        return previous

    @property
    def run_hook(self):
        return self._hook

    @property
    def profiling(self):
        """True while the engine's own `Recorder` is the run hook (``take_records`` reads it)."""
        return self._hook is self._recorder

    @profiling.setter
    def profiling(self, on):
        if on:
            self._hook = self._recorder
        elif self._hook is self._recorder:
            self._hook = None

    def take_records(self):
        """The OpRecords of the engine's own recorder, oldest first; it forgets them."""
        return self._recorder.take()

    def _report(self, hook, name, fn, ctx, reads, writes, info, start, failed):
        try:
            hook(name or getattr(fn, "__name__", "op"), ctx, reads, writes, info, start,
                 _perf_ns(), failed)
        except Exception as exc:  # noqa: BLE001 - a broken hook must not leave the op unfinished
            _warnings.warn(f"the engine's run hook {hook!r} raised {exc!r}; the op it was "
                           "told about finished normally", RuntimeWarning, stacklevel=2)

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

    def push(self, op, ctx, priority=0, profiling=False, origin=None):
        """Push a reusable Operator; ``profiling``: report this run to the engine's own
        recorder even when no run hook is installed."""
        if self._deferred:
            self._flush_deferred()
        if op.deleted:
            raise ValueError(f"{op!r} was deleted; it cannot be pushed")
        normalize_vars(op.const_vars, op.mutable_vars)  # raises on a deleted var
        self._push_block(OprBlock(op.fn, True, ctx, op.const_vars, op.mutable_vars, op.prop,
                                  priority, next(self._seq), op.name, None, OP, op, profiling,
                                  resolve_origin(origin)))

    # ---------------------------------------------------------------- pushing
    def push_sync(self, fn, ctx, const_vars=(), mutable_vars=(), prop=NORMAL, priority=0,
                  name=None, info=None, origin=None, overwrites=(), tolerant=False, work=1,
                  throttle=True):
        """Push fn(run_ctx). ``origin``: where the push came from, named in the note of its
        error; ``overwrites``: written vars the op overwrites completely; ``info``: profiler
        arguments, or a callable giving them, called only by a run hook (see push docs in
        engine/__init__.py); ``tolerant``: the op runs even when a var it uses failed, unless it was
        cancelled: it handles failures per part itself (``any_failed``, ``inherit_failure``,
        ``fail_part``; core/segment.py); ``work``: the queued work it stands for (see
        ``_pending_work``); ``throttle=False``: no back-pressure wait (pressure.py)."""
        if self._deferred:
            self._flush_deferred()
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
            self._flush_deferred()
        const_vars, mutable_vars, overwrites = normalize(const_vars, mutable_vars, overwrites)
        self._push_block(OprBlock(fn, True, ctx, const_vars, mutable_vars, prop, priority,
                                  next(self._seq), name, info, OP, None, False,
                                  resolve_origin(origin), overwrites))

    def _push_block(self, block, throttle=True, then_wait=False):
        """Push ``block``, after the back-pressure wait unless ``throttle`` is False.
        ``then_wait`` (a block that reads one var, ``read_and_wait``): unless the block runs
        inline here, a WAIT marker on its var is queued right behind it in the same locked
        step; returns the marker's waiter, or None."""
        if not isinstance(block.ctx, Context):
            raise TypeError(f"ctx must be a Context such as cpu(0), got {block.ctx!r}")
        if throttle and self._pending_work >= self._max_pending:
            self.wait_for_room()  # read without the lock: a few pushes racing past is harmless
        run_inline = False
        waiter = None
        pusher = _this_pusher()
        try:
            with self._lock:
                if self._stopped:
                    raise RuntimeError("the engine was shut down; no more ops can be pushed")
                pools = self._pools.get(block.ctx)
                pool = pools[block.prop] if pools is not None else None
                if pool is None:  # first use: start it here (a missing CuPy raises)
                    pool = self._select_pool(block)
                block.pool = pool
                block.pusher = pusher
                run_inline = self._push_locked(block)
                if then_wait and not run_inline:  # (inline: over when this returns)
                    marker = self._wait_marker(block.const_vars[0])
                    self._push_locked(marker)
                    waiter = marker.waiter
            if run_inline:
                self._run_inline(block)
        except KeyboardInterrupt:
            while run_inline and block.stage < DISPATCHED:
                # Ctrl-C between the push and the inline run: its pool runs it instead
                try:
                    with self._lock:
                        if block.stage < DISPATCHED:
                            self._dispatch(block)
                except KeyboardInterrupt:
                    pass
            raise
        if self._inline_all:
            self._run_until_done(block)  # naive.py: runs it here if it was not ready
        return waiter

    def _push_locked(self, block):
        """With the lock held: the whole push of ``block``, finished even if interrupted.
        True when the block is ready and placed inline: the caller runs it at once."""
        try:
            return self._push_steps(block)
        except KeyboardInterrupt:
            while True:
                try:
                    self._push_steps(block)
                    break
                except KeyboardInterrupt:
                    pass
            if block.wait == 0 and block.stage < DISPATCHED and block.kind is not WAIT:
                self._dispatch(block)  # not run inline: the caller is on its way out
            raise

    def _push_steps(self, block):
        """The push, restartable (see var.py): appends to each var, counts it pending,
        releases its own hold, and dispatches it (or finishes a WAIT marker) once ready."""
        reads, writes = block.const_vars, block.mutable_vars
        num_reads = len(reads)
        num_vars = num_reads + len(writes)
        while block.stage < num_vars:
            i = block.stage
            if i < num_reads:
                reads[i].append_read(block)
            else:
                writes[i - num_reads].append_write(block)
        if block.stage == num_vars:
            if block.kind is not WAIT:
                self._pending += 1
                self._pending_work += block.work
                block.pusher.pending += 1
                if block.opr is not None:
                    block.opr.num_pending += 1
            block.wait -= 1
            block.stage = num_vars + 1
        if block.wait == 0 and block.stage < DISPATCHED:
            if block.kind is WAIT:  # granted at once: nothing ran; finish it here
                self._finish_ready([block], None)
            elif block.prop is ASYNC or self._inline_all:
                return True
            else:
                self._dispatch(block)
        return False

    def _run_now(self, fn, ctx, reads, writes, name, info, origin):
        """Run a sync op at once in this thread if ``claim_inline`` takes its vars; False if
        it does not (or back-pressure is on, or ``ctx`` has no pool yet): then it is pushed as
        a block. While it runs, its written var holds ``RUNNING_INLINE`` as its granted write,
        so ops pushed meanwhile by other threads queue behind it as behind a block. No
        thread-local is set around the op (the cost of an op this small): ``in_fn`` tells
        `_in_op` that this thread is inside it."""
        run_ctx = self._inline_run_ctxs.get(ctx)
        if run_ctx is None:
            return False
        claimed = in_fn = False
        error = unstarted = None
        hook = self._hook
        if hook is not None:
            start = _perf_ns()
        try:
            with self._lock:
                if self._pending_work >= self._max_pending or self._stopped \
                        or not claim_inline(reads, writes):
                    return False
                self._pending_now += 1
                claimed = True
            in_fn = True
            stream = run_ctx.stream
            self._order_before(stream, reads, writes)
            fn(run_ctx)
            in_fn = False
            if stream is not None:
                self._gpu_op_done(stream, reads, writes)
        except BaseException as exc:  # noqa: B902 - kept on the outputs, as a worker would
            if not claimed:
                raise
            if in_fn or not isinstance(exc, KeyboardInterrupt):
                error = exc
            else:  # Ctrl-C between the claim and the call: the op never ran, nothing failed
                unstarted = exc
            in_fn = False
        interrupt = unstarted
        if hook is not None:
            self._report(hook, name, fn, ctx, reads, writes, info, start, error is not None)
        if error is None:  # the common case: nobody queued on its vars meanwhile
            released = False
            try:
                with self._lock:
                    if release_inline(reads, writes):
                        self._pending_now -= 1
                        released = True
                        if self._sleepers and self._pending_now == 0 and self._pending == 0:
                            self._wake_sleepers()
            except KeyboardInterrupt as early:
                if released:
                    raise  # the marks are back: the interrupt can go on
                interrupt = early  # before any update: the completion below does them
            if released:
                if interrupt is not None:
                    raise interrupt
                return True
        done = []
        while True:  # complete through a block, to the end, even through another Ctrl-C
            try:
                self._finish_now(done, error, fn, ctx, reads, writes, name, info, origin)
                break
            except KeyboardInterrupt as again:
                interrupt = again
        if isinstance(error, KeyboardInterrupt):
            raise error  # the user's Ctrl-C goes on, now; the outputs failed
        if interrupt is not None:
            raise interrupt
        if self._inline_all:
            self._run_queued()  # what its completion made ready: this thread runs it
            if error is not None:
                self._raise_at_push(done[0])
        return True

    def _finish_now(self, done, error, fn, ctx, reads, writes, name, info, origin):
        """Completion of an op run by ``_run_now`` that failed, or on whose vars another
        thread queued meanwhile, through a block; restartable: ``done`` holds the block once
        made."""
        if not done:
            seq = next(self._seq)
            outcome = (None, None, 0, False) if error is None else \
                failure_of(error, name or fn, origin, seq, True)
            block = OprBlock(fn, False, ctx, reads, writes, ASYNC, 0, seq, name, info)
            done.extend((block, outcome))
        block, outcome = done
        self._complete(block, *outcome, None, RUNNING_INLINE)

    def _run_inline(self, block):
        """Run a ready block in the pushing thread, through the executor."""
        run_ctx = self._inline_run_ctxs.get(block.ctx)
        if run_ctx is None:
            run_ctx = self._inline_run_ctxs[block.ctx] = self._inline_run_context(block.ctx)
        outer = tls.engine
        tls.engine = self
        try:
            self._execute(block, run_ctx, None)
        finally:
            tls.engine = outer

    def _run_until_done(self, block):
        """Placement ``_inline_all`` (naive.py): after the push of ``block``, run it in
        this thread and raise its error."""

    def _run_queued(self):
        """Placement ``_inline_all`` (naive.py): run the ready blocks nobody took."""

    def _raise_at_push(self, block):
        """The NaiveEngine raises an op's error at its push: then no wait raises it again."""
        error = block.error
        self._forget_error(error)
        raise error

    # ---------------------------------------------------------------- sleeping
    def _new_sleeper(self):
        """With the lock held: a held lock that the next wake-up releases."""
        sleeper = threading.Lock()
        sleeper.acquire()
        self._sleepers.append(sleeper)
        return sleeper

    def _wake_sleepers(self):
        sleepers = self._sleepers
        self._sleepers = []
        for sleeper in sleepers:
            sleeper.release()

    # ---------------------------------------------------------------- pools
    def _select_pool(self, block):
        """The pool that runs ``block``; created (and its threads started) on first use."""
        ctx = block.ctx
        prop = FnProperty(block.prop)
        pools = self._pools.get(ctx)
        if pools is None or pools[prop] is None:
            run_ctx = self._inline_run_ctxs.get(ctx) or self._inline_run_context(ctx)
            pool = self._make_pool(ctx, prop)  # a missing GPU raises here, before any change
            pools = self._pools.setdefault(ctx, [None] * len(FnProperty))
            pools[prop] = pool
            self._inline_run_ctxs[ctx] = run_ctx
        return pools[prop]

    def _pools_in_use(self):
        """(ctx, prop, pool) for every pool chosen so far."""
        return [(ctx, FnProperty(prop), pool) for ctx, pools in self._pools.items()
                for prop, pool in enumerate(pools) if pool is not None]

    def _make_pool(self, ctx, prop):
        raise NotImplementedError

    def _inline_run_context(self, ctx):
        """The RunContext of ops run in a pushing thread on ``ctx``."""
        return RunContext(ctx, None)

    def _run_context(self, ctx, is_copy):
        if ctx.device_type != "gpu":
            return RunContext(ctx, None)
        stream = self.stream_factory(ctx, is_copy)
        check_stream(stream, f"the stream {stream!r} made by stream_factory "
                             f"{self.stream_factory!r}")
        self._streams.append(stream)  # one C call: wait_for_all synchronises them
        return RunContext(ctx, stream)

