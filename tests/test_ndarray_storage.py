"""The device memory pool: buckets, reuse, the pooled-bytes limit, exact counters."""
import numpy as np

from ndengine.engine import cpu
from ndengine.core import storage
from ndengine.core.storage import DevicePool, bucket_size


def test_buckets():
    assert [bucket_size(n) for n in (0, 1, 64, 65, 1000, 1 << 20)] == \
        [64, 64, 64, 128, 1024, 1 << 20]
    assert bucket_size((1 << 20) + 1) == 2 << 20
    assert bucket_size(5 * (1 << 20) - 3) == 5 << 20


def test_reuse_limit_and_release_keep_exact_counts():
    pool = DevicePool(cpu(0), limit=3000)
    a, b = pool.alloc(100), pool.alloc(1000)  # buckets of 128 and 1024 bytes
    assert a.nbytes == 128 and b.nbytes == 1024 and a.ctypes.data % 64 == 0
    assert pool.stats() == {"bytes_in_use": 1152, "bytes_pooled": 0, "allocs": 2,
                              "reuses": 0, "releases": 0}
    pool.give_back(a)
    again = pool.alloc(120)  # same bucket: the very buffer comes back
    assert again is a
    assert pool.stats() == {"bytes_in_use": 1152, "bytes_pooled": 0, "allocs": 2,
                              "reuses": 1, "releases": 0}
    c = pool.alloc(2000)  # 2048
    for buffer in (again, b, c):
        pool.give_back(buffer)
    # 128 + 1024 + 2048 pooled is over the 3000-byte limit: the largest goes first
    assert pool.stats() == {"bytes_in_use": 0, "bytes_pooled": 1152, "allocs": 3,
                              "reuses": 1, "releases": 1}
    d = pool.alloc(900)
    assert d is b and pool.stats()["bytes_in_use"] == 1024
    pool.release_all()
    assert pool.stats() == {"bytes_in_use": 1024, "bytes_pooled": 0, "allocs": 3,
                              "reuses": 2, "releases": 2}
    pool.give_back(d)
    assert pool.stats()["bytes_in_use"] == 0 and pool.stats()["bytes_pooled"] == 1024


def test_module_functions_use_the_context_pool():
    ctx = cpu(7)  # a context no other test uses
    before = storage.stats(ctx)
    data = storage.alloc(3000, ctx)
    assert data.dtype == np.uint8 and data.nbytes == 4096
    assert storage.stats(ctx)["bytes_in_use"] == before["bytes_in_use"] + 4096
    storage.free(data, ctx)
    assert storage.stats(ctx)["bytes_in_use"] == before["bytes_in_use"]
    assert storage.stats(ctx)["bytes_pooled"] == before["bytes_pooled"] + 4096
