"""Ctrl-C storm (run as a script by tests/engine/test_interrupt.py): SIGINTs at random moments while
the main thread pushes ops, through the engine directly and through ndengine arrays, catching
KeyboardInterrupt and going on. Afterwards every wait returns within seconds and every var
or array holds the value of the last op pushed on it that returned, of a later op whose push
was interrupted, or raises an error that says it was interrupted.

    python tests/support/interrupt_storm.py KIND NUM_SIGNALS SEED
"""
import faulthandler
import os
import random
import signal
import sys
import threading
import time

import numpy as np

import ndengine as nd
from ndengine import engine
from ndengine.engine import FnProperty, cpu

# A test run as a background job starts with SIGINT ignored: Ctrl-C must raise here.
signal.signal(signal.SIGINT, signal.default_int_handler)
faulthandler.dump_traceback_later(float(os.environ.get("STORM_DUMP_AFTER", 100)), exit=True)

KIND, NUM_SIGNALS, SEED = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
CELLS = 6
rng = random.Random(SEED)


def sender(count, seed, go, done):
    go.wait()
    local = random.Random(seed)
    try:
        for _ in range(count):
            time.sleep(local.uniform(0, 0.002))
            os.kill(os.getpid(), signal.SIGINT)
    finally:
        done.set()


def storm(step, count, seed):
    """Call step() until ``count`` signals were sent, swallowing KeyboardInterrupt (and, on
    the NaiveEngine, the "interrupted" error of an op skipped at its push because an input
    was interrupted)."""
    # Not thread.is_alive(): on CPython 3.11 a KeyboardInterrupt inside it (its tstate lock's
    # acquire) can make it say False while the thread still runs, and the storm would end
    # with signals still on their way (a CI run once died of one at the next line).
    go, done = threading.Event(), threading.Event()
    thread = threading.Thread(target=sender, args=(count, seed, go, done), daemon=True)
    thread.start()

    def loop():
        go.set()
        while not done.is_set():
            try:
                step()
            except KeyboardInterrupt:
                pass
            except RuntimeError as exc:
                if "interrupted" not in str(exc):
                    raise
        time.sleep(0.05)  # let the last signal land (and be swallowed) before checking

    while True:
        attempt = True  # not a `try:` first: CPython 3.11 leaves that line's NOP unguarded
        try:
            loop()
            break
        except KeyboardInterrupt:
            continue


def settle(what, wait, timeout=10.0):
    """wait() must return (or raise an op's error) within the timeout, interrupts aside."""
    start = time.monotonic()
    while True:
        waited = True  # see storm(): a loop body must not start with `try:`
        try:
            return wait()
        except KeyboardInterrupt:
            if time.monotonic() - start > timeout:
                raise
        finally:
            if time.monotonic() - start > timeout:
                sys.exit(f"{KIND}: {what} did not return within {timeout}s")


def check(what, value_of, attempts, last_ok):
    """``value_of()``: the value, or an exception that says it was interrupted."""
    try:
        value = settle(what, value_of)
    except RuntimeError as exc:
        assert "interrupted" in str(exc), f"{what}: {exc!r}"
        return "interrupted"
    allowed = {i for i in attempts if i >= last_ok}
    assert value in allowed, f"{what}: value {value}, allowed {sorted(allowed)}"
    return "value"


# ---------------------------------------------------------------- the engine directly
eng = engine.create(KIND, num_cpu_workers=2)
variables = [eng.new_variable() for _ in range(CELLS)]
store = [-1] * CELLS
attempts = [[-1] for _ in range(CELLS)]
last_ok = [-1] * CELLS
counter = [0]


def engine_step():
    i = counter[0] = counter[0] + 1
    k, j = rng.randrange(CELLS), rng.randrange(CELLS)
    reads = () if j == k else (variables[j],)
    attempts[k].append(i)
    # Every op sets its cell completely (overwrites=): one that was interrupted is valid again
    # once a later op writes it, unless that op reads a failed cell.
    if rng.random() < 0.7:  # tiny: run at once in this thread when its vars are free
        def tiny(rc, k=k, i=i):
            store[k] = i
        try:
            eng.push_sync(tiny, cpu(), reads, (variables[k],), FnProperty.ASYNC,
                          overwrites=(variables[k],))
        except RuntimeError:  # NaiveEngine: skipped at its push, an input was interrupted
            last_ok[k] = i
            raise
    else:  # large: a worker runs it (on the NaiveEngine, this thread)
        def large(rc, k=k, i=i):
            time.sleep(0.0002)
            store[k] = i
        try:
            eng.push_sync(large, cpu(), reads, (variables[k],), overwrites=(variables[k],))
        except RuntimeError:
            last_ok[k] = i
            raise
    last_ok[k] = i
    if i % 50 == 0:
        eng.wait_for_var(variables[k])  # waits get interrupted too


def raise_if_failed(k):
    eng.wait_for_var(variables[k])
    return store[k]


storm(engine_step, NUM_SIGNALS // 2, SEED)
settle("wait_for_all", eng.wait_for_all)
outcomes = [check(f"var {k}", lambda k=k: raise_if_failed(k), attempts[k], last_ok[k])
            for k in range(CELLS)]
assert eng._executor.pending == 0 and eng._executor.pending_now == 0
assert all(v.is_idle() and not v.queue for v in variables)
# the engine keeps working: a fresh var, and the failed ones once overwritten
fresh = eng.new_variable()
eng.push_sync(lambda rc: store.__setitem__(0, "after"), cpu(), (), (fresh,))
eng.wait_for_var(fresh)
assert store[0] == "after"
print(f"engine: {counter[0]} pushes, cells {outcomes}")

# ---------------------------------------------------------------- ndengine arrays
engine.set_engine(eng)
small = [nd.zeros(16) - 1 for _ in range(CELLS)]
large = [nd.zeros(100_000) - 1 for _ in range(CELLS)]
array_attempts = [[-1] for _ in range(2 * CELLS)]
array_ok = [-1] * (2 * CELLS)


def array_step():
    i = counter[0] = counter[0] + 1
    k, j = rng.randrange(CELLS), rng.randrange(CELLS)
    if rng.random() < 0.6:
        cells, index = small, k
    else:
        cells, index = large, CELLS + k
    array_attempts[index].append(i)
    try:
        cells[k] = cells[j] * 0 + i
    except RuntimeError:  # NaiveEngine: cells[j] was interrupted; cells[k] keeps its array
        array_attempts[index].pop()
        raise
    array_ok[index] = i


def array_value(cells, k):
    values = cells[k].asnumpy()
    assert (values == values[0]).all()
    return int(values[0])


# Compile the kernels first: a Ctrl-C inside Numba's compiler (LLVM) is beyond any engine.
for cells in (small, large):
    (cells[1] * 0 + 1).asnumpy()
storm(array_step, NUM_SIGNALS - NUM_SIGNALS // 2, SEED + 1)
settle("waitall", nd.waitall)
outcomes = [check(f"array {index}", lambda c=cells, k=k: array_value(c, k),
                  array_attempts[index], array_ok[index])
            for index, (cells, k) in enumerate([(small, k) for k in range(CELLS)]
                                               + [(large, k) for k in range(CELLS)])]
assert eng._executor.pending == 0 and eng._executor.pending_now == 0
# arrays keep working, and a failed one is usable again once rebound
fresh = nd.arange(5) * 2
assert np.array_equal(fresh.asnumpy(), np.arange(5) * 2)
print(f"arrays: {counter[0]} pushes, cells {outcomes}")
print("storm ok")
