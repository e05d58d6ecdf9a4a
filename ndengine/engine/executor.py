"""The executor: the one place an op is queued and completes, whatever thread runs it (a worker,
or a pushing or waiting thread on the NaiveEngine and for ready ASYNC ops).

Pushing (``push``). A block is appended to each of its vars (var.py) and counted pending; once
its wait counter reaches zero it is ready: an ASYNC block ready at its push (any block, on the
NaiveEngine) runs at once in the pushing thread (``run_inline``); any other goes to the heap of
the pool its placement chose (pools.py, ``dispatch``), where a worker takes it (threaded.py) or,
on the NaiveEngine, a pushing or waiting thread (naive.py). A sync op whose vars are free and
sound runs at once in the pushing thread without a block at all (``run_now``: the inline path of
transitions.py); it completes through a block only if it failed or another thread queued on its
vars meanwhile (``_finish_now``).

Running. A block runs through ``Runner.execute`` (running.py), which then calls ``complete``:
it records the outcome on the written vars and the block (``error``), releases each var, updates
the counters, wakes sleepers, and dispatches the blocks that became ready, keeping the best one
of the calling worker's pool to run next (no queue round trip, no wake-up).

Ctrl-C. KeyboardInterrupt reaches only the main thread, between bytecodes (see var.py for where).
So the lock is only ever taken with ``with`` (an interrupt cannot fall between the acquire and
the block that releases it), and each transition made under it (push, completion, dispatch) is
restartable: it records its progress on the block (``stage``, ``done``), and when an interrupt
lands inside it, the handler calls it again, still under the lock, until it is finished, then
lets the interrupt go on. An op interrupted while it runs in the pushing thread fails its
outputs with an "interrupted" error; one interrupted before it started runs later (on a worker,
or on the NaiveEngine at the next push or wait).

`Executor`, field by field (all guarded by ``lock``, except as noted)
    lock             the engine's one lock (core.py says why one; it makes it).
    pending          blocks pushed and not finished (WAIT markers excluded).
    pending_work     the work those blocks stand for (``OprBlock.work``): what back-pressure
                     bounds (``wait_for_room``, waits.py); read without the lock by the push's
                     quick check.
    pending_now      ops running inline without a block (``run_now``).
    max_pending      back-pressure: a push made while this much work or more is pending waits
                     until ``resume_at`` or less remains (fixed at creation).
    resume_at        3/4 of ``max_pending``: completions wake the back-pressure sleepers as
                     ``pending_work`` falls to it.
    seq              push counter: ties between equal priorities go to the earlier push (0 is
                     the WAIT markers'); replaced at a fork (push numbers start again).
    sleepers         locks of threads sleeping in a wait, in back-pressure or in a fork; a
                     completion releases them all when the engine goes idle, when
                     ``pending_work`` falls to ``resume_at``, while ``forking``, or always on the
                     NaiveEngine (``inline_all``).
    forking          True while a fork waits for the forking thread's blocks (lifecycle.py sets
                     it): every completion wakes the sleepers.
    stopped          set by shutdown (``stop``): pushes raise.
    hook             the run hook (recording.py), or None: read once per op, no lock.
    recorder         the engine's own `Recorder`: the hook of a block pushed with
                     ``profiling=True`` when no hook is installed.
    inline_all       the placement runs every op in the pushing thread (the NaiveEngine).
    sync_gpu_ops     wait for a GPU op's stream after it (the NaiveEngine; else events,
                     devices.py).
    run_until_done, run_queued   the NaiveEngine's placement (naive.py), called when
                     ``inline_all``: run a pushed block here and raise its error; run the ready
                     blocks no thread took.
    wait_for_room    the back-pressure wait (``Waits.wait_for_room``), called by a throttled
                     push while ``pending_work`` is at ``max_pending`` or more.
    run_inline       ``Runner.run_inline`` (running.py): runs a block ready at its push here.
    failures         the engine's `Failures` (failures.py): the executor records outcomes there.
    pools            the engine's `Pools` (pools.py); ``by_ctx``, ``inline_run_ctxs`` and
                     ``streams`` are its containers, kept here for the per-op lookups.
Invariant: when nothing is pending (``pending == pending_now == 0``) every var is idle and no
pool heap holds a block.
"""
import heapq
import itertools
import sys
import threading
import time

from .context import Context, FnProperty
from .devices import after_gpu_op, order_before
from .failures import failure_of
from .recording import report
from .threadstate import this_pusher, tls
from .transitions import RUNNING_INLINE, claim_inline, release_inline
from .var import DISPATCHED, WAIT, OprBlock, wait_marker

__all__ = ["Executor", "RUNNING", "REQUEUED", "POLL"]

ASYNC = FnProperty.ASYNC
RUNNING = DISPATCHED + 1  # OprBlock.stage once a thread took the block to run it
REQUEUED = DISPATCHED - 1  # taken by a pushing thread, interrupted before it started
POLL = 0.05  # seconds between re-checks of a sleeping thread (a lost wake-up costs no more)
_perf_ns = time.perf_counter_ns
_getframe = sys._getframe


