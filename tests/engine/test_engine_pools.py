"""Worker pools: thread naming and lazy creation (item 9), GPU pools driven through
stream_factory with fake streams (item 10), back-pressure with max_pending (item 12)."""
import threading
import time

import pytest

from ndengine import engine as E
from ndengine.engine import FnProperty, cpu, gpu

from engine_helpers import (KINDS, THREADED, TIMEOUT, FakeStream, FakeStreamFactory,  # noqa: F401
                            assert_quiescent, engine_threads, engines, run_with_timeout,
                            wait_all, wait_until, wait_var)


def thread_name_of(eng, ctx, prop=FnProperty.NORMAL, **kwargs):
    box = []
    v = eng.new_variable()
    eng.push_sync(lambda rc: box.append((threading.current_thread().name, rc)), ctx,
                  mutable_vars=[v], prop=prop, **kwargs)
    wait_var(eng, v)
    return box[0]


def names(threads):
    return sorted(t.name for t in threads)


# ---------------------------------------------------------------------------- item 9
def test_per_device_pools_are_named_and_created_lazily(engines):
    before = set(threading.enumerate())
    eng = engines("ThreadedEnginePerDevice", num_cpu_workers=2)
    assert engine_threads(before) == []

    name, rc = thread_name_of(eng, cpu(0))
    assert name.startswith("ndengine-cpu0-") and rc.ctx is cpu(0) and rc.stream is None
    assert names(engine_threads(before)) == ["ndengine-cpu0-0", "ndengine-cpu0-1"]

    name, _ = thread_name_of(eng, cpu(0), FnProperty.CPU_PRIORITIZED)
    assert name.startswith("ndengine-cpu_prioritized-")
    assert names(engine_threads(before)) == ["ndengine-cpu0-0", "ndengine-cpu0-1",
                                             "ndengine-cpu_prioritized-0",
                                             "ndengine-cpu_prioritized-1"]

    name, rc = thread_name_of(eng, cpu(1))
    assert name.startswith("ndengine-cpu1-") and rc.ctx is cpu(1)
    # CPU_PRIORITIZED on another CPU device shares the one prioritized pool
    name, rc = thread_name_of(eng, cpu(1), FnProperty.CPU_PRIORITIZED)
    assert name.startswith("ndengine-cpu_prioritized-") and rc.ctx is cpu(1)
    # copy and async properties on a CPU device use the device's normal pool
    name, _ = thread_name_of(eng, cpu(1), FnProperty.COPY_TO_GPU)
    assert name.startswith("ndengine-cpu1-")
    assert names(engine_threads(before)) == [
        "ndengine-cpu0-0", "ndengine-cpu0-1", "ndengine-cpu1-0", "ndengine-cpu1-1",
        "ndengine-cpu_prioritized-0", "ndengine-cpu_prioritized-1"]
    assert all(t.daemon for t in engine_threads(before))


def test_pooled_engine_pools_are_named_and_created_lazily(engines):
    before = set(threading.enumerate())
    eng = engines("ThreadedEnginePooled", num_cpu_workers=3, num_copy_workers=2)
    assert engine_threads(before) == []
    for ctx, prop in [(cpu(0), FnProperty.NORMAL), (cpu(1), FnProperty.NORMAL),
                      (cpu(2), FnProperty.CPU_PRIORITIZED)]:
        name, rc = thread_name_of(eng, ctx, prop)
        assert name.startswith("ndengine-compute-") and rc.ctx is ctx
    assert names(engine_threads(before)) == ["ndengine-compute-0", "ndengine-compute-1",
                                             "ndengine-compute-2"]
    for prop in (FnProperty.COPY_TO_GPU, FnProperty.COPY_FROM_GPU):
        name, _ = thread_name_of(eng, cpu(0), prop)
        assert name.startswith("ndengine-copy-")
    assert names(engine_threads(before)) == ["ndengine-compute-0", "ndengine-compute-1",
                                             "ndengine-compute-2", "ndengine-copy-0",
                                             "ndengine-copy-1"]


