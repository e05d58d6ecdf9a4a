"""The pending segment (core/segment.py): tiny ops gathered per thread and pushed as one.

Each test runs under all three engines; on the NaiveEngine (bulk size 1) nothing is gathered
and the same assertions on values and errors must hold. Exact window states are asserted where
the engine gathers.
"""
import os
import threading

import numpy as np
import pytest

import ndengine as nd
from ndengine import ops
from ndengine.core import segment
from ndengine.engine.errors import NOTE_PREFIX
from ndarray_helpers import drain_errors

pytestmark = [pytest.mark.usefixtures("nd_engine"), pytest.mark.cpu_only]  # bulking of small CPU arrays


@pytest.fixture(autouse=True)
def gathered():
    """Ops on idle small arrays would run at once (core/at_once.py, tests/core/test_at_once.py):
    gather them all, to see the windows."""
    with nd.settings(run_at_once=False):
        yield


def gathers():
    return nd.engine.get().bulk_size > 1


def window_of(x):
    window = x._chunk.window
    return window if window is not None and window.open else None


@ops.register("test_segment_fail", num_inputs=1, kind="unary", replace=True,
              infer=lambda x: [(x.shape, x.dtype)])
def _fail(inputs, outputs, req):
    raise ZeroDivisionError("test_segment_fail raised on purpose")


def failing(x):
    return nd.core.invoke(ops.get("test_segment_fail"), [x])[0]


# ---------------------------------------------------------------- gathering and flushing
def test_ops_are_gathered_until_the_bulk_size(nd_engine):
    if not gathers():
        x = nd.zeros(4) + 1
        assert window_of(x) is None
        return
    size = nd_engine.bulk_size
    previous = nd_engine.set_bulk_size(8)
    try:
        start = nd.zeros(4)  # (filled at the call: a small array's memory is made with it)
        x = start + 1  # the window's first op
        for i in range(6):
            x = x + 1
        window = window_of(x)
        assert window is not None and len(window.nodes) == 7
        assert window.segment is segment._tls.segment
        reads, writes = window.vars()
        # the dropped temporaries left
        assert reads == [start._chunk.var] and writes == [x._chunk.var]
        x = x + 1  # the 8th op pushes the window
        assert window_of(x) is None and not window.open
        np.testing.assert_array_equal(x.asnumpy(), np.full(4, 8.0))
    finally:
        nd_engine.set_bulk_size(previous)
    assert nd_engine.bulk_size == size


@pytest.mark.parametrize("read", ["wait_to_read", "asnumpy", "print", "bool", "float", "item",
                                  "engine_var"])
def test_every_wait_or_value_read_flushes(read, capsys):
    x = nd.ones(()) * 3
    y = x + 1
    if gathers():
        assert window_of(y) is not None
    values = {"wait_to_read": lambda: float(y.wait_to_read()._data()),
              "asnumpy": lambda: float(y.asnumpy()), "print": lambda: print(y),
              "bool": lambda: bool(y), "float": lambda: float(y), "item": lambda: y.item(),
              "engine_var": lambda: y.engine_var}
    got = values[read]()
    assert window_of(y) is None
    if read in ("asnumpy", "float", "item", "wait_to_read"):
        assert got == 4.0
    nd.waitall()


def test_waitall_flushes_every_thread():
    results = {}

    def worker():
        results["y"] = nd.ones(3) * 5  # left in this thread's window when it ends

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    y = results["y"]
    nd.waitall()
    assert window_of(y) is None
    np.testing.assert_array_equal(y.asnumpy(), np.full(3, 5.0))


def test_another_threads_read_flushes_the_window_first():
    x = nd.ones(3) * 2  # gathered by this thread
    got = {}

    def reader():
        got["z"] = (x + 1).asnumpy()

    thread = threading.Thread(target=reader)
    thread.start()
    thread.join()
    np.testing.assert_array_equal(got["z"], np.full(3, 3.0))


