"""Random programs checked against serial execution (item 2), and many pushing threads
(item 11)."""
import os
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from ndengine import engine as E
from ndengine.engine import FnProperty, cpu, gpu

from engine_helpers import (KINDS, TIMEOUT, FakeStream, FakeStreamFactory,  # noqa: F401
                            assert_quiescent, engines, run_threads, shutdown, wait_all,
                            wait_var)

CTXS = [cpu(0), cpu(1), gpu(0)]
WAIT_TIMEOUT = 5.0  # a deadlocked example fails after this long

# Shrinking re-runs the program many times; when the bug is a deadlock every run costs
# WAIT_TIMEOUT, so shrinking is off unless asked for (NDENGINE_TEST_SHRINK=1). Value bugs
# (wrong observations) still print the full failing program.
PHASES = tuple(Phase) if os.environ.get("NDENGINE_TEST_SHRINK") else \
    (Phase.explicit, Phase.reuse, Phase.generate, Phase.target)
PROPS = [FnProperty.NORMAL, FnProperty.NORMAL, FnProperty.CPU_PRIORITIZED, FnProperty.ASYNC,
         FnProperty.COPY_TO_GPU, FnProperty.COPY_FROM_GPU]
SLEEPS = [0, 0, 0, 0.0003, 0.002]


@st.composite
def programs(draw, max_ops=40):
    num_vars = draw(st.integers(1, 6))
    var = st.integers(0, num_vars - 1)
    steps = []
    for _ in range(draw(st.integers(1, max_ops))):
        if draw(st.integers(0, 9)) == 0:
            steps.append(("wait", draw(var)))
            continue
        steps.append(("op", {
            "reads": draw(st.lists(var, max_size=3)),  # duplicates and overlaps allowed
            "writes": draw(st.lists(var, max_size=3)),
            "mode": draw(st.sampled_from(["sync", "sync", "async-now", "async-later"])),
            "ctx": draw(st.sampled_from(range(len(CTXS)))),
            "prop": draw(st.sampled_from(PROPS)),
            "priority": draw(st.integers(-2, 2)),
            "sleep": draw(st.sampled_from(SLEEPS)),
        }))
    if draw(st.booleans()):
        steps.append(("wait_all", None))
    return num_vars, steps


def effective(spec):
    writes = sorted(set(spec["writes"]))
    reads = sorted(set(spec["reads"]) - set(writes))
    return reads, writes


def new_value(op_index, var, obs_reads, obs_writes):
    return hash((op_index, var, obs_reads, obs_writes)) & 0x7FFFFFFF


def run_serially(num_vars, steps):
    values = [0] * num_vars
    observed = {}
    checks = []
    for index, (what, arg) in enumerate(steps):
        if what == "op":
            reads, writes = effective(arg)
            obs_r = tuple(values[k] for k in reads)
            obs_w = tuple(values[k] for k in writes)
            for k in writes:
                values[k] = new_value(index, k, obs_r, obs_w)
            observed[index] = (obs_r, obs_w)
        elif what == "wait":
            checks.append((index, arg, values[arg]))
        else:
            checks.append((index, None, list(values)))
    return values, observed, checks


class Tracker:
    """Detects two ops inside a conflicting pair of accesses at the same time."""

    def __init__(self, num_vars):
        self.lock = threading.Lock()
        self.readers = [0] * num_vars
        self.writers = [0] * num_vars
        self.violations = []

    def enter(self, index, reads, writes):
        with self.lock:
            for k in writes:
                if self.readers[k] or self.writers[k]:
                    self.violations.append((index, "write", k))
                self.writers[k] += 1
            for k in reads:
                if self.writers[k]:
                    self.violations.append((index, "read", k))
                self.readers[k] += 1

    def leave(self, reads, writes):
        with self.lock:
            for k in writes:
                self.writers[k] -= 1
            for k in reads:
                self.readers[k] -= 1


