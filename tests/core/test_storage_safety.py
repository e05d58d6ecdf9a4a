"""The pool's counters stay exact through failed allocations and foreign buffers; the pool limit
comes from a valid NDENGINE_POOL_LIMIT_MB or a bounded default; a bad value fails at import."""
import gc
import os
import pickle
import subprocess
import sys
import threading

import numpy as np
import pytest

import ndengine as nd
from ndengine.engine import cpu
from ndengine.core import storage
from ndengine.core.storage import DevicePool

HUGE = 1 << 57  # bytes no machine can allocate: NumPy raises MemoryError at once
ZERO = {"bytes_in_use": 0, "bytes_pooled": 0, "allocs": 0, "reuses": 0, "releases": 0}


def test_failed_allocation_counts_nothing():
    pool = DevicePool(cpu(0), limit=1 << 20)
    with pytest.raises(MemoryError):
        pool.alloc(HUGE)
    assert pool.stats() == ZERO
    data = pool.alloc(100)
    assert pool.stats() == dict(ZERO, bytes_in_use=128, allocs=1)
    pool.give_back(data)
    assert pool.stats() == dict(ZERO, bytes_pooled=128, allocs=1)


def test_frees_of_foreign_buffers_are_ignored():
    pool = DevicePool(cpu(0), limit=1 << 20)
    data = pool.alloc(1000)
    pool.give_back(np.empty(1024, dtype=np.uint8))  # never allocated by the pool
    pool.give_back(pickle.loads(pickle.dumps(data)))  # a copy of a lent buffer
    assert pool.stats() == dict(ZERO, bytes_in_use=1024, allocs=1)
    pool.give_back(data)
    assert pool.stats() == dict(ZERO, bytes_pooled=1024, allocs=1)
    assert pool.alloc(1000) is data and pool.stats()["bytes_in_use"] == 1024
    pool.give_back(data)
    pool.release_all()  # a released buffer is no longer the pool's
    pool.give_back(data)
    assert pool.stats() == dict(ZERO, allocs=1, reuses=1, releases=1)


def test_failed_array_allocation_keeps_counters(nd_engine):
    ctx = cpu(5)  # a context no other test allocates on
    before = storage.stats(ctx)
    with pytest.raises(MemoryError):  # NaiveEngine raises at the call, the others at the wait
        nd.zeros((HUGE,), dtype=np.uint8, ctx=ctx).wait_to_read()
    gc.collect()
    nd.waitall()
    assert storage.stats(ctx) == before
    y = nd.ones(1 << 15, ctx=ctx)  # float64: the pool still works and counts right (pooled:
    y.wait_to_read()  # small arrays take NumPy's memory, outside the pool)
    assert storage.stats(ctx)["bytes_in_use"] == before["bytes_in_use"] + (1 << 18)
    small = nd.ones(10, ctx=ctx)
    small.wait_to_read()
    assert storage.stats(ctx)["bytes_in_use"] == before["bytes_in_use"] + (1 << 18)


def test_unpickled_array_frees_only_its_own_count(nd_engine):
    ctx = cpu(6)
    gc.collect()
    nd.waitall()
    before = storage.stats(ctx)["bytes_in_use"]
    a = nd.ones(1 << 15, ctx=ctx)  # 256 KiB: a pooled size
    a.wait_to_read()
    assert storage.stats(ctx)["bytes_in_use"] == before + (1 << 18)
    b = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(b.asnumpy(), np.ones(1 << 15))
    del b
    gc.collect()
    nd.waitall()
    assert storage.stats(ctx)["bytes_in_use"] == before + (1 << 18)  # only a's own count
    del a
    gc.collect()
    nd.waitall()
    assert storage.stats(ctx)["bytes_in_use"] == before


