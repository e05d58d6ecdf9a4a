"""Plans (ops.plans, Operator.plan): one decision per call signature, carried to the run.

The plan path (memo hit or miss, NumPy arrays or NDArrays) must give what NumPy gives and
what the general, unplanned inference gives; the memo must be per signature; the per-call
checks must fire on hits as on misses.
"""
import os
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ndengine as nd
import ndengine.ops as ops
from ndengine.ops import OpReq, plans

EXAMPLES = int(os.environ.get("NDENGINE_HYPOTHESIS_EXAMPLES", "15"))
FAST = settings(max_examples=4 * EXAMPLES, deadline=None)

DTYPES = [np.dtype(d) for d in ("bool", "int8", "uint8", "int64", "float32", "float64")]
BINARY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
          "true_divide": np.true_divide, "maximum": np.maximum, "less": np.less,
          "equal": np.equal, "floor_divide": np.floor_divide, "power": np.power}
UNARY = {"negative": np.negative, "exp": np.exp, "sqrt": np.sqrt, "square": np.square,
         "abs": np.abs, "floor": np.floor}
SCALARS = [0, 1, -1, 3, 300, -300, 2 ** 70, 0.5, -0.0, float("nan"), True,
           np.float32(0.5), np.float64(-2.5), np.int8(-3), np.uint8(7), np.int64(2)]


def numpy_or_error(fn, *args):
    with np.errstate(all="ignore"):
        try:
            return fn(*args), None
        except Exception as exc:  # noqa: BLE001 - NumPy's error is the expectation
            return None, exc


def run_plan(op, inputs, params=None, out=None, req=OpReq.WRITE_TO):
    """The plan path on NumPy arrays: plan (hit or miss), its check, its run."""
    params = params or {}
    plan = op.plan(inputs, params)
    if plan.check is not None:
        plan.check(inputs, params)
    [(shape, dtype)] = plan.outputs
    out = np.empty(shape, dtype) if out is None else out
    with np.errstate(all="ignore"):
        plan.run(list(inputs), [out], [req], params)
    return out


def same(got, expected):
    assert got.dtype == expected.dtype and got.shape == expected.shape, (got, expected)
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, expected, rtol=1e-6, equal_nan=True)
        np.testing.assert_array_equal(np.signbit(got) | np.isnan(got),
                                      np.signbit(expected) | np.isnan(expected))
    else:
        np.testing.assert_array_equal(got, expected)


@st.composite
def arrays(draw, shape):
    dtype = draw(st.sampled_from(DTYPES))
    values = draw(st.lists(st.integers(-5, 5), min_size=max(1, int(np.prod(shape))),
                           max_size=max(1, int(np.prod(shape)))))
    base = np.array(values[:int(np.prod(shape))]).reshape(shape).astype(dtype)
    layout = draw(st.sampled_from(["c", "transposed", "strided"]))
    if layout == "transposed" and base.ndim == 2:
        return np.ascontiguousarray(base.T).T  # same values, Fortran order
    if layout == "strided":
        wide = np.repeat(base[..., None], 2, axis=-1)
        return wide[..., 0]  # every other element of a bigger buffer
    return base


@st.composite
def operand_pairs(draw):
    shape = draw(st.sampled_from([(3,), (2, 3), (1, 3), (2, 1), (), (0,)]))
    other = draw(st.sampled_from([shape, (3,), (1,), (2, 1), ()]))
    x = draw(arrays(shape))
    y = draw(st.one_of(arrays(other), st.sampled_from(SCALARS)))
    return (x, y) if draw(st.booleans()) else (y, x)


@FAST
@given(name=st.sampled_from(sorted(BINARY)), pair=operand_pairs())
def test_binary_plans_match_numpy_and_the_general_inference(name, pair):
    op = ops.get(name)
    expected, error = numpy_or_error(BINARY[name], *pair)
    if error is not None and not isinstance(error, ValueError) or (
            error is not None and "negative integer powers" in str(error)):
        for _ in range(2):  # the miss, then a hit on a plan another call may have built
            with pytest.raises(type(error)):
                run_plan(op, pair)
        if not (name == "power" and isinstance(pair[1], np.ndarray)):
            with pytest.raises(type(error)):  # (an array exponent is checked at the run)
                op.general_infer(pair, {})
        return
    if error is not None:  # NumPy refused to broadcast
        with pytest.raises(ValueError):
            run_plan(op, pair)
        return
    expected = np.asarray(expected)
    if expected.dtype not in ops.SUPPORTED_DTYPES:
        return  # float16 and the like: ndengine refuses them
    assert op.general_infer(pair, {}) == [(expected.shape, expected.dtype)]
    assert op.build_plan(pair, {}).outputs == ((expected.shape, expected.dtype),)
    first = run_plan(op, pair)
    same(first, expected)
    same(run_plan(op, pair), first)  # a hit after the miss
    assert op.plan(pair, {}) is op.plan(pair, {})


