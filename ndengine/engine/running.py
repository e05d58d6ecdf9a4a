"""Running a block: the one place an op's function is called for a block, whatever thread runs
it (a worker, or a pushing or waiting thread on the NaiveEngine and for ready ASYNC ops). Ops run
at their push without a block (``Executor.run_now``) call their function there.

``execute`` applies the failure rule (``skip_error``: cancelled, or an input failed), calls the
op's function (with the run hook's stamps around it when one is installed), turns an exception
into the stored failure (``failure_of``: the error notes of errors.py, or the "interrupted"
error of a Ctrl-C in the pushing thread) and completes the block through the executor
(``Executor.complete``), which returns the next block for the calling worker. An async op's
function gets an ``on_complete`` (oncomplete.py) and the block completes when it is called. A
block taken by a pushing thread and interrupted before it started goes back to its pool
(``Executor.requeue``).

`Runner`, field by field (set at creation; it changes no state of its own)
    executor       the engine's `Executor`: ``hook`` and ``recorder`` (read once per block),
                   ``complete`` and ``requeue``, ``lock``.
    complete, requeue, lock   the executor's, bound once (no attribute hop per block).
    failures       the engine's `Failures`: ``any_failed`` and ``cancel_below`` decide whether
                   the failure rule must be checked.
    inline_run_ctxs, streams  the engine's `Pools` containers: the RunContext of a block run in a
                   pushing thread, and whether any GPU stream exists (devices.order_before).
    sync_gpu_ops   wait for a GPU op's stream after it (the NaiveEngine; else events).
"""
import time

from .devices import after_gpu_op, order_before
from .errors import interrupted
from .executor import REQUEUED, RUNNING
from .failures import failure_of
from .oncomplete import OnComplete, async_raised
from .recording import report
from .threadstate import tls
from .transitions import skip_error
from .var import DELETE

__all__ = ["Runner"]

_perf_ns = time.perf_counter_ns


class Runner:
    """See the module docstring."""

    __slots__ = ("executor", "complete", "requeue", "lock", "failures", "pools",
                 "inline_run_ctxs", "streams", "sync_gpu_ops")

    def __init__(self, executor, failures, pools, sync_gpu_ops):
        self.executor = executor
        self.complete = executor.complete
        self.requeue = executor.requeue
        self.lock = executor.lock
        self.failures = failures
        self.pools = pools
        self.inline_run_ctxs = pools.inline_run_ctxs
        self.streams = pools.streams
        self.sync_gpu_ops = sync_gpu_ops

    def run_inline(self, block):
        """Run a ready block in the pushing thread, through ``execute``."""
        run_ctx = self.inline_run_ctxs.get(block.ctx)
        if run_ctx is None:
            run_ctx = self.inline_run_ctxs[block.ctx] = \
                self.pools.inline_run_context(block.ctx)
        outer = tls.executor
        tls.executor = self.executor
        try:
            self.execute(block, run_ctx, None)
        finally:
            tls.executor = outer

    def report_block(self, hook, block, start, failed):
        report(hook, block.name, block.fn, block.ctx, block.const_vars, block.mutable_vars,
               block.info, start, failed)

    def execute(self, block, run_ctx, pool):
        """Run block (or skip it when a var it uses failed, or it was cancelled); return the
        next block for this worker, if completing this one made one ready in ``pool``.
        ``pool`` is None when a pushing or waiting thread runs it."""
        handed_off = called = False
        try:
            block.stage = RUNNING  # inside the try: a Ctrl-C right after it requeues the block
            hook = self.executor.hook
            if hook is None and block.profiling:
                hook = self.executor.recorder
            failures = self.failures
            if failures.any_failed and block.kind is not DELETE:
                skipped = skip_error(block, failures.cancel_below)
                if skipped is not None:
                    if hook is not None:
                        self.report_block(hook, block, _perf_ns(), True)
                    return self.complete(block, *skipped, False, pool, block)
            start = _perf_ns() if hook is not None else 0
            if block.is_async:
                handed_off = True
                try:
                    # its own work orders itself after these (no event is recorded for it)
                    order_before(run_ctx.stream, block.const_vars, block.mutable_vars,
                                 self.streams)
                    block.fn(run_ctx, OnComplete(self, block, hook, start))
                except BaseException as exc:  # noqa: B902 - an op's failure must never kill a worker
                    async_raised(self, block, exc, hook, start)
                return None
            try:
                called = True
                stream = run_ctx.stream
                order_before(stream, block.const_vars, block.mutable_vars, self.streams)
                block.fn(run_ctx)
                if stream is not None:
                    after_gpu_op(stream, block.const_vars, block.mutable_vars, self.sync_gpu_ops)
            except BaseException as exc:  # noqa: B902 - an op's failure must never kill a worker
                if hook is not None:
                    self.report_block(hook, block, start, True)
                outcome = failure_of(exc, block.name or block.fn, block.origin, block.seq,
                                     pool is None)
                if not outcome[3]:
                    # Ctrl-C while the pushing thread ran the op: its outputs are incomplete, so
                    # they fail; the interrupt itself goes on to the user, now, not at a wait.
                    self.complete(block, *outcome, pool, block)
                    raise
                return self.complete(block, *outcome, pool, block)
            if hook is not None:
                self.report_block(hook, block, start, False)
            return self.complete(block, None, None, 0, False, pool, block)
        except KeyboardInterrupt as exc:  # the pushing thread, outside the op's own try
            if not (called or handed_off) and block.done == 0:
                # Ctrl-C before the op started: nothing failed; its pool runs it later
                block.stage = REQUEUED
                self.requeue(block)
                raise
            while not handed_off and block.done == 0:
                try:
                    self.complete(block, *interrupted(exc), block.seq, False, pool, block)
                except KeyboardInterrupt:
                    pass
            raise
