"""Soak test (item 17): a million random ops over a thousand vars on the PerDevice engine;
memory stays flat, nothing deadlocks, the end state is exact.

Run it by hand with ``python -m pytest tests/engine/test_engine_soak.py -m slow``; set
NDENGINE_SOAK_OPS to run it smaller or larger. A short version runs in the default suite.
"""
import os
import random
import time

import pytest

from ndengine import engine as E
from ndengine.engine import FnProperty, cpu

from engine_helpers import assert_quiescent, run_with_timeout, shutdown

SOAK_OPS = int(os.environ.get("NDENGINE_SOAK_OPS", 1_000_000))
SOAK_VARS = 1000
CHECKPOINT = 100_000
SOAK_TIMEOUT = 900  # seconds, for the whole run
RSS_GROWTH_LIMIT = 64 * 2**20  # bytes, between the first checkpoint and the end


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def soak(num_ops, num_vars, checkpoint, seed=0):
    rng = random.Random(seed)
    eng = E.create("ThreadedEnginePerDevice", num_cpu_workers=2)
    try:
        vars_ = [eng.new_variable() for _ in range(num_vars)]
        counts = [0] * num_vars  # each write increments (read-modify-write: races would lose)
        expected = [0] * num_vars
        ctxs = [cpu(0), cpu(1)]
        props = [FnProperty.NORMAL] * 6 + [FnProperty.CPU_PRIORITIZED, FnProperty.ASYNC]
        samples = []

        def make_sync(writes):
            def op(rc):
                for k in writes:
                    counts[k] += 1
            return op

        def make_async(writes):
            def op(rc, on_complete):
                for k in writes:
                    counts[k] += 1
                on_complete()
            return op

        for i in range(num_ops):
            writes = rng.sample(range(num_vars), rng.randint(0, 2))
            reads = [rng.randrange(num_vars) for _ in range(rng.randint(0, 2))]
            for k in writes:
                expected[k] += 1
            kwargs = dict(const_vars=[vars_[k] for k in reads],
                          mutable_vars=[vars_[k] for k in writes],
                          prop=rng.choice(props), priority=rng.randint(0, 2))
            ctx = ctxs[i & 1]
            if i % 5 == 0:
                eng.push_async(make_async(writes), ctx, **kwargs)
            else:
                eng.push_sync(make_sync(writes), ctx, **kwargs)
            if (i + 1) % checkpoint == 0:
                eng.wait_for_all()
                samples.append(rss_bytes())
        eng.wait_for_all()
        samples.append(rss_bytes())
        assert counts == expected
        assert_quiescent(eng, vars_)
        assert eng._failures.errors == []
        return samples
    finally:
        shutdown(eng)


def check_soak(num_ops, num_vars, checkpoint, timeout):
    start = time.monotonic()
    samples = run_with_timeout(lambda: soak(num_ops, num_vars, checkpoint), timeout, "soak")
    if len(samples) >= 3:
        growth = samples[-1] - samples[0]
        assert growth < RSS_GROWTH_LIMIT, \
            f"RSS grew by {growth / 2**20:.1f} MiB over the run: {samples}"
    return time.monotonic() - start


def test_short_soak():
    check_soak(30_000, 200, 10_000, timeout=120)


@pytest.mark.slow
def test_soak_million_ops():
    check_soak(SOAK_OPS, SOAK_VARS, CHECKPOINT, timeout=SOAK_TIMEOUT)
