"""The profiler sees the ops that wait in a thread's windows: small ops gathered by the bulking
window (core/segment.py) and element-wise ops on large arrays recorded by the fusion window
(core/lazy.py) are pushed at every switch of the profiler, under every engine."""
import numpy as np
import pytest

import ndengine as nd
from ndengine import profiler
from ndengine.core import lazy

SMALL = 10  # bulked: far under the fusion threshold
LARGE = lazy.FUSE_MIN_ELEMENTS  # recorded into a fusion window (when fusion is enabled)


@pytest.fixture
def engine(nd_engine, tmp_path):
    """The process-wide engine of each kind, profiled by the default profiler (emptied)."""
    profiler.stop()
    profiler.set_config(filename=str(tmp_path / "profile.json"), engine=nd_engine)
    profiler.reset()
    yield nd_engine
    profiler.stop()
    profiler.reset()
    profiler.set_config()


def op_names(records):
    """The names of the user's ops in ``records``: a bulk or fused op lists its members."""
    names = []
    for record in records:
        info = record.info() if callable(record.info) else record.info
        if isinstance(info, dict) and "ops" in info:
            names += info["ops"]
        elif record.name != "delete_variable":
            names.append(record.name)
    return sorted(names)


def write_ops(small, large):
    """Two multiplies and an add on small arrays, sin, exp and a multiply on large ones."""
    return small * 2 + small * 3, nd.exp(nd.sin(large)) * 3


@pytest.mark.parametrize("switch", ["scope", "start_stop"])
def test_windowed_ops_written_while_profiling_are_recorded(engine, switch):
    small, large = nd.ones(SMALL), nd.ones(LARGE)
    nd.waitall()
    if switch == "scope":
        with profiler.scope():
            results = write_ops(small, large)
    else:
        profiler.start()
        results = write_ops(small, large)
        profiler.stop()
    assert op_names(profiler.records()) == ["add", "exp", "multiply", "multiply", "multiply",
                                            "sin"]
    table = profiler.dumps()
    assert "Profile Statistics: 0 ops" not in table
    for value, expected in zip(results, write_ops(np.ones(SMALL), np.ones(LARGE))):
        np.testing.assert_allclose(value.asnumpy(), expected)


@pytest.mark.parametrize("size", [SMALL, LARGE])
def test_a_window_does_not_straddle_start(engine, size):
    """An op written before start() is pushed at start, as its own engine op: its window does
    not gather the ops written after start() (they would all be recorded as one op)."""
    x = nd.ones(size)
    nd.waitall()
    before = nd.negative(x)  # still in this thread's window at start
    with profiler.scope():
        inside = nd.sqrt(x) + 1
    members = [op_names([record]) for record in profiler.records()]
    assert not any("negative" in ops for ops in members if "sqrt" in ops), members
    if engine.kind != "NaiveEngine":  # (NaiveEngine runs each op alone, at its push)
        assert ["add", "sqrt"] in members, members
    np.testing.assert_array_equal(before.asnumpy(), np.full(size, -1.0))
    np.testing.assert_array_equal(inside.asnumpy(), np.full(size, 2.0))


def test_timeline_of_windowed_ops_is_not_empty(engine):
    pytest.importorskip("matplotlib")
    large = nd.ones(LARGE)
    nd.waitall()
    with profiler.scope():
        result = nd.sqrt(large) + 1
    figure = profiler.timeline()
    assert "no ops recorded" not in [t.get_text() for t in figure.axes[0].texts]
    assert result.asnumpy()[0] == 2.0