def test_another_threads_write_waits_for_the_windows_reads():
    x = nd.ones(3)
    x.wait_to_read()
    y = x * 10  # gathered: reads x
    done = threading.Event()

    def writer():
        x[:] = 7  # must land after y's read of x
        done.set()

    thread = threading.Thread(target=writer)
    thread.start()
    thread.join()
    np.testing.assert_array_equal(y.asnumpy(), np.full(3, 10.0))
    np.testing.assert_array_equal(x.asnumpy(), np.full(3, 7.0))


def test_an_op_that_is_not_gathered_pushes_the_window_first():
    small = nd.ones(4) * 2
    window = window_of(small)
    large = nd.ones(1 << 18)  # over the inline size: not gathered (its ops are fused instead)
    total = (large * small[0]).sum()  # reads small through a view
    assert window is None or not window.open
    assert float(total) == 2.0 * (1 << 18)


def test_in_place_ops_in_a_window_keep_their_order():
    x = nd.zeros(5)
    y = x + 1
    x += 10
    z = x * y
    y += x
    np.testing.assert_array_equal(z.asnumpy(), np.full(5, 10.0))
    np.testing.assert_array_equal(y.asnumpy(), np.full(5, 11.0))
    np.testing.assert_array_equal(x.asnumpy(), np.full(5, 10.0))


# ---------------------------------------------------------------- errors
def test_an_op_that_raises_fails_alone_with_its_name_and_line():
    if not gathers():
        pytest.skip("the NaiveEngine raises at the push (test_engine_errors.py)")
    a = nd.ones(3)
    b = a + 1
    bad = failing(a)  # the failing line
    c = b * 2  # independent of the failure: computed
    d = bad + 1  # inherits the failure
    assert window_of(d) is window_of(a) is not None  # all in one window
    np.testing.assert_array_equal(c.asnumpy(), np.full(3, 4.0))
    with pytest.raises(ZeroDivisionError) as info:
        d.asnumpy()
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert NOTE_PREFIX + "test_segment_fail" in notes
    assert f"{os.path.basename(__file__)}:" in notes
    with pytest.raises(ZeroDivisionError):
        bad.wait_to_read()
    drain_errors()


def test_a_failed_input_fails_only_the_ops_that_read_it():
    if not gathers():
        pytest.skip("the NaiveEngine raises at the push (test_engine_errors.py)")
    bad = failing(nd.ones(2))
    with pytest.raises(ZeroDivisionError):
        bad.wait_to_read()
    drain_errors()
    good = nd.ones(2) + 1  # the same window as the op reading the failed array
    worse = bad + 1
    assert window_of(good) is window_of(worse) is not None
    np.testing.assert_array_equal(good.asnumpy(), np.full(2, 2.0))
    with pytest.raises(ZeroDivisionError):
        worse.asnumpy()
    drain_errors()


# ---------------------------------------------------------------- interrupts and profiles
def test_a_flush_cut_short_by_ctrl_c_is_finished_by_the_next_and_runs_once(nd_engine,
                                                                          monkeypatch):
    if not gathers():
        pytest.skip("the NaiveEngine gathers nothing")
    x = nd.zeros(3)
    x += 1
    window = window_of(x)
    real = nd_engine.push_sync
    calls = []

    def interrupted_after_the_push(*args, **kwargs):
        real(*args, **kwargs)
        calls.append(1)
        raise KeyboardInterrupt  # as if Ctrl-C landed right after the engine queued it

    monkeypatch.setattr(nd_engine, "push_sync", interrupted_after_the_push)
    with pytest.raises(KeyboardInterrupt):
        segment.flush_own()
    monkeypatch.undo()
    assert calls == [1]
    # the window is still the segment's, its flush begun: nothing more gathers into it
    assert segment._tls.segment.window is window and window.bulk is not None
    assert not window.pushed
    y = x + 1  # finishes the flush (pushing the op again), then opens a new window
    assert window_of(x) is not window and not window.open
    np.testing.assert_array_equal(x.asnumpy(), np.ones(3))  # += ran once
    np.testing.assert_array_equal(y.asnumpy(), np.full(3, 2.0))


