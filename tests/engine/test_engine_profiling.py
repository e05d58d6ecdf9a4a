"""Profiling records (item 16) and per-push profiling of operators (item 14)."""
import threading
import time

import pytest

from ndengine.engine import FnProperty, OpRecord, cpu

from engine_helpers import KINDS, THREADED, engines, wait_all  # noqa: F401


def settle(eng):
    try:
        wait_all(eng)
    except Exception:  # noqa: BLE001 - failures are part of these tests
        pass


def by_name(records):
    return {r.name: r for r in records}


@pytest.mark.parametrize("kind", KINDS)
def test_records_of_executed_ops(engines, kind):
    eng = engines(kind, **({} if kind == "NaiveEngine" else {"num_cpu_workers": 2}))
    eng.profiling = True
    a, b, c = eng.new_variable(), eng.new_variable(), eng.new_variable()

    def named_fn(rc):
        time.sleep(0.002)

    eng.push_sync(lambda rc: time.sleep(0.001), cpu(0), const_vars=[a], mutable_vars=[b],
                  name="first", info={"k": 1})
    eng.push_sync(named_fn, cpu(1), const_vars=[a, c, b], mutable_vars=[c])
    eng.push_async(lambda rc, done: done(), cpu(0), mutable_vars=[a], name="async-op",
                   info="x")
    wait_all(eng)
    records = eng.take_records()
    assert all(isinstance(r, OpRecord) for r in records)
    assert len(records) == 3
    recs = by_name(records)
    first, named, asyn = recs["first"], recs["named_fn"], recs["async-op"]
    assert first.ctx is cpu(0) and named.ctx is cpu(1) and asyn.ctx is cpu(0)
    assert first.reads == (a.id,) and first.writes == (b.id,)
    # a var in both lists is a write; order of the remaining reads preserved
    assert named.reads == (a.id, b.id) and named.writes == (c.id,)
    assert asyn.reads == () and asyn.writes == (a.id,)
    assert first.info == {"k": 1} and named.info is None and asyn.info == "x"
    for r in records:
        assert r.start_ns <= r.end_ns
        assert r.failed is False
        if kind == "NaiveEngine":
            assert r.worker == threading.current_thread().name
        else:
            assert r.worker.startswith("ndengine-")
    assert named.end_ns - named.start_ns >= 2_000_000 * 0.9
    # first wrote b, named read b: named started after first ended
    assert named.start_ns >= first.end_ns
    assert eng.take_records() == []  # taken records are forgotten


@pytest.mark.parametrize("kind", KINDS)
def test_no_records_when_profiling_is_off(engines, kind):
    eng = engines(kind)
    v = eng.new_variable()
    eng.push_sync(lambda rc: None, cpu(), mutable_vars=[v])
    wait_all(eng)
    assert eng.take_records() == []


@pytest.mark.parametrize("kind", KINDS)
def test_failed_and_skipped_ops_are_recorded_as_failed(engines, kind):
    eng = engines(kind, **({} if kind == "NaiveEngine" else {"num_cpu_workers": 2}))
    eng.profiling = True
    v, w, u = eng.new_variable(), eng.new_variable(), eng.new_variable()

    def bad(rc):
        raise ValueError("bad")

    def push(*args, **kwargs):
        try:
            eng.push_sync(*args, **kwargs)
        except ValueError:
            assert kind == "NaiveEngine"

    push(bad, cpu(), mutable_vars=[v], name="bad")
    push(lambda rc: None, cpu(), const_vars=[v], mutable_vars=[w], name="skipped")
    push(lambda rc: None, cpu(), mutable_vars=[u], name="fine")
    try:
        eng.push_async(lambda rc, done: done(RuntimeError("async bad")), cpu(),
                       mutable_vars=[u], name="async-bad")
    except RuntimeError:
        assert kind == "NaiveEngine"
    eng.delete_variable(lambda rc: None, cpu(), v)
    settle(eng)
    recs = by_name(eng.take_records())
    assert recs["bad"].failed is True
    assert recs["skipped"].failed is True
    assert recs["fine"].failed is False
    assert recs["async-bad"].failed is True
    assert recs["delete_variable"].failed is False
    assert recs["skipped"].reads == (v.id,) and recs["skipped"].writes == (w.id,)
    assert all(r.start_ns <= r.end_ns for r in recs.values())


