"""Deferred Numba loops (ops/runtime/deferred_loops.py): the exact state after each transition,
the faster of the two loops measured once and kept, the results unchanged across the switch
from NumPy's loop to Numba's, and every deferring op's Numba loop equal to NumPy's ufunc (the
loop most of the suite's short-lived signatures run)."""
import itertools
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import ndengine as nd
from ndengine.ops.runtime import compile_queue
from ndengine.ops.runtime import deferred_loops as dl
from ndengine.ops.elementwise import operators as elementwise



# a fake loop's cost per call: the slower loop of a trial (the faster one costs ~1 us)
SLOW = 0.002


class FakeNumbaLoop:
    """A Numba dispatcher's two calls: compile(signature) and the call itself (``delay``:
    seconds each call takes)."""

    def __init__(self, compile_error=None, delay=0.0):
        self.calls = 0
        self.compiled = []
        self.compile_error = compile_error
        self.delay = delay

    def compile(self, signature):
        if self.compile_error:
            raise self.compile_error
        self.compiled.append(signature)

    def __call__(self, x, out):
        self.calls += 1
        if self.delay:
            time.sleep(self.delay)
        out[:] = x + 1


class FakeNumpyLoop:
    """NumPy's loop; slower than the fake Numba loop unless ``delay`` says otherwise."""

    def __init__(self, refuse=False, delay=SLOW):
        self.calls = 0
        self.refuse = refuse
        self.delay = delay

    def __call__(self, x, out):
        self.calls += 1
        if self.delay:
            time.sleep(self.delay)
        if self.refuse:
            raise TypeError("no loop for these operands")
        np.add(x, 1, out=out)


@pytest.fixture
def jit_after():
    previous = dl.jit_after()
    yield dl.set_jit_after
    dl.set_jit_after(previous)


def _call(slot, n=1):
    x = np.arange(4.0)
    for _ in range(n):
        out = np.empty(4)
        slot[0](x, out)
        np.testing.assert_array_equal(out, x + 1)


DTYPES = (np.dtype(np.float64), np.dtype(np.float64))


def test_numpy_runs_until_the_count_then_numba_compiles_and_runs(jit_after):
    jit_after(3)
    numba, numpy = FakeNumbaLoop(), FakeNumpyLoop()
    slot = dl.bind(numba, numpy, DTYPES)
    assert dl.state_of(numba, DTYPES) == (dl.WAITING, 0)
    _call(slot, 3)
    assert dl.state_of(numba, DTYPES) == (dl.WAITING, 3)
    assert (numpy.calls, numba.calls, numba.compiled) == (3, 0, [])
    _call(slot)  # the 4th call queues the compile (for its operand types), runs NumPy's loop
    assert compile_queue.drain(30)
    assert dl.state_of(numba, DTYPES) == (dl.MEASURING, 4)
    assert len(numba.compiled) == 1 and len(numba.compiled[0]) == 2  # (x, out) types
    assert (numpy.calls, numba.calls) == (4, 0)
    _call(slot)  # times both loops (TRIAL_ROUNDS each), then runs the faster: Numba's
    rounds = dl.TRIAL_ROUNDS
    assert dl.state_of(numba, DTYPES)[0] == dl.READY
    assert slot[0] is numba and (numpy.calls, numba.calls) == (4 + rounds, 1 + rounds)
    _call(slot)
    assert (numpy.calls, numba.calls, len(numba.compiled)) == (4 + rounds, 2 + rounds, 1)
    # a plan bound later gets the compiled loop at once
    assert dl.bind(numba, numpy, DTYPES)[0] is numba


def test_the_compile_runs_on_the_compile_thread(jit_after):
    # Ctrl-C reaches the main thread only: there it may cut the wait short, never a compile
    jit_after(1)
    threads = []

    class Recording(FakeNumbaLoop):
        def compile(self, signature):
            threads.append(threading.current_thread().name)
            super().compile(signature)

    numba = Recording()
    slot = dl.bind(numba, FakeNumpyLoop(), DTYPES)
    _call(slot, 2)
    assert compile_queue.drain(30)
    _call(slot)
    assert threads == ["ndengine-compile"] and numba.calls == 1 + dl.TRIAL_ROUNDS


