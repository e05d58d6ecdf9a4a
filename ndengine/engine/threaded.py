"""The threaded placement policies, ``ThreadedEnginePooled`` and ``ThreadedEnginePerDevice``,
and their worker threads.

Both place an ASYNC op ready at its push in the pushing thread (core.py: inline, no block on the
commonest shapes) and every other ready block on a pool of worker threads; they differ in which
pool serves which (context, property) (MXNet's two threaded engines). A pool is made on the
first push that needs it, and its threads start then.

A worker takes the best block from its pool's heap (pools.py documents the pool state),
runs it through the executor and keeps the best newly ready block of its own pool to run next,
with no queue round trip and no wake-up; with nothing to do it parks on ``wakeups`` until a
dispatch puts a token there. Each worker keeps a RunContext per context it runs on (on a GPU,
with its own stream, made by ``stream_factory``).
"""
import heapq
import threading

from .context import FnProperty
from .core import EngineCore, default_stream_factory
from .pools import Worker, WorkerPool
from .threadstate import tls

__all__ = ["ThreadedEngine", "ThreadedEnginePooled", "ThreadedEnginePerDevice",
           "default_stream_factory"]

CPU_PRIORITIZED = FnProperty.CPU_PRIORITIZED
COPY_PROPS = (FnProperty.COPY_FROM_GPU, FnProperty.COPY_TO_GPU)


class ThreadedEngine(EngineCore):
    """What the threaded policies share: starting pools and the worker loop."""

    def _start_pool(self, name, num_workers, ctx=None, is_copy=False):
        pool = WorkerPool(name)
        pools = self._pools
        for i in range(num_workers):
            worker = Worker(f"ndengine-{name}-{i}")
            if ctx is not None:
                worker.run_ctxs[ctx] = pools.run_context(ctx, is_copy)
            pool.workers.append(worker)
        for worker in pool.workers:
            worker.thread = threading.Thread(target=self._worker_main, args=(pool, worker),
                                             name=worker.name, daemon=True)
            worker.thread.start()
        pools.started(pool)
        return pool

    def _worker_main(self, pool, worker):
        executor = self._executor
        tls.executor = executor
        execute = self._runner.execute
        run_context = self._pools.run_context
        lock = executor.lock
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
                run_ctx = run_ctxs[block.ctx] = run_context(block.ctx, False)
            block = execute(block, run_ctx, pool)


class ThreadedEnginePooled(ThreadedEngine):
    """One compute pool shared by every device, and one copy pool (MXNet's ThreadedEngine)."""

    kind = "ThreadedEnginePooled"

    def _make_pool(self, ctx, prop):
        is_copy = prop in COPY_PROPS
        name = "copy" if is_copy else "compute"
        shared = next((p for p in self._pools.all if p.name == name), None)
        if shared is None:
            size = self.num_copy_workers if is_copy else self.num_cpu_workers
            shared = self._start_pool(name, size)
        if ctx.device_type == "gpu":
            for worker in shared.workers:  # streams made here, so a missing GPU fails the push
                if ctx not in worker.run_ctxs:
                    worker.run_ctxs[ctx] = self._pools.run_context(ctx, is_copy)
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
                for _, other_prop, pool in self._pools.in_use():
                    if other_prop is CPU_PRIORITIZED:
                        return pool  # one prioritized pool serves every CPU device
                return self._start_pool(name, size)
            # Every other property shares the device's normal pool.
            for other_ctx, other_prop, pool in self._pools.in_use():
                if other_ctx is ctx and other_prop is not CPU_PRIORITIZED:
                    return pool
            return self._start_pool(f"cpu{ctx.device_id}", self.num_cpu_workers, ctx)
        is_copy = prop in COPY_PROPS
        for other_ctx, other_prop, pool in self._pools.in_use():
            if other_ctx is ctx and (other_prop in COPY_PROPS) == is_copy:
                return pool
        if is_copy:
            return self._start_pool(f"gpu{ctx.device_id}-copy", self.num_copy_workers, ctx, True)
        return self._start_pool(f"gpu{ctx.device_id}", self.num_gpu_workers, ctx, False)
