"""The threaded engines: ``ThreadedEnginePooled`` and ``ThreadedEnginePerDevice``.

How it works. A push turns a function and its read/write vars into an `OprBlock` and appends it
to each var (var.py holds the algorithm). When the block's wait counter reaches zero it is ready:
it goes to the priority queue of the pool that serves its context and property, and an idle
worker of that pool, if there is one, is woken. A worker runs the block, then completes it: each
var grants the ops queued behind it, and the worker keeps the best newly ready block of its own
pool to run next (no queue round trip, no wake-up) and dispatches the rest.

The tiny-op path. An ASYNC op (at most two reads, one write) whose vars are all free when it is
pushed runs at once in the pushing thread (``_run_now``): its vars are marked under the lock (a
read counted, the written var given ``_RUNNING_NOW`` as its pending write), the op runs outside
it, and the marks are taken back under it, with no block made unless the op fails or another
thread queued on its vars meanwhile. Anything else (a var busy or failed, profiling on,
back-pressure, a pool not started yet) goes through a block as above.

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
outputs with an "interrupted" error; one interrupted before it started runs on a worker. Waits
sleep on a lock of their own outside the engine lock (never a Condition, whose re-acquire an
interrupt can skip), and poll every ``_POLL`` seconds in case a wake-up was lost to an interrupt.
An interrupted wait's KeyboardInterrupt carries a note saying how many ops are still queued and
how to drop them (``cancel_pending``).

Cancelling. ``cancel_pending()`` drops every op pushed so far that has not started: a worker
that takes such a block skips it, as it skips an op whose input failed, and its outputs fail
with `Cancelled`. Ops already running finish; ops pushed afterwards run, unless they read a
cancelled output (then they fail with the same Cancelled error) or overwrite it completely.

Fork. Before a fork the engine waits for the blocks the forking thread pushed (and so for
everything they depend on): the child sees their results. It does not wait for other threads,
which may push forever; it then holds its lock across the fork. The child keeps every var and its error, starts new pools lazily, and drops
what was still pending: a var that an op still pending at the fork (queued, running on a worker
or in another thread) was to write fails with `ForkedWhilePending`; vars only read become idle.
Pending deletions are dropped too (their memory stays with the parent's copy).

Engine state, field by field (all guarded by ``_lock``)
    _pending         blocks pushed and not finished (WAIT markers excluded).
    _pending_now     ops running on the run-now path (not blocks).
    _max_pending     push blocks, while more are pending, until ``_resume_at`` or fewer remain.
    _sleepers        locks of threads sleeping in a wait, in back-pressure or in a fork; a
                     completion releases them all when the engine goes idle, when ``_pending``
                     reaches ``_resume_at``, or at every completion while ``_forking``.
    _errors          (exception, traceback) of failed ops that no wait has raised yet, in the
                     order they failed; wait_for_var removes the ones it raises.
    _pools           ctx -> [WorkerPool or None per FnProperty], filled lazily by
                     ``_select_pool`` (a list indexed by the property keeps the lookup in C).
    _any_failed      set once any op failed or was cancelled; until then workers skip the check.
    _cancel_below    blocks with a smaller seq that have not started are cancelled.
    _forking         True while a fork waits: every completion wakes the sleepers.
    _all_pools       every pool started, for shutdown.
    _seq             push counter: ties between equal priorities go to the earlier push.
    profiling        when True every executed op appends an `OpRecord` to ``_records``.

WorkerPool state
    heap             [(-priority, seq, block)]: ready blocks, best first.
    num_idle         workers parked on ``wakeups``; a dispatch puts one token there when one is
                     idle (one C call, so an interrupt cannot leave a worker half woken).
    workers          the Worker objects (thread, run contexts by ctx).
"""
import heapq
import itertools
import os
import queue as _queue
import threading
import time
from collections import namedtuple

from .config import MAX_WORKERS, env_int, worker_count
from .context import Context, FnProperty, RunContext
from .errors import (Cancelled, ForkedWhilePending, interrupted, record_failure,
                     resolve_origin)
from .var import (DELETE, DISPATCHED, OP, WAIT, WRITE_TRIGGERED, OprBlock, ThreadedVar,
                  inherited_failure)

__all__ = ["ThreadedEngine", "ThreadedEnginePooled", "ThreadedEnginePerDevice", "OpRecord",
           "Operator", "default_stream_factory", "env_int", "MAX_WORKERS"]

NORMAL, ASYNC, CPU_PRIORITIZED = FnProperty.NORMAL, FnProperty.ASYNC, FnProperty.CPU_PRIORITIZED
COPY_PROPS = (FnProperty.COPY_FROM_GPU, FnProperty.COPY_TO_GPU)
DELETE_PRIORITY = 1 << 30  # above any priority a user gives
RUNNING = DISPATCHED + 1  # OprBlock.stage once a thread took the block to run it
_POLL = 0.05  # seconds between re-checks of a sleeping wait
# The pending write of the vars an op run by ``_run_now`` writes, while it runs.
_RUNNING_NOW = OprBlock(None, False, None, (), (), ASYNC, 0, -1, "running now")

