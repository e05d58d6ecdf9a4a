"""The executor: the one place a block runs and completes, whatever thread runs it (a worker,
or a pushing or waiting thread on the NaiveEngine and for ready ASYNC ops).

``_execute`` applies the failure rule (``skip_error``: cancelled, or an input failed), calls the
op's function (with the run hook's stamps around it when one is installed), turns an exception
into the stored failure (``failure_of``: the error notes of errors.py, or the "interrupted"
error of a Ctrl-C in the pushing thread) and completes the block: ``_complete`` records the
outcome on the written vars and the block (``error``), releases each var (var.py), updates the
counters, wakes sleepers, and dispatches the blocks that became ready, keeping the best one of
the calling worker's pool to run next (no queue round trip, no wake-up).

Async blocks complete when their ``on_complete`` (an `_OnComplete`) is called, from any thread;
``waiter`` becomes True then, so a second call raises.

Pool state (`WorkerPool`, used by ``_dispatch`` here, run by threaded.py's workers or drained by
naive.py's pushing threads)
    heap             [(-priority, seq, block)]: ready blocks, best first.
    num_idle         workers parked on ``wakeups``; a dispatch puts one token there when one is
                     idle (one C call, so an interrupt cannot leave a worker half woken).
    workers          the Worker objects (thread, run contexts by ctx); none on the NaiveEngine.
    stopping         set by shutdown: idle workers exit.
"""
import heapq
import queue as _queue
import time

from .devices import order_on, record_on, sync_host
from .errors import interrupted, record_failure
from .transitions import RUNNING_INLINE, skip_error
from .var import DELETE, DISPATCHED, WAIT

__all__ = ["ExecutorMixin", "WorkerPool", "Worker", "failure_of", "synchronize", "RUNNING"]

RUNNING = DISPATCHED + 1  # OprBlock.stage once a thread took the block to run it
REQUEUED = DISPATCHED - 1  # taken by a pushing thread, interrupted before it started
_perf_ns = time.perf_counter_ns


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


def synchronize(stream):
    sync = getattr(stream, "synchronize", None)
    if sync is not None:
        sync()


def failure_of(exc, name, origin, seq, in_pusher):
    """(error, traceback, error_seq, report) for an op whose function raised ``exc``. A Ctrl-C
    in the pushing thread (``in_pusher``) fails the outputs with the "interrupted" error, not
    reported to wait_for_all (the interrupt itself goes on to the user)."""
    if in_pusher and isinstance(exc, KeyboardInterrupt):
        return (*interrupted(exc), seq, False)
    return exc, record_failure(exc, name, origin, True), seq, True


class _OnComplete:
    """The on_complete handed to an async fn: call it once, with an exception on failure."""

    __slots__ = ("engine", "block", "hook", "start", "raised")

    def __init__(self, engine, block, hook, start, raised=False):
        self.engine = engine
        self.block = block
        self.hook = hook
        self.start = start
        self.raised = raised  # the error was caught by the engine around the op's fn

    def __call__(self, error=None):
        engine, block = self.engine, self.block
        if block.waiter is not None:
            raise RuntimeError(f"on_complete of {block!r} was called twice")
        if error is not None and not isinstance(error, BaseException):
            error = RuntimeError(f"on_complete was called with a non-exception: {error!r}")
        if self.hook is not None:
            engine._report_block(self.hook, block, self.start, error is not None)
        traceback = None
        if error is not None:
            traceback = record_failure(error, block.name or block.fn, block.origin,
                                       self.raised)
        engine._complete(block, error, traceback, block.seq, error is not None, None, block,
                         claim=True)


