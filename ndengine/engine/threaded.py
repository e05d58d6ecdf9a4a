"""The threaded engines: ``ThreadedEnginePooled`` and ``ThreadedEnginePerDevice``.

How it works. A push turns a function and its read/write vars into an `OprBlock` and appends it
to each var (var.py holds the algorithm). When the block's wait counter reaches zero it is ready:
it goes to the priority queue of the pool that serves its context and property, and an idle
worker of that pool, if there is one, is woken. A worker runs the block, then completes it: each
var grants the ops queued behind it, and the worker keeps the best newly ready block of its own
pool to run next (no queue round trip, no wake-up) and dispatches the rest.

The tiny-op path. An ASYNC op whose vars are all free when it is pushed runs at once in the
pushing thread (``_run_now``): its vars are marked under the lock (a read counted, each written
var given ``_RUNNING_NOW`` as its pending write), the op runs outside it, and the marks are taken
back under it, with no block made and no pool involved. Anything else (a var busy or failed,
profiling on, back-pressure, a pool not started yet) goes through a block as above.

Why one lock. Every state change (var queues, wait counters, pool queues, counters) happens under
one engine-wide ``threading.Lock``. Under CPython's GIL only one thread runs Python at a time
anyway, so a per-var mutex (MXNet's design) buys no parallelism and costs an acquire per var;
one lock held for a few microseconds per push and per completion is cheaper, and it makes every
transition atomic, so dispatch never races with a completion. Op functions always run outside it.

Engine state, field by field (all guarded by ``_lock``)
    _pending         ops pushed and not finished (WAIT markers excluded).
    _max_pending     push blocks, while more are pending, until ``_resume_at`` or fewer remain.
    _waiters         threads blocked in wait_for_all or back-pressure; completions notify
                     ``_state_changed`` only when there are some.
    _errors          (exception, traceback) of failed ops that wait_for_all has not raised yet,
                     in the order they failed.
    _pools           ctx -> [WorkerPool or None per FnProperty], filled lazily by
                     ``_select_pool`` (a list indexed by the property keeps the lookup in C).
    _any_failed      set once any op failed; until then workers skip the failed-var check.
    _all_pools       every pool started, for shutdown.
    _seq             push counter: ties between equal priorities go to the earlier push.
    profiling        when True every executed op appends an `OpRecord` to ``_records``.

WorkerPool state
    heap             [(-priority, seq, block)]: ready blocks, best first.
    idle             workers parked on their own ``wakeup`` lock; a dispatch pops one and
                     releases its lock, so a worker is woken at most once and only when idle.
    workers          the Worker objects (thread, wakeup lock, run contexts by ctx).
"""
import heapq
import itertools
import os
import threading
import time
from collections import namedtuple

from .context import Context, FnProperty, RunContext
from .var import DELETE, OP, WAIT, WRITE_TRIGGERED, OprBlock, ThreadedVar

__all__ = ["ThreadedEngine", "ThreadedEnginePooled", "ThreadedEnginePerDevice", "OpRecord",
           "Operator", "default_stream_factory"]

NORMAL, ASYNC, CPU_PRIORITIZED = FnProperty.NORMAL, FnProperty.ASYNC, FnProperty.CPU_PRIORITIZED
COPY_PROPS = (FnProperty.COPY_FROM_GPU, FnProperty.COPY_TO_GPU)
DELETE_PRIORITY = 1 << 30  # above any priority a user gives
# The pending write of the vars an op run by ``_run_now`` writes, while it runs.
_RUNNING_NOW = OprBlock(None, False, None, (), (), ASYNC, 0, -1, "running now")

OpRecord = namedtuple("OpRecord", "name ctx worker start_ns end_ns reads writes info failed")
OpRecord.__doc__ = ("One executed op: its name, Context, worker thread name, start and end "
                    "(time.perf_counter_ns), ids of the vars read and written, the info given at "
                    "push, and whether it failed or was skipped.")