def test_count_zero_compiles_at_the_first_call(jit_after):
    jit_after(0)
    numba, numpy = FakeNumbaLoop(), FakeNumpyLoop()
    slot = dl.bind(numba, numpy, DTYPES)
    _call(slot)
    assert dl.state_of(numba, DTYPES)[0] == dl.MEASURING  # the next call times both loops
    assert (numpy.calls, numba.calls) == (0, 1)
    _call(slot)
    assert dl.state_of(numba, DTYPES)[0] == dl.READY and slot[0] is numba


def test_numpys_loop_measured_faster_is_kept_for_good(jit_after):
    jit_after(0)
    numba, numpy = FakeNumbaLoop(delay=SLOW), FakeNumpyLoop(delay=0.0)
    slot = dl.bind(numba, numpy, DTYPES)
    _call(slot, 2)  # compiles and runs Numba's loop, then times both and keeps NumPy's
    rounds = dl.TRIAL_ROUNDS
    assert dl.state_of(numba, DTYPES)[0] == dl.NUMPY_FASTER
    assert slot[0] is numpy and (numpy.calls, numba.calls) == (1 + rounds, 1 + rounds)
    _call(slot, 3)
    assert (numpy.calls, numba.calls) == (4 + rounds, 1 + rounds)
    assert dl.bind(numba, numpy, DTYPES)[0] is numpy  # a plan bound later gets it at once
    assert dl.stats()["signatures"].get(dl.NUMPY_FASTER, 0) >= 1


def test_general_run_keeps_numpys_loop_where_faster(jit_after):
    jit_after(0)
    numba, numpy = FakeNumbaLoop(delay=SLOW), FakeNumpyLoop(delay=0.0)
    loop = dl.deferred(numba, numpy)
    x = np.arange(3.0)
    types = dl.call_types(x, np.empty(3))
    for _ in range(4):
        out = np.empty(3)
        loop(x, out)
        np.testing.assert_array_equal(out, x + 1)
    assert dl.state_of(numba, types)[0] == dl.NUMPY_FASTER
    assert numba.calls == 1 + dl.TRIAL_ROUNDS and numpy.calls == 3 + dl.TRIAL_ROUNDS


@pytest.mark.parametrize("size, timed", [
    (dl.TRIAL_ELEMENTS + 5, dl.TRIAL_ELEMENTS),
    (dl.PARALLEL_MIN_SIZE + 5, min(dl.PARALLEL_MIN_SIZE + 5, dl.PARALLEL_TRIAL_ELEMENTS)),
    (dl.PARALLEL_TRIAL_ELEMENTS + 5, dl.PARALLEL_TRIAL_ELEMENTS)])
def test_the_trial_cuts_large_operands_and_writes_scratch_only(size, timed):
    # an in-place call (the output is an input) must not see the trial's writes; a large call
    # is timed on its first TRIAL_ELEMENTS elements, one that splits over the cores on enough
    # of them to split
    seen = []

    class Sizes(FakeNumbaLoop):
        def __call__(self, x, out):
            seen.append((x.size, out.size, np.shares_memory(out, x)))
            super().__call__(x, out)

    numba = Sizes()
    record = dl._Record(numba, FakeNumpyLoop(delay=0.0))
    record.state = dl.MEASURING
    x = np.arange(size, dtype=np.float64)
    record.run((x, x))  # in place: x += 1 once, by the loop kept
    np.testing.assert_array_equal(x, np.arange(size) + 1.0)
    assert seen[:dl.TRIAL_ROUNDS] == [(timed, timed, False)] * dl.TRIAL_ROUNDS
    assert record.state in (dl.READY, dl.NUMPY_FASTER)


def test_numpy_refusing_the_operands_switches_to_numba(jit_after):
    jit_after(5)
    numba, numpy = FakeNumbaLoop(), FakeNumpyLoop(refuse=True)
    slot = dl.bind(numba, numpy, DTYPES)
    _call(slot, 2)
    assert dl.state_of(numba, DTYPES) == (dl.NUMBA_ONLY, 1)
    assert (numpy.calls, numba.calls) == (1, 2)