@pytest.mark.parametrize("kind", THREADED)
def test_inline_async_prop_record_names_the_pushing_thread(engines, kind):
    eng = engines(kind, num_cpu_workers=2)
    eng.profiling = True
    eng.push_sync(lambda rc: None, cpu(), mutable_vars=[eng.new_variable()],
                  prop=FnProperty.ASYNC, name="inline")
    wait_all(eng)
    (rec,) = eng.take_records()
    assert rec.name == "inline" and rec.worker == threading.current_thread().name


@pytest.mark.parametrize("kind", KINDS)
def test_operator_push_with_profiling_records_even_when_engine_profiling_is_off(engines, kind):
    eng = engines(kind, **({} if kind == "NaiveEngine" else {"num_cpu_workers": 2}))
    assert eng.profiling is False
    v, w = eng.new_variable(), eng.new_variable()
    op = eng.new_operator(lambda rc, done: done(), [v], [w], name="opr")
    eng.push(op, cpu(1), profiling=True)
    eng.push(op, cpu(0))  # not recorded
    eng.push_sync(lambda rc: None, cpu(), mutable_vars=[v], name="plain")  # not recorded
    wait_all(eng)
    records = eng.take_records()
    assert len(records) == 1
    (rec,) = records
    assert rec.name == "opr" and rec.ctx is cpu(1) and rec.reads == (v.id,) \
        and rec.writes == (w.id,) and rec.failed is False and rec.start_ns <= rec.end_ns


@pytest.mark.parametrize("kind", KINDS)
def test_record_default_name_is_fn_name(engines, kind):
    eng = engines(kind)
    eng.profiling = True

    def some_function(rc):
        pass

    eng.push_sync(some_function, cpu(), mutable_vars=[eng.new_variable()])
    op = eng.new_operator(lambda rc, done: done(), [], [eng.new_variable()])
    eng.push(op, cpu())
    wait_all(eng)
    names = sorted(r.name for r in eng.take_records())  # independent ops: any order
    assert names == ["<lambda>", "some_function"]


@pytest.mark.parametrize("kind", THREADED)
def test_concurrent_records_overlap_in_time(engines, kind):
    eng = engines(kind, num_cpu_workers=2)
    eng.profiling = True
    v = eng.new_variable()
    barrier = threading.Barrier(2, timeout=5)
    for name in ("r1", "r2"):
        eng.push_sync(lambda rc: (barrier.wait(), time.sleep(0.002)), cpu(), const_vars=[v],
                      name=name)
    wait_all(eng)
    r1, r2 = sorted(eng.take_records(), key=lambda r: r.name)
    assert r1.start_ns < r2.end_ns and r2.start_ns < r1.end_ns
    assert r1.worker != r2.worker


@pytest.mark.parametrize("kind", KINDS)
def test_run_hook_sees_every_op_and_calls_a_lazy_info_only_when_installed(engines, kind):
    eng = engines(kind, **({} if kind == "NaiveEngine" else {"num_cpu_workers": 2}))
    described = []

    def describe():
        described.append(1)
        return {"shape": (2,)}

    v, w = eng.new_variable(), eng.new_variable()
    eng.push_sync(lambda rc: None, cpu(), (), (v,), FnProperty.ASYNC, info=describe)
    eng.push_sync(lambda rc: None, cpu(), (), (w,), info=describe)
    wait_all(eng)
    assert described == []  # no hook: the lazy info is never called
    seen = []

    def hook(name, ctx, reads, writes, info, start_ns, end_ns, failed):
        seen.append((name, ctx, reads, writes, info() if callable(info) else info,
                     start_ns <= end_ns, failed))

    assert eng.set_run_hook(hook) is None and eng.run_hook is hook
    eng.push_sync(lambda rc: None, cpu(), (v,), (w,), FnProperty.ASYNC, name="inline",
                  info=describe)
    eng.push_sync(lambda rc: None, cpu(), (w,), (v,), name="queued", info=describe)
    wait_all(eng)
    assert eng.set_run_hook(None) is hook and eng.run_hook is None
    assert sorted(seen, key=lambda s: s[0]) == [
        ("inline", cpu(), (v,), (w,), {"shape": (2,)}, True, False),
        ("queued", cpu(), (w,), (v,), {"shape": (2,)}, True, False)]
    assert described == [1, 1]
    with pytest.raises(TypeError):
        eng.set_run_hook(42)