@FAST
@given(name=st.sampled_from(sorted(UNARY)), x=st.integers(0, 2).flatmap(
    lambda n: arrays([(4,), (2, 3), ()][n])))
def test_unary_plans_match_numpy(name, x):
    expected, error = numpy_or_error(UNARY[name], x)
    op = ops.get(name)
    if error is not None or np.asarray(expected).dtype not in ops.SUPPORTED_DTYPES:
        with pytest.raises(TypeError):
            run_plan(op, [x])
        return
    for _ in range(2):
        same(run_plan(op, [x]), np.asarray(expected))


@FAST
@given(pair=operand_pairs(), name=st.sampled_from(["add", "multiply", "less", "maximum"]))
def test_ndarray_plans_match_numpy(pair, name):
    """The NDArray layer's signatures (strided views included) reach the same plans' results."""
    expected, error = numpy_or_error(BINARY[name], *pair)
    operands = [nd.array(v)[...] if isinstance(v, np.ndarray) else v for v in pair]
    if isinstance(pair[0], np.ndarray) and pair[0].ndim and not pair[0].flags.c_contiguous:
        operands[0] = nd.array(np.repeat(pair[0][..., None], 2, -1))[..., 0]  # a strided view
    function = getattr(nd, name)
    if error is not None:
        with pytest.raises(type(error)):
            function(*operands).asnumpy()
        return
    expected = np.asarray(expected)
    if expected.dtype not in ops.SUPPORTED_DTYPES:
        return
    for _ in range(2):
        same(function(*operands).asnumpy(), expected)


def test_plans_are_per_signature():
    add = ops.get("add")
    a32, a64 = np.ones(4, np.float32), np.ones(4, np.float64)
    plans = {id(add.plan([a, b], {})) for a, b in [
        (a32, 1), (a64, 1), (a32, 1.0), (a32, np.float32(1)), (1, a32), (a32, a32),
        (np.ones(5, np.float32), 1), (np.ones((8,), np.float32)[::2], 1),
        (np.ones((2, 2), np.float32), 1), (np.ones((2, 2), np.float32).T, 1)]}
    assert len(plans) == 10
    assert add.plan([np.zeros(4, np.float32), 7], {}) is add.plan([a32, 1], {})  # values: no
    assert add.plan([a32, 1], {"dtype": np.dtype(np.float64)}).outputs[0][1] == np.float64
    # params are keyed by type and value: 1 and True and 1.0 are three decisions
    fill = ops.get("fill")
    dtypes = [fill.plan([], {"value": v, "shape": (2,)}).outputs[0][1] for v in (1, True, 1.5)]
    assert dtypes == [np.int64, np.bool_, np.float64]
    # the NDArray layer's signature: contiguous, a strided view, an out= target
    x = nd.zeros(6, dtype=np.float32)
    before = len(add.plans)
    for _ in range(3):
        x + 1
        x[::2] + 1
    assert len(add.plans) - before in (0, 1, 2)  # at most one new plan each, then hits


def test_memo_is_bounded_and_unhashable_params_are_planned_per_call(monkeypatch):
    monkeypatch.setattr(plans, "PLAN_MEMO_LIMIT", 4)
    op = ops.get("negative")
    op._forget_plans()
    for n in range(1, 12):
        op.plan([np.ones(n)], {})
        assert len(op.memos["cpu"]) <= 4
    take = ops.get("take_index")
    x = np.arange(6)
    key = (np.array([0, 2]),)
    first = take.plan([x], {"key": key})
    assert take.plan([x], {"key": key}) is not first  # unhashable: not kept
    np.testing.assert_array_equal(take.apply(x, key=key)[0], x[key])


