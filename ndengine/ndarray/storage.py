"""Device memory: a per-device pool of buffers bucketed by size (MXNet's pooled storage
manager, CuPy's memory pool).

Why a pool: a fresh NumPy buffer is faulted in page by page on its first write, which costs as
much as the arithmetic for a large element-wise op. A buffer handed back by a deleted array is
already faulted in, so reusing it makes ``c = a + b`` in a loop run at memory speed.

Buckets: requests round up to a power of two below 1 MiB and to a multiple of 1 MiB above, so a
freed buffer serves every later request that rounds to the same size. Freed buffers stay pooled
until the pool of a device holds more than ``NDENGINE_POOL_LIMIT_MB`` (default: half the
machine's memory, at most 16 GiB); then the largest pooled buffers are released first.

State of a DevicePool (guarded by its lock)
    free          bucket size -> list of free buffers (uint8 arrays, or CuPy arrays on a GPU).
    held          bytes taken from the system and not released: handed out or pooled
                  (bytes in use = held - pooled, so the per-array paths update one counter).
    pooled        bytes held in ``free``.
    allocs, reuses, releases   counters: fresh allocations, requests served from the pool,
                               buffers given back to the system.
"""
import os
import threading

import numpy as np

__all__ = ["alloc", "free", "stats", "release_all", "bucket_size"]

_SMALL_LIMIT = 1 << 20
_ALIGN = 64  # bytes: keeps every buffer cache-line aligned for the kernels


def bucket_size(nbytes):
    """The size a request of nbytes is served with."""
    if nbytes <= _ALIGN:
        return _ALIGN
    if nbytes <= _SMALL_LIMIT:
        return 1 << (nbytes - 1).bit_length()
    return -(-nbytes // _SMALL_LIMIT) * _SMALL_LIMIT


def _default_limit():
    env = os.environ.get("NDENGINE_POOL_LIMIT_MB")
    if env:
        return int(float(env) * (1 << 20))
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        total = 8 << 30
    return min(total // 2, 16 << 30)


class DevicePool:
    def __init__(self, ctx, limit):
        self.ctx = ctx
        self.limit = limit
        self.lock = threading.Lock()
        self.free = {}
        self.held = 0
        self.pooled = 0
        self.allocs = 0
        self.reuses = 0
        self.releases = 0

    def alloc(self, nbytes):
        size = bucket_size(nbytes)
        lock = self.lock
        lock.acquire()  # not ``with``: this runs for every new array, and it costs half
        try:
            bucket = self.free.get(size)
            if bucket:
                self.pooled -= size
                self.reuses += 1
                return bucket.pop()
            self.held += size
            self.allocs += 1
        finally:
            lock.release()
        return self._new(size)

    def _new(self, size):
        if self.ctx.device_type == "gpu":
            import cupy
            with cupy.cuda.Device(self.ctx.device_id):
                return cupy.empty(size, dtype=np.uint8)
        # Over-allocate and slice so the start is aligned whatever malloc returns.
        raw = np.empty(size + _ALIGN, dtype=np.uint8)
        start = -raw.ctypes.data % _ALIGN
        return raw[start:start + size]

    def give_back(self, data):
        size = data.nbytes
        lock = self.lock
        lock.acquire()
        try:
            bucket = self.free.get(size)
            if bucket is None:
                bucket = self.free[size] = []
            bucket.append(data)
            self.pooled += size
            while self.pooled > self.limit:
                largest = max(s for s, b in self.free.items() if b)
                self.free[largest].pop()
                self.pooled -= largest
                self.held -= largest
                self.releases += 1
        finally:
            lock.release()

    def release_all(self):
        with self.lock:
            self.releases += sum(len(b) for b in self.free.values())
            self.free.clear()
            self.held -= self.pooled
            self.pooled = 0

    def stats(self):
        with self.lock:
            return {"bytes_in_use": self.held - self.pooled, "bytes_pooled": self.pooled,
                    "allocs": self.allocs, "reuses": self.reuses, "releases": self.releases}


_pools = {}
_pools_lock = threading.Lock()


def _pool(ctx):
    pool = _pools.get(ctx)
    if pool is None:
        with _pools_lock:
            pool = _pools.setdefault(ctx, DevicePool(ctx, _default_limit()))
    return pool


def alloc(nbytes, ctx):
    """A buffer of at least nbytes on ctx, from the pool when one fits."""
    return (_pools.get(ctx) or _pool(ctx)).alloc(nbytes)


def free(data, ctx):
    """Give a buffer from alloc back to ctx's pool."""
    (_pools.get(ctx) or _pool(ctx)).give_back(data)


def release_all(ctx=None):
    """Return every pooled (unused) buffer to the system."""
    for pool_ctx, pool in list(_pools.items()):
        if ctx is None or pool_ctx == ctx:
            pool.release_all()


def stats(ctx=None):
    """Memory figures: for one context, or summed over every context used so far.
    Keys: bytes_in_use, bytes_pooled, allocs, reuses, releases."""
    pools = [p for c, p in list(_pools.items()) if ctx is None or c == ctx]
    total = {"bytes_in_use": 0, "bytes_pooled": 0, "allocs": 0, "reuses": 0, "releases": 0}
    for pool in pools:
        for key, value in pool.stats().items():
            total[key] += value
    return total