def test_a_failed_compile_keeps_numpys_loop(jit_after):
    jit_after(1)
    numba, numpy = FakeNumbaLoop(compile_error=RuntimeError("no lowering")), FakeNumpyLoop()
    slot = dl.bind(numba, numpy, DTYPES)
    _call(slot, 2)
    assert compile_queue.drain(30)
    assert dl.state_of(numba, DTYPES) == (dl.NUMPY_ONLY, 2)
    assert "RuntimeError: no lowering" in dl.stats()["failures"]
    _call(slot, 3)
    assert (numpy.calls, numba.calls) == (5, 0)


class TrialClock:
    """``time`` for deferred_loops whose perf_counter makes each trial round's first loop
    (Numba's) take ``numba`` seconds and its second (NumPy's) ``numpy``."""

    def __init__(self, numba, numpy):
        self.steps = itertools.cycle((0.0, numba, numpy))  # start, middle, end of a round
        self.now = 0.0

    def perf_counter(self):
        self.now += next(self.steps)
        return self.now


_FRESH_SIZES = itertools.count(1237)  # a size no other plan has: a new plan binds a new slot


@pytest.mark.usefixtures("nd_engine")
@pytest.mark.parametrize("numpy_faster", [True, False], ids=["numpy-faster", "numba-faster"])
def test_an_ops_measured_loop_is_kept_and_its_values_are_numpys(jit_after, monkeypatch,
                                                                numpy_faster):
    jit_after(0)
    monkeypatch.setattr(dl, "_records", {})
    a = np.linspace(-3, 3, next(_FRESH_SIZES), dtype=np.float32)
    x = nd.array(a)
    float32 = np.dtype(np.float32)
    loop = elementwise.spec("multiply").numba_loops.serial_array_scalar
    np.testing.assert_array_equal((x * 0.5).asnumpy(), a * np.float32(0.5))  # compiled
    assert dl.state_of(loop, (float32,) * 3)[0] == dl.MEASURING
    monkeypatch.setattr(dl, "time", TrialClock(*((1.0, 0.5) if numpy_faster else (0.5, 1.0))))
    for _ in range(3):  # measured, then the loop kept (both scalar kinds' plans share it)
        np.testing.assert_array_equal((x * 0.5).asnumpy(), a * np.float32(0.5))
        np.testing.assert_array_equal((x * np.float32(0.5)).asnumpy(), a * np.float32(0.5))
    state, _ = dl.state_of(loop, (float32,) * 3)
    assert state == (dl.NUMPY_FASTER if numpy_faster else dl.READY)


def test_general_run_loops_defer_per_call_dtypes(jit_after):
    jit_after(1)
    numba, numpy = FakeNumbaLoop(), FakeNumpyLoop()
    loops = dl.deferred_kernels(elementwise.LoopKernels(numba, numba),
                                elementwise.LoopKernels(numpy, numpy))
    x = np.arange(3, dtype=np.int8)
    types = dl.call_types(x, np.empty(3, np.int8))  # per call: the operands' Numba types
    loops.serial(x, np.empty(3, np.int8))
    assert dl.state_of(numba, types) == (dl.WAITING, 1)
    loops.serial(x, np.empty(3, np.int8))
    assert compile_queue.drain(30)
    assert dl.state_of(numba, types) == (dl.MEASURING, 2)
    loops.serial(x, np.empty(3, np.int8))
    assert dl.state_of(numba, types)[0] == dl.READY
    loops.serial(x, np.empty(3, np.int8))
    rounds = dl.TRIAL_ROUNDS
    assert (numpy.calls, numba.calls) == (2 + rounds, 2 + rounds)