def test_new_shapes_leave_a_bounded_memo_and_the_plans_in_use(monkeypatch):
    """20,000 new signatures keep at most PLAN_MEMO_LIMIT plans; a signature called now and
    then between them keeps its plan (a hit, never rebuilt), and every other one is built
    once."""
    add = ops.get("add")
    add._forget_plans()
    built = []
    build_plan = add.build_plan
    monkeypatch.setattr(add, "build_plan", lambda *a, **k: built.append(1) or build_plan(*a, **k))
    hot = np.ones(3, np.float32)
    first = add.plan([hot, 1], {})
    for n in range(1, 20_001):
        add.plan([np.empty(n, np.float64), 1], {})
        if n % 100 == 0:
            assert add.plan([hot, 1], {}) is first
    assert len(add.memos["cpu"]) <= plans.PLAN_MEMO_LIMIT
    assert len(built) == 20_001


def test_the_ndarray_layer_reads_the_memo_of_now_after_a_turnover(monkeypatch):
    monkeypatch.setattr(plans, "PLAN_MEMO_LIMIT", 4)
    add = ops.get("add")
    add._forget_plans()
    for n in range(1, 10):
        x = nd.zeros(n, dtype=np.float32)
        np.testing.assert_array_equal((x + 1).asnumpy(), np.ones(n, np.float32))
        assert add.plans is add.memos["cpu"].recent and len(add.memos["cpu"]) <= 4


def test_per_call_checks_fire_on_hits():
    x = np.arange(4, dtype=np.uint8)
    add = ops.get("add")
    run_plan(add, [x, 3])  # builds the plan for (uint8, int)
    for _ in range(2):
        with pytest.raises(OverflowError):
            add.infer(x, 300)
        with pytest.raises(OverflowError):
            run_plan(add, [x, -1])
        with pytest.raises(OverflowError):
            add.kernels["cpu"]([x, 256], [np.empty(4, np.uint8)], [OpReq.WRITE_TO])
    # comparisons answer instead of raising, hit or miss
    for _ in range(2):
        np.testing.assert_array_equal(run_plan(ops.get("less"), [x, 300]), x < 300)
        np.testing.assert_array_equal(run_plan(ops.get("less"), [x, 3]), x < 3)
    power = ops.get("power")
    run_plan(power, [np.arange(3), 2])
    for _ in range(2):
        with pytest.raises(ValueError, match="negative integer powers"):
            run_plan(power, [np.arange(3), -1])
        with pytest.raises(ValueError, match="negative integer powers"):
            run_plan(power, [np.arange(3), np.int64(-1)])
    with pytest.raises(ValueError, match="negative integer powers"):
        run_plan(power, [np.arange(3), np.array([1, -1, 2])])
    clip = ops.get("clip")
    run_plan(clip, [x], {"a_min": 1, "a_max": 2})
    for _ in range(2):
        with pytest.raises(OverflowError):
            clip.infer(x, a_min=0, a_max=-1)


def test_ndarray_checks_fire_on_every_call():
    x = nd.arange(4, dtype=np.uint8)
    np.testing.assert_array_equal((x + 3).asnumpy(), np.arange(4, dtype=np.uint8) + 3)
    for _ in range(2):
        with pytest.raises(OverflowError):
            x + 300
    y = nd.ones(3, dtype=np.float32)
    for out in (nd.ones(3, dtype=np.int8), nd.ones(1, dtype=np.int8),
                nd.ones((2, 2), dtype=np.int8)):
        with pytest.raises(TypeError):  # the cast is checked before the shape, as NumPy does
            nd.add(nd.ones(2), 1, out=out)
        if out.shape != (3,):  # (3,) and (2,) do not even broadcast
            with pytest.raises(TypeError):
                out += nd.ones(2)
    with pytest.raises(ValueError):
        nd.add(nd.ones(2, dtype=np.float32), 1, out=y)


def test_numpy_scalars_are_strong_operands_without_arrays():
    x = nd.array(np.linspace(-1, 1, 16, dtype=np.float32))
    xs = x.asnumpy()
    for scalar in (np.float32(0.5), np.float64(0.5), np.int8(3), np.uint8(200), np.bool_(True)):
        for _ in range(2):
            got = (x * scalar).asnumpy()
            same(got, xs * scalar)
            same((scalar - x).asnumpy(), scalar - xs)
    i = nd.arange(4, dtype=np.uint8)
    same((i + np.int64(300)).asnumpy(), np.arange(4, dtype=np.uint8) + np.int64(300))


# ----------------------------------------------------------- the kernels on NumPy arrays

def kernel(name, inputs, out, req=OpReq.WRITE_TO, **params):
    with np.errstate(all="ignore"):
        ops.get(name).kernels["cpu"](list(inputs), [out], [req], **params)
    return out


