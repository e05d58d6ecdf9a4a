"""Cross-stream order on GPUs (engine/devices.py): the rules as pure functions with the exact
state after each step, then the engines keeping them, on fake streams."""
import threading

import pytest

from ndengine.engine import devices as D
from ndengine.engine import FnProperty, cpu, gpu
from ndengine.engine.var import ThreadedVar

from engine_helpers import THREADED, FakeStreamFactory, engines, wait_all, wait_var  # noqa: F401


def calls(stream, what=None):
    return [(c[0], c[2]) for c in stream.calls if what is None or c[0] == what]


# ---------------------------------------------------------------- the rules, step by step
def test_record_then_order_state_after_each_step():
    a, b = D.FakeStream(gpu(0), False), D.FakeStream(gpu(0), False)
    v, w = ThreadedVar(1), ThreadedVar(2)
    assert v.device_sync is None

    D.order_on(a, (), (v,))  # first write of v: nothing to wait for
    assert a.calls == []
    written = D.record_on(a, (), (v,))
    assert (v.device_sync.stream, v.device_sync.event, v.device_sync.readers) == (a, written, {})

    D.order_on(a, (v,), (w,))  # a reader on the writer's own stream waits for nothing
    assert calls(a) == [("record", written)]
    read_a = D.record_on(a, (v,), (w,))
    assert v.device_sync.readers == {a: read_a} and v.device_sync.event is written
    assert (w.device_sync.stream, w.device_sync.event) == (a, read_a)

    D.order_on(b, (v,), ())  # a reader on another stream waits on the write's event
    assert calls(b) == [("wait_event", written)]
    read_b = D.record_on(b, (v,), ())
    assert v.device_sync.readers == {a: read_a, b: read_b}

    D.order_on(b, (), (v,))  # a writer waits on the write and on the other stream's reads
    assert calls(b)[2:] == [("wait_event", written), ("wait_event", read_a)]
    rewritten = D.record_on(b, (), (v,))
    assert (v.device_sync.stream, v.device_sync.event, v.device_sync.readers) == (b, rewritten, {})


def test_sync_host_synchronises_only_these_vars_events():
    a = D.FakeStream(gpu(0), False)
    v, w, u = ThreadedVar(1), ThreadedVar(2), ThreadedVar(3)
    D.record_on(a, (), (v, w))
    D.record_on(a, (w,), (u,))
    D.sync_host((v,), ())  # a host read of v: v's last write only
    assert v.device_sync.event.synchronized == 1 and u.device_sync.event.synchronized == 0
    assert a.syncs == 0  # never the stream, never the device
    D.sync_host((), (w,))  # a host write of w: its write and its reads, then nothing is left
    assert w.device_sync is None
    assert u.device_sync.event.synchronized == 1  # w's reader's event (the same record)
    D.sync_host((), (u,), clear=False)  # a wait: synchronised, kept
    assert u.device_sync is not None


# ---------------------------------------------------------------- the engines keep them
def _two_streams_engine(engines, kind, factory):
    return engines(kind, num_cpu_workers=1, num_gpu_workers=2, num_copy_workers=1,
                   stream_factory=factory)


@pytest.mark.parametrize("kind", THREADED)
def test_a_consumer_on_another_stream_starts_only_after_the_producers_event(engines, kind):
    factory = FakeStreamFactory()
    eng = _two_streams_engine(engines, kind, factory)
    seen = []
    lock = threading.Lock()

    def producer(var):
        def run(rc):
            with lock:
                seen.append(("produce", var, rc.stream))
        return run

    def consumer(var):
        def run(rc):
            sync = var.device_sync  # the producer's, while this reader runs
            waited = [c[2] for c in rc.stream.calls if c[0] == "wait_event"]
            with lock:
                seen.append(("consume", var, rc.stream, sync.stream, sync.event, waited))
        return run

    for _ in range(60):
        v = eng.new_variable()
        eng.push_sync(producer(v), gpu(0), mutable_vars=[v])
        eng.push_sync(consumer(v), gpu(0), const_vars=[v])
    wait_all(eng)
    for entry in seen:
        if entry[0] == "consume":
            _, var, stream, producer_stream, event, waited = entry
            assert event is not None and event.stream is producer_stream
            if producer_stream is not stream:
                assert event in waited  # waited on the producer's event before it ran
            else:
                assert event not in waited  # same stream: in order already
    # a copy-pool reader always runs on another stream than the compute producer
    v = eng.new_variable()
    eng.push_sync(producer(v), gpu(0), mutable_vars=[v])
    eng.push_sync(consumer(v), gpu(0), const_vars=[v], prop=FnProperty.COPY_FROM_GPU)
    wait_all(eng)
    _, var, stream, producer_stream, event, waited = seen[-1]
    assert stream.is_copy and not producer_stream.is_copy and event in waited