class ExecutorMixin:
    """Running and completing blocks (the engine state is documented in core.py)."""

    def _order_before(self, stream, reads, writes):
        """Before an op runs: on a GPU stream, wait on the events it must follow; on the host,
        synchronise the GPU work on its vars (once the engine has GPU streams at all)."""
        if stream is not None:
            order_on(stream, reads, writes)
        elif self._streams:
            sync_host(reads, writes)

    def _gpu_op_done(self, stream, reads, writes):
        """After a GPU op's function returned: its work is queued on ``stream``. The threaded
        engines tag its vars with an event (devices.py) and go on; the NaiveEngine
        (``_sync_gpu_ops``) waits for the stream, so that the op's errors raise at its push."""
        if self._sync_gpu_ops:
            synchronize(stream)
        else:
            record_on(stream, reads, writes)

    def _report_block(self, hook, block, start, failed):
        self._report(hook, block.name, block.fn, block.ctx, block.const_vars,
                     block.mutable_vars, block.info, start, failed)

    def _execute(self, block, run_ctx, pool):
        """Run block (or skip it when a var it uses failed, or it was cancelled); return the
        next block for this worker, if completing this one made one ready in ``pool``.
        ``pool`` is None when a pushing or waiting thread runs it."""
        handed_off = called = False
        try:
            block.stage = RUNNING  # inside the try: a Ctrl-C right after it requeues the block
            hook = self._hook
            if hook is None and block.profiling:
                hook = self._recorder
            skipped = None
            if block.kind is not DELETE and (self._any_failed
                                             or block.seq < self._cancel_below):
                skipped = skip_error(block, self._cancel_below)
            if skipped is not None:
                if hook is not None:
                    self._report_block(hook, block, _perf_ns(), True)
                return self._complete(block, *skipped, False, pool, block)
            start = _perf_ns() if hook is not None else 0
            if block.is_async:
                handed_off = True
                try:
                    # its own work orders itself after these (no event is recorded for it)
                    self._order_before(run_ctx.stream, block.const_vars, block.mutable_vars)
                    block.fn(run_ctx, _OnComplete(self, block, hook, start))
                except BaseException as exc:  # noqa: B902 - an op's failure must never kill a worker
                    self._async_raised(block, exc, hook, start)
                return None
            try:
                called = True
                stream = run_ctx.stream
                self._order_before(stream, block.const_vars, block.mutable_vars)
                block.fn(run_ctx)
                if stream is not None:
                    self._gpu_op_done(stream, block.const_vars, block.mutable_vars)
            except BaseException as exc:  # noqa: B902 - an op's failure must never kill a worker
                if hook is not None:
                    self._report_block(hook, block, start, True)
                outcome = failure_of(exc, block.name or block.fn, block.origin, block.seq,
                                     pool is None)
                if not outcome[3]:
                    # Ctrl-C while the pushing thread ran the op: its outputs are incomplete, so
                    # they fail; the interrupt itself goes on to the user, now, not at a wait.
                    self._complete(block, *outcome, pool, block)
                    raise
                return self._complete(block, *outcome, pool, block)
            if hook is not None:
                self._report_block(hook, block, start, False)
            return self._complete(block, None, None, 0, False, pool, block)
        except KeyboardInterrupt as exc:  # the pushing thread, outside the op's own try
            if not (called or handed_off) and block.done == 0:
                # Ctrl-C before the op started: nothing failed; its pool runs it later
                block.stage = REQUEUED
                self._requeue(block)
                raise
            while not handed_off and block.done == 0:
                try:
                    self._complete(block, *interrupted(exc), block.seq, False, pool, block)
                except KeyboardInterrupt:
                    pass
            raise

    def _requeue(self, block):
        """Put a block this thread took but did not start back on its pool's heap, once,
        through any number of further Ctrl-Cs. Its stage stays REQUEUED until it is in the
        heap; a worker that takes it from there sets RUNNING, so no retry pushes it twice."""
        while True:
            try:
                with self._lock:
                    if block.stage == REQUEUED:
                        heap = block.pool.heap
                        if not any(entry[2] is block for entry in heap):
                            heapq.heappush(heap, (-block.priority, block.seq, block))
                        block.stage = DISPATCHED
                        self._dispatch(block)  # wakes an idle worker; pushes nothing again
                return
            except KeyboardInterrupt:
                pass

    def _async_raised(self, block, exc, hook, start):
        """An async fn raised: that is its failure, unless it had already called on_complete,
        in which case the error is kept for wait_for_all rather than lost."""
        with self._lock:
            done = block.waiter is not None
            if done:
                self._errors.append((exc, record_failure(exc, block.name or block.fn,
                                                         block.origin, True)))
        if not done:
            _OnComplete(self, block, hook, start, True)(exc)

    def _complete(self, block, error, traceback, error_seq, report, pool, writer,
                  claim=False):
        """Record the outcome of ``block`` (``report``: keep its error for wait_for_all) and
        release its vars; ``writer`` is what its written vars hold as pending write (the
        block, or ``RUNNING_INLINE``). ``claim``: also mark an async block's on_complete as
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
            block.error = error
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
            if writer is RUNNING_INLINE:  # an op run by _run_now, not a block
                self._pending_now -= 1
            else:
                self._pending -= 1
                self._pending_work -= block.work
                block.pusher.pending -= 1
                opr = block.opr
                if opr is not None:
                    opr.num_pending -= 1
                    if opr.deleted and opr.num_pending == 0:
                        opr.fn = None
            block.done = num_vars + 2
        # back-pressure sleepers wake when this completion took the pending work down to
        # _resume_at or below (a block of more work than 1 may step over it)
        if self._sleepers and (self._pending + self._pending_now == 0
                               or self._pending_work <= self._resume_at
                               < self._pending_work + block.work
                               or self._forking or self._inline_all):
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
