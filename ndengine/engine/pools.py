"""Where ready blocks wait to run: the worker pools of an engine, chosen per (context,
property) by the engine kind's placement (threaded.py, naive.py), and the run contexts and GPU
streams its ops run with.

`WorkerPool`, field by field (changed under the engine lock)
    heap             [(-priority, seq, block)]: ready blocks, best first (executor.py pushes).
    num_idle         workers parked on ``wakeups``; a dispatch puts one token there when one is
                     idle (one C call, so an interrupt cannot leave a worker half woken).
    workers          the `Worker` objects (thread, run contexts by ctx); none on the NaiveEngine,
                     whose pushing and waiting threads drain the heap.
    stopping         set by shutdown: idle workers exit.

`Pools`, the engine's pools, field by field
    by_ctx           ctx -> [pool or None per FnProperty], filled lazily by ``select`` under the
                     engine lock (a list indexed by the property keeps the executor's lookup in
                     C; the executor reads it without a method call).
    inline_run_ctxs  ctx -> RunContext for ops run in a pushing thread; set with the ctx's first
                     pool, so the first push on a ctx goes through ``select`` (a missing GPU
                     raises there).
    all              every pool started, in start order (shutdown stops them).
    streams          every GPU stream made for this engine's workers, appended without the lock
                     (one C call): wait_for_all synchronises them; while it is empty, host ops
                     skip the cross-stream checks of devices.py.
    make_pool        the placement: ``make_pool(ctx, prop)`` returns the pool for a
                     (context, property) seen for the first time (the engine kind's).
    stream_factory   ``stream_factory(ctx, is_copy)`` makes a GPU worker's stream (checked).
    inline_streams   True when ops run in a pushing thread get a stream of their own on a GPU
                     (the NaiveEngine, where the pushing thread runs every op).
Invariant: ``inline_run_ctxs`` has a ctx exactly when ``by_ctx`` has it. The dicts and lists are
emptied in place after a fork, never replaced: the executor keeps them for its hot path.
"""
import logging
import queue as _queue

from .context import FnProperty, RunContext
from .devices import check_stream

__all__ = ["Pools", "WorkerPool", "Worker"]

_log = logging.getLogger("ndengine.pool")


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


class Pools:
    """See the module docstring."""

    __slots__ = ("by_ctx", "inline_run_ctxs", "all", "streams", "make_pool", "stream_factory",
                 "inline_streams")

    def __init__(self, make_pool, stream_factory, inline_streams):
        self.by_ctx = {}
        self.inline_run_ctxs = {}
        self.all = []
        self.streams = []
        self.make_pool = make_pool
        self.stream_factory = stream_factory
        self.inline_streams = inline_streams

    def select(self, ctx, prop):
        """With the lock held: the pool that runs a block of ``prop`` on ``ctx``; created (and
        its threads started) on first use."""
        prop = FnProperty(prop)
        pools = self.by_ctx.get(ctx)
        if pools is None or pools[prop] is None:
            run_ctx = self.inline_run_ctxs.get(ctx) or self.inline_run_context(ctx)
            pool = self.make_pool(ctx, prop)  # a missing GPU raises here, before any change
            pools = self.by_ctx.setdefault(ctx, [None] * len(FnProperty))
            pools[prop] = pool
            self.inline_run_ctxs[ctx] = run_ctx
        return pools[prop]

    def started(self, pool):
        """Register a pool whose workers were just started."""
        self.all.append(pool)
        _log.debug("started worker pool %s: %d threads", pool.name, len(pool.workers))

    def in_use(self):
        """(ctx, prop, pool) for every pool chosen so far."""
        return [(ctx, FnProperty(prop), pool) for ctx, pools in self.by_ctx.items()
                for prop, pool in enumerate(pools) if pool is not None]

    def busy_workers(self):
        """How many workers are not parked (running an op, or about to take one)."""
        return sum(len(pool.workers) - pool.num_idle for pool in self.all)

    def inline_run_context(self, ctx):
        """The RunContext of ops run in a pushing thread on ``ctx``."""
        if self.inline_streams:
            return self.run_context(ctx, False)
        return RunContext(ctx, None)

    def run_context(self, ctx, is_copy):
        """A worker's RunContext on ``ctx``: on a GPU, with a new stream of its own."""
        if ctx.device_type != "gpu":
            return RunContext(ctx, None)
        stream = self.stream_factory(ctx, is_copy)
        check_stream(stream, f"the stream {stream!r} made by stream_factory "
                             f"{self.stream_factory!r}")
        self.streams.append(stream)  # one C call: wait_for_all synchronises them
        return RunContext(ctx, stream)

    def stop(self):
        """With the lock held: idle workers exit, and busy ones once their pool is empty."""
        for pool in self.all:
            pool.stopping = True
            while pool.num_idle:
                pool.num_idle -= 1
                pool.wakeups.put(None)

    def after_fork_in_child(self):
        """Threads do not survive fork: forget every pool and stream; new ones start lazily."""
        self.by_ctx.clear()
        self.inline_run_ctxs.clear()
        del self.all[:], self.streams[:]
