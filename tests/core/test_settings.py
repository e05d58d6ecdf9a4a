"""Run-time settings (core/settings.py, engine/settings.py): ``ndengine.settings`` and
``get_settings``, MXNet's ``engine.bulk`` and ``engine.set_bulk_size``. Every test runs under
the three engines: the NaiveEngine keeps a bulk size of 1 and fuses nothing, whatever is set.
"""
import threading

import numpy as np
import pytest

import ndengine as nd
from ndengine import engine
from ndengine.core import at_once, lazy, segment

pytestmark = [pytest.mark.usefixtures("nd_engine"), pytest.mark.cpu_only]  # CPU windows

N = 1 << 14  # float64: 128 KiB, a pool buffer (fused once FUSE_MIN_ELEMENTS is lowered)


@pytest.fixture(autouse=True)
def restored_settings(monkeypatch, nd_engine):
    """Each test starts from fusion on and the engine's bulk size, and leaves them so; ops on
    small arrays are gathered, never run at once (core/at_once.py), so windows can be seen."""
    monkeypatch.setattr(lazy, "ENABLED", True)
    previous = at_once.set_enabled(False)
    size = nd_engine.bulk_size
    yield
    nd_engine.set_bulk_size(size)
    at_once.set_enabled(previous)


def gathers():
    return engine.get().bulk_size > 1  # False on the NaiveEngine


def open_window(x):
    window = x._chunk.window
    return window if window is not None and window.open else None


def test_get_settings_reads_the_current_values(nd_engine):
    assert nd.get_settings() == {"fusion": True, "run_at_once": False,
                                 "bulk_size": nd_engine.bulk_size}
    nd.settings(fusion=False)
    assert nd.get_settings()["fusion"] is False and lazy.ENABLED is False
    with nd.settings(run_at_once=True):
        assert nd.get_settings()["run_at_once"] is True
    assert nd.get_settings()["run_at_once"] is False
    with pytest.raises(TypeError, match="run_at_once"):
        nd.settings(run_at_once="no")


def test_a_block_sets_and_restores(nd_engine):
    before = nd_engine.bulk_size
    with nd.settings(fusion=False, bulk_size=8) as block:
        assert nd.get_settings() == {"fusion": False, "run_at_once": False,
                                     "bulk_size": 8 if gathers() else 1}
        assert "fusion=False" in repr(block) and "open" in repr(block)
    assert nd.get_settings() == {"fusion": True, "run_at_once": False, "bulk_size": before}
    assert "exited" in repr(block)


def test_a_plain_call_sets_for_good(nd_engine):
    nd.settings(bulk_size=5)
    assert nd_engine.bulk_size == (5 if gathers() else 1)
    with nd.settings(fusion=False):
        pass
    assert nd_engine.bulk_size == (5 if gathers() else 1) and lazy.ENABLED


def test_a_block_restores_what_a_plain_call_changed_inside_it_of_its_own_settings():
    with nd.settings(fusion=False):
        nd.settings(fusion=True)
        nd.settings(bulk_size=3)  # not the block's: kept
    assert lazy.ENABLED is True
    assert engine.get().bulk_size == (3 if gathers() else 1)
    with nd.settings(fusion=True):
        nd.settings(fusion=False)
    assert lazy.ENABLED is True


def test_blocks_nest():
    with nd.settings(fusion=False):
        with nd.settings(fusion=True):
            assert lazy.ENABLED is True
        assert lazy.ENABLED is False
    assert lazy.ENABLED is True


def test_overlapping_blocks_may_exit_in_any_order():
    """Two threads' blocks: the first one entered exits first. Each setting ends as it was
    before both, and the value of the block still open holds until it exits."""
    first, second = nd.settings(fusion=False), None
    first.__enter__()
    second = nd.settings(fusion=True, bulk_size=4)
    second.__enter__()
    first.__exit__(None, None, None)
    assert lazy.ENABLED is True  # the second block's value, still open
    second.__exit__(None, None, None)
    assert lazy.ENABLED is True
    size = engine.get().bulk_size
    first = nd.settings(fusion=False)
    first.__enter__()
    second = nd.settings(fusion=False)
    second.__enter__()
    first.__exit__(None, None, None)
    assert lazy.ENABLED is False
    second.__exit__(None, None, None)
    assert lazy.ENABLED is True and engine.get().bulk_size == size