class Spec:
    """A non-NumPy array spec: list shape with NumPy ints, dtype given as a string."""

    def __init__(self, shape, dtype):
        self.shape = [np.int64(n) for n in shape]
        self.dtype = dtype


class TupleSpec:
    """An array spec with a tuple shape and a NumPy dtype (and no strides)."""

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)


@pytest.mark.parametrize("name", ["add", "true_divide", "less", "exp", "negative"])
def test_foreign_array_specs_infer_as_numpy_arrays_do(name):
    op = ops.get(name)
    for dtype in ["int8", "uint16", "float32", "float64", "bool"]:
        for _ in range(2):  # the second round hits the plans
            array, spec = np.ones((2, 3), dtype), TupleSpec((2, 3), dtype)
            args = [[array], [spec]] if op.num_inputs == 1 else [[array, 3], [spec, 3]]
            try:
                want = op.infer(*args[0])
            except (TypeError, ValueError) as exc:
                with pytest.raises(type(exc)):
                    op.infer(*args[1])
                continue
            assert op.infer(*args[1]) == want
            if op.num_inputs == 2:
                assert op.infer(spec, spec) == op.infer(array, array)
                assert op.infer(2.5, spec) == op.infer(2.5, array)
                with pytest.raises(ValueError, match=r"\(2, 3\).*\(4,\)"):
                    op.infer(spec, TupleSpec((4,), dtype))


def test_repeated_scalar_operands_keep_their_sign_and_value():
    x = np.full(8, -0.0)
    for _ in range(3):  # later rounds reuse the plans' converted constants
        assert np.signbit(kernel("add", [x, 0.0], np.empty(8))).sum() == 0
        assert np.signbit(kernel("add", [x, -0.0], np.empty(8))).all()
        np.testing.assert_array_equal(kernel("add", [x, 2.5], np.empty(8)), x + 2.5)
        np.testing.assert_array_equal(kernel("subtract", [7, x], np.empty(8)), 7 - x)
    i = np.arange(6, dtype=np.uint8)
    for _ in range(2):
        np.testing.assert_array_equal(kernel("add", [i, 250], np.empty(6, np.uint8)), i + 250)


def test_infer_of_non_numpy_specs_gives_python_ints_and_numpy_dtypes():
    for _ in range(2):
        [(shape, dtype)] = ops.get("multiply").infer(Spec((2, 3), "float32"), 2)
        assert shape == (2, 3) and all(type(n) is int for n in shape)
        assert dtype == np.float32 and isinstance(dtype, np.dtype)
        [(shape, dtype)] = ops.get("sum").infer(Spec((2, 3), "int16"), axis=1)
        assert shape == (2,) and all(type(n) is int for n in shape) and dtype == np.int64
    assert ops.get("exp").infer(Spec((2,), "float16")) == [((2,), np.float16)]
    assert ops.get("where").infer(np.ones(2, bool), np.ones(2, np.float16), 1j) == [
        ((2,), np.complex64)]
    with pytest.raises(TypeError, match="relu does not support dtype float16"):
        ops.get("relu").infer(Spec((2,), "float16"))


def test_reduction_plans_still_check_params():
    x = np.ones((2, 3))
    for _ in range(2):
        assert ops.get("sum").infer(x, axis=1) == [((2,), np.float64)]
        with pytest.raises(TypeError):
            ops.get("sum").infer(x, axis=1.0)
        assert ops.get("sum").infer(x, axis=1, keepdims=True) == [((2, 1), np.float64)]
        with pytest.raises(np.exceptions.AxisError):
            ops.get("sum").infer(x, axis=2)