class _ThreadState(threading.local):
    """What the current thread does for the engine: ``engine`` is set while it runs ops (a
    worker, or a pusher running an ASYNC op inline), so a wait from inside an op is caught."""

    engine = None  # a class default: a missing attribute on a local costs an exception


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
    __slots__ = ("thread", "wakeup", "run_ctxs", "name")

    def __init__(self, name):
        self.name = name
        self.thread = None
        self.wakeup = threading.Lock()
        self.wakeup.acquire()  # held while not parked; a dispatch releases it to wake us
        self.run_ctxs = {}


class WorkerPool:
    __slots__ = ("name", "heap", "idle", "workers", "stopping")

    def __init__(self, name):
        self.name = name
        self.heap = []
        self.idle = []
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


def env_int(name, default=None):
    """An integer environment variable; a clear error names it when it is not one."""
    value = os.environ.get(name)
    if value in (None, ""):
        return default
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"environment variable {name} must be an integer, got {value!r}") \
            from None


def interrupted(interrupt):
    """The error stored on the outputs of an op stopped by Ctrl-C, and its traceback."""
    error = RuntimeError("this array's computation was interrupted (KeyboardInterrupt)")
    error.__cause__ = interrupt
    return error, interrupt.__traceback__


def _raise_stored(error, traceback):
    raise error.with_traceback(traceback)


