"""A read of an array that another thread keeps writing waits only for the writes pushed before
it: its place in the order is taken at once (no back-pressure sleep, no lock the writer holds
while it sleeps), and back-pressure bounds the queued work, not the number of engine ops (a
fused window of 64 large writes weighs as those writes).

The bounds are counted in writes (``x += 1`` adds 1 to every element, so the value a read
returns is the number of writes before it), never in seconds, except a generous hang bound:
the machine may be slow and noisy, but a reader must not starve.
"""
import pickle
import threading

import numpy as np
import pytest

import ndengine as nd
from ndengine import engine as _engine
from ndengine.core import lazy
from engine_helpers import KINDS, THREADED, TIMEOUT, run_with_timeout, wait_until

pytestmark = pytest.mark.cpu_only  # lazy windows of CPU arrays (lazy.FUSE_MIN_ELEMENTS)

HANG_BOUND = 30.0  # seconds: a read with a writer running returns within this, or it starved
ELEMENTS = 1 << 20  # float64: every ``x += 1`` is recorded in a lazy window


@pytest.fixture
def process_engine():
    """``process_engine(kind, **options)``: a fresh engine as the process-wide one for the
    test; every op finished and the previous engine back afterwards."""
    made = []

    def make(kind, **options):
        eng = _engine.create(kind, num_cpu_workers=2, **options)
        made.append((eng, _engine.set_engine(eng)))
        return eng

    yield make
    for eng, previous in reversed(made):
        try:
            run_with_timeout(nd.waitall, HANG_BOUND, "waitall")
        finally:
            _engine.set_engine(previous)
            eng.notify_shutdown()


class _Writer:
    """A thread looping ``x += 1`` until stopped; ``recorded``: how many calls returned;
    ``completed``: how many of those writes ran (counted by the engine's run hook)."""

    def __init__(self, eng, x):
        x.wait_to_read()  # its fill is not a write to count
        self.x = x
        self.recorded = 0
        self.completed = 0
        self.error = None
        self.stop = threading.Event()
        self._var = x.engine_var
        eng.set_run_hook(self._count)
        self.thread = threading.Thread(target=self._loop, daemon=True, name="test-writer")

    def _count(self, name, ctx, reads, writes, info, start, end, failed):
        if self._var in writes:  # a window of n writes (its "ops"): n completed
            members = info().get("ops") if callable(info) else None
            self.completed += len(members) if members else 1

    def _loop(self):
        try:
            while not self.stop.is_set():
                self.x += 1
                self.recorded += 1
        except BaseException as exc:  # noqa: B902 - reported by the test
            self.error = exc

    def __enter__(self):
        self.thread.start()
        wait_until(lambda: self.completed >= 2 * lazy.MAX_OPS, what="the writer's first windows")
        return self

    def __exit__(self, *exc_info):
        self.stop.set()
        self.thread.join(HANG_BOUND)
        assert not self.thread.is_alive(), "the writer did not stop"
        assert self.error is None, f"the writer raised {self.error!r}"


def _queued_writes_bound(eng):
    """How many ``x += 1`` writes may be queued and not yet run: back-pressure's bound on the
    pending work, in writes, plus the window a thread may push past it and the one it
    records."""
    per_write = 1 + ELEMENTS // lazy.WORK_ELEMENTS
    return eng._executor.max_pending // per_write + 2 * lazy.MAX_OPS


# Writes the writer may record and run while the reader, between its count and its push (or
# between the read's end and its return), waits for its turns of the GIL: at most a switch
# interval (5 ms) of the writer's time per turn, some 250 writes, for a few turns. Before the
# fix a read waited for hundreds of thousands.
SCHEDULING_SLACK = 32 * lazy.MAX_OPS


def _timed_read(writer, how):
    """(writes recorded and writes run before the read, the read's value, writes run when it
    returned); counted in the reading thread, right before and after the read."""
    recorded, completed = writer.recorded, writer.completed
    if how == "asnumpy":
        value = writer.x.asnumpy()[0]
    else:
        value = pickle.loads(pickle.dumps(writer.x)).asnumpy()[0]  # pickled with the writer on
    return recorded, completed, value, writer.completed


@pytest.mark.parametrize("how", ["asnumpy", "pickle"])
@pytest.mark.parametrize("kind", KINDS)
def test_read_waits_only_for_the_writes_before_it(process_engine, kind, how):
    eng = process_engine(kind)
    x = nd.zeros(ELEMENTS)
    bound = _queued_writes_bound(eng) + SCHEDULING_SLACK
    with _Writer(eng, x) as writer:
        for _ in range(4):
            recorded, completed, value, done_at_return = run_with_timeout(
                lambda: _timed_read(writer, how), HANG_BOUND, f"{how} of x")
            before = int(value)  # x += 1 adds 1: the number of writes in the read's past
            assert value == before
            # every write recorded before the call is in the read's past
            assert before >= recorded
            # what it waited for was queued before it, within back-pressure's bound
            assert before - completed <= bound, (before, completed, bound)
            # and it did not wait for the writes queued after it
            assert done_at_return - before <= bound, (done_at_return, before, bound)


def _fill_to_the_bound(eng, gate):
    """Push ops up to ``eng``'s back-pressure bound, held until ``gate`` is set: one blocks a
    worker, the others queue behind it on its var, so the other workers stay free."""
    held = eng.new_variable()
    for _ in range(eng._executor.max_pending):
        eng.push_sync(lambda rc: gate.wait(TIMEOUT), _engine.cpu(), mutable_vars=[held])


