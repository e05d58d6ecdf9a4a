"""Lazy windows of medium arrays (core/lazy.py: FUSE_MIN_MEDIUM_ELEMENTS up to
FUSE_MIN_ELEMENTS): an op joins this thread's open window; a call opens one only while the
windows its plan opened came out long (LONG_WINDOW_BYTES); an op NumPy's own loop computes
is pushed alone; results are NumPy's either way, under every engine."""
import numpy as np
import pytest

import ndengine as nd
from ndengine.core import lazy

from engine_helpers import run_threads

N = 1 << 15  # pool buffers (not small arrays); the band is moved to 32K-1M elements


@pytest.fixture(autouse=True)
def medium_band(monkeypatch):
    monkeypatch.setattr(lazy, "FUSE_MIN_MEDIUM_ELEMENTS", N)
    monkeypatch.setattr(lazy, "FUSE_MIN_ELEMENTS", 1 << 20)
    monkeypatch.setattr(lazy, "FUSE_MIN_NUMPY_ELEMENTS", 1 << 20)
    monkeypatch.setattr(lazy, "_short_windows", {})
    nd.waitall()  # no window of an earlier test open in this thread


def records():
    return nd.engine.get().bulk_size > 1 and lazy.ENABLED


def window_of(x):
    """The open lazy window ``x`` is in, or None (not a segment's window of gathered ops: once
    a second thread used arrays, ops that are not recorded are gathered, segment.py)."""
    window = x._chunk.window
    return window if type(window) is lazy.LazyWindow and window.open else None


def values(dtype=np.float64):
    return ((np.arange(N) % 89) / 13).astype(dtype)


def long_chain(xp, x):
    for _ in range(4):
        x = x * 1.0001 + 0.5  # 8 ops of 256 KiB results: a long window
    return x


def test_a_long_chain_of_medium_arrays_is_one_window_every_time(nd_engine):
    for _ in range(2 * lazy.SHORT_WINDOWS_KEPT + 1):
        x = long_chain(nd, nd.array(values()))
        window = window_of(x)
        if records():
            assert window is not None and len(window.nodes) == 8
        else:
            assert window is None
        np.testing.assert_array_equal(x.asnumpy(), long_chain(np, values()))


def test_short_windows_stop_their_call_from_opening_one(nd_engine):
    """k-means' `labels == k`: one op, read at once. After SHORT_WINDOWS_KEPT such windows the
    call is pushed alone (no window), and its result is the same."""
    a = nd.array(values())
    opened = []
    for k in range(lazy.SHORT_WINDOWS_KEPT + 3):
        mask = a > k / 10
        opened.append(window_of(mask) is not None)
        np.testing.assert_array_equal(mask.asnumpy(), values() > k / 10)
    kept = lazy.SHORT_WINDOWS_KEPT
    assert opened == ([True] * kept + [False] * 3 if records() else [False] * (kept + 3))


def test_a_refused_plan_tries_a_window_every_retry_short_calls(nd_engine, monkeypatch):
    """Refused calls count toward a retry; the retry opens a window (invoke asks twice for an
    op it offers: both must agree), whose flush counts it."""
    monkeypatch.setattr(lazy, "RETRY_SHORT", 3)
    a = nd.array(values())
    opened = []
    for _ in range(lazy.SHORT_WINDOWS_KEPT + 6):
        y = a * 1.0001
        opened.append(window_of(y) is not None)
        np.testing.assert_array_equal(y.asnumpy(), values() * 1.0001)
    kept = lazy.SHORT_WINDOWS_KEPT
    expected = [True] * kept + [False, False, True] * 2
    assert opened == (expected if records() else [False] * len(expected))


def test_a_plan_whose_window_came_out_long_opens_windows_again(nd_engine):
    if not records():
        pytest.skip("windows gather only on the threaded engines")
    a = nd.array(values())
    for _ in range(lazy.SHORT_WINDOWS_KEPT):
        (a * 1.0001).asnumpy()  # short windows opened by multiply's plan
    assert window_of(a * 1.0001) is None  # that plan opens none now
    lazy._short_windows.clear()
    x = long_chain(nd, a)  # the same plan opens a window that comes out long
    x.asnumpy()
    assert window_of(a * 1.0001) is not None


def test_an_op_numpys_loop_computes_is_pushed_alone(nd_engine):
    """It would make its window run on the blocked evaluator, slower than its ops alone at
    these sizes: it opens no window, and the window open before it is pushed first."""
    x = nd.array(values())
    alone = nd.exp(x)
    assert window_of(alone) is None
    t = x * 0.5 + 0.1
    if records():
        assert [n.name for n in window_of(t).nodes] == ["multiply", "add"]
    y = nd.exp(t)
    assert window_of(y) is None and window_of(t) is None
    np.testing.assert_array_equal(y.asnumpy(), np.exp(values() * 0.5 + 0.1))
    np.testing.assert_array_equal(alone.asnumpy(), np.exp(values()))


def test_a_reduction_closes_an_open_window_of_medium_arrays(nd_engine):
    x = nd.array(values(np.float32))
    total = nd.sum(nd.sqrt(x * x + 1))
    if records():
        window = window_of(total)
        assert window is not None and [n.name for n in window.nodes] == [
            "multiply", "add", "sqrt", "sum"]
    assert total.asnumpy() == np.sum(np.sqrt(values(np.float32) ** 2 + 1))
    assert window_of(nd.sum(x)) is None  # no window open: pushed alone


def test_threads_pushing_medium_windows_at_once_get_numpys_results(nd_engine):
    """Four threads, each with long chains and short windows on arrays of its own and on one
    shared array (read only): the short-window counts are shared, the windows are not."""
    shared = nd.array(values())

    def work(seed):
        own = values() + seed
        x = nd.array(own)
        for k in range(6):
            y = long_chain(nd, x)
            mask = shared > k / 10  # a short window, opened by a shared plan
            z = x * 2.0 + shared  # joins or opens, then read
            np.testing.assert_array_equal(y.asnumpy(), long_chain(np, own))
            np.testing.assert_array_equal(mask.asnumpy(), values() > k / 10)
            np.testing.assert_array_equal(z.asnumpy(), own * 2.0 + values())
    run_threads(work, 4)