# ---------------------------------------------------------------- the limit
def test_default_limit_is_an_eighth_of_memory_at_most_2_gib():
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert storage.default_limit({}) == min(total // 8, 2 << 30)
    assert storage.default_limit({"NDENGINE_POOL_LIMIT_MB": ""}) == min(total // 8, 2 << 30)


@pytest.mark.parametrize("text, limit", [("0", 0), ("1.5", 3 << 19), (" 64 ", 64 << 20)])
def test_limit_variable_is_read_in_mib(text, limit):
    assert storage.default_limit({"NDENGINE_POOL_LIMIT_MB": text}) == limit


@pytest.mark.parametrize("text", ["abc", "-1", "nan", "inf", "1e400", "12MB"])
def test_bad_limit_values_raise_naming_the_variable(text):
    with pytest.raises(ValueError, match="NDENGINE_POOL_LIMIT_MB"):
        storage.default_limit({"NDENGINE_POOL_LIMIT_MB": text})


def _python(code, **env):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, **env))


def test_bad_limit_fails_at_import_not_at_each_wait():
    done = _python("import ndengine as nd; print((nd.ones(3) + 1).asnumpy())",
                   NDENGINE_POOL_LIMIT_MB="abc")
    assert done.returncode != 0, done.stdout
    assert "ValueError" in done.stderr and "NDENGINE_POOL_LIMIT_MB" in done.stderr
    assert "'abc'" in done.stderr


def test_good_limit_reaches_the_pools():
    done = _python("import ndengine as nd\n"
                   "x = nd.ones(1 << 18, dtype='uint8'); x.wait_to_read(); del x; nd.waitall()\n"
                   "print(nd.storage.stats()['bytes_pooled'])",
                   NDENGINE_POOL_LIMIT_MB="0.125")  # 128 KiB: the 256 KiB buffer is released
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0"]


# ---------------------------------------------------------------- frees from the cyclic GC
def _in_thread(body, timeout=30):
    """Run body in a daemon thread; a hang (the old self-deadlock) fails instead of hanging."""
    errors = []

    def run():
        try:
            body()
        except BaseException as exc:  # noqa: B902 - reported by the test
            errors.append(exc)
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), "the pool deadlocked on its own lock"
    if errors:
        raise errors[0]


class _CollectingDict(dict):
    """A pool's ``free`` whose first lookup runs the cyclic GC: a collection at an allocation
    inside a locked section, made deterministic."""

    collected = 0

    def get(self, *args):
        if not self.collected:
            self.collected = 1
            gc.collect()
        return super().get(*args)


class _Garbage:
    """A reference cycle whose collection frees a buffer, as Chunk.__del__ does."""

    def __init__(self, free):
        self.free = free
        self.cycle = self

    def __del__(self):
        self.free()


def _gc_free_inside(pool, section):
    """Run section() with a cycle pending that frees a pool buffer when collected, and a
    collection inside the section's first locked lookup; return the buffer."""
    victim = pool.alloc(3000)  # the 4 KiB bucket
    freed = []
    _Garbage(lambda: (freed.append(pool.lock.locked()), pool.give_back(victim)))
    pool.free = _CollectingDict(pool.free)
    _in_thread(section)
    assert freed == [True], "the collection did not free inside the locked section"
    return victim


def test_gc_free_inside_give_back_does_not_deadlock():
    pool = DevicePool(cpu(0), limit=1 << 30)
    other = pool.alloc(100)
    victim = _gc_free_inside(pool, lambda: pool.give_back(other))
    assert pool.deferred == [victim]  # not pooled yet: the next locked section pools it
    assert pool.stats() == dict(ZERO, bytes_pooled=128 + 4096, allocs=2)
    assert not pool.deferred and pool.owner is None
    assert pool.alloc(3000) is victim and pool.alloc(100) is other


def test_gc_free_inside_alloc_is_pooled_by_the_next_section():
    pool = DevicePool(cpu(0), limit=1 << 30)
    victim = _gc_free_inside(pool, lambda: pool.alloc(100))
    assert pool.alloc(3000) is victim  # this alloc drained the deferred free first
    assert pool.stats() == dict(ZERO, bytes_in_use=128 + 4096, allocs=2, reuses=1)