@pytest.mark.parametrize("kind", THREADED)
def test_shutdown_stops_worker_threads(kind):
    before = set(threading.enumerate())
    eng = E.create(kind, num_cpu_workers=2)
    thread_name_of(eng, cpu(0))
    threads = engine_threads(before)
    assert threads
    run_with_timeout(eng.notify_shutdown)
    for t in threads:
        t.join(5)
    assert not any(t.is_alive() for t in threads)


@pytest.mark.parametrize("kind", THREADED)
def test_all_workers_of_a_pool_are_used(engines, kind):
    eng = engines(kind, num_cpu_workers=3)
    barrier = threading.Barrier(3, timeout=5)
    seen = set()
    for _ in range(3):
        eng.push_sync(lambda rc: (barrier.wait(), seen.add(threading.current_thread().name)),
                      cpu(0), mutable_vars=[eng.new_variable()])
    wait_all(eng)
    assert len(seen) == 3


# ---------------------------------------------------------------------------- item 10
def record_op(log):
    def op(rc):
        log.append((threading.current_thread().name, rc.ctx, rc.stream))
    return op


def test_per_device_gpu_compute_pool_has_a_stream_per_worker(engines):
    factory = FakeStreamFactory()
    before = set(threading.enumerate())
    eng = engines("ThreadedEnginePerDevice", num_cpu_workers=1, num_gpu_workers=2,
                  num_copy_workers=1, stream_factory=factory)
    assert factory.calls == []
    barrier = threading.Barrier(2, timeout=5)
    log = []

    def meet(rc):
        barrier.wait()
        record_op(log)(rc)

    eng.push_sync(meet, gpu(0), mutable_vars=[eng.new_variable()])
    assert factory.calls == [(gpu(0), False), (gpu(0), False)]  # made at push, per worker
    eng.push_sync(meet, gpu(0), mutable_vars=[eng.new_variable()])
    wait_all(eng)
    assert {name for name, _, _ in log} == {"ndengine-gpu0-0", "ndengine-gpu0-1"}
    streams = [stream for _, _, stream in log]
    assert streams[0] is not streams[1]
    assert all(s.ctx is gpu(0) and s.is_copy is False for s in streams)
    assert all(ctx is gpu(0) for _, ctx, _ in log)
    assert names(engine_threads(before)) == ["ndengine-gpu0-0", "ndengine-gpu0-1"]

    # many more ops: each worker always uses its own stream; no op waits for its stream,
    # each records one event after its work (devices.py); wait_all synchronises each stream
    log.clear()
    syncs = factory.total_syncs
    for i in range(40):
        eng.push_sync(record_op(log), gpu(0), mutable_vars=[eng.new_variable()])
    wait_all(eng)
    by_worker = {}
    for name, _, stream in log:
        by_worker.setdefault(name, set()).add(id(stream))
    assert all(len(ids) == 1 for ids in by_worker.values())
    assert len({next(iter(ids)) for ids in by_worker.values()}) == len(by_worker)
    assert factory.total_syncs == syncs + 2
    assert factory.total_records == 42
    assert len(factory.calls) == 2