def test_the_profiler_shows_a_window_as_one_event_listing_its_ops(nd_engine):
    if not gathers():
        pytest.skip("the NaiveEngine gathers nothing")
    records = []
    previous = nd_engine.set_run_hook(lambda name, ctx, reads, writes, info, start, end, failed:
                                      records.append((name, info() if callable(info) else info)))
    try:
        x = nd.zeros(2)  # (filled at the call: a small array's memory is made with it)
        x = x + 1
        x = x * 3
        x = x - 1
        x.wait_to_read()
    finally:
        nd_engine.set_run_hook(previous)
    # (a deletion of an earlier test's array, freed by the cyclic GC meanwhile, may run too)
    ours = [record for record in records if record[0] != "delete_variable"]
    assert ours == [("bulk of 3", {"ops": ["add", "multiply", "subtract"]})]


def test_fork_child_sees_the_gathered_values():
    if not hasattr(os, "fork"):
        pytest.skip("no fork")
    x = nd.ones(4) * 6  # gathered before the fork
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            code = 0 if x.asnumpy().tolist() == [6.0] * 4 else 3
        except BaseException:  # noqa: B902
            code = 4
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    np.testing.assert_array_equal(x.asnumpy(), np.full(4, 6.0))


def test_windows_queued_behind_a_failure_keep_every_op_and_its_order():
    """Windows pushed one after another while an array they write has failed: each op of
    each window inherits the failure or runs, in push order, before any later read."""
    if not gathers():
        pytest.skip("the NaiveEngine raises at the push (test_engine_errors.py)")
    good, bad = nd.zeros(16), nd.zeros(16)
    nd.core.invoke(ops.get("test_segment_fail"), [good], out=bad)
    with pytest.raises(ZeroDivisionError):
        bad.wait_to_read()
    drain_errors()
    for _ in range(12):
        good += 1
        bad += 1
        segment.flush_own()  # a window per round, each queued behind the last
    np.testing.assert_array_equal(good.asnumpy(), np.full(16, 12.0))
    with pytest.raises(ZeroDivisionError):
        bad.asnumpy()
    drain_errors()


# ---------------------------------------------------------------- vars and lifetime
def test_a_small_array_gets_its_var_only_when_it_outlives_its_window(nd_engine, monkeypatch):
    """A small array's var is made at its first use (chunk.SmallChunk): temporaries made and
    dropped inside one window never get one; what the window leaves alive gets one at the
    push, and any later use (a wait, an op pushed alone) finds that same var."""
    x = nd.zeros(4) + 1
    x.wait_to_read()
    made = []
    new_variable = nd_engine.new_variable

    def counting():
        made.append(1)
        return new_variable()
    monkeypatch.setattr(nd_engine, "new_variable", counting)
    for _ in range(10):
        x = x * 2 + 1  # 20 ops, 19 temporaries dropped at once
    kept = x
    var = kept._chunk.var  # the first use makes it (flushing nothing by itself)
    assert kept._chunk.var is var
    np.testing.assert_array_equal(kept.asnumpy(), np.full(4, 2.0 ** 11 - 1))
    assert kept._chunk.var is var
    assert len(made) == (1 if gathers() else 20)  # alone, every op's output is pushed