def test_contiguous_cases_match_numpy_repeatedly():
    a = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
    b = np.linspace(1, 2, 12, dtype=np.float32).reshape(3, 4)
    i32 = np.arange(12, dtype=np.int32).reshape(3, 4)
    cond = (np.arange(12) % 3 == 0).reshape(3, 4)
    for _ in range(2):
        np.testing.assert_array_equal(kernel("add", [a, b], np.empty_like(a)), a + b)
        np.testing.assert_array_equal(kernel("add", [i32, b], np.empty((3, 4))), i32 + b)
        np.testing.assert_array_equal(kernel("multiply", [i32, 1.5], np.empty((3, 4))), i32 * 1.5)
        np.testing.assert_array_equal(kernel("less", [a, 0.5], np.empty((3, 4), bool)), a < 0.5)
        np.testing.assert_array_equal(kernel("where", [cond, a, b], np.empty_like(a)),
                                      np.where(cond, a, b))
        np.testing.assert_array_equal(
            kernel("where", [cond.astype(np.int8), i32, a], np.empty((3, 4))),
            np.where(cond.astype(np.int8), i32, a))
        np.testing.assert_array_equal(kernel("negative", [i32], np.empty_like(i32)), -i32)
        np.testing.assert_array_equal(kernel("sum", [a], np.empty((), np.float32)), a.sum())
        np.testing.assert_array_equal(kernel("max", [a], np.empty(4, np.float32), axis=-2),
                                      a.max(axis=0))
        np.testing.assert_array_equal(kernel("copy", [a], np.empty((3, 4), np.int16)),
                                      a.astype(np.int16))
        np.testing.assert_array_equal(
            kernel("fill", [], np.empty(5, np.uint8), value=3.7, shape=(5,), dtype=np.uint8),
            np.full(5, 3, np.uint8))


def test_clip_matches_numpy_with_nan_and_signed_zero_bounds():
    x = np.array([-2.0, -0.0, 0.0, 0.5, np.nan, 3.0, np.inf, -np.inf], np.float32)
    for lo, hi in [(-1.0, 1.0), (0.0, 0.0), (-0.0, 2.0), (1.0, -1.0), (float("nan"), 1.0),
                   (None, 0.0), (-0.0, None)]:
        for _ in range(2):
            got = kernel("clip", [x], np.empty_like(x), a_min=lo, a_max=hi)
            expected = np.clip(x, None if lo is None else np.float32(lo),
                               None if hi is None else np.float32(hi))
            np.testing.assert_array_equal(got, expected)
            np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))
    ints = np.arange(-5, 5, dtype=np.int8)
    np.testing.assert_array_equal(kernel("clip", [ints], np.empty_like(ints), a_min=-2, a_max=300),
                                  np.clip(ints, -2, 127))
    inplace = x.copy()
    kernel("clip", [inplace], inplace, OpReq.WRITE_INPLACE, a_min=-1.0, a_max=1.0)
    np.testing.assert_array_equal(inplace, np.clip(x, -1, 1))


def test_overlapping_views_still_detached():
    for _ in range(2):
        a = np.arange(10.0)
        expected = a.copy()
        expected[1:] = expected[:-1] * 2.0
        kernel("multiply", [a[:-1], 2.0], a[1:], OpReq.WRITE_INPLACE)
        np.testing.assert_array_equal(a, expected)
        b = np.arange(10.0)
        expected = np.exp(b[2:])
        kernel("exp", [b[2:]], b[:-2], OpReq.WRITE_INPLACE)
        np.testing.assert_array_equal(b[:-2], expected)
        c = np.arange(6.0)
        kernel("sum", [c], c[2:3].reshape(()), axis=0)
        assert c[2] == 15.0
        d = np.arange(6.0)
        kernel("where", [d > 2, d[::-1].copy(), d], d)
        np.testing.assert_array_equal(d, np.where(np.arange(6.0) > 2, np.arange(6.0)[::-1],
                                                  np.arange(6.0)))
    x = nd.arange(10, dtype=np.float64)
    x[1:] += x[:-1]  # an in-place op whose input overlaps its target (not the same view)
    expected = np.arange(10.0)
    expected[1:] += expected[:-1].copy()
    np.testing.assert_array_equal(x.asnumpy(), expected)


@pytest.mark.parametrize("dtype", ["int8", "int64", "float32", "float64"])
def test_in_place_ops_on_both_sides_of_the_numpy_loop_size_match_numpy(dtype):
    """An op written into its first input runs the in-place loop (or, for loops without one,
    NumPy's from INPLACE_NUMPY_ELEMENTS on): every size gives NumPy's values."""
    from ndengine.ops.elementwise.operators import INPLACE_NUMPY_ELEMENTS
    for size in (INPLACE_NUMPY_ELEMENTS - 1, INPLACE_NUMPY_ELEMENTS, 3 * INPLACE_NUMPY_ELEMENTS + 5):
        base = (np.arange(size) % 23 - 11).astype(dtype)
        other = (np.arange(size) % 7 + 1).astype(dtype)
        for _ in range(3):  # the miss, then hits
            x, want = nd.array(base), base.copy()
            x -= nd.array(other)
            want -= other
            x *= 3
            want *= 3
            x += nd.array(other)[::-1].copy()
            want += other[::-1]
            np.testing.assert_array_equal(x.asnumpy(), want)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "true_divide", "less",
                                  "maximum", "floor_divide"])