def run_on_engine(eng, num_vars, steps, completer):
    vars_ = [eng.new_variable() for _ in range(num_vars)]
    values = [0] * num_vars
    observed = {}
    runs = {}
    checks = []
    bad_ctx = []
    tracker = Tracker(num_vars)

    def make_body(index, spec, reads, writes):
        def body():
            tracker.enter(index, reads, writes)
            try:
                obs_r = tuple(values[k] for k in reads)
                obs_w = tuple(values[k] for k in writes)
                if spec["sleep"]:
                    time.sleep(spec["sleep"])
                for k in writes:
                    values[k] = new_value(index, k, obs_r, obs_w)
                observed[index] = (obs_r, obs_w)
                runs[index] = runs.get(index, 0) + 1
            finally:
                tracker.leave(reads, writes)
        return body

    def check_rc(rc, ctx, spec):
        if rc.ctx is not ctx:
            bad_ctx.append(("ctx", rc.ctx, ctx))
        inline = spec["prop"] is FnProperty.ASYNC
        if ctx.device_type == "gpu" and not inline and not isinstance(rc.stream, FakeStream):
            bad_ctx.append(("stream", rc.stream, ctx))
        if ctx.device_type == "cpu" and rc.stream is not None:
            bad_ctx.append(("cpu stream", rc.stream, ctx))

    for index, (what, spec) in enumerate(steps):
        if what == "wait":
            wait_var(eng, vars_[spec], WAIT_TIMEOUT)
            checks.append((index, spec, values[spec]))
            continue
        if what == "wait_all":
            wait_all(eng, WAIT_TIMEOUT)
            checks.append((index, None, list(values)))
            continue
        reads, writes = effective(spec)
        body = make_body(index, spec, reads, writes)
        ctx = CTXS[spec["ctx"]]
        kwargs = dict(const_vars=[vars_[k] for k in spec["reads"]],
                      mutable_vars=[vars_[k] for k in spec["writes"]],
                      prop=spec["prop"], priority=spec["priority"], name=f"op{index}")
        if spec["mode"] == "sync":
            def fn(rc, body=body, ctx=ctx, spec=spec):
                check_rc(rc, ctx, spec)
                body()
            eng.push_sync(fn, ctx, **kwargs)
        elif spec["mode"] == "async-now":
            def fn(rc, on_complete, body=body, ctx=ctx, spec=spec):
                check_rc(rc, ctx, spec)
                body()
                on_complete()
            eng.push_async(fn, ctx, **kwargs)
        else:
            def fn(rc, on_complete, body=body, ctx=ctx, spec=spec):
                check_rc(rc, ctx, spec)

                def later():
                    try:
                        body()
                    except BaseException as exc:  # noqa: B902
                        on_complete(exc)
                    else:
                        on_complete()
                completer.submit(later)
            eng.push_async(fn, ctx, **kwargs)
    wait_all(eng, WAIT_TIMEOUT)
    return vars_, values, observed, runs, checks, tracker.violations, bad_ctx