@pytest.mark.parametrize("kind", THREADED)
def test_read_of_an_idle_array_is_not_throttled(process_engine, kind):
    # The engine is over its back-pressure bound (ops blocked on other vars): a read still
    # runs at once; it adds one op, and its thread waits for it, so it cannot run ahead.
    eng = process_engine(kind, max_pending=8)
    x = nd.full(4, 3.0)
    x.wait_to_read()
    gate = threading.Event()
    try:
        _fill_to_the_bound(eng, gate)
        values = run_with_timeout(x.asnumpy, TIMEOUT, "asnumpy over the back-pressure bound")
        np.testing.assert_array_equal(values, np.full(4, 3.0))
    finally:
        gate.set()


@pytest.mark.parametrize("kind", THREADED)
def test_reader_flushes_a_window_whose_owner_waits_for_room(process_engine, kind):
    # The writer has a lazy window open when the engine goes over its bound: its ops join the
    # window until it is full, which waits for room before its push with the window's lock
    # released, so a reader pushes the window and reads at once, with every write recorded
    # (the last one's call still waiting).
    eng = process_engine(kind, max_pending=8)
    x = nd.zeros(lazy.FUSE_MIN_ELEMENTS)
    x.wait_to_read()
    gate, filled = threading.Event(), threading.Event()
    recorded = []

    def write():
        target = x
        for i in range(lazy.MAX_OPS):
            if i == lazy.MAX_OPS - 2:
                filled.wait(TIMEOUT)
            target += 1  # in place, into x's buffer
            recorded.append(1)

    writer = threading.Thread(target=write, daemon=True)
    try:
        writer.start()
        wait_until(lambda: len(recorded) == lazy.MAX_OPS - 2, what="the writer's window")
        _fill_to_the_bound(eng, gate)
        filled.set()
        writer.join(0.2)
        assert writer.is_alive(), "the writer did not wait for room"
        values = run_with_timeout(x.asnumpy, TIMEOUT, "asnumpy while the writer waits")
        assert len(recorded) == lazy.MAX_OPS - 1  # the last op waits in its call
        np.testing.assert_array_equal(values, np.full(x.shape, float(lazy.MAX_OPS)))
    finally:
        filled.set()
        gate.set()
    writer.join(TIMEOUT)
    assert not writer.is_alive()
    np.testing.assert_array_equal(x.asnumpy(), np.full(x.shape, float(lazy.MAX_OPS)))


@pytest.mark.parametrize("kind", THREADED)
def test_read_queued_before_a_write_does_not_wait_for_it(process_engine, kind):
    # MXNet's order: a write pushed after the read queues behind it on the var; the read
    # returns once the write before it finished, while the one after it is still blocked.
    eng = process_engine(kind)
    x = nd.full(4, 1.0)
    x.wait_to_read()
    var = x.engine_var
    before, after = threading.Event(), threading.Event()
    eng.push_sync(lambda rc: before.wait(TIMEOUT), _engine.cpu(), mutable_vars=[var])
    box = {}
    reader = threading.Thread(target=lambda: box.setdefault("values", x.asnumpy()),
                              daemon=True)
    try:
        reader.start()
        wait_until(lambda: var.queue and len(var.queue) >= 2, what="the read and its wait")
        eng.push_sync(lambda rc: after.wait(TIMEOUT), _engine.cpu(), mutable_vars=[var])
        before.set()
        reader.join(TIMEOUT)
        assert not reader.is_alive(), "the read waited for the write pushed after it"
        assert not after.is_set()
        np.testing.assert_array_equal(box["values"], np.ones(4))
    finally:
        before.set()
        after.set()


@pytest.mark.parametrize("kind", THREADED)
def test_back_pressure_counts_work_not_ops(process_engine, kind):
    # One op standing for the whole bound's work blocks the next throttled push, as that
    # many single ops would; a push with throttle=False (made under a lock) does not wait.
    eng = process_engine(kind, max_pending=10)
    gate = threading.Event()
    eng.push_sync(lambda rc: gate.wait(TIMEOUT), _engine.cpu(),
                  mutable_vars=[eng.new_variable()], work=10)
    eng.push_sync(lambda rc: None, _engine.cpu(), mutable_vars=[eng.new_variable()],
                  throttle=False)
    pushed = threading.Event()
    pusher = threading.Thread(target=lambda: (eng.push_sync(
        lambda rc: None, _engine.cpu(), mutable_vars=[eng.new_variable()]), pushed.set()),
        daemon=True)
    try:
        pusher.start()
        assert not pushed.wait(0.3), "a push went past the bound on pending work"
    finally:
        gate.set()
    assert pushed.wait(TIMEOUT), "the push did not resume once the work was done"


@pytest.mark.parametrize("kind", THREADED)
def test_windows_closed_by_a_reduction_are_throttled_by_their_work(process_engine, kind):
    # Each ``(x * 2).sum()`` is one window, pushed by the next one's first op (the reduction
    # closed it): a push made under the window's lock, so that op waits for room once it is
    # recorded. Each window weighs more than the whole bound: the thread stops after two.
    eng = process_engine(kind, max_pending=50)
    x = nd.zeros(lazy.FUSE_MIN_ELEMENTS)
    gate = threading.Event()
    eng.push_sync(lambda rc: gate.wait(TIMEOUT), _engine.cpu(), mutable_vars=[x.engine_var])
    sums = []

    def reduce_many():
        for _ in range(100):
            sums.append(nd.sum(x * 2))

    reducer = threading.Thread(target=reduce_many, daemon=True)
    try:
        reducer.start()
        reducer.join(0.5)
        assert reducer.is_alive(), "the pushes never waited for room"
        assert len(sums) <= 3, f"{len(sums)} windows pushed past a bound they each exceed"
    finally:
        gate.set()
    reducer.join(TIMEOUT)
    assert not reducer.is_alive()
    assert [s.item() for s in sums[:3]] == [0.0] * min(3, len(sums))
