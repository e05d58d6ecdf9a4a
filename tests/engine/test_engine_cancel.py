"""Cancelling queued work (issue 9, item 2): cancel_pending() drops the ops that have not
started; their outputs fail with Cancelled at the next wait; the engine keeps working; an
interrupted wait says how to do it."""
import threading
import time

import pytest

from ndengine import engine as E
from ndengine.engine import Cancelled, FnProperty, cpu

from engine_helpers import (KINDS, THREADED, assert_quiescent, engines, run_script,  # noqa: F401
                            wait_all, wait_var)


@pytest.mark.parametrize("kind", THREADED)
def test_cancel_pending_drops_queued_ops_and_the_engine_keeps_working(engines, kind):
    eng = engines(kind, num_cpu_workers=1)
    gate, started = threading.Event(), threading.Event()
    g = eng.new_variable()
    ran = []

    def blocker(rc):
        started.set()
        gate.wait(10)
        ran.append("blocker")

    eng.push_sync(blocker, cpu(), (), (g,))
    assert started.wait(5)
    outs = [eng.new_variable() for _ in range(100)]
    for i, out in enumerate(outs):  # queued behind the blocker (one worker; reads g)
        eng.push_sync(lambda rc, i=i: ran.append(i), cpu(), (g,), (out,))
    chained = eng.new_variable()
    eng.push_sync(lambda rc: ran.append("chained"), cpu(), (outs[0],), (chained,))
    dropped = eng.cancel_pending()
    assert 90 <= dropped <= 102
    # pushed after the cancel: runs, unless it reads a cancelled output
    after, reads_cancelled, overwrite = (eng.new_variable() for _ in range(3))
    eng.push_sync(lambda rc: ran.append("after"), cpu(), (), (after,))
    eng.push_sync(lambda rc: ran.append("reads"), cpu(), (outs[1],), (reads_cancelled,))
    eng.push_sync(lambda rc: ran.append("overwrite"), cpu(), (), (outs[2],),
                  overwrites=(outs[2],))
    gate.set()
    wait_var(eng, after)
    for var in outs[:2] + outs[3:] + [chained, reads_cancelled]:
        with pytest.raises(Cancelled, match="cancelled before it started"):
            wait_var(eng, var)
    wait_var(eng, outs[2])  # overwritten completely after the cancel: valid again
    wait_var(eng, g)  # the running op finished normally
    wait_all(eng)  # cancelling is not a failure to report again
    assert sorted(map(str, ran)) == ["after", "blocker", "overwrite"]
    assert_quiescent(eng, outs + [g, chained, after])
    fresh = eng.new_variable()
    eng.push_sync(lambda rc: ran.append("fresh"), cpu(), (), (fresh,), FnProperty.ASYNC)
    wait_var(eng, fresh)
    assert ran[-1] == "fresh"


def test_cancelled_is_a_cancelled_error():
    import concurrent.futures
    assert issubclass(Cancelled, concurrent.futures.CancelledError)
    assert issubclass(Cancelled, Exception)


@pytest.mark.parametrize("kind", KINDS)
def test_package_level_cancel_uses_the_process_wide_engine(engines, kind):
    eng = engines(kind, **({} if kind == "NaiveEngine" else {"num_cpu_workers": 1}))
    previous = E.set_engine(eng)
    try:
        assert E.cancel() == 0  # nothing queued
        v = eng.new_variable()
        eng.push_sync(lambda rc: None, cpu(), (), (v,))
        wait_var(eng, v)
    finally:
        E.set_engine(previous)


@pytest.mark.parametrize("kind", THREADED)
def test_interrupted_wait_offers_to_cancel_the_queued_ops(kind):
    code = f"""
        import signal, os, threading, time
        signal.signal(signal.SIGINT, signal.default_int_handler)
        from ndengine import engine as E
        eng = E.create({kind!r}, num_cpu_workers=1)
        vs = [eng.new_variable() for _ in range(300)]
        for v in vs:
            eng.push_sync(lambda rc: time.sleep(0.01), E.cpu(), (), (v,))
        threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        try:
            eng.wait_for_all()
            raise SystemExit("the wait was not interrupted")
        except KeyboardInterrupt as exc:
            note = exc.__notes__[-1]
            assert "ops are still queued; call ndengine.cancel()" in note, note
            print(note)
        start = time.monotonic()
        assert eng.cancel_pending() > 200
        eng.wait_for_all()
        assert time.monotonic() - start < 2, "cancelled ops still ran"
        try:
            eng.wait_for_var(vs[-1])
        except E.Cancelled:
            print("cancelled")
    """
    proc = run_script(code, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "cancelled" in proc.stdout
