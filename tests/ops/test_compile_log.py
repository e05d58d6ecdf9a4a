"""Compiles are reported (ops/runtime/compile_log.py): an INFO record on ``ndengine.compile``
per compile, a WARNING on ``ndengine.fallback`` when one fails, one CompileTimeNotice per
process past the threshold; and a deferred loop's compile never stalls its caller while
NumPy's loop can stand in (ops/runtime/deferred_loops.py)."""
import logging
import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest

import ndengine as nd
from ndengine.ops.runtime import compile_log, compile_queue
from ndengine.ops.runtime import deferred_loops as dl

DTYPES = (np.dtype(np.float64), np.dtype(np.float64))


class BlockingNumbaLoop:
    """A Numba dispatcher's compile(signature) and call; the compile waits for ``release``."""

    __name__ = "plus_one_loop"

    def __init__(self, error=None):
        self.release = threading.Event()
        self.error = error
        self.calls = 0

    def compile(self, signature):
        assert self.release.wait(30), "the test never released the compile"
        if self.error:
            raise self.error

    def __call__(self, x, out):
        self.calls += 1
        out[:] = x + 1


def numpy_loop(x, out):
    np.add(x, 1, out=out)


@pytest.fixture
def jit_after():
    previous = dl.jit_after()
    yield dl.set_jit_after
    dl.set_jit_after(previous)


@pytest.fixture
def fresh_totals(monkeypatch):
    """A process that has compiled nothing yet, as far as the notice knows."""
    monkeypatch.setattr(compile_log, "_total", 0.0)
    monkeypatch.setattr(compile_log, "_compiles", 0)
    monkeypatch.setattr(compile_log, "_noticed", False)


def _call(slot):
    x, out = np.arange(4.0), np.empty(4)
    slot[0](x, out)
    np.testing.assert_array_equal(out, x + 1)


def test_the_due_call_does_not_wait_for_the_compile(jit_after, caplog):
    jit_after(1)
    numba = BlockingNumbaLoop()
    slot = dl.bind(numba, numpy_loop, DTYPES)
    _call(slot)
    caller = threading.Thread(target=_call, args=(slot,))
    caller.start()
    caller.join(10)  # the compile is still blocked: a caller that waited would still be here
    assert not caller.is_alive()
    assert dl.state_of(numba, DTYPES) == (dl.COMPILING, 2)
    _call(slot)  # NumPy's loop goes on meanwhile
    assert numba.calls == 0
    with caplog.at_level(logging.INFO, logger="ndengine"):
        numba.release.set()
        assert compile_queue.drain(30)
    assert dl.state_of(numba, DTYPES)[0] == dl.MEASURING
    _call(slot)  # times both loops once, then runs the faster
    assert numba.calls >= dl.TRIAL_ROUNDS and slot[0] in (numba, numpy_loop)
    # (other tests' compiles may finish on the compile thread meanwhile: this loop's only)
    [record] = [r for r in caplog.records
                if r.name == "ndengine.compile" and "plus_one_loop" in r.getMessage()]
    assert record.levelno == logging.INFO
    assert "compiled" in record.getMessage() and " s" in record.getMessage()


def test_a_failed_compile_is_logged_as_a_fallback(jit_after, caplog):
    jit_after(1)
    numba = BlockingNumbaLoop(error=RuntimeError("no lowering"))
    numba.release.set()
    slot = dl.bind(numba, numpy_loop, DTYPES)
    with caplog.at_level(logging.INFO, logger="ndengine"):
        _call(slot)
        _call(slot)
        assert compile_queue.drain(30)
    assert dl.state_of(numba, DTYPES)[0] == dl.NUMPY_ONLY
    [record] = [r for r in caplog.records
                if r.name == "ndengine.fallback" and "plus_one_loop" in r.getMessage()]
    assert record.levelno == logging.WARNING
    assert "no lowering" in record.getMessage() and "NumPy's loop runs instead" in \
        record.getMessage()


def test_the_notice_comes_once_past_the_threshold(fresh_totals, monkeypatch):
    monkeypatch.setattr(compile_log, "NOTICE_AFTER_SECONDS", 0.5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compile_log.record("loop a", 0.3)
        assert not caught  # 0.3 s in all: below it
        compile_log.record("loop b", 0.3)
        compile_log.record("loop c", 0.3)
    notices = [w for w in caught if w.category is nd.CompileTimeNotice]
    assert len(notices) == 1 and len(caught) == 1
    message = str(notices[0].message)
    assert "0.6 s" in message and "NDENGINE_JIT_AFTER" in message and "on-disk cache" in message
    assert compile_log.totals() == {"seconds": 0.9, "compiles": 3, "noticed": True}


def test_the_notice_is_silenced_by_its_category(fresh_totals, monkeypatch):
    monkeypatch.setattr(compile_log, "NOTICE_AFTER_SECONDS", 0.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=nd.CompileTimeNotice)
        compile_log.record("loop", 0.1)
    assert caught == []


def test_a_notice_turned_error_is_logged_never_raised(fresh_totals, monkeypatch, caplog):
    monkeypatch.setattr(compile_log, "NOTICE_AFTER_SECONDS", 0.0)
    with warnings.catch_warnings(), caplog.at_level(logging.WARNING, logger="ndengine"):
        warnings.simplefilter("error")
        compile_log.record("loop", 0.1)  # -W error must not fail the compile that reports
    assert any("compiling Numba code" in r.getMessage() for r in caplog.records)


def test_the_library_adds_only_a_null_handler():
    code = ("import logging; root = list(logging.getLogger().handlers); import ndengine; "
            "assert logging.getLogger().handlers == root, 'root logger configured'; "
            "handlers = logging.getLogger('ndengine').handlers; "
            "assert [type(h).__name__ for h in handlers] == ['NullHandler'], handlers")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
