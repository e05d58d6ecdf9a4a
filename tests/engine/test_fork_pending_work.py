"""os.fork() while the forking thread's large ops are still pending: the fork must return, the
child must see their results and keep working, the parent's values must stay right.

The ops a fork waits for must never need a lock that a fork handler holds across the fork
(concurrent.futures' ``_global_shutdown_lock``, Numba's compiler lock); a lock the engine
cannot know of (another library's handler) only delays the fork by ``FORK_STALL_SECONDS``.
Each case runs in a fresh interpreter with a timeout, so a deadlock fails instead of hanging.
"""
import os

import pytest

from engine_helpers import KINDS, run_script

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

SCRIPT_TIMEOUT = 120  # seconds; a healthy run takes a few, most of it importing and compiling

FORK_SCRIPT = """
    import os, signal, sys, threading, time, traceback
    import numpy as np
    import ndengine as nd
    from ndengine import engine as E

    n = {size}
    a = np.arange(float(n))
    big = nd.array(a)
{setup}
    y = {expression}
    expected = {expected}
    pid = os.fork()
    if pid == 0:
        signal.alarm(60)  # a hang in the child becomes a failure, not a stuck test
        status = 3
        try:
{child_check}
            z = (big * 3 + 1).asnumpy()  # the child's engine runs large ops
            assert np.array_equal(z, a * 3 + 1)
            nd.waitall()
            status = 0
        except BaseException:
            traceback.print_exc()
        os._exit(status)
    deadline = time.monotonic() + 60
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            sys.exit("the child hung")
        time.sleep(0.01)
{parent_end}
    assert np.array_equal(y.asnumpy(), expected), "the parent's value is wrong"
    print("child", os.waitstatus_to_exitcode(status))
"""

CHILD_SEES_Y = """
assert np.array_equal(y.asnumpy(), expected), "the child's value is wrong"
"""


def run_fork(kind, expression, expected, size=300_000, setup="", child_check=CHILD_SEES_Y,
             parent_end="", env=()):
    def indent(text, spaces):
        return "\n".join(" " * spaces + line for line in text.strip().splitlines())

    code = FORK_SCRIPT.format(size=size, setup=indent(setup, 4), expression=expression,
                              expected=expected, child_check=indent(child_check, 12),
                              parent_end=indent(parent_end, 4))
    env = {"NDENGINE_ENGINE_TYPE": kind, **dict(env)}
    proc = run_script(code, timeout=SCRIPT_TIMEOUT, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the last line: Numba's TBB layer may print a line of its own at a fork after a TBB
    # kernel ran on an engine worker ("Unable to join threads to shut down before fork()")
    assert proc.stdout.splitlines()[-1:] == ["child 0"], proc.stdout + proc.stderr
    return proc


@pytest.mark.parametrize("kind", KINDS)
def test_fork_with_a_pending_large_op(kind):
    # the op splits over helper threads; concurrent.futures' fork handler used to hold the
    # lock its submit needs while the engine waited for the op
    run_fork(kind, "big * 2 + 1", "a * 2 + 1")


@pytest.mark.parametrize("kind", KINDS)
def test_fork_with_a_pending_fused_op(kind):
    # a window of 2**20 elements is fused at once; its blocks run on helper threads
    run_fork(kind, "(big * 2 + 1) * big - 3", "(a * 2 + 1) * a - 3", size=1 << 20)


@pytest.mark.parametrize("kind", KINDS)
def test_fork_with_a_pending_op_waiting_for_its_first_compile(kind):
    # NDENGINE_JIT_AFTER=0: the op waits for Numba to compile its loop on the compile thread,
    # which needs Numba's compiler lock, held across the fork
    run_fork(kind, "big.astype(np.int16) * 3 + 7",
             "(a.astype(np.int16) * np.int16(3) + np.int16(7))",
             env={"NDENGINE_JIT_AFTER": "0"})


@pytest.mark.parametrize("kind", KINDS)
def test_fork_with_a_pending_op_while_another_thread_pushes_large_ops(kind):
    # the fork waits for the forking thread's op only; what the other thread was computing
    # is sound or raises ForkedWhilePending in the child
    run_fork(kind, "big * 2 + 1", "a * 2 + 1", setup="""
stop = threading.Event()
theirs = [big]
def push_forever():
    while not stop.is_set():
        theirs[0] = theirs[0] * 1.0 + 0.0
pusher = threading.Thread(target=push_forever, daemon=True)
pusher.start()
time.sleep(0.2)
""", child_check=CHILD_SEES_Y + """
try:
    assert np.array_equal(theirs[0].asnumpy(), a)
except E.ForkedWhilePending:
    pass
""", parent_end="""
stop.set()
pusher.join(30)
assert not pusher.is_alive()
assert np.array_equal(theirs[0].asnumpy(), a)
""")


STALLED_OP = """
# a library that holds a lock across fork, its handler registered after ndengine's (so run
# before it); an op pushed just before the fork needs that lock
foreign = threading.Lock()
os.register_at_fork(before=foreign.acquire, after_in_parent=foreign.release,
                    after_in_child=foreign.release)
E.get().FORK_STALL_SECONDS = 1.0

@nd.register_op("needs_the_foreign_lock", kind="unary")
def needs_the_foreign_lock(inputs, outputs, req):
    time.sleep(0.3)
    with foreign:
        outputs[0][...] = inputs[0] + 7

box = nd.needs_the_foreign_lock(big)
"""


@pytest.mark.parametrize("kind", KINDS)
def test_fork_goes_on_when_an_op_it_waits_for_needs_a_foreign_fork_lock(kind):
    # on the threaded engines the op is still pending at the fork and cannot finish until
    # after it: the fork goes on after FORK_STALL_SECONDS, the child fails the op's output
    # with ForkedWhilePending, the parent gets its value and a warning saying what happened.
    # The NaiveEngine ran the op at its push: the child has the value.
    waited = kind == "NaiveEngine"
    child_check = ("assert np.array_equal(box.asnumpy(), a + 7)" if waited else """
try:
    box.asnumpy()
    raise AssertionError("a value the parent never finished reached the child")
except E.ForkedWhilePending:
    pass
""")
    proc = run_fork(kind, "big * 2 + 1", "a * 2 + 1", setup=STALLED_OP,
                    child_check=child_check,
                    parent_end="assert np.array_equal(box.asnumpy(), a + 7)")
    assert ("went on after the ops this thread pushed" in proc.stderr) != waited, proc.stderr
