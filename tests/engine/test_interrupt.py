"""Ctrl-C: a wait is interruptible, an op interrupted in the pushing thread fails its outputs
(never garbage) while the interrupt reaches the user, and the engine keeps working; a storm of
SIGINTs at random moments never leaves the engine wedged (interrupt_storm.py).

Every child script restores Python's SIGINT handler first: a test suite run as a background job
starts with SIGINT ignored, and then no signal would raise."""
import os
import subprocess
import sys
import textwrap

import pytest

KINDS = ("NaiveEngine", "ThreadedEnginePooled", "ThreadedEnginePerDevice")
STORM = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "support",
                     "interrupt_storm.py")

SCRIPT = textwrap.dedent("""
    import os, signal, sys, threading, time
    signal.signal(signal.SIGINT, signal.default_int_handler)
    from ndengine import engine
    from ndengine.engine import FnProperty, cpu
    eng = engine.create(sys.argv[1], num_cpu_workers=2)
    interrupt_soon = lambda: threading.Timer(
        0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()

    # 1. A wait on a slow op is interrupted at once; afterwards the op still finishes.
    if sys.argv[1] != "NaiveEngine":
        v, gate = eng.new_variable(), threading.Event()
        eng.push_sync(lambda rc: gate.wait(20), cpu(), (), (v,))
        interrupt_soon()
        start = time.perf_counter()
        try:
            eng.wait_for_var(v)
            sys.exit("wait was not interrupted")
        except KeyboardInterrupt:
            assert time.perf_counter() - start < 5
        gate.set()
        eng.wait_for_var(v)
        print("wait interrupted")

    # 2. An op running in the pushing thread (ASYNC, or any op on the NaiveEngine) is
    #    interrupted: the push raises KeyboardInterrupt, its output fails at every wait.
    #    Twice: the first ASYNC push goes through a block (it starts the pool), later ones
    #    through the threaded engines' run-now path.
    for _ in range(2):
        w = eng.new_variable()
        interrupt_soon()
        try:
            eng.push_sync(lambda rc: time.sleep(20), cpu(), (), (w,), FnProperty.ASYNC)
            sys.exit("push was not interrupted")
        except KeyboardInterrupt:
            pass
        for _ in range(2):
            try:
                eng.wait_for_var(w)
                sys.exit("an interrupted op's output waited cleanly")
            except RuntimeError as exc:
                assert "interrupted" in str(exc)
        eng.wait_for_all()  # the user saw the interrupt already: nothing more to raise
        assert w.is_idle() and not w.queue
    done = []
    u = eng.new_variable()
    eng.push_sync(lambda rc: done.append(1), cpu(), (), (u,))
    eng.wait_for_all()
    assert done == [1]
    print("op interrupted")
""")


@pytest.mark.parametrize("kind", KINDS)
def test_ctrl_c(kind):
    result = subprocess.run([sys.executable, "-c", SCRIPT, kind], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "op interrupted" in result.stdout
    if kind != "NaiveEngine":
        assert "wait interrupted" in result.stdout


def run_storm(kind, signals, seed, timeout):
    result = subprocess.run([sys.executable, STORM, kind, str(signals), str(seed)],
                            capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert "storm ok" in result.stdout, result.stdout + result.stderr[-3000:]


@pytest.mark.parametrize("kind", KINDS)
def test_ctrl_c_storm(kind):
    run_storm(kind, 400, 1, timeout=150)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [11, 12, 13])
@pytest.mark.parametrize("kind", KINDS)
def test_ctrl_c_storm_long(kind, seed):
    run_storm(kind, 1500, seed, timeout=300)