def test_broadcast_and_strided_signatures_run_the_ufunc_and_match_numpy(name):
    """Broadcasting or strided operands with nothing to cast: the plan runs the ufunc's own
    call (elementwise_run.ufunc_run), in place too, and gives NumPy's results."""
    rng = np.random.default_rng(7)
    for dtype in ("int8", "float32", "float64"):
        a = (rng.integers(-9, 9, (64, 48)) + (dtype != "int8") * 0.25).astype(dtype)
        row = (rng.integers(1, 9, 48)).astype(dtype)
        col = (rng.integers(1, 9, (64, 1))).astype(dtype)
        fn = BINARY[name]
        for x, y in [(a, row), (col, a), (a.T, a.T[::-1]), (a[::2], row), (a, np.float32(2.5)
                     if dtype != "int8" else np.int8(3))]:
            expected, error = numpy_or_error(fn, x, y)
            assert error is None
            for _ in range(2):
                same(run_plan(ops.get(name), [x, y]), np.asarray(expected))
        if name not in ("less", "true_divide"):  # in place, broadcast: x op= row
            target = a.copy()
            for _ in range(2):
                kernel(name, [target, row], target, OpReq.WRITE_INPLACE)
            want = a.copy()
            with np.errstate(all="ignore"):
                for _ in range(2):
                    fn(want, row, out=want)
            np.testing.assert_array_equal(target, want)


def test_a_plan_knows_the_size_of_the_largest_array_of_its_call():
    """Plan.elements: the element count of the largest array read or written (the array
    layer places the op by it: inline, worker, lazy window)."""
    a, row = np.ones((30, 40), np.float32), np.ones(40, np.float32)
    assert ops.get("add").plan([a, row], {}).elements == 1200
    assert ops.get("add").plan([row, 2.5], {}).elements == 40
    assert ops.get("sum").plan([a], {"axis": 0}).elements == 1200
    assert ops.get("add").plan([np.ones((0, 1)), np.ones(5)], {}).elements == 5
    assert ops.get("add").plan([1, 2.0], {}).elements == 1
    # a gather's work is its output's size: 256 rows of a large table place like 256 rows
    table = np.ones((100_000, 64))
    rows = (np.arange(0, 100_000, 391)[:256],)
    assert ops.get("take_index").plan([table], {"key": rows}).elements == 256 * 64
    assert ops.get("take").plan([table, rows[0]], {"axis": 0}).elements == 256 * 64
    assert ops.get("take_along_axis").plan([table, np.zeros((3, 64), np.intp)],
                                           {"axis": 0}).elements == 3 * 64


def test_a_gather_from_a_large_idle_array_runs_at_once():
    """``X[idx]`` (a small result from a large array no pending op touches) runs at its call,
    as a small op does: the minibatch loop's rows are not handed to a worker."""
    table = nd.array(np.arange(400_000.0).reshape(100_000, 4))
    table.wait_to_read()
    engine = nd.engine.get()
    pushed = []
    original = engine.push_sync

    def counting(*args, **kwargs):
        pushed.append(kwargs.get("name", args[5] if len(args) > 5 else None))
        return original(*args, **kwargs)
    engine.push_sync = counting
    try:
        with nd.settings(run_at_once=True):
            rows = table[np.array([5, 99_999, 7])]
            total = (rows * 2).sum()
    finally:
        del engine.push_sync
    assert "take_index" not in pushed, pushed
    np.testing.assert_array_equal(total.asnumpy(), (np.arange(400_000.0).reshape(
        100_000, 4)[[5, 99_999, 7]] * 2).sum())


@pytest.mark.parametrize("name", ["maximum", "minimum", "add", "true_divide"])
def test_a_broadcast_of_two_arrays_calls_its_ufunc_as_numpy_asks(name):
    """The ufunc run of two arrays (``e / e.sum(axis=1, keepdims=True)``) passes ``out`` by
    keyword: NumPy 2.4 deprecates a third positional argument of maximum and minimum."""
    x = nd.array(np.arange(12.0).reshape(4, 3))
    y = nd.array(np.array([[1.0], [5.0], [7.0], [20.0]]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = getattr(nd, name)(x, y).asnumpy()
    np.testing.assert_array_equal(got, getattr(np, name)(x.asnumpy(), y.asnumpy()))