def test_gc_free_of_an_array_inside_allocation_does_not_deadlock(nd_engine):
    """The path through NDArray: a cycle holding an array is collected while a worker (or
    this thread) allocates the next array's memory under the pool's lock."""
    ctx = cpu(7)
    pool = storage._pool(ctx)
    gc.collect()
    nd.waitall()
    before = storage.stats(ctx)["bytes_in_use"]

    def section():
        garbage = _Garbage(lambda: None)
        garbage.array = nd.ones(1 << 14, ctx=ctx)  # 128 KiB (pooled), freed by the collection
        garbage.array.wait_to_read()
        del garbage
        pool.free = _CollectingDict(pool.free)
        nd.ones(1 << 14, ctx=ctx).wait_to_read()  # its allocation collects the cycle
        assert pool.free.collected
        nd.waitall()
    _in_thread(section)
    gc.collect()
    nd.waitall()
    assert pool.owner is None
    assert storage.stats(ctx)["bytes_in_use"] == before


MEDIUM = 1 << 15  # float64: 256 KiB, a pool buffer, under the size that goes to the workers


def test_a_pool_array_used_only_by_ops_run_at_once_frees_its_buffer_when_it_dies(nd_engine):
    # its chunk never got an engine var (ops run at once use none): nothing can be pending
    # on the buffer, which goes back to the pool at once, without the engine's deletion
    ctx = cpu(7)
    gc.collect()
    nd.waitall()
    before = storage.stats(ctx)
    x = nd.array(np.arange(MEDIUM, dtype=np.float64), ctx=ctx)
    y = x * 2.0 + 1.0
    at_once = nd_engine.bulk_size > 1  # the NaiveEngine pushes every op
    if at_once:
        assert y._chunk._var is None and x._chunk._var is None
    np.testing.assert_array_equal(y.asnumpy(), np.arange(MEDIUM) * 2.0 + 1.0)
    in_use = storage.stats(ctx)["bytes_in_use"]
    assert in_use == before["bytes_in_use"] + 2 * (1 << 18)
    del y
    if at_once and x._chunk._var is None:
        assert storage.stats(ctx)["bytes_in_use"] == in_use - (1 << 18)  # now, no waitall
    nd.waitall()
    assert storage.stats(ctx)["bytes_in_use"] == in_use - (1 << 18)
    z = x + 1.0  # takes the buffer y gave back
    assert storage.stats(ctx)["reuses"] > before["reuses"]
    np.testing.assert_array_equal(z.asnumpy(), np.arange(MEDIUM) + 1.0)
    del x, z
    gc.collect()
    nd.waitall()
    assert storage.stats(ctx)["bytes_in_use"] == before["bytes_in_use"]


def test_a_pool_array_with_pending_ops_is_freed_after_them(nd_engine):
    ctx = cpu(8)
    gc.collect()
    nd.waitall()
    before = storage.stats(ctx)["bytes_in_use"]
    x = nd.ones(MEDIUM, ctx=ctx)
    release = threading.Event()
    if type(nd_engine).__name__ == "NaiveEngine":
        release.set()  # it runs each op at its push, in this thread

    def blocked(run_ctx):
        release.wait(10)
    # an op that holds x's var: x's deletion must wait for it, whatever its chunk knows
    nd_engine.push_sync(blocked, ctx, (), (x.engine_var,), name="blocked")
    y = x + 1.0  # pushed after the blocked op (x is not idle): it gets x's var too
    del x
    gc.collect()
    assert storage.stats(ctx)["bytes_in_use"] >= before + (1 << 18)
    release.set()
    np.testing.assert_array_equal(y.asnumpy(), np.full(MEDIUM, 2.0))
    del y
    gc.collect()
    nd.waitall()
    assert storage.stats(ctx)["bytes_in_use"] == before