class Executor:
    """See the module docstring."""

    def __init__(self, lock, failures, pools, max_pending, recorder, inline_all=False,
                 sync_gpu_ops=False, run_until_done=None, run_queued=None):
        self.lock = lock
        self.pending = 0
        self.pending_work = 0
        self.pending_now = 0
        self.max_pending = max_pending
        self.resume_at = max_pending * 3 // 4
        self.seq = itertools.count(1)  # 0 is the WAIT markers'
        self.sleepers = []
        self.forking = False
        self.stopped = False
        self.hook = None
        self.recorder = recorder
        self.inline_all = inline_all
        self.sync_gpu_ops = sync_gpu_ops
        self.run_until_done = run_until_done
        self.run_queued = run_queued
        self.wait_for_room = None  # handed by the engine once its Waits exist
        self.run_inline = None  # handed by the engine once its Runner exists
        self.failures = failures
        self.pools = pools
        self.by_ctx = pools.by_ctx
        self.inline_run_ctxs = pools.inline_run_ctxs
        self.streams = pools.streams

    def after_fork_in_child(self):
        """Threads do not survive fork: nothing is pending any more, push numbers start again;
        the hook stays. (The lock, held across the fork, is released by the engine.)"""
        self.pending = self.pending_work = self.pending_now = 0
        self.seq = itertools.count(1)
        self.sleepers = []
        self.forking = self.stopped = False
        tls.executor = None
        tls.pusher = None  # what it counted was dropped with the parent's pending work

    # ---------------------------------------------------------------- sleeping
    def new_sleeper(self):
        """With the lock held: a held lock that the next wake-up releases."""
        sleeper = threading.Lock()
        sleeper.acquire()
        self.sleepers.append(sleeper)
        return sleeper

    def wake_sleepers(self):
        sleepers = self.sleepers
        self.sleepers = []
        for sleeper in sleepers:
            sleeper.release()

    def in_op(self):
        """True when this thread runs an op of this executor: a worker, a block run in a pushing
        thread (``tls.executor``), or an op run by ``run_now`` (found on the stack: only asked
        before a thread would sleep, so the per-op path sets nothing)."""
        if tls.executor is self:
            return True
        run_now = Executor.run_now.__code__
        frame = _getframe(1)
        while frame is not None:
            if frame.f_code is run_now:
                frame_locals = frame.f_locals
                if frame_locals.get("in_fn") and frame_locals.get("self") is self:
                    return True
            frame = frame.f_back
        return False

    def stop(self):
        """With the lock held: no more pushes; the workers exit once idle."""
        self.stopped = True
        self.pools.stop()

    # ---------------------------------------------------------------- pushing
    def push(self, block, throttle=True, then_wait=False):
        """Push ``block``, after the back-pressure wait (``wait_for_room``) unless
        ``throttle`` is False. ``then_wait`` (a block that reads one var, ``read_and_wait``):
        unless the block runs inline here, a WAIT marker on its var is queued right behind it in
        the same locked step; returns the marker's waiter, or None."""
        if not isinstance(block.ctx, Context):
            raise TypeError(f"ctx must be a Context such as cpu(0), got {block.ctx!r}")
        if throttle and self.pending_work >= self.max_pending:
            # (waits.py) read without the lock: a few pushes racing past is harmless
            self.wait_for_room()
        run_inline = False
        waiter = None
        pusher = this_pusher()
        try:
            with self.lock:
                if self.stopped:
                    raise RuntimeError("the engine was shut down; no more ops can be pushed")
                pools = self.by_ctx.get(block.ctx)
                pool = pools[block.prop] if pools is not None else None
                if pool is None:  # first use: start it here (a missing CuPy raises)
                    pool = self.pools.select(block.ctx, block.prop)
                block.pool = pool
                block.pusher = pusher
                run_inline = self.push_locked(block)
                if then_wait and not run_inline:  # (inline: over when this returns)
                    marker = wait_marker(block.const_vars[0])
                    self.push_locked(marker)
                    waiter = marker.waiter
            if run_inline:
                self.run_inline(block)
        except KeyboardInterrupt:
            while run_inline and block.stage < DISPATCHED:
                # Ctrl-C between the push and the inline run: its pool runs it instead
                try:
                    with self.lock:
                        if block.stage < DISPATCHED:
                            self.dispatch(block)
                except KeyboardInterrupt:
                    pass
            raise
        if self.inline_all:
            self.run_until_done(block)  # naive.py: runs it here if it was not ready
        return waiter

    def push_locked(self, block):
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
                self.dispatch(block)  # not run inline: the caller is on its way out
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
                self.pending += 1
                self.pending_work += block.work
                block.pusher.pending += 1
                if block.opr is not None:
                    block.opr.num_pending += 1
            block.wait -= 1
            block.stage = num_vars + 1
        if block.wait == 0 and block.stage < DISPATCHED:
            if block.kind is WAIT:  # granted at once: nothing ran; finish it here
                self._finish_ready([block], None)
            elif block.prop is ASYNC or self.inline_all:
                return True
            else:
                self.dispatch(block)
        return False

    # ---------------------------------------------------------------- running in the pusher
    def run_now(self, fn, ctx, reads, writes, name, info, origin):
        """Run a sync op at once in this thread if ``claim_inline`` takes its vars; False if
        it does not (or back-pressure is on, or ``ctx`` has no pool yet): then it is pushed as
        a block. While it runs, its written var holds ``RUNNING_INLINE`` as its granted write,
        so ops pushed meanwhile by other threads queue behind it as behind a block. No
        thread-local is set around the op (the cost of an op this small): ``in_fn`` tells
        `in_op` that this thread is inside it."""
        run_ctx = self.inline_run_ctxs.get(ctx)
        if run_ctx is None:
            return False
        claimed = in_fn = False
        error = unstarted = None
        hook = self.hook
        if hook is not None:
            start = _perf_ns()
        try:
            with self.lock:
                if self.pending_work >= self.max_pending or self.stopped \
                        or not claim_inline(reads, writes):
                    return False
                self.pending_now += 1
                claimed = True
            in_fn = True
            stream = run_ctx.stream
            order_before(stream, reads, writes, self.streams)
            fn(run_ctx)
            in_fn = False
            if stream is not None:
                after_gpu_op(stream, reads, writes, self.sync_gpu_ops)
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
            report(hook, name, fn, ctx, reads, writes, info, start, error is not None)
        if error is None:  # the common case: nobody queued on its vars meanwhile
            released = False
            try:
                with self.lock:
                    if release_inline(reads, writes):
                        self.pending_now -= 1
                        released = True
                        if self.sleepers and self.pending_now == 0 and self.pending == 0:
                            self.wake_sleepers()
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
        if self.inline_all:
            self.run_queued()  # what its completion made ready: this thread runs it
            if error is not None:
                self.raise_at_push(done[0])
        return True

    def _finish_now(self, done, error, fn, ctx, reads, writes, name, info, origin):
        """Completion of an op run by ``run_now`` that failed, or on whose vars another
        thread queued meanwhile, through a block; restartable: ``done`` holds the block once
        made."""
        if not done:
            seq = next(self.seq)
            outcome = (None, None, 0, False) if error is None else \
                failure_of(error, name or fn, origin, seq, True)
            block = OprBlock(fn, False, ctx, reads, writes, ASYNC, 0, seq, name, info)
            done.extend((block, outcome))
        block, outcome = done
        self.complete(block, *outcome, None, RUNNING_INLINE)

    def raise_at_push(self, block):
        """The NaiveEngine raises an op's error at its push: then no wait raises it again."""
        error = block.error
        self.failures.forget(error)
        raise error

    def requeue(self, block):
        """Put a block this thread took but did not start back on its pool's heap, once,
        through any number of further Ctrl-Cs. Its stage stays REQUEUED until it is in the
        heap; a worker that takes it from there sets RUNNING, so no retry pushes it twice."""
        while True:
            try:
                with self.lock:
                    if block.stage == REQUEUED:
                        heap = block.pool.heap
                        if not any(entry[2] is block for entry in heap):
                            heapq.heappush(heap, (-block.priority, block.seq, block))
                        block.stage = DISPATCHED
                        self.dispatch(block)  # wakes an idle worker; pushes nothing again
                return
            except KeyboardInterrupt:
                pass

    # ---------------------------------------------------------------- completing
    def complete(self, block, error, traceback, error_seq, report, pool, writer, claim=False):
        """Record the outcome of ``block`` (``report``: keep its error for wait_for_all) and
        release its vars; ``writer`` is what its written vars hold as pending write (the
        block, or ``RUNNING_INLINE``). ``claim``: also mark an async block's on_complete as
        called, raising if it already was. Returns the next block for a worker of ``pool``."""
        ready = []
        with self.lock:
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
                self.failures.fail_writes(block.mutable_vars, block.overwrites, error,
                                          traceback, error_seq)
            else:
                for var in block.overwrites:  # rewritten completely: sound again
                    var.error = var.error_tb = None
            block.error = error
            block.done = 1
            if report:
                self.failures.errors.append((error, traceback))
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
            if writer is RUNNING_INLINE:  # an op run by run_now, not a block
                self.pending_now -= 1
            else:
                self.pending -= 1
                self.pending_work -= block.work
                block.pusher.pending -= 1
                opr = block.opr
                if opr is not None:
                    opr.num_pending -= 1
                    if opr.deleted and opr.num_pending == 0:
                        opr.fn = None
            block.done = num_vars + 2
        # back-pressure sleepers wake when this completion took the pending work down to
        # resume_at or below (a block of more work than 1 may step over it)
        if self.sleepers and (self.pending + self.pending_now == 0
                              or self.pending_work <= self.resume_at
                              < self.pending_work + block.work
                              or self.forking or self.inline_all):
            self.wake_sleepers()
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
                self.dispatch(block)
        heap = pool.heap if keep is not None else None
        if heap and heap[0][:2] < (-keep.priority, keep.seq):
            # An earlier or higher-priority op is queued: run that one first. The count of
            # queued ops is unchanged, so no idle worker needs waking.
            keep = heapq.heappushpop(heap, (-keep.priority, keep.seq, keep))[2]
        return keep

    def dispatch(self, block):
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