def test_the_count_is_checked():
    with pytest.raises(ValueError, match="whole number"):
        dl.set_jit_after(-1)
    env = dict(os.environ, NDENGINE_JIT_AFTER="soon")
    result = subprocess.run([sys.executable, "-c", "import ndengine"], env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode != 0 and "NDENGINE_JIT_AFTER" in result.stderr


@pytest.mark.usefixtures("nd_engine")
def test_results_are_the_same_before_and_after_the_switch(jit_after):
    jit_after(2)
    rng = np.random.default_rng(7)
    a = rng.integers(-500, 500, 64).astype(np.int16)
    b = rng.integers(1, 60000, 64).astype(np.uint16)
    x, y = nd.array(a), nd.array(b)
    spec = elementwise.spec("hypot")
    computation, out_dtype = spec.resolve((a, b), {})
    loop = spec.numba_loops.serial
    for _ in range(6):  # NumPy's loop three times (the third queues the compile), then Numba's
        np.testing.assert_array_equal(nd.hypot(x, y).asnumpy(), np.hypot(a, b))
        np.testing.assert_array_equal((x * y - x).asnumpy(), a * b - a)
        compile_queue.drain(30)
    state, _ = dl.state_of(loop, (*computation, out_dtype))
    assert state in (dl.READY, dl.NUMPY_FASTER)  # whichever loop measured faster
    np.testing.assert_array_equal(nd.hypot(x, y).asnumpy(), np.hypot(a, b))


# ------------------------------------------------ each Numba loop against NumPy's ufunc

def _edge_values(dtype):
    if dtype.kind == "b":
        return np.array([False, True])
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        values = [0, 1, 2, 3, 7, info.max, info.max - 1, info.min]
        if dtype.kind == "i":
            values += [-1, -2, -7, info.min + 1]
        return np.array(values, dtype)
    info = np.finfo(dtype)
    return np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 7.25, np.inf, -np.inf, np.nan,
                     info.max, -info.max, info.tiny, 1e-3], dtype)


_DEFERRING = sorted(name for name, s in elementwise._SPECS.items() if s.defers_compile)
_LOOP_DTYPES = [np.dtype(d) for d in ("float64", "int16", "float32", "uint8", "int64",
                                      "bool", "int32", "uint32", "int8", "uint64")]
_INEXACT = {"exp", "log", "log1p", "expm1", "sin", "cos", "tan", "tanh", "arcsin",
            "arccos", "arctan", "hypot"}


def _cases(full):
    for index, name in enumerate(_DEFERRING):
        dtypes = _LOOP_DTYPES if full else [_LOOP_DTYPES[index % len(_LOOP_DTYPES)]]
        for dtype in dtypes:
            yield pytest.param(name, dtype, id=f"{name}-{dtype}",
                               marks=[] if not full else [pytest.mark.slow])


def _check_numba_loop(name, dtype):
    spec = elementwise.spec(name)
    edges = _edge_values(dtype)
    operands = ([edges] if spec.arity == 1 else
                [np.array(p, dtype) for p in zip(*itertools.product(edges, edges))])
    try:
        computation, out_dtype = spec.resolve(tuple(operands), {})
    except TypeError:
        pytest.skip(f"{name} refuses {dtype}, as NumPy does")
    if spec.plan_loops(computation, out_dtype) is not spec.numba_loops:
        pytest.skip(f"{name} of {dtype} always runs NumPy's own loop")
    cast = [o.astype(c) for o, c in zip(operands, computation)]
    expected = np.empty(cast[0].shape, out_dtype)
    with np.errstate(all="ignore"):
        spec.ufunc(*cast, out=expected)
    loops = spec.numba_loops
    got = np.empty_like(expected)
    loops.serial(*cast, got)
    variants = [got]
    if spec.arity == 2:  # the array-scalar loops, with each edge as the scalar
        for scalar in edges[:4]:
            one = np.array([scalar], dtype).astype(computation[1])
            out = np.empty_like(expected)
            loops.serial_array_scalar(cast[0], one, out)
            with np.errstate(all="ignore"):
                np.testing.assert_array_equal(out, spec.ufunc(cast[0], one).astype(out_dtype))
    for result in variants:
        if name in _INEXACT and out_dtype.kind == "f":
            np.testing.assert_allclose(result, expected, rtol=4 * np.finfo(out_dtype).eps,
                                       equal_nan=True)
        else:
            np.testing.assert_array_equal(result, expected)
            if out_dtype.kind == "f":  # the sign of zero too
                np.testing.assert_array_equal(np.signbit(result), np.signbit(expected))


@pytest.mark.parametrize("name, dtype", list(_cases(full=False)))
def test_numba_loop_equals_numpys_ufunc(name, dtype):
    _check_numba_loop(name, dtype)


@pytest.mark.parametrize("name, dtype", list(_cases(full=True)))
def test_numba_loop_equals_numpys_ufunc_every_dtype(name, dtype):
    _check_numba_loop(name, dtype)