OpRecord = namedtuple("OpRecord", "name ctx worker start_ns end_ns reads writes info failed")
OpRecord.__doc__ = ("One executed op: its name, Context, worker thread name, start and end "
                    "(time.perf_counter_ns), ids of the vars read and written, the info given at "
                    "push, and whether it failed or was skipped.")


class _ThreadState(threading.local):
    """What the current thread does for the engine: ``engine`` is set while it runs ops (a
    worker, or a pusher running an ASYNC op inline), so a wait from inside an op is caught;
    ``pusher`` counts the blocks it pushed that are still pending (see Fork)."""

    engine = None  # a class default: a missing attribute on a local costs an exception
    pusher = None


class _Pusher:
    __slots__ = ("pending",)

    def __init__(self):
        self.pending = 0


def _this_pusher():
    pusher = _tls.pusher
    if pusher is None:
        pusher = _tls.pusher = _Pusher()
    return pusher


_tls = _ThreadState()
_current_thread = threading.current_thread


def default_stream_factory(ctx, is_copy):
    """A CuPy stream on ``ctx``'s GPU, one per worker (MXNet gives each GPU worker its own)."""
    try:
        import cupy
    except ImportError:
        raise RuntimeError(
            f"{ctx} needs CuPy, which is not installed: pip install 'ndengine[gpu]', "
            "or pass stream_factory= to ndengine.engine.create") from None
    try:
        with cupy.cuda.Device(ctx.device_id):
            return cupy.cuda.Stream(non_blocking=True)
    except Exception as exc:
        raise RuntimeError(f"cannot use {ctx}: {exc}") from exc


class Operator:
    """A reusable op made by ``new_operator``; push it many times without rebuilding it."""

    __slots__ = ("fn", "const_vars", "mutable_vars", "prop", "name", "num_pending", "deleted",
                 "__weakref__")

    def __init__(self, fn, const_vars, mutable_vars, prop, name):
        self.fn = fn
        self.const_vars = const_vars
        self.mutable_vars = mutable_vars
        self.prop = prop
        self.name = name
        self.num_pending = 0
        self.deleted = False

    def __repr__(self):
        return f"<Operator {self.name or getattr(self.fn, '__name__', '?')}>"


class Worker:
    __slots__ = ("thread", "run_ctxs", "name")

    def __init__(self, name):
        self.name = name
        self.thread = None
        self.run_ctxs = {}


class WorkerPool:
    __slots__ = ("name", "heap", "num_idle", "wakeups", "workers", "stopping")

    def __init__(self, name):
        self.name = name
        self.heap = []
        self.num_idle = 0
        self.wakeups = _queue.SimpleQueue()
        self.workers = []
        self.stopping = False

    def __repr__(self):
        return f"<WorkerPool {self.name} workers={len(self.workers)} queued={len(self.heap)}>"


def _normalize_vars(const_vars, mutable_vars):
    """Reads and writes as disjoint tuples without repeats; a var in both counts as a write."""
    if len(mutable_vars) == 1 and len(const_vars) <= 1:  # the commonest shapes, spelled out
        write = mutable_vars[0]
        if write.deleted:
            raise ValueError(f"{write!r} was deleted; it cannot be used by a new op")
        if not const_vars or const_vars[0] is write:
            return (), (write,)
        read = const_vars[0]
        if read.deleted:
            raise ValueError(f"{read!r} was deleted; it cannot be used by a new op")
        return (read,), (write,)
    if len(const_vars) + len(mutable_vars) <= 1:
        const_vars, mutable_vars = tuple(const_vars), tuple(mutable_vars)
    else:
        mutable_vars = tuple(dict.fromkeys(mutable_vars))
        const_vars = tuple(v for v in dict.fromkeys(const_vars) if v not in mutable_vars)
    for var in const_vars:
        if var.deleted:
            raise ValueError(f"{var!r} was deleted; it cannot be used by a new op")
    for var in mutable_vars:
        if var.deleted:
            raise ValueError(f"{var!r} was deleted; it cannot be used by a new op")
    return const_vars, mutable_vars


def _normalize_overwrites(const_vars, mutable_vars, overwrites):
    """(reads, writes, overwrites): overwrites must be written and not read by the op."""
    overwrites = tuple(dict.fromkeys(overwrites))
    for var in overwrites:
        if not any(var is w for w in mutable_vars):
            raise ValueError(f"overwrites: {var!r} is not among the vars the op writes")
        if any(var is r for r in const_vars):
            raise ValueError(f"overwrites: the op reads {var!r}, so it does not overwrite it "
                             "completely")
    const_vars, mutable_vars = _normalize_vars(const_vars, mutable_vars)
    return const_vars, mutable_vars, overwrites


def _raise_stored(error, traceback):
    raise error.with_traceback(traceback)


