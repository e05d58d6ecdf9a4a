"""Device memory: a per-device pool of buffers bucketed by size (MXNet's pooled storage
manager, CuPy's memory pool).

Why a pool: a fresh NumPy buffer is faulted in page by page on its first write, which costs as
much as the arithmetic for a large element-wise op. A buffer handed back by a deleted array is
already faulted in, so reusing it makes ``c = a + b`` in a loop run at memory speed.

Buckets: requests round up to a power of two below 1 MiB and to a multiple of 1 MiB above, so a
freed buffer serves every later request that rounds to the same size. Freed buffers stay pooled
until the pool of a device holds more than ``NDENGINE_POOL_LIMIT_MB`` (default: an eighth of the
machine's memory, at most 2 GiB); then the largest pooled buffers are released first.
``release_all()`` gives every pooled buffer back to the system at once.

Why that default: a loop over arrays of one size needs only a few pooled buffers of that size
to run at memory speed, and 2 GiB covers several arrays of 256 MiB. A pool that kept half the
memory in freed buffers (the old default) starved other processes on the machine of memory that
this process no longer used; the remaining cost of a smaller pool is a fresh allocation (page
faults) for an array larger than what the pool may keep. The variable is read once, at import;
a value that is not a number of MiB >= 0 raises there, naming the variable.

State of a DevicePool (guarded by its lock, a `_PoolLock`)
    free          bucket size -> list of free buffers (uint8 arrays, or CuPy arrays on a GPU).
    owned         id(buffer) -> buffer, for every buffer this pool allocated and has not
                  released (handed out or pooled): free() of a buffer it did not allocate (an
                  unpickled array's copy, say) is ignored, so the counters cannot go wrong or
                  negative. Updated only on the slow paths (fresh allocation, release); the
                  per-array paths pay one lookup, in free. Holding every buffer alive, it also
                  makes ``id(data) in owned`` mean "data is ours".
    held          bytes taken from the system and not released: handed out or pooled
                  (bytes in use = held - pooled). Counted only once the allocation succeeded.
    pooled        bytes held in ``free``.
    fences        id(buffer) -> event, for freed GPU buffers: recorded after every op that
                  used the buffer (gpu.py); the op that takes the buffer again waits on it.
    allocs, reuses, releases   counters: fresh allocations, requests served from the pool,
                               buffers given back to the system.
    deferred      buffers freed by the thread that held the lock (appended without it).

The per-array paths (``DevicePool.alloc`` and ``give_back``, behind the module-level ``alloc``
and ``free``): their locked sections acquire inside a ``try`` and release in its ``finally`` rather
than using ``with`` (which costs about twice as much), and stay safe under Ctrl-C: the acquire
is the first call inside the ``try``, so an interrupt raised just after it took the lock runs
the ``finally``; an acquire interrupted while it waited took nothing, and the ``release`` of a
lock this thread does not hold then raises RuntimeError (ignored there) instead of releasing
another thread's section, which is why the lock is an RLock.

Frees inside a locked section: the cyclic GC may run at any allocation, also while this
thread holds the lock (inside alloc, say), and collect an array whose chunk frees its buffer
here. Sections never nest (a reentrant free would change ``free`` in the middle of the
section), so a free by the thread that holds the lock (``_is_owned``: the RLock knows its
owner, nothing else records it) only appends to ``deferred``; every locked section starts by
moving ``deferred`` into the pool. A free that finds the lock held by another thread waits for
it.

Fork: every lock here is re-created in a child process (os.register_at_fork), and the byte
counts are recomputed there from ``free`` and ``owned``: a thread of the parent may have held a
lock, or been between two updates, at the moment of the fork.
"""
import _thread
import os
import threading

import numpy as np

from ..engine.config import env_float
from . import gpu as _gpu

__all__ = ["alloc", "free", "stats", "release_all", "bucket_size", "host_memory_bytes",
           "HOST_MEMORY_BYTES"]

_SMALL_LIMIT = 1 << 20
_ALIGN = 64  # bytes: the smallest bucket
_PAGE = 4096  # bytes: every buffer starts a page (``DevicePool._new``)