def check_program(kind, workers, num_vars, steps):
    factory = FakeStreamFactory()
    options = {"stream_factory": factory}
    if kind != "NaiveEngine":
        options.update(num_cpu_workers=workers, num_gpu_workers=workers,
                       num_copy_workers=max(1, workers // 2))
    eng = E.create(kind, **options)
    completer = ThreadPoolExecutor(2)
    try:
        vars_, values, observed, runs, checks, violations, bad_ctx = run_on_engine(
            eng, num_vars, steps, completer)
        exp_values, exp_observed, exp_checks = run_serially(num_vars, steps)
        assert violations == []
        assert bad_ctx == []
        assert observed == exp_observed
        assert all(count == 1 for count in runs.values())
        assert checks == exp_checks
        assert values == exp_values
        assert_quiescent(eng, vars_)
        for var in vars_:
            assert var.error is None
        if kind != "NaiveEngine":
            assert eng._failures.errors == []
    finally:
        completer.shutdown(wait=False)
        shutdown(eng, WAIT_TIMEOUT)


@settings(max_examples=60, deadline=None, phases=PHASES,
          suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(["ThreadedEnginePooled", "ThreadedEnginePerDevice"]),
       workers=st.integers(1, 4), program=programs())
def test_random_programs_match_serial_execution_threaded(kind, workers, program):
    check_program(kind, workers, *program)


@settings(max_examples=20, deadline=None, phases=PHASES,
          suppress_health_check=[HealthCheck.too_slow])
@given(program=programs(max_ops=25))
def test_random_programs_match_serial_execution_naive(program):
    check_program("NaiveEngine", 1, *program)


@pytest.mark.parametrize("kind", ["ThreadedEnginePooled", "ThreadedEnginePerDevice"])
@pytest.mark.parametrize("seed", range(3))
def test_random_program_larger_fixed_seeds(kind, seed):
    # A few larger programs (more ops, more overlap) than hypothesis generates by default.
    rng = random.Random(seed)
    num_vars = 8
    steps = []
    for _ in range(400):
        if rng.random() < 0.03:
            steps.append(("wait", rng.randrange(num_vars)))
            continue
        steps.append(("op", {
            "reads": [rng.randrange(num_vars) for _ in range(rng.randint(0, 3))],
            "writes": [rng.randrange(num_vars) for _ in range(rng.randint(0, 2))],
            "mode": rng.choice(["sync", "sync", "async-now", "async-later"]),
            "ctx": rng.randrange(len(CTXS)),
            "prop": rng.choice(PROPS),
            "priority": rng.randint(-2, 2),
            "sleep": rng.choice([0, 0, 0, 0, 0.0002]),
        }))
    check_program(kind, 1 + seed, num_vars, steps)


# ---------------------------------------------------------------------------- item 11
NUM_PUSHERS = 8
OPS_PER_PUSHER = 2000


@pytest.mark.parametrize("kind", KINDS)
def test_many_pushing_threads(engines, kind):
    eng = engines(kind, **({} if kind == "NaiveEngine" else {"num_cpu_workers": 2}))
    shared = [eng.new_variable() for _ in range(3)]
    private = [eng.new_variable() for _ in range(NUM_PUSHERS)]
    private_log = [[] for _ in range(NUM_PUSHERS)]
    shared_log = [[] for _ in range(len(shared))]
    shared_count = [0] * len(shared)
    expected_private = [[] for _ in range(NUM_PUSHERS)]
    expected_shared = [[[] for _ in range(NUM_PUSHERS)] for _ in shared]
    read_checks = []
    start = threading.Barrier(NUM_PUSHERS, timeout=TIMEOUT)

    def pusher(t):
        rng = random.Random(t)
        start.wait()
        for i in range(OPS_PER_PUSHER):
            kind_ = rng.randrange(4)
            s = rng.randrange(len(shared))
            if kind_ == 0:  # write private
                expected_private[t].append(i)
                eng.push_sync(lambda rc, t=t, i=i: private_log[t].append(i), cpu(),
                              mutable_vars=[private[t]])
            elif kind_ == 1:  # read shared, write private
                expected_private[t].append(i)

                def op(rc, t=t, i=i, s=s):
                    private_log[t].append(i)
                    read_checks.append(shared_count[s] >= 0)
                eng.push_sync(op, cpu(), const_vars=[shared[s]], mutable_vars=[private[t]])
            elif kind_ == 2:  # write shared (read-modify-write: lost updates show up)
                expected_shared[s][t].append(i)

                def op(rc, t=t, i=i, s=s):
                    count = shared_count[s]
                    shared_log[s].append((t, i))
                    shared_count[s] = count + 1
                eng.push_sync(op, cpu(), mutable_vars=[shared[s]],
                              const_vars=[private[t]])
            else:  # async write of private that reads a shared var
                expected_private[t].append(i)

                def aop(rc, done, t=t, i=i):
                    private_log[t].append(i)
                    done()
                eng.push_async(aop, cpu(), const_vars=[shared[s]],
                               mutable_vars=[private[t]])

    run_threads(pusher, NUM_PUSHERS, what="a pusher")
    wait_all(eng, timeout=60)
    assert private_log == expected_private
    for s in range(len(shared)):
        assert shared_count[s] == len(shared_log[s]) == sum(map(len, expected_shared[s]))
        for t in range(NUM_PUSHERS):
            assert [i for tt, i in shared_log[s] if tt == t] == expected_shared[s][t]
    total = sum(map(len, private_log)) + sum(map(len, shared_log))
    assert total == NUM_PUSHERS * OPS_PER_PUSHER, "lost ops"
    assert_quiescent(eng, shared + private)