class ThreadedEngine:
    """Shared machinery of the threaded engines; subclasses choose the pool of each op."""

    kind = None

    def __init__(self, num_cpu_workers=None, num_gpu_workers=2, num_copy_workers=1,
                 stream_factory=None, max_pending=None):
        self.num_cpu_workers = worker_count(
            (os.cpu_count() or 1) if num_cpu_workers is None else num_cpu_workers,
            "num_cpu_workers")
        self.num_gpu_workers = worker_count(num_gpu_workers, "num_gpu_workers")
        self.num_copy_workers = worker_count(num_copy_workers, "num_copy_workers")
        self.stream_factory = stream_factory or default_stream_factory
        if max_pending is None:
            max_pending = env_int("NDENGINE_MAX_PENDING", 10000, minimum=1)
        if isinstance(max_pending, bool) or not isinstance(max_pending, int) or max_pending < 1:
            raise ValueError(f"max_pending must be an integer of at least 1, got {max_pending!r}")
        self._max_pending = max_pending
        self._resume_at = max_pending * 3 // 4
        self.profiling = False
        self._records = []
        self._any_failed = False  # kept across fork, like the errors on the vars
        self._var_ids = itertools.count()  # kept across fork: ids stay unique
        self._init_state()

    def _init_state(self):
        self._lock = threading.Lock()
        self._pending = 0
        self._pending_now = 0
        self._sleepers = []
        self._errors = []
        self._pools = {}
        self._all_pools = []
        self._inline_run_ctxs = {}  # ctx -> RunContext for ops run in the pushing thread
        self._seq = itertools.count(1)  # 0 is the WAIT markers'
        self._stopped = False
        self._cancel_below = 0
        self._forking = False

    def __repr__(self):
        return f"<{self.kind} cpu_workers={self.num_cpu_workers} pending={self._pending}>"

    # ---------------------------------------------------------------- vars and operators
    def new_variable(self):
        return ThreadedVar(next(self._var_ids))

    def new_operator(self, fn, const_vars, mutable_vars, prop=NORMAL, name=None):
        const_vars, mutable_vars = _normalize_vars(const_vars, mutable_vars)
        return Operator(fn, const_vars, mutable_vars, FnProperty(prop), name)

    def delete_operator(self, op):
        with self._lock:
            op.deleted = True
            if op.num_pending == 0:
                op.fn = None

    def push(self, op, ctx, priority=0, profiling=False, origin=None):
        if op.deleted:
            raise ValueError(f"{op!r} was deleted; it cannot be pushed")
        for var in op.const_vars + op.mutable_vars:
            if var.deleted:
                raise ValueError(f"{var!r} was deleted; it cannot be used by a new op")
        block = OprBlock(op.fn, True, ctx, op.const_vars, op.mutable_vars, op.prop, priority,
                         next(self._seq), op.name, None, OP, op, profiling,
                         resolve_origin(origin))
        self._push_block(block)

    # ---------------------------------------------------------------- pushing
    def push_sync(self, fn, ctx, const_vars=(), mutable_vars=(), prop=NORMAL, priority=0,
                  name=None, info=None, origin=None, overwrites=()):
        """Push fn(run_ctx). ``origin``: where the push came from, named in the note of its
        error; ``overwrites``: written vars the op overwrites completely (see push docs in
        engine/__init__.py)."""
        if overwrites:
            const_vars, mutable_vars, overwrites = _normalize_overwrites(
                const_vars, mutable_vars, overwrites)
        else:
            const_vars, mutable_vars = _normalize_vars(const_vars, mutable_vars)
            if prop is ASYNC and not self.profiling and self._run_now(
                    fn, ctx, const_vars, mutable_vars, name, info, origin):
                return
        self._push_block(OprBlock(fn, False, ctx, const_vars, mutable_vars, prop, priority,
                                  next(self._seq), name, info, OP, None, False,
                                  resolve_origin(origin), overwrites))

    def push_async(self, fn, ctx, const_vars=(), mutable_vars=(), prop=NORMAL, priority=0,
                   name=None, info=None, origin=None, overwrites=()):
        if overwrites:
            const_vars, mutable_vars, overwrites = _normalize_overwrites(
                const_vars, mutable_vars, overwrites)
        else:
            const_vars, mutable_vars = _normalize_vars(const_vars, mutable_vars)
        self._push_block(OprBlock(fn, True, ctx, const_vars, mutable_vars, prop, priority,
                                  next(self._seq), name, info, OP, None, False,
                                  resolve_origin(origin), overwrites))

    def delete_variable(self, delete_fn, ctx, var):
        """Run delete_fn(run_ctx) after every op pushed earlier on var, failed or not.

        A CPU var with nothing pending is deleted at once in the calling thread: arrays die
        by the thousand in tight loops, and a push would cost more than the deletion. A pushed
        deletion outranks every other op once ready, so freed memory is reused at once rather
        than after the work queued before it."""
        if not isinstance(ctx, Context):
            raise TypeError(f"ctx must be a Context such as cpu(0), got {ctx!r}")
        block = None
        marked = now = ran = False
        try:
            with self._lock:
                if var.deleted:
                    raise ValueError(f"{var!r} was already deleted")
                now = var.is_idle() and ctx.device_type == "cpu"
                var.deleted = marked = True
            if not now:
                block = self._deletion(delete_fn, ctx, var)
                self._push_block(block)
                return
            start = time.perf_counter_ns() if self.profiling else 0
            ran = True
            delete_fn(RunContext(ctx, None))
        except BaseException as exc:
            if not ran:
                if marked and not now and (block is None or block.stage == 0):
                    var.deleted = False  # nothing was pushed: the var is still usable
                elif now and isinstance(exc, KeyboardInterrupt):
                    delete_fn(RunContext(ctx, None))  # Ctrl-C just before it: still free
                raise
            # kept for wait_for_all, as a pushed deletion's would be
            tb = record_failure(exc, "delete_variable", None, True)
            with self._lock:
                self._errors.append((exc, tb))
                if var.error is None:
                    var.error, var.error_tb, var.error_seq = exc, tb, next(self._seq)
        if self.profiling:
            self._record(self._deletion(delete_fn, ctx, var), start, time.perf_counter_ns(),
                         False)

    def _deletion(self, delete_fn, ctx, var):
        return OprBlock(delete_fn, False, ctx, (), (var,), NORMAL, DELETE_PRIORITY,
                        next(self._seq), "delete_variable", None, DELETE)

    def _push_block(self, block):
        if not isinstance(block.ctx, Context):
            raise TypeError(f"ctx must be a Context such as cpu(0), got {block.ctx!r}")
        run_inline = blocked = False
        pusher = _this_pusher()
        try:
            while True:
                with self._lock:
                    # over the limit, a push waits until the pending ops fall to _resume_at
                    limit = self._resume_at + 1 if blocked else self._max_pending
                    if self._pending < limit or _tls.engine is self:
                        if self._stopped:
                            raise RuntimeError(
                                "the engine was shut down; no more ops can be pushed")
                        pools = self._pools.get(block.ctx)
                        pool = pools[block.prop] if pools is not None else None
                        if pool is None:  # first use: start it here (a missing CuPy raises)
                            pool = self._select_pool(block)
                        block.pool = pool
                        block.pusher = pusher
                        run_inline = self._push_locked(block)
                        break
                    sleeper = self._new_sleeper()  # back-pressure: wait for room
                    blocked = True
                sleeper.acquire(timeout=_POLL)
            if run_inline:
                self._run_inline(block)
        except KeyboardInterrupt:
            if run_inline and block.stage != RUNNING:
                # Ctrl-C between the push and the inline run: a worker runs it instead
                with self._lock:
                    if block.stage != RUNNING:
                        self._dispatch(block)
            raise

    def _push_locked(self, block):
        """With the lock held: the whole push of ``block``, finished even if interrupted.
        True when the block is ready and ASYNC: the caller runs it at once, inline."""
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
                block.pusher.pending += 1
                if block.opr is not None:
                    block.opr.num_pending += 1
            block.wait -= 1
            block.stage = num_vars + 1
        if block.wait == 0 and block.stage < DISPATCHED:
            if block.kind is WAIT:  # granted at once: nothing ran; finish it here
                self._finish_ready([block], None)
            elif block.prop is ASYNC:
                return True
            else:
                self._dispatch(block)
        return False

    def _run_now(self, fn, ctx, reads, writes, name, info, origin):
        """Run an ASYNC op in this thread if every var it uses is free; False if one is not
        (or back-pressure is on, one of its vars failed, or its pool is not started yet):
        then it is pushed as a block. This is the tiny-op path: no block is made unless the
        op fails, and while it runs its written var holds ``_RUNNING_NOW`` as its pending
        write, so ops pushed meanwhile by other threads queue behind it as behind a block.
        Each var update under the lock below is spelled out, with no call and no loop: an
        interrupt can only fall before all of them or after all of them."""
        num_reads = len(reads)
        if len(writes) != 1 or num_reads > 2:
            return False
        run_ctx = self._inline_run_ctxs.get(ctx)
        if run_ctx is None:
            run_ctx = self._inline_run_ctxs[ctx] = RunContext(ctx, None)
        marked = False
        error = None
        outer = _tls.engine
        try:
            with self._lock:
                if self._pending >= self._max_pending or self._stopped:
                    return False
                pools = self._pools.get(ctx)
                if pools is None or pools[ASYNC] is None:  # first use: the push starts it
                    return False
                write = writes[0]
                read = other = None
                if write.pending_write is not None or write.num_pending_reads \
                        or write.error is not None:
                    return False
                if num_reads == 0:
                    write.pending_write = _RUNNING_NOW
                    write.num_pending_reads = WRITE_TRIGGERED
                    self._pending_now += 1
                    marked = True
                elif num_reads == 1:
                    read = reads[0]
                    if read.pending_write is not None or read.error is not None:
                        return False
                    read.num_pending_reads += 1
                    write.pending_write = _RUNNING_NOW
                    write.num_pending_reads = WRITE_TRIGGERED
                    self._pending_now += 1
                    marked = True
                else:
                    read, other = reads
                    if read.pending_write is not None or read.error is not None \
                            or other.pending_write is not None or other.error is not None:
                        return False
                    read.num_pending_reads += 1
                    other.num_pending_reads += 1
                    write.pending_write = _RUNNING_NOW
                    write.num_pending_reads = WRITE_TRIGGERED
                    self._pending_now += 1
                    marked = True
            _tls.engine = self
            fn(run_ctx)
        except BaseException as exc:  # noqa: B902 - kept on the outputs, as a worker would
            if not marked:
                raise
            error = exc
        _tls.engine = outer
        interrupt = None
        if error is None:  # the common case, spelled out: nobody queued on its vars meanwhile
            fast = False
            try:
                with self._lock:
                    if not write.queue and (num_reads == 0 or (
                            read.pending_write is None
                            and (num_reads == 1 or other.pending_write is None))):
                        if num_reads:
                            read.num_pending_reads -= 1
                            if num_reads == 2:
                                other.num_pending_reads -= 1
                        write.pending_write = None
                        write.num_pending_reads = 0
                        self._pending_now -= 1
                        fast = True
                        if self._sleepers and self._pending_now == 0 and self._pending == 0:
                            self._wake_sleepers()
            except KeyboardInterrupt as early:
                if fast:
                    raise  # the marks are back: the interrupt can go on
                interrupt = early  # before any update: the general path below does them
            if fast:
                return True
        done = []
        while True:  # take the marks back, to the end, even through another Ctrl-C
            try:
                self._finish_now(done, error, fn, ctx, reads, writes, name, info, origin)
                break
            except KeyboardInterrupt as again:
                interrupt = again
        if isinstance(error, KeyboardInterrupt):
            raise error  # the user's Ctrl-C goes on, now; the outputs failed
        if interrupt is not None:
            raise interrupt
        return True

    def _finish_now(self, done, error, fn, ctx, reads, writes, name, info, origin):
        """Completion of a run-now op that failed, or on whose vars another thread queued
        meanwhile, through a block; restartable: ``done`` holds the block once made."""
        if not done:
            seq = next(self._seq)
            if error is None:
                outcome = (None, None, 0, False)
            elif isinstance(error, KeyboardInterrupt):
                outcome = (*interrupted(error), seq, False)
            else:
                outcome = (error, record_failure(error, name or fn, origin, True), seq, True)
            block = OprBlock(fn, False, ctx, reads, writes, ASYNC, 0, seq, name, info)
            done.extend((block, outcome))
        block, outcome = done
        self._complete(block, *outcome, None, _RUNNING_NOW)

    def _run_inline(self, block):
        run_ctx = self._inline_run_ctxs.get(block.ctx)
        if run_ctx is None:
            run_ctx = self._inline_run_ctxs[block.ctx] = RunContext(block.ctx, None)
        outer = _tls.engine
        _tls.engine = self
        try:
            self._execute(block, run_ctx, None)
        finally:
            _tls.engine = outer

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
        pools = self._pools.setdefault(block.ctx, [None] * len(FnProperty))
        prop = FnProperty(block.prop)
        if pools[prop] is None:
            pools[prop] = self._make_pool(block.ctx, prop)
        return pools[prop]

    def _pools_in_use(self):
        """(ctx, prop, pool) for every pool chosen so far."""
        return [(ctx, FnProperty(prop), pool) for ctx, pools in self._pools.items()
                for prop, pool in enumerate(pools) if pool is not None]

    def _make_pool(self, ctx, prop):
        raise NotImplementedError

    def _start_pool(self, name, num_workers, ctx=None, is_copy=False):
        pool = WorkerPool(name)
        for i in range(num_workers):
            worker = Worker(f"ndengine-{name}-{i}")
            if ctx is not None:
                worker.run_ctxs[ctx] = self._run_context(ctx, is_copy)
            pool.workers.append(worker)
        for worker in pool.workers:
            worker.thread = threading.Thread(target=self._worker_main, args=(pool, worker),
                                             name=worker.name, daemon=True)
            worker.thread.start()
        self._all_pools.append(pool)
        return pool

    def _run_context(self, ctx, is_copy):
        stream = self.stream_factory(ctx, is_copy) if ctx.device_type == "gpu" else None
        return RunContext(ctx, stream)

    def _dispatch(self, block):
        """With the lock held: queue a ready block on its pool and wake an idle worker. The
        stage is set right before the push, the idle count right before the wake-up, with no
        interruption point between them."""
        if block.kind is WAIT:
            raise AssertionError("WAIT markers are finished by _finish_ready, not dispatched")
        pool = block.pool
        if block.stage < DISPATCHED:
            block.stage = DISPATCHED
            heapq.heappush(pool.heap, (-block.priority, block.seq, block))
        if pool.num_idle:
            pool.num_idle -= 1
            pool.wakeups.put(None)

    def _worker_main(self, pool, worker):
        _tls.engine = self
        lock = self._lock
        heap = pool.heap
        wakeups = pool.wakeups
        run_ctxs = worker.run_ctxs
        block = None
        while True:
            if block is None:
                lock.acquire()
                while not heap:
                    if pool.stopping:
                        lock.release()
                        return
                    pool.num_idle += 1
                    lock.release()
                    wakeups.get()
                    lock.acquire()
                block = heapq.heappop(heap)[2]
                lock.release()
            run_ctx = run_ctxs.get(block.ctx)
            if run_ctx is None:
                run_ctx = run_ctxs[block.ctx] = self._run_context(block.ctx, False)
            block = self._execute(block, run_ctx, pool)

    # ---------------------------------------------------------------- running and completing
    def _execute(self, block, run_ctx, pool):
        """Run block (or skip it when a var it uses failed, or it was cancelled); return the
        next block for this worker, if completing this one made one ready in ``pool``."""
        block.stage = RUNNING
        handed_off = False
        try:
            error = None
            if block.kind is not DELETE:
                if block.seq < self._cancel_below:
                    error = Cancelled(f"{block.name or 'the op'} was cancelled before it "
                                      "started (cancel_pending); its outputs hold no value")
                    traceback, error_seq = None, block.seq
                elif self._any_failed:
                    failed = inherited_failure(block.const_vars, block.mutable_vars,
                                               block.overwrites)
                    if failed is not None:
                        error, traceback, error_seq = failed.error, failed.error_tb, \
                            failed.error_seq
            if error is not None:
                if self.profiling or block.profiling:
                    now = time.perf_counter_ns()
                    self._record(block, now, now, True)
                return self._complete(block, error, traceback, error_seq, False, pool, block)
            profiling = self.profiling or block.profiling
            start = time.perf_counter_ns() if profiling else 0
            if block.is_async:
                handed_off = True
                try:
                    block.fn(run_ctx, _OnComplete(self, block, start if profiling else None))
                except BaseException as exc:  # noqa: B902 - an op's failure must never kill a worker
                    self._async_raised(block, exc, start if profiling else None)
                return None
            try:
                block.fn(run_ctx)
                if run_ctx.stream is not None:
                    _synchronize(run_ctx.stream)
            except BaseException as exc:  # noqa: B902 - an op's failure must never kill a worker
                if profiling:
                    self._record(block, start, time.perf_counter_ns(), True)
                if pool is None and isinstance(exc, KeyboardInterrupt):
                    # Ctrl-C while the pushing thread ran the op: its outputs are incomplete, so
                    # they fail; the interrupt itself goes on to the user, now, not at a wait.
                    self._complete(block, *interrupted(exc), block.seq, False, pool, block)
                    raise
                tb = record_failure(exc, block.name or block.fn, block.origin, True)
                return self._complete(block, exc, tb, block.seq, True, pool, block)
            if profiling:
                self._record(block, start, time.perf_counter_ns(), False)
            return self._complete(block, None, None, 0, False, pool, block)
        except KeyboardInterrupt as exc:  # the pushing thread, outside the op's own try
            while not handed_off and block.done == 0:
                try:
                    self._complete(block, *interrupted(exc), block.seq, False, pool, block)
                except KeyboardInterrupt:
                    pass
            raise

    def _async_raised(self, block, exc, start):
        """An async fn raised: that is its failure, unless it had already called on_complete,
        in which case the error is kept for wait_for_all rather than lost."""
        with self._lock:
            done = block.waiter is not None
            if done:
                self._errors.append((exc, record_failure(exc, block.name or block.fn,
                                                         block.origin, True)))
        if not done:
            _OnComplete(self, block, start, True)(exc)

    def _record(self, block, start, end, failed):
        # Raw fields only (the var tuples as they are): OpRecords are built by take_records,
        # off the workers' path. Under the lock, so no record lands in a list already taken.
        record = (block.name or block.fn, block.ctx, _current_thread().name, start, end,
                  block.const_vars, block.mutable_vars, block.info, failed)
        with self._lock:
            self._records.append(record)

    def _complete(self, block, error, traceback, error_seq, report, pool, writer,
                  claim=False):
        """Record the outcome of ``block`` (``report``: keep its error for wait_for_all) and
        release its vars; ``writer`` is what its written vars hold as pending write (the
        block, or ``_RUNNING_NOW``). ``claim``: also mark an async block's on_complete as
        called, raising if it already was. Returns the next block for a worker of ``pool``."""
        ready = []
        with self._lock:
            if claim:
                if block.waiter is not None:
                    raise RuntimeError(f"on_complete of {block!r} was called twice")
                block.waiter = True  # async blocks reuse `waiter` as their completed flag
            try:
                return self._complete_steps(block, error, traceback, error_seq, report, pool,
                                            writer, ready)
            except KeyboardInterrupt:  # only the main thread gets these: finish, then go on
                while True:
                    try:
                        self._complete_steps(block, error, traceback, error_seq, report,
                                             None, writer, ready)
                        break
                    except KeyboardInterrupt:
                        pass
                raise

    def _complete_steps(self, block, error, traceback, error_seq, report, pool, writer, ready):
        """The completion, restartable (see var.py); ``block.done`` counts the steps done."""
        if block.done == 0:
            if error is not None:
                self._any_failed = True
                overwrites = block.overwrites
                for var in block.mutable_vars:
                    if var.error is None or var in overwrites:
                        var.error, var.error_tb, var.error_seq = error, traceback, error_seq
            else:
                for var in block.overwrites:  # rewritten completely: sound again
                    var.error = var.error_tb = None
            block.done = 1
            if report:
                self._errors.append((error, traceback))
        reads, writes = block.const_vars, block.mutable_vars
        num_reads = len(reads)
        num_vars = num_reads + len(writes)
        while block.done <= num_vars:
            i = block.done - 1
            if i < num_reads:
                reads[i].complete_read(block, ready)
            else:
                writes[i - num_reads].complete_write(writer, ready)
                block.done += 1
        if block.done == num_vars + 1:
            if writer is _RUNNING_NOW:
                self._pending_now -= 1
            else:
                self._pending -= 1
                block.pusher.pending -= 1
                opr = block.opr
                if opr is not None:
                    opr.num_pending -= 1
                    if opr.deleted and opr.num_pending == 0:
                        opr.fn = None
            block.done = num_vars + 2
        if self._sleepers and (self._pending + self._pending_now == 0
                               or self._pending == self._resume_at or self._forking):
            self._wake_sleepers()
        return self._finish_ready(ready, pool) if ready else None

    def _finish_ready(self, ready, pool):
        """Dispatch newly ready blocks; keep the best one of ``pool`` for the calling worker.
        Restartable: a block already dispatched or finished is skipped."""
        keep = None
        i = 0
        while i < len(ready):
            block = ready[i]
            i += 1
            if block.stage >= DISPATCHED:
                continue
            if block.kind is WAIT:
                if block.done == 0:
                    block.done = 1
                    block.waiter.release()
                block.mutable_vars[0].complete_write(block, ready)
                block.stage = DISPATCHED
                continue
            if keep is None and block.pool is pool and pool is not None:
                keep = block
            else:
                self._dispatch(block)
        heap = pool.heap if keep is not None else None
        if heap and heap[0][:2] < (-keep.priority, keep.seq):
            # An earlier or higher-priority op is queued: run that one first. The count of
            # queued ops is unchanged, so no idle worker needs waking.
            keep = heapq.heappushpop(heap, (-keep.priority, keep.seq, keep))[2]
        return keep

    # ---------------------------------------------------------------- waiting
    def _check_not_in_op(self, what):
        if _tls.engine is self:
            raise RuntimeError(
                f"{what} was called from inside an op running on the engine; that would "
                "deadlock. Push the dependent work as another op instead.")

    def wait_for_var(self, var):
        """Return when every op pushed before this call that reads or writes var has finished;
        raise the error of the op that failed writing it, every time (and wait_for_all will
        not raise it again)."""
        self._check_not_in_op("wait_for_var")
        waiter = None
        try:
            with self._lock:
                if not var.is_idle():
                    waiter = threading.Lock()
                    waiter.acquire()
                    marker = OprBlock(None, False, None, (), (var,), NORMAL, 0, 0,
                                      "wait_for_var", None, WAIT)
                    marker.waiter = waiter
                    self._push_locked(marker)
            if waiter is not None:
                waiter.acquire()
        except KeyboardInterrupt as exc:
            self._note_queued(exc)
            raise
        error = var.error
        if error is not None:
            self._forget_error(error)
            _raise_stored(error, var.error_tb)

    def _forget_error(self, error):
        """``error`` was raised to the user by a wait: wait_for_all does not raise it again."""
        with self._lock:
            if self._errors:
                self._errors = [entry for entry in self._errors if entry[0] is not error]

    def wait_for_all(self):
        """Return when no op is pending; raise the first failure no wait has raised yet (and
        forget the rest, so the next call is clean)."""
        self._check_not_in_op("wait_for_all")
        errors = None
        try:
            self._wait_idle(take_errors=True)
        except KeyboardInterrupt as exc:
            self._note_queued(exc)
            raise
        errors = self._taken_errors
        self._taken_errors = None
        if errors:
            _raise_stored(*errors[0])

    _taken_errors = None

    def _wait_idle(self, take_errors=False):
        """Sleep until nothing is pending; then (take_errors) move the errors to
        ``_taken_errors``, in the same locked section that saw the engine idle."""
        while True:
            with self._lock:
                if self._pending == 0 and self._pending_now == 0:
                    if take_errors and self._errors:
                        self._taken_errors, self._errors = self._errors, []
                    return
                sleeper = self._new_sleeper()
            sleeper.acquire(timeout=_POLL)

    def _drain(self):
        """Wait for all pending work without raising or forgetting errors."""
        self._wait_idle()

    def _queued_estimate(self):
        """About how many pushed ops have not started (pending, less the busy workers)."""
        busy = sum(len(pool.workers) - pool.num_idle for pool in self._all_pools)
        return max(0, self._pending - busy)

    def _note_queued(self, interrupt):
        queued = self._queued_estimate()
        if queued:
            interrupt.add_note(f"{queued} ops are still queued; call ndengine.cancel() "
                               "(engine.cancel_pending()) to drop them")

    def cancel_pending(self):
        """Drop every op pushed so far that has not started: it will not run, and its
        outputs (and those of ops that read them) fail with `Cancelled` at the next wait.
        Ops already running finish; deletions still run; the engine keeps working.
        Returns about how many ops were dropped."""
        with self._lock:
            queued = self._queued_estimate()
            self._cancel_below = next(self._seq)
        return queued

    # ---------------------------------------------------------------- profiling
    def take_records(self):
        """The OpRecords collected so far, oldest first; the engine forgets them."""
        with self._lock:
            raw, self._records = self._records, []
        return [OpRecord(name if isinstance(name, str) else getattr(name, "__name__", "op"),
                         ctx, worker, start, end, tuple(v.id for v in reads),
                         tuple(v.id for v in writes), info, failed)
                for name, ctx, worker, start, end, reads, writes, info, failed in raw]

    # ---------------------------------------------------------------- shutdown and fork
    def notify_shutdown(self):
        """Finish pending work, then stop the workers. Further pushes raise."""
        if self._stopped or _tls.engine is self:
            return
        self._drain()
        with self._lock:
            self._stopped = True
            for pool in self._all_pools:
                pool.stopping = True
                while pool.num_idle:
                    pool.num_idle -= 1
                    pool.wakeups.put(None)

    def _before_fork(self):
        """Wait for the blocks this thread pushed (not for other threads, which may push
        forever), then hold the lock across the fork. Never raises: os.fork would go on
        without the lock."""
        pusher = _tls.pusher
        if _tls.engine is not self and pusher is not None:
            try:
                while True:
                    with self._lock:
                        if pusher.pending <= 0:
                            break
                        self._forking = True
                        sleeper = self._new_sleeper()
                    sleeper.acquire(timeout=_POLL)
            except BaseException:  # noqa: B902 - Ctrl-C: fork with what is finished
                pass
        self._lock.acquire()
        self._forking = False

    def _after_fork_in_parent(self):
        self._lock.release()

    def _after_fork_in_child(self):
        """Threads do not survive fork: keep vars, errors and records, start pools anew.
        Returns True when ops were pending at the fork (their vars need `fail_forked_vars`)."""
        errors, records = self._errors, self._records
        had_pending = bool(self._pending or self._pending_now)
        if had_pending:
            self._any_failed = True  # some vars fail with ForkedWhilePending
        self._init_state()
        self._errors, self._records = errors, records
        _tls.engine = None
        _tls.pusher = None  # what it counted was dropped with the parent's pending work
        return had_pending


