"""NaiveEngine: the placement policy "run everything in the pushing thread" (dask's
SynchronousExecutor). The debugging engine: an op runs at its push, and its error raises there.

It is the same core as the threaded engines (core.py): the same push, the same executor, the
same failure rules (``skip_error``: an op pushed later on a failed var is skipped with the
earliest failure of its inputs; an op that overwrites its failed outputs completely runs and
clears them; deletions still run), the same error notes and Ctrl-C handling. Only placement
differs: every op is placed inline, so it runs in the pushing thread once its vars are free
(at once, unless another thread's op holds one), and the push then raises its error, if any
(which no wait raises again). A push from inside an op that must wait for that op is run by the
pushing thread right after the op. Nothing is ever queued for long, so cancel_pending finds
nothing to drop.

State (beyond core.py's): ``_pool``, the one `WorkerPool` of the engine, with no workers: its
heap holds blocks that became ready while their pushing thread was not there to run them (a
block another thread's op held back, a push interrupted by Ctrl-C); pushing and waiting threads
run them (``_run_queued``, which the executor and the waits call). Invariant: the heap is empty
whenever no push or wait is under way. A forked child gets a new one.
"""
import heapq

from .config import worker_count
from .core import EngineCore
from .executor import POLL, REQUEUED, RUNNING
from .pools import WorkerPool

__all__ = ["NaiveEngine"]


class NaiveEngine(EngineCore):
    kind = "NaiveEngine"
    _inline_all = True
    _sync_gpu_ops = True  # every op is over when its push returns, a GPU op's work too

    def __init__(self, num_cpu_workers=None, num_gpu_workers=2, num_copy_workers=1,
                 stream_factory=None, max_pending=None):
        # Worker counts are accepted (and checked) so every engine takes the same options;
        # none are started.
        for value, what in ((num_cpu_workers, "num_cpu_workers"),
                            (num_gpu_workers, "num_gpu_workers"),
                            (num_copy_workers, "num_copy_workers")):
            if value is not None:
                worker_count(value, what)
        self._pool = WorkerPool("pushing threads")
        super().__init__(1, 1, 1, stream_factory, max_pending)

    def _after_fork_in_child(self):
        self._pool = WorkerPool("pushing threads")
        return super()._after_fork_in_child()

    def __repr__(self):
        return "<NaiveEngine>"

    def _make_pool(self, ctx, prop):
        return self._pool

    def _run_until_done(self, block):
        """After the push of ``block``: run it here if it was held back, then raise its
        error, as the push's own."""
        final = len(block.const_vars) + len(block.mutable_vars) + 2
        executor = self._executor
        if block.done != final:
            if executor.in_op():
                return  # pushed from inside an op that it waits for: run after that op
            heap = self._pool.heap
            while block.done != final:
                sleeper = None
                with executor.lock:
                    if block.done == final:
                        break
                    if not heap:
                        sleeper = executor.new_sleeper()  # every completion wakes it
                if sleeper is not None:
                    sleeper.acquire(timeout=POLL)
                else:
                    self._run_queued()
        if self._pool.heap:
            self._run_queued()
        if block.error is not None:
            executor.raise_at_push(block)

    def _run_queued(self):
        """Run, in this thread, the ready blocks no pushing thread took."""
        heap = self._pool.heap
        executor = self._executor
        if not heap or executor.in_op():
            return
        while heap:
            ready = None
            try:
                with executor.lock:
                    if not heap:
                        return
                    ready = heap[0][2]  # named before the pop: a Ctrl-C after it loses nothing
                    heapq.heappop(heap)
                self._runner.run_inline(ready)
            except KeyboardInterrupt:
                if ready is not None and ready.done == 0 and ready.stage < RUNNING:
                    # taken, not started (perhaps already put back by execute: requeue
                    # looks in the heap first, so the block is never queued twice)
                    ready.stage = REQUEUED
                    executor.requeue(ready)
                raise