def test_a_ready_slot_calls_the_compiled_specialisation_without_dispatch(jit_after):
    """Once READY, a bound slot holds the Numba loop's compiled specialisation for C-contiguous
    1-D operands of its dtypes (a flat run's operands), not the dispatcher: same results,
    without Numba's per-call dispatch by types. Other dtypes get their own entry."""
    from numba import njit

    @njit
    def add_one(x, out):
        for i in range(out.size):
            out[i] = x[i] + 1
        return 0

    jit_after(0)
    for dtype in (np.float32, np.int16):
        dtypes = (np.dtype(dtype), np.dtype(dtype))
        slot = dl.bind(add_one, None, dtypes)
        x = np.arange(7, dtype=dtype)
        out = np.empty(7, dtype)
        assert slot[0](x, out) == 0  # the first call compiles (no NumPy loop stands in)
        np.testing.assert_array_equal(out, x + 1)
        entry = dl.bind(add_one, None, dtypes)[0]  # a plan bound now: READY at once
        assert entry is not add_one and entry is slot[0]
        assert type(entry).__name__ == "builtin_function_or_method"
        out[:] = 0
        assert entry(x, out) == 0
        np.testing.assert_array_equal(out, x + 1)
    not_a_dispatcher = FakeNumbaLoop()
    assert dl._bound_entry(not_a_dispatcher, DTYPES) is not_a_dispatcher


@pytest.mark.usefixtures("nd_engine")
@pytest.mark.parametrize("name, dtype", [
    ("add", "int32"), ("subtract", "float32"), ("multiply", "float64"),
    ("true_divide", "float32"), ("maximum", "float64"), ("floor_divide", "int64"),
    ("mod", "int32"), ("minimum", "float32")])
def test_in_place_ops_run_the_in_place_loops_with_numpys_values(jit_after, monkeypatch, name,
                                                                dtype):
    """``x op= y`` and ``x op= 3`` run the loops that read x from the output (which LLVM
    vectorises), once compiled and measured faster, and give NumPy's values."""
    jit_after(0)
    monkeypatch.setattr(dl, "_records", {})
    size = next(_FRESH_SIZES)
    rng = np.random.default_rng(size)
    base = (rng.random(size) * 20 - 10).astype(dtype)
    other = (rng.integers(1, 5, size) * rng.choice([-1, 1], size)).astype(dtype)
    function, ufunc = getattr(nd, name), getattr(np, name)
    for round in range(3):  # compiled, measured, then the loop kept
        if round == 1:  # Numba's loop measured faster
            monkeypatch.setattr(dl, "time", TrialClock(0.5, 1.0))
        x, want = nd.array(base), base.copy()
        function(x, nd.array(other), out=x)
        ufunc(want, other, out=want)
        function(x, 3, out=x)
        ufunc(want, 3, out=want)
        np.testing.assert_array_equal(x.asnumpy(), want)
    loops = elementwise.spec(name).numba_loops
    for loop in (loops.serial_in_place, loops.serial_array_scalar_in_place):
        assert dl.state_of(loop, (np.dtype(dtype),) * 3)[0] == dl.READY


@pytest.mark.usefixtures("nd_engine")
def test_an_in_place_unary_op_runs_its_in_place_loop(jit_after, monkeypatch):
    jit_after(0)
    monkeypatch.setattr(dl, "_records", {})
    base = np.linspace(-3, 3, next(_FRESH_SIZES)).astype(np.int64)
    for round in range(3):
        if round == 1:
            monkeypatch.setattr(dl, "time", TrialClock(0.5, 1.0))
        x = nd.array(base)
        nd.negative(x, out=x)
        np.testing.assert_array_equal(x.asnumpy(), -base)
    loop = elementwise.spec("negative").numba_loops.serial_in_place
    assert dl.state_of(loop, (np.dtype(np.int64),) * 2)[0] == dl.READY


def test_in_place_loops_read_the_first_operand_where_it_is_not_the_output():
    """A plan's run may be reused on other buffers (a fused window run op by op writes into a
    scratch output): an in-place loop then reads its first operand, not the output."""
    loops = elementwise.spec("subtract").numba_loops
    x, y, two = np.arange(7.0), np.full(7, 2.0), np.array([2.0])
    for loop, other in ((loops.serial_in_place, y), (loops.serial_array_scalar_in_place, two)):
        out = np.full(7, np.nan)
        loop(x, other, out)
        np.testing.assert_array_equal(out, x - 2)
        same = x.copy()
        loop(same, other, same)
        np.testing.assert_array_equal(same, x - 2)