def fail_forked_vars():
    """In a forked child: every var that an op pending in the parent was to write fails with
    ForkedWhilePending; every busy var becomes idle. Vars are found through the garbage
    collector's list of objects (only done when some engine had work pending at the fork)."""
    import gc
    error = ForkedWhilePending(
        "this array's value was still being computed in the parent process when it forked, "
        "so the child has no value for it; wait for it (e.g. ndengine.waitall()) before "
        "forking")
    for obj in gc.get_objects():
        if type(obj) is not ThreadedVar or obj.is_idle():
            continue
        writes = obj.pending_write is not None or any(w for _, w in obj.queue or ())
        if writes and obj.error is None:
            obj.error, obj.error_tb, obj.error_seq = error, None, -1
        obj.pending_write = None
        obj.num_pending_reads = 0
        obj.queue = None


class _OnComplete:
    """The on_complete handed to an async fn: call it once, with an exception on failure."""

    __slots__ = ("engine", "block", "start", "raised")

    def __init__(self, engine, block, start, raised=False):
        self.engine = engine
        self.block = block
        self.start = start
        self.raised = raised  # the error was caught by the engine around the op's fn

    def __call__(self, error=None):
        engine, block = self.engine, self.block
        if block.waiter is not None:
            raise RuntimeError(f"on_complete of {block!r} was called twice")
        if error is not None and not isinstance(error, BaseException):
            error = RuntimeError(f"on_complete was called with a non-exception: {error!r}")
        if self.start is not None:
            engine._record(block, self.start, time.perf_counter_ns(), error is not None)
        traceback = None
        if error is not None:
            traceback = record_failure(error, block.name or block.fn, block.origin,
                                       self.raised)
        engine._complete(block, error, traceback, block.seq, error is not None, None, block,
                         claim=True)