def test_per_device_gpu_copy_pool(engines):
    factory = FakeStreamFactory()
    eng = engines("ThreadedEnginePerDevice", num_cpu_workers=1, num_gpu_workers=2,
                  num_copy_workers=2, stream_factory=factory)
    log = []
    v = eng.new_variable()
    eng.push_sync(record_op(log), gpu(0), mutable_vars=[v], prop=FnProperty.COPY_TO_GPU)
    assert factory.calls == [(gpu(0), True), (gpu(0), True)]
    eng.push_sync(record_op(log), gpu(0), mutable_vars=[v], prop=FnProperty.COPY_FROM_GPU)
    wait_all(eng)
    assert all(name.startswith("ndengine-gpu0-copy-") for name, _, _ in log)
    assert all(stream.is_copy is True and stream.ctx is gpu(0) for _, _, stream in log)
    # compute ops on the same GPU go to a separate pool with non-copy streams
    eng.push_sync(record_op(log), gpu(0), mutable_vars=[v])
    wait_all(eng)
    name, _, stream = log[-1]
    assert name in ("ndengine-gpu0-0", "ndengine-gpu0-1") and stream.is_copy is False
    assert sorted(factory.calls, key=repr) == sorted(
        [(gpu(0), True)] * 2 + [(gpu(0), False)] * 2, key=repr)
    assert factory.total_records == 3  # an event after each op, no stream synchronize
    # another GPU gets pools of its own
    eng.push_sync(record_op(log), gpu(1), mutable_vars=[v])
    wait_all(eng)
    assert log[-1][0].startswith("ndengine-gpu1-") and log[-1][2].ctx is gpu(1)


@pytest.mark.parametrize("kind", THREADED)
def test_threaded_gpu_ops_record_events_and_never_wait_for_their_stream(engines, kind):
    factory = FakeStreamFactory()
    eng = engines(kind, num_cpu_workers=2, num_gpu_workers=2, stream_factory=factory)
    v = eng.new_variable()
    syncs_seen = []
    for i in range(10):
        eng.push_sync(lambda rc: syncs_seen.append(factory.total_syncs), gpu(0),
                      mutable_vars=[v])
    for i in range(5):
        eng.push_async(lambda rc, done: done(), gpu(0), mutable_vars=[v])
    for i in range(5):
        eng.push_sync(lambda rc: None, cpu(0), mutable_vars=[v])
    wait_all(eng)
    assert syncs_seen == [0] * 10  # no op waited for a stream
    assert factory.total_records == 10  # the sync ops each tagged v (async ones order themselves)
    assert factory.total_syncs == len(factory.streams)  # wait_all: each stream once


def test_pooled_engine_gpu_ops_use_streams_on_the_shared_pools(engines):
    factory = FakeStreamFactory()
    eng = engines("ThreadedEnginePooled", num_cpu_workers=2, num_copy_workers=1,
                  stream_factory=factory)
    log = []
    v = eng.new_variable()
    eng.push_sync(record_op(log), gpu(0), mutable_vars=[v])
    assert sorted(factory.calls, key=repr) == [(gpu(0), False)] * 2
    eng.push_sync(record_op(log), gpu(0), mutable_vars=[v], prop=FnProperty.COPY_FROM_GPU)
    eng.push_sync(record_op(log), cpu(0), mutable_vars=[v])
    wait_all(eng)
    (n0, c0, s0), (n1, c1, s1), (n2, c2, s2) = log
    assert n0.startswith("ndengine-compute-") and s0.is_copy is False and c0 is gpu(0)
    assert n1.startswith("ndengine-copy-") and s1.is_copy is True and c1 is gpu(0)
    assert n2.startswith("ndengine-compute-") and s2 is None and c2 is cpu(0)
    assert factory.total_records == 2


@pytest.mark.parametrize("kind", KINDS)
def test_stream_synchronize_failure_is_the_op_failure(engines, kind):
    class BadSync(Exception):
        pass

    class Stream(FakeStream):
        def synchronize(self):
            raise BadSync("sync failed")

    eng = engines(kind, stream_factory=lambda ctx, is_copy: Stream(ctx, is_copy))
    v = eng.new_variable()
    if kind == "NaiveEngine":  # it waits for each GPU op's stream: the op fails
        with pytest.raises(BadSync):
            eng.push_sync(lambda rc: None, gpu(0), mutable_vars=[v])
        with pytest.raises(BadSync):
            wait_var(eng, v)
    else:  # the op's work is queued; the wait for all of it finds the failure
        eng.push_sync(lambda rc: None, gpu(0), mutable_vars=[v])
        wait_var(eng, v)
    with pytest.raises(BadSync):
        wait_all(eng)


