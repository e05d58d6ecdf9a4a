"""Shared helpers for the engine test-suite (tests/test_engine_*.py).

Every blocking call the tests make on an engine goes through a helper with a timeout, so an
engine bug shows up as a test failure rather than a hung test run. Every op that blocks (on an
Event, a Barrier) blocks with a timeout too, so a failing test never leaves an op stuck forever
(which would hang the exit-time drain of the pytest process).
"""
import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from ndengine import engine as E
from ndengine.engine.devices import FakeStream

KINDS = ["NaiveEngine", "ThreadedEnginePooled", "ThreadedEnginePerDevice"]
THREADED = ["ThreadedEnginePooled", "ThreadedEnginePerDevice"]

TIMEOUT = 10.0  # seconds; generous, only reached when something is broken


class Timeout(AssertionError):
    pass


def run_with_timeout(fn, timeout=TIMEOUT, what=None):
    """Run fn() in a daemon thread; return its result, re-raise its exception (same object),
    or fail with Timeout if it does not finish in time."""
    box = {}

    def target():
        try:
            box["result"] = fn()
        except BaseException as exc:  # noqa: B902 - handed to the caller
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True, name="test-helper")
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise Timeout(f"{what or getattr(fn, '__name__', fn)} did not finish within {timeout}s "
                      "(deadlock?)")
    if "error" in box:
        raise box["error"]
    return box.get("result")


def run_threads(target, count, timeout=60, what="a thread"):
    """Run target(i) for i in range(count), each in a daemon thread of its own, all at once;
    fail if one is still running after ``timeout`` seconds, and re-raise the first exception
    a thread raised (the same object, its traceback the thread's)."""
    errors = []

    def run(i):
        try:
            target(i)
        except BaseException as exc:  # noqa: B902 - handed to the caller
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
    assert not any(thread.is_alive() for thread in threads), f"{what} hung"
    if errors:
        raise errors[0]


def wait_all(eng, timeout=TIMEOUT):
    return run_with_timeout(eng.wait_for_all, timeout, "wait_for_all")


def wait_var(eng, var, timeout=TIMEOUT):
    return run_with_timeout(lambda: eng.wait_for_var(var), timeout, "wait_for_var")


def wait_until(pred, timeout=TIMEOUT, interval=0.001, what="condition"):
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise Timeout(f"{what} not reached within {timeout}s")
        time.sleep(interval)


def make_engine(kind, **options):
    return E.create(kind, **options)


def shutdown(eng, timeout=TIMEOUT):
    """Stop the engine's workers (so threads do not pile up across tests)."""
    try:
        run_with_timeout(eng.notify_shutdown, timeout, "notify_shutdown")
    except Timeout:
        # A stuck engine (the test has failed already): forget it, so the exit-time drain of
        # the pytest process does not hang on it too.
        E._engines.discard(eng)


class EngineFactory:
    """Creates engines for one test and shuts all of them down afterwards."""

    def __init__(self):
        self.engines = []

    def __call__(self, kind, **options):
        eng = make_engine(kind, **options)
        self.engines.append(eng)
        return eng

    def close(self):
        for eng in self.engines:
            shutdown(eng)
        self.engines.clear()


@pytest.fixture
def engines():
    factory = EngineFactory()
    yield factory
    factory.close()


def assert_quiescent(eng, variables=()):
    """Exact end state: nothing pending, every var idle with an empty queue."""
    if hasattr(eng, "_executor"):
        assert eng._executor.pending == 0, f"engine still has {eng._executor.pending} pending ops"
    for var in variables:
        assert var.pending_write is None, f"{var!r} still has a pending write"
        assert var.num_pending_reads == 0, f"{var!r} still has {var.num_pending_reads} reads"
        assert not var.queue, f"{var!r} still has a queue: {list(var.queue)!r}"


def engine_threads(before):
    """Threads started since ``before`` (a set of Thread objects) that are still alive."""
    return [t for t in threading.enumerate() if t not in before]


class FakeStreamFactory:
    """Makes the engine's fake streams (ndengine.engine.devices.FakeStream), keeping which
    (ctx, is_copy) asked for each."""

    def __init__(self):
        self.calls = []
        self.streams = []
        self._lock = threading.Lock()

    def __call__(self, ctx, is_copy):
        with self._lock:
            self.calls.append((ctx, is_copy))
            stream = FakeStream(ctx, is_copy)
            self.streams.append(stream)
            return stream

    @property
    def total_syncs(self):
        return sum(s.syncs for s in self.streams)

    @property
    def total_records(self):
        """Events recorded on the streams (one per GPU op on the threaded engines)."""
        return sum(1 for s in self.streams for call in list(s.calls) if call[0] == "record")


def run_script(code, timeout=60, env=None):
    """Run a Python snippet in a fresh interpreter; return the CompletedProcess."""
    full_env = dict(os.environ)
    for key in list(full_env):
        if key.startswith("NDENGINE_"):
            del full_env[key]
    if env:
        full_env.update(env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout, env=full_env,
                          cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
