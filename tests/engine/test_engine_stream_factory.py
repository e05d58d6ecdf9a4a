"""A custom ``stream_factory`` is checked against the stream protocol (record, wait_event,
synchronize): a class or a non-callable at ``create``, a stream when the factory makes it (at
the push that starts the worker's pool), never later as an AttributeError at a wait."""
import re
import threading

import pytest

from ndengine import engine as E
from ndengine.engine import FnProperty, cpu, gpu
from ndengine.engine.devices import STREAM_METHODS

from engine_helpers import KINDS, assert_quiescent, engines, wait_all, wait_var  # noqa: F401


def tuple_factory(ctx, is_copy):
    return (ctx, is_copy)


class Stream:
    """A stream of the protocol that is not a FakeStream; counts what the engine asks."""

    class Event:
        def __init__(self):
            self.synchronized = 0

        def synchronize(self):
            self.synchronized += 1

    def __init__(self, ctx, is_copy):
        self.calls = []
        self._lock = threading.Lock()

    def _log(self, what):
        with self._lock:
            self.calls.append(what)

    def record(self):
        self._log("record")
        return Stream.Event()

    def wait_event(self, event):
        self._log("wait_event")

    def synchronize(self):
        self._log("synchronize")


class StreamWithoutRecord(Stream):
    record = None


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("prop", [FnProperty.NORMAL, FnProperty.COPY_TO_GPU, FnProperty.ASYNC])
def test_a_stream_without_the_protocol_raises_type_error_at_the_push(engines, kind, prop):
    eng = engines(kind, stream_factory=tuple_factory)
    v = eng.new_variable()
    ran = []
    with pytest.raises(TypeError) as info:
        eng.push_sync(lambda rc: ran.append(1), gpu(0), mutable_vars=[v], prop=prop)
    message = str(info.value)
    assert "lacks the stream methods record, wait_event, synchronize" in message, message
    assert "tuple_factory" in message and re.search(r"\(gpu\(0\), (True|False)\)", message)
    assert ran == [] and v.error is None
    assert_quiescent(eng, [v])
    # the engine and the var still work on the CPU
    eng.push_sync(lambda rc: ran.append(2), cpu(0), mutable_vars=[v])
    wait_var(eng, v)
    wait_all(eng)
    assert ran == [2]


@pytest.mark.parametrize("kind", KINDS)
def test_a_stream_class_missing_a_method_raises_type_error_at_create(kind):
    with pytest.raises(TypeError, match=r"StreamWithoutRecord .* lacks the stream method "
                                        r"record; a stream needs record\(\)"):
        E.create(kind, stream_factory=StreamWithoutRecord)


@pytest.mark.parametrize("kind", KINDS)
def test_a_stream_factory_that_is_not_callable_raises_type_error_at_create(kind):
    with pytest.raises(TypeError, match="stream_factory must be a callable"):
        E.create(kind, stream_factory=Stream(gpu(0), False))


@pytest.mark.parametrize("kind", KINDS)
def test_a_stream_of_the_protocol_runs_gpu_ops(engines, kind):
    made = []

    def factory(ctx, is_copy):
        made.append(Stream(ctx, is_copy))
        return made[-1]

    eng = engines(kind, stream_factory=factory)
    v = eng.new_variable()
    seen = []
    for i in range(3):
        eng.push_sync(lambda rc, i=i: seen.append((i, rc.stream in made)), gpu(0),
                      mutable_vars=[v])
    wait_var(eng, v)
    wait_all(eng)
    assert seen == [(0, True), (1, True), (2, True)]
    # the threaded engines record an event after each op, the NaiveEngine synchronises
    assert any({"record", "synchronize"} & set(stream.calls) for stream in made)


def test_the_protocol_documents_every_method_it_checks():
    assert set(STREAM_METHODS) == {"record", "wait_event", "synchronize"}
    assert all(doc.startswith(name + "(") for name, doc in STREAM_METHODS.items())
