"""FP error reports of fused windows run by the generated Numba kernel (ops/fusion_codegen,
ops/fusion_fp): the kernel returns the processor's FP flags of the whole window, each error is
reported under the first op that can raise it, and ops NumPy never reports for raise none."""
import itertools
import sys
import warnings

import numpy as np
import pytest

from ndengine import ndarray as nd
from ndengine.core import lazy_run
from ndengine.ops.fusion import kernel as fusion, fp_report as fusion_fp
from ndengine.ops.elementwise.operators import spec
from ndengine.ops.fusion.kernel import ProgramBuilder, kernel_for
from ndengine.ops.fusion.blocks import PARALLEL_MIN_ELEMENTS
from ndengine.ops.fusion.evaluators import numba_block, prepare_slots

pytestmark = pytest.mark.cpu_only  # CPU fusion internals

LARGE = 262144  # a lazy (fused) window's arrays


def _force_numba(monkeypatch):
    """Every fused window runs the generated kernel (compiled at its first call), from its
    first sight on; returns a list holding one entry per window the kernel ran."""
    ran = []
    original = fusion.FusedKernel.__call__

    def numba_call(self, *args, **options):
        outputs = original(self, *args, **{**options, "evaluator": "numba"})
        ran.append(self)
        return outputs
    monkeypatch.setattr(fusion.FusedKernel, "__call__", numba_call)
    monkeypatch.setattr(lazy_run, "BUILD_AT_ONCE_ELEMENTS", 0)
    return ran


@pytest.fixture
def numba_windows(monkeypatch):
    return _force_numba(monkeypatch)


def _this_line():
    return sys._getframe(1).f_lineno


def _caught_messages(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = fn()
    return [str(w.message) for w in caught], caught, value


def _fuses(engine):
    return engine.kind != "NaiveEngine"  # the NaiveEngine runs every op at its push


def test_a_window_run_by_the_kernel_warns_at_the_wait_once(nd_engine, numba_windows):
    x, z = np.ones(LARGE), np.ones(LARGE)
    z[-7] = 0.0  # in the last part of a parallel kernel
    a, b = nd.array(x), nd.array(z)
    for _ in range(3):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            c = (a / b) * 2.0 + 1.0; line = _this_line()  # noqa: E702
            values = c.asnumpy()
        assert [str(w.message) for w in caught] == ["divide by zero encountered in divide"]
        assert (caught[0].filename, caught[0].lineno) == (__file__, line)
        with np.errstate(divide="ignore"):
            np.testing.assert_array_equal(values, (x / z) * 2.0 + 1.0)
    assert bool(numba_windows) == _fuses(nd_engine)


def test_ignore_and_call_states_through_the_kernel(nd_engine, numba_windows):
    a, b = nd.array(np.ones(LARGE)), nd.array(np.zeros(LARGE))
    with np.errstate(all="ignore"):
        messages, _, _ = _caught_messages(lambda: ((a / b) + 1.0).asnumpy())
    assert messages == []
    calls = []
    with np.errstate(all="call"):
        previous = np.seterrcall(lambda error, flags: calls.append((error, flags)))
        try:
            c = (a / b) + 1.0
        finally:
            np.seterrcall(previous)
    c.asnumpy()
    assert calls == [("divide by zero", 1)]
    assert bool(numba_windows) == _fuses(nd_engine)


@pytest.mark.parametrize("expression", [
    lambda a, b: nd.maximum(a, b) + 1.0,
    lambda a, b: nd.minimum(a, 2.0) * b,
    lambda a, b: nd.where(a < b, a, b) - 1.0,
    lambda a, b: (a >= b) * 3.0 + a,
    lambda a, b: nd.clip(a + 1.0, 0.0, 1.5) / b,
    lambda a, b: nd.sign(a) + b,
], ids=["maximum", "minimum", "where_less", "greater_equal", "clip", "sign"])
def test_no_spurious_warnings_from_ops_numpy_never_reports_for(nd_engine, numba_windows,
                                                             expression):
    x, y = np.ones(LARGE), np.full(LARGE, 2.0)
    x[::5] = np.nan
    a, b = nd.array(x), nd.array(y)
    for _ in range(2):
        messages, _, _ = _caught_messages(lambda: expression(a, b).asnumpy())
        assert messages == []
    assert bool(numba_windows) == _fuses(nd_engine)


def test_a_raising_state_through_the_kernel_raises_after_the_run():
    x, z = np.ones(1 << 12), np.ones(1 << 12)
    z[3] = 0.0
    b = ProgramBuilder()
    program = b.build(outputs=[b.apply("add", b.apply("true_divide", b.array(x), b.array(z)),
                                       1.0)])
    kernel = kernel_for(program)
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError,
                                                    match="divide by zero encountered in divide"):
        kernel([x, z], evaluator="numba")
    with np.errstate(all="raise", divide="ignore"):
        (out,) = kernel([x, z], evaluator="numba")
    assert out[3] == np.inf