def bucket_size(nbytes):
    """The size a request of nbytes is served with."""
    if nbytes <= _ALIGN:
        return _ALIGN
    if nbytes <= _SMALL_LIMIT:
        return 1 << (nbytes - 1).bit_length()
    return -(-nbytes // _SMALL_LIMIT) * _SMALL_LIMIT


_LIMIT_VARIABLE = "NDENGINE_POOL_LIMIT_MB"


def default_limit(environ=os.environ):
    """The pooled-bytes limit per device: ``NDENGINE_POOL_LIMIT_MB`` MiB when set, else an
    eighth of the machine's memory, at most 2 GiB (see the module docstring for why)."""
    mib = env_float(_LIMIT_VARIABLE, minimum=0, what="a number of MiB >= 0 (0 pools nothing)",
                    environ=environ)
    if mib is not None:
        return int(mib * (1 << 20))
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        total = 8 << 30
    return min(total // 8, 2 << 30)


_LIMIT = default_limit()  # at import: a bad value fails here, not at every op's wait


def host_memory_bytes():
    """Physical memory plus swap: no host array larger than that can ever be backed. NumPy
    raises MemoryError when malloc fails, which with Linux's overcommit depends on the
    system's state; ndengine allocates when an op runs, so it checks this one fixed bound at
    the call instead (an array under it that the system cannot back fails at its first op,
    raised at the wait). None where the machine does not say."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("SwapTotal:"):
                    total += int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        pass
    return total


HOST_MEMORY_BYTES = host_memory_bytes()  # read once


class _PoolLock(_thread.RLock):
    """A pool's lock: an RLock (see the module docstring), with Lock's ``locked`` (which RLock
    lacks before Python 3.14) for the tests and diagnostics that ask whether a section runs."""

    __slots__ = ()

    def locked(self):
        """Whether any thread holds the lock."""
        return self._is_owned() or repr(self).startswith("<locked")


class DevicePool:
    def __init__(self, ctx, limit):
        self.ctx = ctx
        self.limit = limit
        self.lock = _PoolLock()
        self.deferred = []
        self.free = {}
        self.fences = {}
        self.owned = {}
        self.held = 0
        self.pooled = 0
        self.allocs = 0
        self.reuses = 0
        self.releases = 0

    @property
    def owner(self):
        """The calling thread's id while it is inside a locked section, else None."""
        return threading.get_ident() if self.lock._is_owned() else None

    def alloc(self, nbytes):
        """A buffer of at least nbytes, from the pool when one fits."""
        size = bucket_size(nbytes)
        lock = self.lock
        try:  # the acquire first inside the ``try``, not ``with``: see the module docstring
            lock.acquire()
            if self.deferred:
                self._drain()
            bucket = self.free.get(size)
            if bucket:
                # The counts before the pop: an interrupt there leaves a buffer counted in
                # use, never a count off.
                self.pooled -= size
                self.reuses += 1
                data = bucket.pop()
                fence = self.fences.pop(id(data), None) if self.fences else None
            else:
                data = None
        finally:
            try:
                lock.release()
            except RuntimeError:  # the acquire was interrupted before it took the lock
                pass
        if data is None:
            return self._alloc_new(size)
        if fence is not None:  # its last use on another stream may still be running
            _gpu.wait_fence(self.ctx, fence)
        return data

    def give_back(self, data, fence=None):
        """Pool a buffer from ``alloc`` (see the module-level ``free``)."""
        if fence is not None:
            self.fences[id(data)] = fence  # one C call: also safe from a locked section
        lock = self.lock
        if lock._is_owned():
            # This thread is inside a locked section (the GC collected an array there): the
            # next section pools the buffer.
            self.deferred.append(data)
            return
        try:  # see alloc
            lock.acquire()
            if self.deferred:
                self._drain()
            self._pool_buffer(data)
        finally:
            try:
                lock.release()
            except RuntimeError:  # see alloc
                pass

    def _alloc_new(self, size):
        """A fresh buffer of a bucket size, counted (the lock not held)."""
        data = self._new(size)  # may raise MemoryError: then nothing was counted
        with self.lock:
            if self.deferred:
                self._drain()
            self.owned[id(data)] = data
            self.held += size
            self.allocs += 1
        return data

    def _new(self, size):
        if self.ctx.device_type == "gpu":
            return _gpu.backend(self.ctx).new_buffer(self.ctx, size)
        # Over-allocate and slice so the start is aligned whatever malloc returns: to a page,
        # so that an op's input and output buffers start at the same offset in their pages.
        # At 64 bytes, malloc's header put them 64 or 128 bytes apart there, and the CPU
        # took each load of the input for one of the output's stores a few elements back
        # ("4K aliasing"): np.exp over 100,000 float32 between two pool buffers ran 25%
        # slower than NumPy's own call between two malloc'ed ones.
        raw = np.empty(size + _PAGE, dtype=np.uint8)
        start = -raw.ctypes.data % _PAGE
        return raw[start:start + size]

    def _drain(self):
        """Pool the buffers freed while this thread held the lock (lock held)."""
        deferred = self.deferred
        while deferred:  # a free during this loop appends again: the loop takes it too
            self._pool_buffer(deferred.pop())

    def _pool_buffer(self, data):
        """Put a freed buffer in its bucket, releasing the largest beyond the limit (lock
        held)."""
        if self.owned.get(id(data)) is not data:
            self.fences.pop(id(data), None)
            return  # not allocated by this pool: not ours to count or to hand out again
        size = data.nbytes
        bucket = self.free.get(size)
        if bucket is None:
            bucket = self.free[size] = []
        self.pooled += size  # before the append: an interrupt leaves no count off
        bucket.append(data)
        while self.pooled > self.limit:
            largest = max(s for s, b in self.free.items() if b)
            self._release(self.free[largest].pop())
            self.pooled -= largest
            self.held -= largest
            self.releases += 1

    def _release(self, data):
        """Forget a pooled buffer (lock held): the system (or CuPy's pool) takes it back once
        its last use is over."""
        del self.owned[id(data)]
        fence = self.fences.pop(id(data), None) if self.fences else None
        if fence is not None:
            fence.synchronize()  # CuPy may hand it to another stream at once

    def release_all(self):
        with self.lock:
            if self.deferred:
                self._drain()
            for bucket in self.free.values():
                for data in bucket:
                    self._release(data)
                self.releases += len(bucket)
            self.free.clear()
            self.held -= self.pooled
            self.pooled = 0

    def stats(self):
        with self.lock:
            if self.deferred:
                self._drain()
            return {"bytes_in_use": self.held - self.pooled, "bytes_pooled": self.pooled,
                    "allocs": self.allocs, "reuses": self.reuses, "releases": self.releases}

    def _after_fork_in_child(self):
        # The parent's threads are gone: a lock one of them held stays held in the copy, and
        # one may have been between two updates of the counters. Recount from the containers.
        self.lock = _PoolLock()  # ``deferred`` stays ours: the next section pools it
        self.pooled = sum(size * len(bucket) for size, bucket in self.free.items())
        self.held = sum(data.nbytes for data in self.owned.values())


_pools = {}
_pools_lock = threading.Lock()


def _pool(ctx):
    """ctx's pool, made at its first use."""
    pool = _pools.get(ctx)
    if pool is None:
        with _pools_lock:
            pool = _pools.setdefault(ctx, DevicePool(ctx, _LIMIT))
    return pool


def alloc(nbytes, ctx):
    """A buffer of at least nbytes on ctx, from the pool when one fits."""
    return (_pools.get(ctx) or _pool(ctx)).alloc(nbytes)


def free(data, ctx, fence=None):
    """Give a buffer from alloc back to ctx's pool (a buffer alloc did not hand out is ignored:
    the system frees it when its last reference goes). ``fence``: on a GPU, the event after
    the buffer's last use (gpu.py)."""
    (_pools.get(ctx) or _pool(ctx)).give_back(data, fence)


def release_all(ctx=None):
    """Give every pooled (freed, unused) buffer back to the system, for every device or for
    one Context; arrays still alive keep their memory.

    The pool keeps the buffers of deleted arrays (up to ``NDENGINE_POOL_LIMIT_MB`` per device)
    so that the next arrays of the same size skip the page faults of fresh memory. Call this
    after a phase that used large arrays, before handing the machine's memory to other work
    (another library, a subprocess); ``stats()["bytes_pooled"]`` is what it frees. The pool
    refills as arrays are freed again."""
    for pool_ctx, pool in list(_pools.items()):
        if ctx is None or pool_ctx == ctx:
            pool.release_all()
            if pool_ctx.device_type == "gpu":  # and CuPy's own cached blocks
                _gpu.backend(pool_ctx).release_cached(pool_ctx)


def stats(ctx=None):
    """Memory figures: for one context, or summed over every context used so far.
    Keys: bytes_in_use, bytes_pooled, allocs, reuses, releases."""
    pools = [p for c, p in list(_pools.items()) if ctx is None or c == ctx]
    total = {"bytes_in_use": 0, "bytes_pooled": 0, "allocs": 0, "reuses": 0, "releases": 0}
    for pool in pools:
        for key, value in pool.stats().items():
            total[key] += value
    return total


def _after_fork_in_child():
    global _pools_lock
    _pools_lock = threading.Lock()
    for pool in list(_pools.values()):
        pool._after_fork_in_child()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