def test_gathered_ops_leave_no_reference_cycles():
    """A window's chunks, ops and op do not keep each other alive: dropped arrays are freed by
    reference counting, not by the cyclic GC (a collection every few hundred tiny ops cost
    more than the ops)."""
    import gc
    from ndengine.core.chunk import SmallChunk
    from ndengine.core.runs import BoundRun
    gc.collect(0)
    gc.disable()  # from here every new object stays in the youngest generation: a cheap pass
    try:
        x = nd.zeros(8)
        for _ in range(300):
            x = x + 1
        x.wait_to_read()
        nd.waitall()
        gc.set_debug(gc.DEBUG_SAVEALL)  # what the collector finds stays in gc.garbage
        gc.collect(0)
        ours = (SmallChunk, BoundRun, segment.Window, segment._Bulk)
        cyclic = [type(o).__name__ for o in gc.garbage if isinstance(o, ours)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert cyclic == []  # (other threads' garbage, if any, is not this test's)
    np.testing.assert_array_equal(x.asnumpy(), np.full(8, 300.0))


# ---------------------------------------------------------------- arrays with pool buffers
MEDIUM = 1 << 14  # float64: 128 KiB, over chunk.SMALL_BYTES (a pool buffer), under the inline size


def test_ops_on_pool_buffers_under_the_inline_size_are_gathered(nd_engine):
    """A CPU op whose arrays have pool buffers but are under lazy.INLINE_ELEMENTS is bound at
    its push like a small one: gathered into the window (pushed once its new arrays hold
    WINDOW_BYTES), values as NumPy's, and the dropped temporaries' buffers back in the pool."""
    from ndengine.core import storage
    base = np.linspace(0.0, 1.0, MEDIUM)
    a = nd.array(base)
    nd.waitall()
    in_use = storage.stats()["bytes_in_use"]
    x, want = a, base
    rounds = segment.WINDOW_BYTES // (4 * MEDIUM * 8) + 2  # more new arrays than a window holds
    for _ in range(rounds):
        x = nd.sqrt(x * 3 + 1) - a  # 4 ops, 4 new arrays of 128 KiB
        want = np.sqrt(want * 3 + 1) - base
    window = window_of(x)
    if gathers():
        assert type(window) is segment.Window
        assert 0 < window.nbytes <= segment.WINDOW_BYTES + MEDIUM * 8
        assert len(window.nodes) < 4 * rounds  # pushed at WINDOW_BYTES, then a new one
    else:
        assert window is None
    np.testing.assert_allclose(x.asnumpy(), want, rtol=1e-15)
    nd.waitall()
    assert storage.stats()["bytes_in_use"] - in_use <= 2 * MEDIUM * 8  # x's, and a's own


def test_a_gathered_op_on_a_view_of_an_array_a_worker_writes_waits_for_it():
    """Bound at the push to a view of a large array whose write is still queued for a
    worker: the window's op reads the array's var, so it runs after that write."""
    big = nd.zeros(1 << 19)  # over the inline size: its ops go to the workers
    big += 1.0
    part = big[:MEDIUM]  # a view under the inline size
    y = part * 2 + 1
    np.testing.assert_array_equal(y.asnumpy(), np.full(MEDIUM, 3.0))
    np.testing.assert_array_equal(big.asnumpy()[:4], np.ones(4))


def test_a_long_chain_on_pool_buffers_matches_numpy_as_buffers_are_reused():
    rng = np.random.default_rng(3)
    base = rng.standard_normal(MEDIUM)
    x, want = nd.array(base), base.copy()
    for i in range(60):
        x = x * 0.5 + float(i)
        want = want * 0.5 + float(i)
        if i % 17 == 0:
            x += 1.0
            want += 1.0
    np.testing.assert_array_equal(x.asnumpy(), want)


@pytest.mark.parametrize("size", [8, MEDIUM])
def test_threads_hand_each_other_arrays_their_windows_made(size):
    """Arrays made in one thread's window (a small one with no var yet) used by another thread
    while the first goes on gathering: the other thread flushes the window first, both see one
    var per array, and every value is the serial one."""
    import queue
    rounds, threads = 60, 3
    queues = [queue.Queue() for _ in range(threads)]
    errors = []

    def worker(k):
        try:
            mine = nd.zeros(size) + k
            for r in range(rounds):
                made = mine * 2 + 1  # gathered here; handed on before any wait
                queues[(k + 1) % threads].put((made, 2.0 * (k + r) + 1))
                mine = mine + 1
                got, expected = queues[k].get(timeout=30)
                value = (got + 0).asnumpy()  # the giver's window goes first
                assert (value == expected).all(), (k, r, value[:2], expected)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
            for q in queues:
                q.put((nd.zeros(size), np.nan))
    workers = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join(60)
    assert not any(t.is_alive() for t in workers)
    assert errors == []