@pytest.mark.parametrize("kind", THREADED)
def test_a_host_op_synchronises_the_gpu_write_it_reads(engines, kind):
    factory = FakeStreamFactory()
    eng = _two_streams_engine(engines, kind, factory)
    v = eng.new_variable()
    eng.push_sync(lambda rc: None, gpu(0), mutable_vars=[v])
    wait_var(eng, v)
    event = v.device_sync.event
    before = event.synchronized
    eng.push_sync(lambda rc: None, cpu(0), const_vars=[v])
    wait_all(eng)
    assert event.synchronized == before + 1


@pytest.mark.parametrize("kind", THREADED)
def test_wait_for_var_synchronises_that_vars_event_not_the_streams(engines, kind):
    factory = FakeStreamFactory()
    eng = _two_streams_engine(engines, kind, factory)
    v, w = eng.new_variable(), eng.new_variable()
    eng.push_sync(lambda rc: None, gpu(0), mutable_vars=[v])
    eng.push_sync(lambda rc: None, gpu(0), mutable_vars=[w])
    syncs = factory.total_syncs
    wait_var(eng, v)
    assert v.device_sync.event.synchronized == 1
    assert w.device_sync is None or w.device_sync.event.synchronized == 0
    assert factory.total_syncs == syncs


def test_naive_engine_synchronises_each_gpu_op_and_records_nothing(engines):
    factory = FakeStreamFactory()
    eng = engines("NaiveEngine", stream_factory=factory)
    v = eng.new_variable()
    for _ in range(3):
        eng.push_sync(lambda rc: None, gpu(0), mutable_vars=[v])
    assert factory.total_syncs == 3 and factory.total_records == 0 and v.device_sync is None


# ---------------------------------------------------------------- devices
def test_fake_gpus_and_the_errors_of_unusable_gpus(monkeypatch):
    monkeypatch.setattr(D, "_fake_gpus", [2])
    D._checked.clear()
    try:
        D.check(gpu(1))
        assert D.is_fake(gpu(0)) and not D.is_fake(cpu(0)) and D.device_count() == 2
        with pytest.raises(RuntimeError, match=r"gpu\(2\) does not exist: 2 fake GPUs"):
            D.check(gpu(2))
        assert isinstance(D.stream_factory(gpu(0), True), D.FakeStream)
    finally:
        D._checked.clear()


def test_without_cupy_a_gpu_context_says_so(monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_cupy(name, *args, **kwargs):
        if name == "cupy" or name.startswith("cupy."):
            raise ImportError("No module named 'cupy'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(D, "_fake_gpus", [0])
    monkeypatch.setattr(builtins, "__import__", no_cupy)
    D._checked.clear()
    try:
        with pytest.raises(RuntimeError, match="needs CuPy, which is not installed"):
            D.check(gpu(0))
    finally:
        D._checked.clear()


def test_fake_gpu_count_comes_from_the_environment():
    import subprocess
    import sys
    code = ("from ndengine.engine import devices as D; print(D.fake_gpu_count())")
    out = subprocess.run([sys.executable, "-c", code], env={**__import__("os").environ,
                         "NDENGINE_FAKE_GPUS": "3"}, capture_output=True, text=True)
    assert out.stdout.strip() == "3", out.stderr
    bad = subprocess.run([sys.executable, "-c", code], env={**__import__("os").environ,
                         "NDENGINE_FAKE_GPUS": "two"}, capture_output=True, text=True)
    assert "NDENGINE_FAKE_GPUS must be a number" in bad.stderr