def test_blocks_in_two_threads_end_where_they_started():
    entered, leave = threading.Barrier(2, timeout=30), threading.Event()
    errors = []

    def other():
        try:
            with nd.settings(fusion=True):
                entered.wait()
                leave.wait(30)
        except BaseException as exc:  # noqa: B902 - reported by the test
            errors.append(exc)

    thread = threading.Thread(target=other)
    with nd.settings(fusion=False):
        thread.start()
        entered.wait()  # the other thread's block is open, entered after this one
    assert lazy.ENABLED is True  # its value holds while it is open
    leave.set()
    thread.join(30)
    assert not thread.is_alive() and not errors
    assert lazy.ENABLED is True


@pytest.mark.parametrize("changes, error", [
    ({"fusion": "off"}, TypeError), ({"fusion": 1}, TypeError),
    ({"bulk_size": 0}, ValueError), ({"bulk_size": 2.5}, ValueError),
    ({"bulk_size": True}, ValueError), ({"fusion": False, "bulk_size": "8"}, ValueError),
])
def test_bad_values_raise_naming_the_setting_and_change_nothing(changes, error):
    before = nd.get_settings()
    name = "fusion" if "bulk_size" not in changes else "bulk size"
    with pytest.raises(error, match=name):
        nd.settings(**changes)
    assert nd.get_settings() == before


def test_unknown_settings_are_refused_by_name():
    with pytest.raises(TypeError, match="fuse"):
        nd.settings(fuse=False)


def test_a_block_is_entered_once():
    block = nd.settings(fusion=False)
    with block:
        pass
    with pytest.raises(RuntimeError, match="once"):
        with block:
            pass
    assert lazy.ENABLED is True


def test_numpy_values_are_taken():
    nd.settings(fusion=np.False_, bulk_size=np.int64(6))
    assert nd.get_settings() == {"fusion": False, "run_at_once": False,
                                 "bulk_size": 6 if gathers() else 1}


# ---------------------------------------------------------------- what the settings change
def test_fusion_off_pushes_element_wise_ops_instead_of_recording_them(monkeypatch):
    monkeypatch.setattr(lazy, "FUSE_MIN_ELEMENTS", 0)  # the test's arrays are fused
    a = nd.array(np.arange(N, dtype=np.float64))
    x = a * 2 + 1
    recorded = isinstance(open_window(x), lazy.LazyWindow)
    assert recorded == gathers()  # the NaiveEngine records nothing
    with nd.settings(fusion=False):
        y = a * 2 + 1
        assert not isinstance(open_window(y), lazy.LazyWindow)
    z = a * 2 + 1
    assert isinstance(open_window(z), lazy.LazyWindow) == gathers()
    expected = np.arange(N) * 2.0 + 1
    for result in (x, y, z):
        np.testing.assert_array_equal(result.asnumpy(), expected)


@pytest.mark.parametrize("set_size", ["engine.bulk", "nd.settings"])
def test_a_bulk_block_gathers_that_many_tiny_ops(set_size):
    block = engine.bulk(3) if set_size == "engine.bulk" else nd.settings(bulk_size=3)
    with block:
        x = nd.zeros(4) + 1  # the add is the window's first op (zeros: filled at the call)
        x = x + 1
        window = open_window(x)
        if not gathers():
            assert window is None
        else:
            assert window is not None and len(window.nodes) == 2
            assert window.segment is segment._tls.segment
            x = x + 1  # the third op pushes the window
            assert open_window(x) is None and not window.open
    np.testing.assert_array_equal(x.asnumpy(), np.full(4, 3.0 if gathers() else 2.0))


def test_bulk_of_one_pushes_every_op_alone():
    with engine.bulk(1):
        assert engine.get().bulk_size == 1
        x = nd.zeros(4) + 1
        assert open_window(x) is None
    np.testing.assert_array_equal(x.asnumpy(), np.ones(4))


def test_mxnet_bulk_names(nd_engine):
    size = nd_engine.bulk_size
    assert callable(engine.bulk)  # the function; the engine's part is engine/bulking.py
    with engine.bulk(16):
        assert nd_engine.bulk_size == (16 if gathers() else 1)
    assert nd_engine.bulk_size == size
    assert engine.set_bulk_size(7) == size
    assert engine.set_bulk_size(size) == (7 if gathers() else 1)
    with pytest.raises(ValueError, match="bulk size"):
        engine.bulk(0)
    assert nd_engine.bulk_size == size