def test_naive_engine_uses_one_stream_per_gpu_and_synchronizes_sync_ops(engines):
    factory = FakeStreamFactory()
    eng = engines("NaiveEngine", stream_factory=factory)
    log = []
    v = eng.new_variable()
    eng.push_sync(record_op(log), gpu(0), mutable_vars=[v])
    eng.push_sync(record_op(log), gpu(0), mutable_vars=[v], prop=FnProperty.COPY_FROM_GPU)
    eng.push_sync(record_op(log), gpu(1), mutable_vars=[v])
    eng.push_sync(record_op(log), cpu(0), mutable_vars=[v])
    assert factory.calls == [(gpu(0), False), (gpu(1), False)]
    assert log[0][2] is log[1][2] and log[2][2] is not log[0][2] and log[3][2] is None
    # NaiveEngine runs each op to completion before the push returns; for a GPU op that
    # means its stream is synchronized (else a following CPU op can read a buffer that an
    # asynchronous device-to-host copy has not filled yet, and a GPU error would not raise
    # at the op's own push).
    assert factory.total_syncs == 3


class FactoryError(Exception):
    pass


def failing_factory(ctx, is_copy):
    raise FactoryError(f"no device {ctx}")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("prop", [FnProperty.NORMAL, FnProperty.COPY_TO_GPU, FnProperty.ASYNC])
def test_failing_stream_factory_raises_at_push_and_leaves_nothing_pending(engines, kind, prop):
    before = set(threading.enumerate())
    eng = engines(kind, stream_factory=failing_factory)
    v = eng.new_variable()
    ran = []
    with pytest.raises(FactoryError):
        eng.push_sync(lambda rc: ran.append(1), gpu(0), mutable_vars=[v], prop=prop)
    with pytest.raises(FactoryError):
        eng.push_async(lambda rc, done: (ran.append(2), done()), gpu(0), const_vars=[v],
                       prop=prop)
    assert ran == []
    assert_quiescent(eng, [v])
    assert v.error is None
    if kind == "ThreadedEnginePerDevice":
        assert engine_threads(before) == []  # no GPU worker was started
    # the var and the engine still work on the CPU
    eng.push_sync(lambda rc: ran.append(3), cpu(0), mutable_vars=[v])
    wait_var(eng, v)
    wait_all(eng)
    assert ran == [3]


@pytest.mark.parametrize("kind", KINDS)
def test_default_stream_factory_without_cupy_raises_clearly(engines, kind, monkeypatch):
    try:
        import cupy  # noqa: F401 - only its absence matters here
        pytest.skip("CuPy is installed")
    except ImportError:
        pass
    from ndengine.engine import devices
    monkeypatch.setattr(devices, "_fake_gpus", [0])  # real GPUs, as without NDENGINE_FAKE_GPUS
    monkeypatch.setattr(devices, "_checked", set())
    eng = engines(kind)
    v = eng.new_variable()
    with pytest.raises(RuntimeError, match="CuPy"):
        eng.push_sync(lambda rc: None, gpu(0), mutable_vars=[v])
    with pytest.raises(RuntimeError, match="CuPy"):
        eng.push_sync(lambda rc: None, gpu(1), mutable_vars=[v], prop=FnProperty.COPY_TO_GPU)
    assert_quiescent(eng, [v])
    wait_all(eng)


@pytest.mark.parametrize("kind", KINDS)
def test_failing_stream_factory_on_delete_variable_leaves_the_var_alive(engines, kind):
    eng = engines(kind, stream_factory=failing_factory)
    v = eng.new_variable()
    with pytest.raises(FactoryError):
        eng.delete_variable(lambda rc: None, gpu(0), v)
    assert_quiescent(eng, [v])
    deleted = []
    eng.delete_variable(lambda rc: deleted.append(1), cpu(0), v)  # the deletion can be retried
    wait_all(eng)
    assert deleted == [1]