@pytest.mark.parametrize("threads", [1, None])
def test_each_part_of_a_kernel_reports(threads):
    n = 2 * PARALLEL_MIN_ELEMENTS
    x, z = np.ones(n), np.ones(n)
    b = ProgramBuilder()
    program = b.build(outputs=[b.apply("multiply", b.apply("true_divide", b.array(x),
                                                            b.array(z)), 2.0)])
    kernel = kernel_for(program)
    for where in (0, n // 2 + 3, n - 1):
        z[:] = 1.0
        z[where] = 0.0
        with np.errstate(all="raise", under="ignore"), pytest.raises(FloatingPointError):
            kernel([x, z], evaluator="numba", threads=threads)
    assert any(parallel for _, parallel in kernel.entry.variants) == (threads is None)


@pytest.mark.parametrize("axis", [1, None])
def test_row_reductions_of_the_kernel_report_as_numpys_reduce(axis):
    x = np.full((1 << 12, 8), 1e308)
    b = ProgramBuilder()
    program = b.build(outputs=[], reduction=("sum", b.apply("multiply", b.array(x), 1.0),
                                             axis, False))
    kernel = kernel_for(program)
    for evaluator in ("numba", "unfused"):
        with np.errstate(all="raise", under="ignore"), pytest.raises(
                FloatingPointError, match="overflow encountered in reduce"):
            kernel([x], evaluator=evaluator)


_SPECIAL_FLOATS = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.5, 1e308,
                   -1e308, 5e-324, 1e-310, 3e38, 1e-40]
_SILENT_FUSIBLE = {"maximum": 2, "minimum": 2, "less": 2, "less_equal": 2, "greater": 2,
                   "greater_equal": 2, "equal": 2, "not_equal": 2, "sign": 1, "relu": 1,
                   "abs": 1, "negative": 1, "floor": 1, "ceil": 1, "sigmoid": 1, "where": 3,
                   "clip": 1, "clip_arrays": 3}


def _special(dtype):
    with np.errstate(over="ignore", under="ignore"):  # float32: 1e308 is inf, 1e-310 is 0
        return np.array(_SPECIAL_FLOATS, dtype)


def _kernel_flags(program, arrays):
    """The generated kernel of ``program`` on ``arrays``: (its FP flags, its outputs)."""
    kernel = kernel_for(program, allow_inexact=True)
    kernel(arrays, evaluator="numba")  # compiled now
    (variant, dispatcher), = kernel.entry.variants.items()
    outputs = [np.empty(shape, dtype) for shape, dtype in program.output_specs]
    classes = variant[0][1] if variant[0][0] == "flat" else None
    slots = prepare_slots(kernel.entry.slots, program.scalar_values)
    return numba_block(dispatcher, classes, slots, arrays, outputs), outputs


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(_SILENT_FUSIBLE))
def test_ops_numpy_never_reports_for_raise_no_flag_in_the_kernel(name, dtype):
    # every pair (triple) of special values, tiled long enough for LLVM's vector loop
    arity = _SILENT_FUSIBLE[name]
    values = _special(dtype)
    columns = [np.tile(np.array(c, dtype), 4)
               for c in zip(*itertools.product(values, repeat=min(arity, 2)))]
    if name == "where":
        columns = [columns[0] != 0, columns[0], columns[1]]
    elif arity == 3:
        columns = [columns[0], columns[1], np.roll(columns[1], 3)]
    b = ProgramBuilder()
    leaves = [b.array(c) for c in columns]
    if name == "clip":
        node = b.apply("clip", leaves[0], a_min=-1.0, a_max=2.0)
    else:
        node = b.apply(name, *leaves)
    program = b.build(outputs=[node])
    flags, (got,) = _kernel_flags(program, columns)
    assert flags == 0
    if name != "sigmoid":  # libm's exp: within the ulp bound (test_ops_fusion_numba.py)
        (want,) = fusion.run_unfused(program, columns)
        assert got.tobytes() == want.tobytes()


_NUMPY_ERRORS = {"divide by zero": 1, "overflow": 2, "underflow": 4, "invalid value": 8}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_errors_of_covers_what_numpys_loops_report(dtype):
    # the table fusion_fp names culprits by: NumPy's loops report no error it leaves out
    from ndengine.ops.fusion.program import FUSIBLE_OPS
    values = _special(dtype)
    missing = []
    for name, arity in sorted(FUSIBLE_OPS.items()):
        reported = fusion_fp._reported_name(name)
        if reported is None or arity > 2 or name == "copy":
            continue
        ufunc = spec(name).ufunc
        columns = [np.array(c, dtype) for c in zip(*itertools.product(values, repeat=arity))]
        for i in range(len(columns[0])):
            with np.errstate(all="raise"):
                try:
                    ufunc(*[c[i:i + 1] for c in columns])
                except FloatingPointError as exc:
                    error = str(exc).partition(" encountered")[0]
                    if not fusion_fp.ERRORS_OF.get(reported, 15) & _NUMPY_ERRORS[error]:
                        missing.append((name, error))
                except (TypeError, ValueError):
                    break  # no float loop (bitwise ops)
    assert sorted(set(missing)) == []


@pytest.mark.parametrize("forced", ["numba", "auto"])
def test_a_cast_overflow_is_named_after_the_astype_line(nd_engine, monkeypatch, forced):
    # auto: NumPy's blocked evaluator runs the window's first calls
    if forced == "numba":
        _force_numba(monkeypatch)
    else:
        monkeypatch.setattr(lazy_run, "BUILD_AT_ONCE_ELEMENTS", 0)
    a = nd.array(np.full(LARGE, 1e300))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        b = nd.sqrt(a)  # 1e150: no error of its own
        c = b.astype(np.float32); line = _this_line()  # noqa: E702
        (c + 1.0).asnumpy()
    assert [str(w.message) for w in caught] == ["overflow encountered in cast"]
    assert caught[0].lineno == line
