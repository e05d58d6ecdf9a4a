"""Every first compile of a Numba loop that an op's run calls happens on the compile thread
(``deferred_loops``; Ctrl-C then cuts short a wait, never an LLVM compile), and the results
stay NumPy's.

Each test gives the ops it calls fresh Numba dispatchers (``fresh``: none of their signatures
compiled in this process, whatever ran before) and records every ``Dispatcher.compile`` call
with its thread: the compile of a dispatcher's new signature, or its load from Numba's disk
cache, both go through it, whether a caller's call triggered it or the compile thread's job.
"""
import threading
import warnings

import numpy as np
import pytest
from numba import njit, types
from numba.core.errors import NumbaWarning
from numba.extending import intrinsic
from numba.core.dispatcher import Dispatcher

import ndengine.ops as ops
from ndengine.ops import OpReq
from ndengine.ops.runtime import compile_queue, deferred_loops as dl
from ndengine.ops.elementwise import operators as elementwise
from ndengine.ops.elementwise import loops as elementwise_loops, power_clip
from ndengine.ops.families import row_reductions as fusion_rows  # fusion's row loops
from ndengine.ops.runtime.parallel import use_parallel

COMPILE_THREAD = "ndengine-compile"


@pytest.fixture
def compiles(monkeypatch):
    """The (Python function, thread name) of every Numba compile from now on."""
    seen = []
    compile_now = Dispatcher.compile

    def recording(self, signature):
        seen.append((self.py_func, threading.current_thread().name))
        return compile_now(self, signature)

    monkeypatch.setattr(Dispatcher, "compile", recording)
    return seen


@pytest.fixture
def fresh(monkeypatch):
    """``fresh(*names)``: the named element-wise ops get Numba loops never compiled in this
    process, and plans made anew (all restored after the test)."""
    monkeypatch.setattr(elementwise, "_LOOPS_BY_SCALAR", {})

    def refresh(*names):
        for name in names:
            spec = elementwise.spec(name)
            for attr in ("numba_loops", "loops", "general_loops"):
                getattr(spec, attr)  # cached now, so that the original is put back after
                monkeypatch.delitem(spec.__dict__, attr)
            monkeypatch.setattr(ops.get(name), "plans", {})
    return refresh


def run_op(name, *inputs, **params):
    op = ops.get(name)
    [(shape, dtype)] = op.infer(*inputs, **params)
    out = np.empty(shape, dtype)
    with np.errstate(all="ignore"):
        op.kernels["cpu"](list(inputs), [out], [OpReq.WRITE_TO], **params)
    return out


def assert_on_compile_thread(compiles, *loops):
    """Something compiled, all of it on the compile thread, ``loops`` among it."""
    assert compiles, "nothing compiled: the loops were not fresh"
    elsewhere = [(f.__qualname__, thread) for f, thread in compiles if thread != COMPILE_THREAD]
    assert not elsewhere, f"compiled outside the compile thread: {elsewhere}"
    compiled = {f for f, _ in compiles}
    for loop in loops:
        assert loop.py_func in compiled, f"{loop.py_func.__qualname__} did not compile"


def values(dtype, shape=(37,), low=-9, high=9):
    rng = np.random.default_rng(3)
    if np.dtype(dtype).kind == "u":
        low = 0
    return rng.integers(low, high, shape).astype(dtype)


def numba_loops(name):
    return elementwise.spec(name).numba_loops


# ------------------------------------------------------------- ops that do not defer

@pytest.mark.parametrize("name, oracle, dtype", [
    ("relu", lambda x: np.maximum(x, 0), np.int16),
    ("fix", np.fix, np.float32),
    ("round", np.round, np.float64),
])
def test_a_unary_flat_run_compiles_on_the_compile_thread(fresh, compiles, name, oracle, dtype):
    fresh(name)
    x = values(dtype) + (np.dtype(dtype).type(0.5) if np.dtype(dtype).kind == "f" else 0)
    for _ in range(2):  # the compile, then the bound dispatcher itself
        np.testing.assert_array_equal(run_op(name, x), oracle(x))
    assert_on_compile_thread(compiles, numba_loops(name).serial)
    assert len([f for f, _ in compiles if f is numba_loops(name).serial.py_func]) == 1


def test_a_general_run_compiles_on_the_compile_thread(fresh, compiles):
    fresh("relu")
    x = values(np.int8, (6, 10))[:, ::2]  # strided: the general run's nditer chunks
    np.testing.assert_array_equal(run_op("relu", x), np.maximum(x, 0))
    assert_on_compile_thread(compiles, numba_loops("relu").serial)


def test_where_compiles_on_the_compile_thread(fresh, compiles):
    fresh("where")
    x, y = values(np.uint16), values(np.uint16, low=0, high=3)
    condition = x > 4
    np.testing.assert_array_equal(run_op("where", condition, x, y), np.where(condition, x, y))
    np.testing.assert_array_equal(run_op("where", condition, x, 7), np.where(condition, x, 7))
    assert_on_compile_thread(compiles, numba_loops("where").serial)


def test_clip_with_array_bounds_compiles_on_the_compile_thread(fresh, compiles):
    # clip_arrays is its ufunc (NumPy's clip): it defers its compile like the ufunc ops
    previous = dl.set_jit_after(0)
    try:
        fresh("clip_arrays")
        x, low, high = values(np.int32), values(np.int32, high=0), values(np.int32, low=0)
        np.testing.assert_array_equal(run_op("clip_arrays", x, low, high),
                                      np.clip(x, low, high))
    finally:
        dl.set_jit_after(previous)
    assert_on_compile_thread(compiles, numba_loops("clip_arrays").serial)


