"""NumPy's floating-point error state per op (core/fp_errors.py, ops/runtime/fp_status.py): the state
of the push applies where the op runs; its reports surface at the wait, at the pushing line
(at the call on the NaiveEngine), each once, only at waits on what the op computed."""
import itertools
import sys
import threading
import warnings

import numpy as np
import pytest
from numba import njit, types
from numba.extending import intrinsic

import ndengine
from ndengine import ndarray as nd
from ndengine.ops.runtime import compile_queue, deferred_loops

LARGE = 262144  # a lazy (fused) window's arrays


def _numpy_messages(fn, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with np.errstate(all="warn", under="ignore"):
            fn(*args)
    return sorted({str(w.message) for w in caught})


def _this_line():
    return sys._getframe(1).f_lineno


def _messages(caught):
    return sorted({str(w.message) for w in caught})


@pytest.fixture(params=["numpy_loop", "numba_loop"])
def loops(request):
    """NumPy's own loop of a signature (its first calls), or its Numba loop (compiled at the
    first call)."""
    previous = deferred_loops.set_jit_after(64 if request.param == "numpy_loop" else 0)
    yield request.param
    deferred_loops.set_jit_after(previous)


def test_warning_at_the_wait_with_the_pushing_line(nd_engine, loops):
    a, b = nd.array([1.0, 2.0]), nd.array([0.0, 1.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        c = a / b; line = _this_line()  # noqa: E702
        before = len(caught)
        values = c.asnumpy()
    assert before == (1 if nd_engine.kind == "NaiveEngine" else 0)
    assert [str(w.message) for w in caught] == ["divide by zero encountered in divide"]
    assert caught[0].category is RuntimeWarning
    assert (caught[0].filename, caught[0].lineno) == (__file__, line)
    np.testing.assert_array_equal(values, [np.inf, 2.0])


def test_warning_of_a_module_function_has_the_callers_line(nd_engine):
    """``nd.exp``, ``nd.divide``: functions generated from tables (ndarray/signatures.py) are
    the package's own frames, so the report names the user's line, not the generated code."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        big = ndengine.exp(nd.array([1000.0])); exp_line = _this_line()  # noqa: E702
        half = ndengine.divide(nd.array([1.0]), 0); divide_line = _this_line()  # noqa: E702
        big.asnumpy(), half.asnumpy()
    assert sorted((str(w.message), w.filename, w.lineno) for w in caught) == [
        ("divide by zero encountered in divide", __file__, divide_line),
        ("overflow encountered in exp", __file__, exp_line)]


def test_raise_fails_the_op_at_the_wait(nd_engine, loops):
    a, b = nd.array([1.0, 2.0]), nd.array([0.0, 1.0])
    if nd_engine.kind == "NaiveEngine":
        with np.errstate(all="raise"), pytest.raises(FloatingPointError) as info:
            a / b
    else:
        with np.errstate(all="raise"):
            c = a / b
        with pytest.raises(FloatingPointError) as info:
            c.asnumpy()
    assert str(info.value) == "divide by zero encountered in divide"
    assert any(n.startswith("raised by true_divide, pushed at") and __file__ in n
               for n in info.value.__notes__)


def test_ignore_and_call(nd_engine, loops):
    a, b = nd.array([1.0, -1.0]), nd.array([0.0, 0.0])
    calls = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="ignore"):
            c = a / b
        c.asnumpy()
        with np.errstate(all="call", call=lambda error, flags: calls.append((error, flags))):
            d = a / b
        d.asnumpy()
    assert calls == [("divide by zero", 1)]


def test_report_surfaces_once_and_only_for_what_it_computed(nd_engine):
    a, b = nd.array([1.0, 2.0]), nd.array([0.0, 1.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        unrelated = nd.array([3.0]) + 1
        c = a / b
        derived = c * 2
        if nd_engine.kind == "NaiveEngine":
            assert len(caught) == 1  # at the call, as NumPy
        else:
            unrelated.asnumpy()
            assert caught == []
            derived.asnumpy()  # computed from c: c's op's report, at its line
            assert len(caught) == 1
        c.asnumpy()
        derived.asnumpy()
        ndengine.waitall()
    assert _messages(caught) == ["divide by zero encountered in divide"]
    assert len(caught) == 1


def test_each_warning_once_through_waitall(nd_engine):
    a = nd.array([-1.0, 4.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = nd.sqrt(a)
        ndengine.waitall()
        r.asnumpy()
    assert [str(w.message) for w in caught] == ["invalid value encountered in sqrt"]


@pytest.mark.parametrize("fn, args", [
    (np.floor_divide, (np.array([1, 2, 3]), np.array([0, 1, 0]))),
    (np.remainder, (np.array([1, 2], np.int32), np.array([0, 1], np.int32))),
    (np.multiply, (np.array([1e200, 1.0]), np.array([1e200, 2.0]))),
    (np.sqrt, (np.array([-1.0, 4.0]),)),
    (np.log, (np.array([-1.0, 0.0, 1.0]),)),
    (np.exp, (np.array([1000.0, 1.0]),)),
    (np.subtract, (np.array([np.inf]), np.array([np.inf]))),
    (np.maximum, (np.array([np.nan, 1.0]), np.array([1.0, np.nan]))),
    (np.minimum, (np.array([np.nan, 1.0]), np.array([1.0, np.nan]))),
    (np.less, (np.array([np.nan, 1.0]), np.array([1.0, np.nan]))),
    (np.equal, (np.array([np.nan]), np.array([np.nan]))),
])
def test_reports_are_numpys(nd_engine, loops, fn, args):
    expected = _numpy_messages(fn, *args)
    operands = [nd.array(x) for x in args]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with np.errstate(all="warn", under="ignore"):
            result = getattr(nd, fn.__name__)(*operands)
        result.asnumpy()
    assert _messages(caught) == expected
    if not expected:
        with np.errstate(all="raise"):
            getattr(nd, fn.__name__)(*operands).asnumpy()


def test_cast_of_nan_to_int(nd_engine):
    x = np.array([np.nan, 1.0])
    expected = _numpy_messages(lambda: x.astype(np.int64))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nd.array(x).astype(np.int64).asnumpy()
    assert _messages(caught) == expected


def test_fused_window_of_large_arrays(nd_engine):
    x = np.ones(LARGE)
    z = np.ones(LARGE)
    z[7] = 0.0
    a, b = nd.array(x), nd.array(z)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = (a / b) * 2.0 + 1.0; line = _this_line()  # noqa: E702
        values = y.asnumpy()
    assert [str(w.message) for w in caught] == ["divide by zero encountered in divide"]
    assert caught[0].lineno == line
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(values, (x / z) * 2.0 + 1.0)


def test_fused_window_raise_names_its_op(nd_engine):
    a, b = nd.array(np.ones(LARGE)), nd.array(np.zeros(LARGE))
    if nd_engine.kind == "NaiveEngine":
        with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
            a / b
        return
    with np.errstate(divide="raise"):
        y = (a + 1.0) / b
    with pytest.raises(FloatingPointError) as info:
        y.asnumpy()
    assert any("raised by true_divide" in n for n in info.value.__notes__)


def test_bulked_ops_each_under_its_own_state(nd_engine):
    a, b = nd.array([1.0]), nd.array([0.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with np.errstate(all="ignore"):
            quiet = a / b
        loud = a / b
        with np.errstate(all="ignore"):
            quiet2 = nd.sqrt(-a)
        quiet.asnumpy(), quiet2.asnumpy(), loud.asnumpy()
    assert [str(w.message) for w in caught] == ["divide by zero encountered in divide"]


def test_numba_loop_over_many_calls(nd_engine):
    a, b = nd.array([1.0, 2.0]), nd.array([0.0, 1.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(deferred_loops.jit_after() + 4):
            (a / b).asnumpy()
    assert len(caught) == deferred_loops.jit_after() + 4
    assert _messages(caught) == ["divide by zero encountered in divide"]


def test_fused_numba_kernel_reports():
    # each run reports once, whichever evaluator the window's kernel chose (the Numba kernel
    # forced: test_fp_errors_fused.py)
    x = np.ones(LARGE)
    z = np.ones(LARGE)
    z[7] = 0.0
    a, b = nd.array(x), nd.array(z)
    counts = []
    for _ in range(12):  # past the blocked evaluator's first runs: the Numba kernel's turn
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ((a / b) * 2.0 + 1.0).asnumpy()
        counts.append(len(caught))
    assert counts == [1] * 12


def test_a_report_surfaces_while_numba_types_a_function_on_the_compile_thread(nd_engine):
    # Numba's type inference records warnings around each statement it types; on the compile
    # thread, concurrently with a thread that records warnings, it swapped the process's
    # warnings handler under that thread and the report went to Numba's list: lost (the
    # fused window's reports, while its kernel compiles in the background)
    typing, resume = threading.Event(), threading.Event()

    @intrinsic
    def pause_typing(typingctx):
        typing.set()
        resume.wait(60)
        return types.none(), lambda context, builder, signature, args: context.get_dummy_value()

    @njit
    def typed_on_the_compile_thread():
        pause_typing()

    a, b = nd.array([1.0, 2.0]), nd.array([0.0, 1.0])
    previous = deferred_loops.set_jit_after(1 << 30)  # the op compiles nothing: the thread waits
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            compiled = compile_queue.submit(lambda: typed_on_the_compile_thread.compile(()))
            assert typing.wait(60)
            (a / b).asnumpy()
        recorded = [str(w.message) for w in caught]  # as the block ended, before typing ends
    finally:
        resume.set()
        deferred_loops.set_jit_after(previous)
    assert compiled.wait(60)
    assert recorded == ["divide by zero encountered in divide"]


_SPECIAL = {np.dtype(np.float64): [np.nan, np.inf, -np.inf, 0.0, -0.0, -1.0, 1e308, 2.0, -3.5],
            np.dtype(np.int64): [0, 1, -1, 7, -2 ** 63, 2 ** 62]}


def _numpy_errors(ufunc, args):
    errors = set()
    for i in range(len(args[0])):
        with np.errstate(all="raise", under="ignore"):
            try:
                ufunc(*[a[i:i + 1] for a in args])
            except FloatingPointError as exc:
                errors.add(str(exc))
            except ValueError:  # refused (integer ** negative): the op refuses it at the call
                pass
    return errors


@pytest.mark.parametrize("dtype", sorted(_SPECIAL, key=str))
def test_compiled_loops_report_what_numpys_loops_report(dtype):
    # every element-wise op's Numba loop, on NaN, infinities, zeros and extremes: the FP
    # errors its flags report are NumPy's loop's, none more (max/min, compares), none fewer
    from ndengine.ops.elementwise.operators import _SPECS
    from ndengine.ops.runtime.fp_status import report
    mismatches = []
    for name, spec in sorted(_SPECS.items()):
        ufunc = getattr(np, spec.ufunc.__name__, None)
        if spec.scalar is None or not spec.is_its_ufunc or ufunc is not spec.ufunc:
            continue
        numpy_loop = spec.numpy_loop
        if numpy_loop is not None and dtype in numpy_loop[1]:
            continue  # NumPy's own loop runs for this dtype
        try:
            computation = spec.resolve([np.empty(1, dtype)] * spec.arity, None)[0]
        except TypeError:
            continue  # no loop of the op for the dtype
        if tuple(computation) != (dtype,) * spec.arity:
            continue
        columns = list(zip(*itertools.product(_SPECIAL[dtype], repeat=spec.arity)))
        args = [np.array(c, dtype) for c in columns]
        out = np.empty(len(columns[0]), spec.resolve(args, None)[1])
        got = set()
        flags = spec.numba_loops.serial(*args, out)
        if flags and spec.fp_name is not None:
            for category in ("divide", "over", "invalid"):
                try:
                    with np.errstate(**{"all": "ignore", category: "raise"}):
                        report(flags, spec.fp_name)
                except FloatingPointError as exc:
                    got.add(str(exc))
        want = _numpy_errors(ufunc, args)
        if got != want:
            mismatches.append((name, sorted(got), sorted(want)))
    assert mismatches == []