class ThreadedEngine:
    """Shared machinery of the threaded engines; subclasses choose the pool of each op."""

    kind = None

    def __init__(self, num_cpu_workers=None, num_gpu_workers=2, num_copy_workers=1,
                 stream_factory=None, max_pending=None):
        self.num_cpu_workers = (os.cpu_count() or 1) if num_cpu_workers is None \
            else int(num_cpu_workers)
        self.num_gpu_workers = int(num_gpu_workers)
        self.num_copy_workers = int(num_copy_workers)
        if min(self.num_cpu_workers, self.num_gpu_workers, self.num_copy_workers) < 1:
            raise ValueError("worker counts must be at least 1")
        self.stream_factory = stream_factory or default_stream_factory
        if max_pending is None:
            max_pending = env_int("NDENGINE_MAX_PENDING", 10000)
        if max_pending < 1:
            raise ValueError("max_pending must be at least 1")
        self._max_pending = max_pending
        self._resume_at = max_pending * 3 // 4
        self.profiling = False
        self._records = []
        self._any_failed = False  # kept across fork, like the errors on the vars
        self._var_ids = itertools.count()  # kept across fork: ids stay unique
        self._init_state()

    def _init_state(self):
        self._lock = threading.Lock()
        self._state_changed = threading.Condition(self._lock)
        self._pending = 0
        self._waiters = 0
        self._errors = []
        self._pools = {}
        self._all_pools = []
        self._inline_run_ctxs = {}  # ctx -> RunContext for ops run in the pushing thread
        self._seq = itertools.count()
        self._stopped = False

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

    def push(self, op, ctx, priority=0, profiling=False):
        if op.deleted:
            raise ValueError(f"{op!r} was deleted; it cannot be pushed")
        for var in op.const_vars + op.mutable_vars:
            if var.deleted:
                raise ValueError(f"{var!r} was deleted; it cannot be used by a new op")
        block = OprBlock(op.fn, True, ctx, op.const_vars, op.mutable_vars, op.prop, priority,
                         next(self._seq), op.name, None, OP, op, profiling)
        self._push_block(block)

    # ---------------------------------------------------------------- pushing
    def push_sync(self, fn, ctx, const_vars=(), mutable_vars=(), prop=NORMAL, priority=0,
                  name=None, info=None):
        const_vars, mutable_vars = _normalize_vars(const_vars, mutable_vars)
        if prop is ASYNC and not self.profiling and self._run_now(fn, ctx, const_vars,
                                                                  mutable_vars, name, info):
            return
        self._push_block(OprBlock(fn, False, ctx, const_vars, mutable_vars, prop, priority,
                                  next(self._seq), name, info))

    def push_async(self, fn, ctx, const_vars=(), mutable_vars=(), prop=NORMAL, priority=0,
                   name=None, info=None):
        const_vars, mutable_vars = _normalize_vars(const_vars, mutable_vars)
        self._push_block(OprBlock(fn, True, ctx, const_vars, mutable_vars, prop, priority,
                                  next(self._seq), name, info))

    def delete_variable(self, delete_fn, ctx, var):
        """Run delete_fn(run_ctx) after every op pushed earlier on var, failed or not.

        A CPU var with nothing pending is deleted at once in the calling thread: arrays die
        by the thousand in tight loops, and a push would cost more than the deletion. A pushed
        deletion outranks every other op once ready, so freed memory is reused at once rather
        than after the work queued before it."""
        if not isinstance(ctx, Context):
            raise TypeError(f"ctx must be a Context such as cpu(0), got {ctx!r}")
        with self._lock:
            if var.deleted:
                raise ValueError(f"{var!r} was already deleted")
            var.deleted = True
            now = var.is_idle() and ctx.device_type == "cpu"
        if not now:
            try:
                self._push_block(self._deletion(delete_fn, ctx, var))
            except BaseException:
                var.deleted = False  # nothing was pushed: the var is still usable
                raise
            return
        start = time.perf_counter_ns() if self.profiling else 0
        try:
            delete_fn(RunContext(ctx, None))
        except BaseException as exc:  # kept for wait_for_all, as a pushed deletion's would be
            with self._lock:
                self._errors.append((exc, exc.__traceback__))
                if var.error is None:
                    var.error, var.error_tb = exc, exc.__traceback__
        if self.profiling:
            self._record(self._deletion(delete_fn, ctx, var), start, time.perf_counter_ns(),
                         False)

    def _deletion(self, delete_fn, ctx, var):
        return OprBlock(delete_fn, False, ctx, (), (var,), NORMAL, DELETE_PRIORITY,
                        next(self._seq), "delete_variable", None, DELETE)

    def _push_block(self, block):
        if not isinstance(block.ctx, Context):
            raise TypeError(f"ctx must be a Context such as cpu(0), got {block.ctx!r}")
        lock = self._lock
        lock.acquire()
        try:
            if self._pending >= self._max_pending and _tls.engine is not self:
                self._wait_for_room()
            if self._stopped:
                raise RuntimeError("the engine was shut down; no more ops can be pushed")
            pools = self._pools.get(block.ctx)
            pool = pools[block.prop] if pools is not None else None
            if pool is None:  # first use: start it here, so e.g. a missing CuPy raises at push
                pool = self._select_pool(block)
            block.pool = pool
            self._pending += 1
            if block.opr is not None:
                block.opr.num_pending += 1
            for var in block.const_vars:
                var.append_read(block)
            for var in block.mutable_vars:
                var.append_write(block)
            block.wait -= 1
            run_inline = block.wait == 0 and block.prop is ASYNC
            if block.wait == 0 and not run_inline:
                self._dispatch(block)
        finally:
            lock.release()
        if run_inline:
            self._run_inline(block)

    def _run_now(self, fn, ctx, reads, writes, name, info):
        """Run an ASYNC op in this thread if every var it uses is free; False if one is not
        (or back-pressure is on, one of its vars failed, or its pool is not started yet):
        then it is pushed as a block. This is the tiny-op path: no block is made unless the
        op fails, and while it runs its vars hold ``_RUNNING_NOW`` as their pending write, so
        ops pushed meanwhile by other threads queue behind it as behind a block."""
        run_ctx = self._inline_run_ctxs.get(ctx)
        if run_ctx is None:
            run_ctx = self._inline_run_ctxs[ctx] = RunContext(ctx, None)
        lock = self._lock
        lock.acquire()  # not ``with``: acquire/release cost half as much, on every tiny op
        try:
            if self._pending >= self._max_pending or self._stopped:
                return False
            pools = self._pools.get(ctx)
            if pools is None or pools[ASYNC] is None:  # first use: the push starts the pool
                return False
            for var in reads:
                if var.pending_write is not None or var.error is not None:
                    return False
            for var in writes:
                if (var.pending_write is not None or var.num_pending_reads
                        or var.error is not None):
                    return False
            for var in reads:
                var.num_pending_reads += 1
            for var in writes:
                var.pending_write = _RUNNING_NOW
                var.num_pending_reads = WRITE_TRIGGERED
            self._pending += 1
        finally:
            lock.release()
        outer = _tls.engine
        _tls.engine = self
        try:
            fn(run_ctx)
        except BaseException as exc:  # noqa: B902 - kept on the outputs, as a worker would
            block = OprBlock(fn, False, ctx, reads, writes, ASYNC, 0, next(self._seq), name,
                             info)
            if isinstance(exc, KeyboardInterrupt):
                self._complete(block, *interrupted(exc), False, None)
                raise
            self._complete(block, exc, exc.__traceback__, True, None)
            return True
        finally:
            _tls.engine = outer
        ready = []
        lock.acquire()
        try:
            # var.complete_read / complete_write, spelled out for vars nobody queued on
            for var in reads:
                if var.pending_write is None:
                    var.num_pending_reads -= 1
                else:
                    var.complete_read(ready)
            for var in writes:
                if var.queue:
                    var.complete_write(ready)
                else:
                    var.pending_write = None
                    var.num_pending_reads = 0
            self._pending -= 1
            if self._waiters and (self._pending == 0 or self._pending == self._resume_at):
                self._state_changed.notify_all()
            if ready:
                self._finish_ready(ready, None)
        finally:
            lock.release()
        return True

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

    def _wait_for_room(self):
        self._waiters += 1
        try:
            while self._pending > self._resume_at:
                self._state_changed.wait()
        finally:
            self._waiters -= 1

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
        if block.kind is WAIT:
            raise AssertionError("WAIT markers are finished by _finish_ready, not dispatched")
        pool = block.pool
        heapq.heappush(pool.heap, (-block.priority, block.seq, block))
        if pool.idle:
            pool.idle.pop().wakeup.release()

    def _worker_main(self, pool, worker):
        _tls.engine = self
        lock = self._lock
        heap = pool.heap
        run_ctxs = worker.run_ctxs
        block = None
        while True:
            if block is None:
                lock.acquire()
                while not heap:
                    if pool.stopping:
                        lock.release()
                        return
                    pool.idle.append(worker)
                    lock.release()
                    worker.wakeup.acquire()
                    lock.acquire()
                block = heapq.heappop(heap)[2]
                lock.release()
            run_ctx = run_ctxs.get(block.ctx)
            if run_ctx is None:
                run_ctx = run_ctxs[block.ctx] = self._run_context(block.ctx, False)
            block = self._execute(block, run_ctx, pool)

    # ---------------------------------------------------------------- running and completing
    def _execute(self, block, run_ctx, pool):
        """Run block (or skip it when a var it uses failed); return the next block for this
        worker, if completing this one made one ready in ``pool``."""
        error = traceback = None
        if self._any_failed and block.kind is not DELETE:
            for var in block.const_vars:
                if var.error is not None:
                    error, traceback = var.error, var.error_tb
            for var in block.mutable_vars:
                if var.error is not None:
                    error, traceback = var.error, var.error_tb
        if error is not None:
            if self.profiling or block.profiling:
                now = time.perf_counter_ns()
                self._record(block, now, now, True)
            return self._complete(block, error, traceback, False, pool)
        profiling = self.profiling or block.profiling
        start = time.perf_counter_ns() if profiling else 0
        if block.is_async:
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
                self._complete(block, *interrupted(exc), False, pool)
                raise
            return self._complete(block, exc, exc.__traceback__, True, pool)
        if profiling:
            self._record(block, start, time.perf_counter_ns(), False)
        return self._complete(block, None, None, False, pool)

    def _async_raised(self, block, exc, start):
        """An async fn raised: that is its failure, unless it had already called on_complete,
        in which case the error is kept for wait_for_all rather than lost."""
        with self._lock:
            done = block.waiter is not None
            if done:
                self._errors.append((exc, exc.__traceback__))
        if not done:
            _OnComplete(self, block, start)(exc)

    def _record(self, block, start, end, failed):
        # Raw fields only (the var tuples as they are): OpRecords are built by take_records,
        # off the workers' path. Under the lock, so no record lands in a list already taken.
        record = (block.name or block.fn, block.ctx, _current_thread().name, start, end,
                  block.const_vars, block.mutable_vars, block.info, failed)
        with self._lock:
            self._records.append(record)

    def _complete(self, block, error, traceback, failed_here, pool):
        ready = []
        lock = self._lock
        lock.acquire()
        try:
            if error is not None:
                self._any_failed = True
                if failed_here:
                    self._errors.append((error, traceback))
                for var in block.mutable_vars:
                    if var.error is None:
                        var.error, var.error_tb = error, traceback
            for var in block.const_vars:
                var.complete_read(ready)
            for var in block.mutable_vars:
                var.complete_write(ready)
            self._pending -= 1
            if block.opr is not None:
                opr = block.opr
                opr.num_pending -= 1
                if opr.deleted and opr.num_pending == 0:
                    opr.fn = None
            if self._waiters and (self._pending == 0 or self._pending == self._resume_at):
                self._state_changed.notify_all()
            return self._finish_ready(ready, pool) if ready else None
        finally:
            lock.release()

    def _finish_ready(self, ready, pool):
        """Dispatch newly ready blocks; keep the best one of ``pool`` for the calling worker."""
        keep = None
        i = 0
        while i < len(ready):
            block = ready[i]
            i += 1
            if block.kind is WAIT:
                block.waiter.release()
                for var in block.mutable_vars:
                    var.complete_write(ready)
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
        raise the error of the op that failed writing it, every time."""
        self._check_not_in_op("wait_for_var")
        lock = self._lock
        with lock:
            if var.is_idle():
                waiter = None
            else:
                waiter = threading.Lock()
                waiter.acquire()
                marker = OprBlock(None, False, None, (), (var,), NORMAL, 0, 0, "wait_for_var",
                                  None, WAIT)
                marker.waiter = waiter
                var.append_write(marker)
                marker.wait -= 1
                if marker.wait == 0:  # granted at once: nothing ran; finish it here
                    self._finish_ready([marker], None)
        if waiter is not None:
            waiter.acquire()
        if var.error is not None:
            _raise_stored(var.error, var.error_tb)

    def wait_for_all(self):
        """Return when no op is pending; raise the first failure not raised by an earlier
        wait_for_all (and forget the rest, so the next call is clean)."""
        self._check_not_in_op("wait_for_all")
        with self._lock:
            self._wait_idle_locked()
            first = self._errors[0] if self._errors else None
            self._errors.clear()
        if first is not None:
            _raise_stored(*first)

    def _wait_idle_locked(self):
        """With the lock held: wait until no op is pending."""
        self._waiters += 1
        try:
            while self._pending:
                self._state_changed.wait()
        finally:
            self._waiters -= 1

    def _drain(self):
        """Wait for all pending work without raising or forgetting errors."""
        with self._lock:
            self._wait_idle_locked()

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
                while pool.idle:
                    pool.idle.pop().wakeup.release()

    def _before_fork(self):
        # Drain while holding the lock, so no thread can push between the drain and the fork.
        self._lock.acquire()
        if _tls.engine is not self:
            self._wait_idle_locked()

    def _after_fork_in_parent(self):
        self._lock.release()

    def _after_fork_in_child(self):
        """Threads do not survive fork: keep vars, errors and records, start pools anew."""
        errors, records = self._errors, self._records
        self._init_state()
        self._errors, self._records = errors, records
        _tls.engine = None


class _OnComplete:
    """The on_complete handed to an async fn: call it once, with an exception on failure."""

    __slots__ = ("engine", "block", "start")

    def __init__(self, engine, block, start):
        self.engine = engine
        self.block = block
        self.start = start

    def __call__(self, error=None):
        engine, block = self.engine, self.block
        with engine._lock:
            if block.waiter is not None:
                raise RuntimeError(f"on_complete of {block!r} was called twice")
            block.waiter = True  # async blocks reuse `waiter` as their completed flag
        if error is not None and not isinstance(error, BaseException):
            error = RuntimeError(f"on_complete was called with a non-exception: {error!r}")
        if self.start is not None:
            engine._record(block, self.start, time.perf_counter_ns(), error is not None)
        traceback = error.__traceback__ if error is not None else None
        engine._complete(block, error, traceback, error is not None, None)


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