def _synchronize(stream):
    sync = getattr(stream, "synchronize", None)
    if sync is not None:
        sync()


class ThreadedEnginePooled(ThreadedEngine):
    """One compute pool shared by every device, and one copy pool (MXNet's ThreadedEngine)."""

    kind = "ThreadedEnginePooled"

    def _make_pool(self, ctx, prop):
        is_copy = prop in COPY_PROPS
        name = "copy" if is_copy else "compute"
        shared = next((p for p in self._all_pools if p.name == name), None)
        if shared is None:
            size = self.num_copy_workers if is_copy else self.num_cpu_workers
            shared = self._start_pool(name, size)
        if ctx.device_type == "gpu":
            for worker in shared.workers:  # streams made here, so a missing GPU fails the push
                if ctx not in worker.run_ctxs:
                    worker.run_ctxs[ctx] = self._run_context(ctx, is_copy)
        return shared


class ThreadedEnginePerDevice(ThreadedEngine):
    """A pool per CPU device, one CPU_PRIORITIZED pool for all, and per GPU a compute pool
    (a stream per worker) and a copy pool (MXNet's ThreadedEnginePerDevice)."""

    kind = "ThreadedEnginePerDevice"

    def _make_pool(self, ctx, prop):
        if ctx.device_type == "cpu":
            if prop is CPU_PRIORITIZED:
                name = "cpu_prioritized"
                size = self.num_cpu_workers
                for _, other_prop, pool in self._pools_in_use():
                    if other_prop is CPU_PRIORITIZED:
                        return pool  # one prioritized pool serves every CPU device
                return self._start_pool(name, size)
            # Every other property shares the device's normal pool.
            for other_ctx, other_prop, pool in self._pools_in_use():
                if other_ctx is ctx and other_prop is not CPU_PRIORITIZED:
                    return pool
            return self._start_pool(f"cpu{ctx.device_id}", self.num_cpu_workers, ctx)
        is_copy = prop in COPY_PROPS
        for other_ctx, other_prop, pool in self._pools_in_use():
            if other_ctx is ctx and (other_prop in COPY_PROPS) == is_copy:
                return pool
        if is_copy:
            return self._start_pool(f"gpu{ctx.device_id}-copy", self.num_copy_workers, ctx, True)
        return self._start_pool(f"gpu{ctx.device_id}", self.num_gpu_workers, ctx, False)