# ---------------------------------------------------------------------------- item 12
@pytest.mark.parametrize("kind", THREADED)
@pytest.mark.parametrize("num_pushers", [1, 3])
def test_back_pressure_blocks_pusher_over_max_pending(engines, kind, num_pushers):
    limit = 50
    eng = engines(kind, num_cpu_workers=1, max_pending=limit)
    gate_open = threading.Event()
    started = threading.Event()

    def gate(rc):
        started.set()
        gate_open.wait(TIMEOUT)

    eng.push_sync(gate, cpu(), mutable_vars=[eng.new_variable()])
    assert started.wait(5)
    per_pusher = 120
    pushed = [0] * num_pushers
    observed = []
    ran = []

    def pusher(p):
        for i in range(per_pusher):
            eng.push_sync(lambda rc: (ran.append(1), time.sleep(0.0002)), cpu(),
                          mutable_vars=[eng.new_variable()])
            observed.append(eng._executor.pending)
            pushed[p] += 1

    threads = [threading.Thread(target=pusher, args=(p,), daemon=True)
               for p in range(num_pushers)]
    for t in threads:
        t.start()
    wait_until(lambda: sum(pushed) >= limit - 1, what="pushers reach the limit")
    time.sleep(0.2)
    stalled_at = sum(pushed)
    assert all(t.is_alive() for t in threads), "a pusher was not blocked by back-pressure"
    assert stalled_at <= limit - 1, f"{stalled_at} ops pushed past a limit of {limit}"
    assert eng._executor.pending <= limit
    assert ran == []
    gate_open.set()  # ops finish; pushers resume
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads), "pusher did not resume"
    wait_all(eng)
    assert max(observed) <= limit
    assert len(ran) == per_pusher * num_pushers
    assert eng._executor.pending == 0


@pytest.mark.parametrize("kind", THREADED)
def test_back_pressure_resumes_before_queue_is_empty(engines, kind):
    # The pusher resumes once pending ops fall to the resume mark (3/4 of the limit), not
    # only when everything has finished.
    limit = 40
    eng = engines(kind, num_cpu_workers=1, max_pending=limit)
    release = threading.Semaphore(0)
    pending_when_resumed = []

    def slow(rc):
        if not release.acquire(timeout=TIMEOUT):
            raise TimeoutError

    for _ in range(limit):
        eng.push_sync(slow, cpu(), mutable_vars=[eng.new_variable()])

    def blocked_push():
        eng.push_sync(lambda rc: None, cpu(), mutable_vars=[eng.new_variable()])
        pending_when_resumed.append(eng._executor.pending)

    t = threading.Thread(target=blocked_push, daemon=True)
    t.start()
    time.sleep(0.1)
    assert t.is_alive()
    for _ in range(limit // 4 - 1):
        release.release()
    time.sleep(0.1)
    assert t.is_alive(), "resumed above the resume mark"
    for _ in range(3):
        release.release()
    t.join(5)
    assert not t.is_alive(), "did not resume at the resume mark"
    for _ in range(limit):
        release.release()
    wait_all(eng)
    assert pending_when_resumed and pending_when_resumed[0] <= limit * 3 // 4 + 1


@pytest.mark.parametrize("kind", THREADED)
def test_wait_for_all_while_a_pusher_is_blocked(engines, kind):
    eng = engines(kind, num_cpu_workers=2, max_pending=5)
    done = []

    def pusher():
        for i in range(50):
            eng.push_sync(lambda rc: (time.sleep(0.001), done.append(1)), cpu(),
                          mutable_vars=[eng.new_variable()])

    t = threading.Thread(target=pusher, daemon=True)
    t.start()
    time.sleep(0.01)
    wait_all(eng)
    t.join(10)
    wait_all(eng)
    assert len(done) == 50
