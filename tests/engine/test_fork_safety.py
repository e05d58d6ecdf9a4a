"""Fork while other threads use the storage pool, the random module and the profiler: the child
must find every lock of those modules usable (os.register_at_fork re-creates them)."""
import os
import signal
import sys
import threading
import time

import pytest

import ndengine as nd
from ndengine import ops, profiler
from ndengine.engine import cpu
from ndengine.core import storage

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

FORKS = 50
CHILD_TIMEOUT = 10.0  # seconds; a healthy child exits in milliseconds, even on a loaded machine


def _busy(stop, ctx):
    """Hold the modules' locks as often as possible: pool alloc/free, the profiler's records,
    the random parameter check and the random states."""
    uniform = ops.get("random_uniform")
    while not stop.is_set():
        buffers = [storage.alloc(n, ctx) for n in (8, 100, 3000, 70000)]
        for data in buffers:
            storage.free(data, ctx)
        profiler.records()
        uniform.infer(low=0.0, high=1.0, shape=(3,))
        nd.random.seed(1, ctx=ctx)


def _child_work(ctx):
    storage.free(storage.alloc(100, ctx), ctx)
    storage.free(storage.alloc(3000, cpu(0)), cpu(0))
    profiler.records()
    nd.random.seed(2)
    assert nd.random.uniform(shape=3).asnumpy().shape == (3,)
    assert (nd.ones(4) + 1).asnumpy().sum() == 8
    assert storage.stats(ctx)["bytes_in_use"] >= 0


def _child(ctx):
    """Uses each module in the child; exits 0 when all of it worked."""
    try:
        _child_work(ctx)
    except BaseException:  # noqa: B902 - any failure is the child's exit status
        os._exit(1)
    os._exit(0)


def _wait_child(pid):
    deadline = time.monotonic() + CHILD_TIMEOUT
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.002)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return "deadlocked"


def test_fork_while_threads_hold_the_locks(nd_engine):
    ctx = cpu(4)
    _child_work(ctx)  # compile the kernels here, not once in every child
    stop = threading.Event()
    threads = [threading.Thread(target=_busy, args=(stop, ctx), daemon=True) for _ in range(2)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often: a fork lands inside a locked section
    results = []
    try:
        for thread in threads:
            thread.start()
        for _ in range(FORKS):
            time.sleep(0.001)
            pid = os.fork()
            if pid == 0:
                _child(ctx)
            results.append(_wait_child(pid))
            if results[-1] != 0:
                break  # one deadlock or failure is enough: stop before the next timeout
    finally:
        sys.setswitchinterval(interval)
        stop.set()
        for thread in threads:
            thread.join(10)
    assert results == [0] * FORKS, f"child {len(results)} of {FORKS}: {results[-1]}"
    # and the parent's counters are still exact
    nd.waitall()
    assert storage.stats(ctx)["bytes_in_use"] == 0


def test_fork_while_another_thread_computes_a_cached_property():
    # functools.cached_property (Python 3.11) holds a lock per property while it computes:
    # a fork then would leave it held in the child, whose first use of the property hangs.
    from ndengine.ops.runtime.caching import cached_property

    inside, release = threading.Event(), threading.Event()

    class Slow:
        @cached_property
        def value(self):
            if not inside.is_set():  # the first computation, in the parent's thread, blocks
                inside.set()
                release.wait(10)
            return 42

    computing = threading.Thread(target=lambda: Slow().value)
    computing.start()
    assert inside.wait(10)
    pid = os.fork()
    if pid == 0:
        signal.alarm(10)  # a hung child dies rather than hang the test
        os._exit(0 if Slow().value == 42 else 1)
    release.set()
    computing.join(10)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status


def test_fork_while_another_thread_compiles_a_kernel():
    # A thread inside Numba's compiler at the fork: the child must still compile kernels
    # (ndengine holds Numba's compiler lock across the fork; without it the child inherits the
    # lock held by a thread it does not have, and hangs at its first compile).
    import numba
    from numba.core.compiler_lock import global_compiler_lock

    inside, release = threading.Event(), threading.Event()

    def compiling():  # holds the lock as a long compile does
        with global_compiler_lock:
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=compiling)
    thread.start()
    assert inside.wait(10)
    threading.Timer(0.2, release.set).start()  # the fork waits for this "compile" to end
    pid = os.fork()
    if pid == 0:
        signal.alarm(10)  # a hung child dies rather than hang the test

        @numba.njit
        def add_one(x):
            return x + 1
        os._exit(0 if add_one(41) == 42 else 1)
    thread.join(10)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