def test_integer_power_compiles_on_the_compile_thread(monkeypatch, fresh, compiles):
    fresh("power")
    # the exponent array's check
    any_negative = njit(**elementwise_loops._JIT)(elementwise_loops.any_negative.py_func)
    monkeypatch.setattr(power_clip, "any_negative", any_negative)
    x, y = values(np.int16, low=-4, high=4), values(np.int16, low=0, high=5)
    np.testing.assert_array_equal(run_op("power", x, y), np.power(x, y))
    np.testing.assert_array_equal(run_op("power", x, 3), np.power(x, 3))
    strided = values(np.int64, (20,), low=0, high=4)[::2]  # the exponent check's ravel
    np.testing.assert_array_equal(run_op("power", x[:10], strided), np.power(x[:10], strided))
    with pytest.raises(ValueError, match="negative integer powers"):
        run_op("power", x, -y - 1)
    loops = numba_loops("power")
    assert_on_compile_thread(compiles, loops.serial, loops.serial_array_scalar, any_negative)


def test_a_float_power_by_two_runs_squares_loop_compiled_on_the_compile_thread(fresh, compiles):
    fresh("power", "square")
    x = values(np.float32) / np.float32(3)
    np.testing.assert_array_equal(run_op("power", x, 2.0), np.power(x, np.float32(2.0)))
    assert_on_compile_thread(compiles, numba_loops("square").serial)


def test_a_parallel_loop_compiles_on_the_compile_thread(fresh, compiles):
    size = 1 << 18
    if not use_parallel(size):
        pytest.skip("no parallel loops on this machine")
    fresh("relu")
    x = values(np.int8, (size,))
    np.testing.assert_array_equal(run_op("relu", x), np.maximum(x, 0))
    assert_on_compile_thread(compiles, numba_loops("relu").parallel)


# --------------------------------------------------------------- ops that defer

def test_a_deferring_ops_flat_and_general_runs_each_compile_there(fresh, compiles):
    # the general run's chunks are read-only arrays, the flat run's are not: two signatures
    previous = dl.set_jit_after(0)
    try:
        fresh("hypot")
        x, y = values(np.float32, (6, 10)), values(np.float32, (10,))
        np.testing.assert_array_equal(run_op("hypot", x, x), np.hypot(x, x))
        np.testing.assert_array_equal(run_op("hypot", x, y.astype(np.int8)),
                                      np.hypot(x, y.astype(np.int8)))
    finally:
        dl.set_jit_after(previous)
    serial = numba_loops("hypot").serial
    assert_on_compile_thread(compiles, serial)
    assert len(serial.signatures) == 2


# -------------------------------------------------------------------- fusion's rows

def test_a_row_loop_compiles_on_the_compile_thread(monkeypatch, compiles):
    loop = njit(**fusion_rows._JIT)(fusion_rows.extreme_rows.py_func)
    monkeypatch.setitem(fusion_rows._ROWS, "max", (loop, 1))
    monkeypatch.setattr(fusion_rows, "_reducers", {})
    rows = values(np.float64, (5, 9))
    out = np.empty(5)
    fusion_rows.row_reducer("max", np.dtype(np.float64))(rows, out)
    np.testing.assert_array_equal(out, rows.max(axis=1))
    assert_on_compile_thread(compiles, loop)


def test_a_loop_called_on_the_compile_thread_compiles_there_at_once(monkeypatch, compiles):
    # fusion's kernel compile warms its row loop in its job: no wait for a job behind it
    loop = njit(**fusion_rows._JIT)(fusion_rows.extreme_rows.py_func)
    monkeypatch.setitem(fusion_rows._ROWS, "min", (loop, 0))
    monkeypatch.setattr(fusion_rows, "_reducers", {})
    assert compile_queue.submit(lambda: fusion_rows.warm("min", np.dtype(np.int16))).wait(60)
    assert_on_compile_thread(compiles, loop)
    out = np.empty(2, np.int16)
    fusion_rows.row_reducer("min", np.dtype(np.int16))(values(np.int16, (2, 4)), out)
    np.testing.assert_array_equal(out, values(np.int16, (2, 4)).min(axis=1))


# ------------------------------------------------------------------ a failed compile

def _failing_loop():
    @njit
    def loop(x, out):
        out[0] = x.no_such_attribute
    return loop


def test_a_failed_compile_raises_the_direct_calls_error_in_the_caller(compiles):
    x, out = np.arange(3.0), np.empty(3)
    with pytest.raises(Exception) as direct:
        _failing_loop()(x, out)
    loop = _failing_loop()
    del compiles[:]
    for call in (dl.bind(loop, None, (x.dtype, out.dtype))[0], dl.deferred(loop)):
        for _ in range(2):  # each call tries again, as a dispatcher's call does
            with pytest.raises(type(direct.value)) as routed:
                call(x, out)
            assert str(routed.value) == str(direct.value)
    assert [thread for _, thread in compiles] == [COMPILE_THREAD] * 4
    assert not loop.signatures


def test_a_warning_numba_raises_while_typing_on_the_compile_thread_goes_out():
    # there Numba's type inference does not swap the process's warnings state (compile_queue):
    # what it raises goes out as raised, under the process's filters
    @intrinsic
    def warn_while_typed(typingctx):
        warnings.warn("typed on the compile thread", NumbaWarning)
        return types.none(), lambda context, builder, signature, args: context.get_dummy_value()

    @njit
    def typed():
        warn_while_typed()

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert compile_queue.submit(lambda: typed.compile(())).wait(60)
    assert any(w.category is NumbaWarning and "typed on the compile thread" in str(w.message)
               for w in caught)
