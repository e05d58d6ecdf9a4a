"""Differential tests: element-wise kernels against NumPy."""
import multiprocessing
import os
import threading
import time
import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import ndengine.ops as ops
from ndengine.ops import OpReq
from ndengine.ops.elementwise import operators as elementwise
from ndengine.ops.runtime import parallel

EXAMPLES = int(os.environ.get("NDENGINE_HYPOTHESIS_EXAMPLES", "15"))
FAST = settings(max_examples=EXAMPLES, deadline=None)

DTYPES = [np.dtype(d) for d in ops.SUPPORTED_DTYPES]

# op name -> NumPy oracle; "exact" ops must match bit for bit.
UNARY = {
    "negative": np.negative, "positive": np.positive, "abs": np.abs, "square": np.square,
    "sign": np.sign, "floor": np.floor, "ceil": np.ceil, "invert": np.invert,
    "logical_not": np.logical_not, "round": np.round,
    "relu": lambda x: np.maximum(x, 0),
    "exp": np.exp, "log": np.log, "log1p": np.log1p, "expm1": np.expm1, "sqrt": np.sqrt,
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "tanh": np.tanh, "arcsin": np.arcsin,
    "arccos": np.arccos, "arctan": np.arctan,
    # cast first: -x of an unsigned int would wrap before exp sees it
    "sigmoid": lambda x: 1 / (1 + np.exp(-x.astype(np.exp(np.zeros(1, x.dtype)).dtype))),
}
TRANSCENDENTAL = {"exp", "log", "log1p", "expm1", "sqrt", "sin", "cos", "tan", "tanh",
                  "arcsin", "arccos", "arctan", "sigmoid", "power"}
BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply,
    "true_divide": np.true_divide, "floor_divide": np.floor_divide, "mod": np.mod,
    "power": np.power, "maximum": np.maximum, "minimum": np.minimum,
    "equal": np.equal, "not_equal": np.not_equal, "less": np.less,
    "less_equal": np.less_equal, "greater": np.greater, "greater_equal": np.greater_equal,
    "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
}


def numpy_or_error(fn, *args):
    with np.errstate(all="ignore"):
        try:
            return fn(*args), None
        except Exception as exc:  # noqa: BLE001 - the oracle's error is the expectation
            return None, exc


def assert_matches(name, got, expected):
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    if name in TRANSCENDENTAL and got.dtype.kind == "f":
        rtol = 1e-5 if got.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=1e-30, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, expected)  # NaNs compare equal here


def run_op(name, *inputs, out=None, req=OpReq.WRITE_TO, **params):
    op = ops.get(name)
    [(shape, dtype)] = op.infer(*inputs, **params)
    if out is None:
        out = np.empty(shape, dtype)
    with np.errstate(all="ignore"):
        op.kernels["cpu"](list(inputs), [out], [req], **params)
    return out


def values(dtype, shape):
    if dtype.kind == "f":
        elements = st.floats(allow_nan=True, allow_infinity=True, width=dtype.itemsize * 8)
        return hnp.arrays(dtype, shape, elements=elements)
    return hnp.arrays(dtype, shape)


def check_against_numpy(name, oracle, inputs, params=None):
    params = params or {}
    expected, error = numpy_or_error(lambda *a: oracle(*a, **params), *inputs)
    extended = any(np.asarray(v).dtype in ops.EXTENDED_DTYPES for v in inputs) or (
        error is None and np.asarray(expected).dtype in ops.EXTENDED_DTYPES)
    refused = extended and not ops.get(name).extended_dtypes
    if refused:  # an op that does not compute float16/complex yet refuses them at its plan
        with pytest.raises(TypeError, match="does not support dtype"):
            run_op(name, *inputs, **params)
        return
    if error is not None:
        with pytest.raises(type(error) if not isinstance(error, TypeError) else TypeError):
            run_op(name, *inputs, **params)
        return
    got = run_op(name, *inputs, **params)
    assert_matches(name, got, np.asarray(expected))


@pytest.mark.parametrize("name", sorted(UNARY))
@FAST
@given(data=st.data())
def test_unary_matches_numpy(name, data):
    dtype = data.draw(st.sampled_from(DTYPES))
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5))
    x = data.draw(values(dtype, shape))
    check_against_numpy(name, UNARY[name], [x])


@pytest.mark.parametrize("name", sorted(BINARY))
@FAST
@given(data=st.data())
def test_binary_broadcasting_matches_numpy(name, data):
    left = data.draw(st.sampled_from(DTYPES))
    right = data.draw(st.sampled_from([left] * 3 + DTYPES))  # mostly same dtype
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3,
                                                         min_side=0, max_side=4))
    x = data.draw(values(left, shapes.input_shapes[0]))
    y = data.draw(values(right, shapes.input_shapes[1]))
    if name == "power" and y.dtype.kind in "iu" and x.dtype.kind in "iub":
        y = np.abs(y) % 9 if y.dtype.kind == "u" else np.abs(y % 9)  # keep int powers small
    check_against_numpy(name, BINARY[name], [x, y])


@pytest.mark.parametrize("name", sorted(BINARY))
@FAST
@given(data=st.data())
def test_binary_with_python_scalar(name, data):
    dtype = data.draw(st.sampled_from(DTYPES))
    x = data.draw(values(dtype, data.draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=5))))
    scalar = data.draw(st.one_of(st.booleans(), st.integers(-3, 100),
                                 st.floats(-1e3, 1e3, allow_nan=False)))
    if name == "power" and isinstance(scalar, int):
        scalar = abs(scalar) % 5
    scalar_first = data.draw(st.booleans())
    inputs = [scalar, x] if scalar_first else [x, scalar]
    check_against_numpy(name, BINARY[name], inputs)


def test_float_arithmetic_is_exact_on_edge_values():
    edge = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e308, -1e-308, 5e-324,
                     np.inf, -np.inf, np.nan, 7.0, -7.0, 1e16, 0.1], dtype=np.float64)
    x, y = np.meshgrid(edge, edge)
    for dtype in (np.float32, np.float64):
        with np.errstate(over="ignore"):  # 1e308 overflows float32 to inf, as intended
            a, b = x.astype(dtype), y.astype(dtype)
        for name in ("add", "subtract", "multiply", "true_divide", "floor_divide", "mod",
                     "maximum", "minimum", "less", "equal"):
            with np.errstate(all="ignore"):
                expected = BINARY[name](a, b)
            np.testing.assert_array_equal(run_op(name, a, b), expected, err_msg=name)
            # same sign of zero too (assert_array_equal treats -0.0 == 0.0)
            if name in ("floor_divide", "mod"):
                np.testing.assert_array_equal(np.signbit(run_op(name, a, b)), np.signbit(expected))


def test_integer_division_by_zero_and_overflow_follow_numpy():
    for dtype in (np.int8, np.int64, np.uint16, np.uint64):
        info = np.iinfo(dtype)
        a = np.array([info.min, info.max, 7, 0, 5], dtype)
        b = np.array([-1 if info.min < 0 else 1, 0, 0, 0, 3], dtype)
        for name in ("floor_divide", "mod", "add", "multiply", "subtract"):
            with np.errstate(all="ignore"):
                expected = BINARY[name](a, b)
            np.testing.assert_array_equal(run_op(name, a, b), expected, err_msg=f"{name} {dtype}")


def test_integer_power_refuses_negative_exponents():
    with pytest.raises(ValueError, match="Integers to negative integer powers"):
        ops.get("power").infer(np.ones(3, np.int32), -1)
    a = np.arange(3, dtype=np.int32)
    with pytest.raises(ValueError, match="Integers to negative integer powers"):
        run_op("power", a, np.array([1, -2, 1], np.int32))
    with np.errstate(divide="ignore"):  # NumPy's 0.0 ** -1 -> inf, with a warning
        expected = a.astype(float) ** -1.0
    np.testing.assert_array_equal(run_op("power", a.astype(float), -1), expected)


def test_bitwise_on_floats_fails_at_infer_time():
    with pytest.raises(TypeError):
        ops.get("bitwise_and").infer(np.ones(2), np.ones(2))
    with pytest.raises(TypeError):
        ops.get("invert").infer(np.ones(2, np.float32))


def test_shape_mismatch_names_both_shapes():
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4,\)"):
        ops.get("add").infer(np.ones((2, 3)), np.ones(4))


def test_unsupported_dtype_is_refused():
    with pytest.raises(TypeError, match="does not understand dtype|does not support dtype"):
        ops.get("exp").infer(np.ones(2, object))
    # an op without float16/complex loops refuses them at its plan, naming op and dtype
    assert not ops.get("sigmoid").extended_dtypes
    with pytest.raises(TypeError, match="sigmoid does not support dtype float16"):
        ops.get("sigmoid").infer(np.ones(2, np.float16))
    with pytest.raises(TypeError, match="sigmoid does not support dtype complex128"):
        ops.get("sigmoid").infer(np.ones(2, complex))


def test_float16_and_complex_compute_with_numpys_loops():
    assert ops.get("exp").extended_dtypes and ops.get("add").extended_dtypes
    np.testing.assert_array_equal(ops.get("exp").apply(np.arange(4, dtype=np.int8))[0],
                                  np.exp(np.arange(4, dtype=np.int8)), strict=True)
    z = np.array([1 + 2j, -3j, 0.5], np.complex64)
    np.testing.assert_array_equal(ops.get("add").apply(z, 1)[0], z + 1, strict=True)
    np.testing.assert_array_equal(ops.get("multiply").apply(z, 2j)[0], z * 2j, strict=True)


@pytest.mark.parametrize("decimals", [-1, 0, 2])
def test_round_half_to_even_with_decimals(decimals):
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 1.25, 12.345, 15.0, 25.0], np.float64)
    np.testing.assert_array_equal(run_op("round", x, decimals=decimals), np.round(x, decimals))
    i = np.array([15, 25, -35, 7], np.int16)
    np.testing.assert_array_equal(run_op("round", i, decimals=decimals), np.round(i, decimals))


# Python int bounds outside some dtype's range: NumPy drops a_min <= the lowest value and
# a_max >= the highest, and raises OverflowError for the others (clip(uint8, 0, -1)).
OUT_OF_RANGE_BOUNDS = [-1000, -129, 128, 256, 300, 2**63, 2**64, -2**63 - 1, 10**400]


@FAST
@given(x=hnp.arrays(st.sampled_from([np.int8, np.int64, np.uint8, np.uint64, np.float32,
                                     np.float64, bool]),
                    hnp.array_shapes(min_dims=0, max_dims=2, min_side=0)),
       a_min=st.none() | st.integers(-5, 5) | st.sampled_from(OUT_OF_RANGE_BOUNDS),
       a_max=st.none() | st.integers(-5, 5) | st.sampled_from(OUT_OF_RANGE_BOUNDS))
def test_clip_matches_numpy(x, a_min, a_max):
    # NumPy 2.4 runs np.positive for clip(x, None, None), which refuses bool; we copy.
    assume(not (x.dtype == bool and a_min is None and a_max is None))
    check_against_numpy("clip", lambda v, a_min, a_max: np.clip(v, a_min, a_max), [x],
                        dict(a_min=a_min, a_max=a_max))


@FAST
@given(data=st.data())
def test_where_matches_numpy(data):
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3,
                                                         min_side=0, max_side=3))
    cond = data.draw(hnp.arrays(st.sampled_from([bool, np.int8, np.float64]), shapes.input_shapes[0]))
    x = data.draw(values(data.draw(st.sampled_from(DTYPES)), shapes.input_shapes[1]))
    y = data.draw(st.one_of(values(data.draw(st.sampled_from(DTYPES)), shapes.input_shapes[2]),
                            st.integers(-5, 5), st.floats(allow_nan=False)))
    check_against_numpy("where", np.where, [cond, x, y])


@pytest.mark.parametrize("shape", [(0,), (3,), ()])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_clip_int_too_large_for_a_float_raises_at_infer_time(dtype, shape):
    x = np.zeros(shape, dtype)
    for bounds in [(None, 10**400), (-10**400, None), (2**1023, None)]:
        expected, error = numpy_or_error(lambda v: np.clip(v, *bounds), x)
        for _ in range(2):  # the second call goes through the cached plan
            if error is None:
                np.testing.assert_array_equal(run_op("clip", x, a_min=bounds[0],
                                                     a_max=bounds[1]), expected)
            else:
                with pytest.raises(type(error)):
                    ops.get("clip").infer(x, a_min=bounds[0], a_max=bounds[1])


@pytest.mark.parametrize("a_min, a_max", [(0, -1), (None, -1), (300, None), (1, 256 * 256)])
def test_clip_out_of_range_bound_raises_like_numpy_at_infer_time(a_min, a_max):
    x = np.arange(5, dtype=np.uint8)
    expected, error = numpy_or_error(lambda v: np.clip(v, a_min, a_max), x)
    for _ in range(2):  # the second call goes through the cached plan
        if error is None:
            np.testing.assert_array_equal(run_op("clip", x, a_min=a_min, a_max=a_max), expected)
            continue
        with pytest.raises(OverflowError):
            ops.get("clip").infer(x, a_min=a_min, a_max=a_max)
        with pytest.raises(OverflowError):  # and the kernel, called on its own
            ops.get("clip").kernels["cpu"]([x], [np.empty(5, np.uint8)], [OpReq.WRITE_TO],
                                           a_min=a_min, a_max=a_max)


# ------------------------------------- comparisons with out-of-range Python ints

COMPARISONS = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]


def out_of_range_ints(dtype):
    """Python ints outside ``dtype``'s range (int64's for bool and floats), near and far."""
    info = np.iinfo(dtype if dtype.kind in "iu" else np.int64)
    low, high = int(info.min), int(info.max)
    return st.one_of(st.integers(high + 1, high + 2**70), st.integers(low - 2**70, low - 1),
                     st.sampled_from([high + 1, low - 1, -1, 256, 300, -129, 128, 2**63,
                                      2**64, -2**63 - 1]))


@pytest.mark.parametrize("name", COMPARISONS)
@FAST
@given(data=st.data())
def test_comparison_with_out_of_range_python_int_matches_numpy(name, data):
    # NumPy 2 compares an integer array with any Python int (arithmetic would raise);
    # with bool or float arrays an int that does not convert raises OverflowError.
    dtype = data.draw(st.sampled_from(DTYPES))
    x = data.draw(values(dtype, data.draw(hnp.array_shapes(min_dims=0, max_dims=2,
                                                           max_side=5))))
    scalar = data.draw(out_of_range_ints(dtype))
    inputs = [scalar, x] if data.draw(st.booleans()) else [x, scalar]
    for _ in range(2):  # the second call finds the plan cached
        check_against_numpy(name, BINARY[name], inputs)


@pytest.mark.parametrize("name", COMPARISONS)
def test_comparison_with_out_of_range_python_int_into_views_and_add_to(name):
    x = np.array([[0, 1, 2], [3, 254, 255]], np.uint8)
    for scalar in (300, -1):
        for inputs in ([x, scalar], [scalar, x]):
            expected = BINARY[name](*inputs)
            strided = np.zeros((2, 6), bool)[:, ::2]
            np.testing.assert_array_equal(run_op(name, *inputs, out=strided), expected)
            acc = np.array([[True, False, False], [False, False, True]])
            run_op(name, *inputs, out=acc, req=OpReq.ADD_TO)
            np.testing.assert_array_equal(acc, expected | [[True, False, False],
                                                           [False, False, True]])
    with pytest.raises(OverflowError):  # arithmetic still refuses them, as NumPy does
        ops.get("add").infer(x, 300)


# ------------------------------------------------------- outputs: views, aliasing, req

def test_non_contiguous_outputs():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = np.linspace(1, 2, 4, dtype=np.float32)
    transposed = np.zeros((4, 3), np.float32).T          # Fortran-ordered view
    run_op("multiply", a, b, out=transposed)
    np.testing.assert_array_equal(transposed, a * b)
    strided = np.zeros((3, 8), np.float32)[:, ::2]
    run_op("exp", a, out=strided)
    np.testing.assert_allclose(strided, np.exp(a), rtol=1e-6)


def test_overlapping_inplace_matches_numpy():
    a = np.arange(10, dtype=np.int64)
    expected = a.copy()
    expected[1:] += expected[:-1]
    run_op("add", a[1:], a[:-1], out=a[1:], req=OpReq.WRITE_INPLACE)
    np.testing.assert_array_equal(a, expected)

    b = np.arange(10.0)
    expected = b.copy()
    expected[:-1] -= expected[1:]
    run_op("subtract", b[:-1], b[1:], out=b[:-1], req=OpReq.WRITE_INPLACE)
    np.testing.assert_array_equal(b, expected)

    m = np.arange(16.0).reshape(4, 4)
    expected = m + m.T
    run_op("add", m, m.T, out=m, req=OpReq.WRITE_INPLACE)   # m += m.T
    np.testing.assert_array_equal(m, expected)


def test_input_that_is_the_output():
    a = np.arange(6, dtype=np.int32)
    run_op("add", a, a, out=a, req=OpReq.WRITE_INPLACE)
    np.testing.assert_array_equal(a, np.arange(6) * 2)


def test_add_to_and_null_requests():
    out = np.ones(4)
    run_op("multiply", np.arange(4.0), 2.0, out=out, req=OpReq.ADD_TO)
    np.testing.assert_array_equal(out, 1 + np.arange(4.0) * 2)
    run_op("multiply", np.arange(4.0), 2.0, out=out, req=OpReq.NULL)
    np.testing.assert_array_equal(out, 1 + np.arange(4.0) * 2)


# ----------------------------------------------------- large arrays: parallel kernels

LARGE = (1 << 18) + 3


@pytest.mark.parametrize("name", ["add", "multiply", "floor_divide", "maximum"])
def test_parallel_path_matches_numpy(name):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(LARGE).astype(np.float32)
    b = rng.standard_normal(LARGE).astype(np.float32)
    np.testing.assert_array_equal(run_op(name, a, b), BINARY[name](a, b))
    np.testing.assert_array_equal(run_op(name, a, 1.0001), BINARY[name](a, np.float32(1.0001)))
    np.testing.assert_array_equal(run_op(name, 3.0, b), BINARY[name](np.float32(3.0), b))


def test_concurrent_kernel_calls_from_threads():
    rng = np.random.default_rng(1)
    a = rng.standard_normal(LARGE)
    b = rng.standard_normal(LARGE)
    expected = {"add": a + b, "sqrt": np.sqrt(np.abs(a)), "multiply": a * 2.5}
    failures = []

    def worker(seed):
        try:
            for i in range(8):
                name = ("add", "sqrt", "multiply")[(seed + i) % 3]
                inputs = {"add": (a, b), "sqrt": (np.abs(a),), "multiply": (a, 2.5)}[name]
                out = run_op(name, *inputs)
                if name == "sqrt":
                    np.testing.assert_allclose(out, expected[name], rtol=1e-15)
                else:
                    np.testing.assert_array_equal(out, expected[name])
        except Exception as exc:  # noqa: BLE001
            failures.append(exc)

    _run_in_threads(worker, 4)
    assert not failures, failures


# ------------------------------------- unary ops that call NumPy, split over the cores

NUMPY_BACKED = sorted(elementwise.NUMPY_UNARY)


def special_values(dtype, size, seed=2):
    x = np.random.default_rng(seed).uniform(-4, 4, size).astype(dtype)
    x[:8] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e30, 1e-30]
    x[-3:] = [0.5, -0.5, 2.0]
    return x


def same_bits(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.view(f"u{a.itemsize}"), b.view(f"u{b.itemsize}"))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", NUMPY_BACKED)
def test_numpy_backed_split_call_is_bit_identical_to_one_call(name, dtype):
    x = special_values(dtype, 3 * LARGE + 5)
    assert parallel.split_parts(x.size) == min(os.cpu_count() or 1, x.size)
    loops = elementwise.spec(name).loops
    whole = np.empty_like(x)
    with np.errstate(all="ignore"):
        loops.serial(x, whole)  # one call, no split
        if name != "sigmoid" and np.dtype(dtype) in elementwise.NUMPY_UNARY[name][1]:
            same_bits(whole, getattr(np, name)(x))
    same_bits(run_op(name, x), whole)
    y = x.copy()  # in place, as the engine's WRITE_INPLACE
    ops.get(name).kernels["cpu"]([y], [y], [OpReq.WRITE_INPLACE])
    same_bits(y, whole)


@pytest.mark.parametrize("name", NUMPY_BACKED)
def test_numpy_backed_ops_report_floating_point_errors_as_numpy(name):
    # the kernel runs under the calling thread's NumPy error state (an op's run sets the
    # state of its push): it raises where NumPy's own function raises, and only there
    kernel = ops.get(name).kernels["cpu"]
    numpy_function = getattr(np, name, None)
    for size in (16, LARGE):
        x = special_values(np.float32, size)
        x[8:16] = [-1.0, -2.0, 88.8, 1000.0, -1000.0, 5.0, 1.0, -1.0]
        with np.errstate(all="ignore"):
            expected = run_op(name, x)
        numpy_error = None
        if numpy_function is not None:
            try:
                with np.errstate(all="raise"):
                    numpy_function(x)
            except FloatingPointError as exc:
                numpy_error = str(exc)
        out = np.empty_like(x)
        with np.errstate(all="raise"), warnings.catch_warnings():
            warnings.simplefilter("error")
            if numpy_error is None:
                kernel([x], [out], [OpReq.WRITE_TO])
                np.testing.assert_array_equal(out, expected)
            else:
                with pytest.raises(FloatingPointError, match=numpy_error):
                    kernel([x], [out], [OpReq.WRITE_TO])


def test_sigmoid_keeps_its_semantics():
    # 1 / (1 + exp(-x)) in exp's dtype, as the Numba scalar computes it
    numba_loops = elementwise.spec("sigmoid").numba_loops
    for dtype in (np.float32, np.float64, np.int16, np.int32):
        x = np.array([-1000, -80, -1, 0, 1, 80, 1000, 3], dtype)
        xf = x.astype(np.exp(np.zeros(1, dtype)).dtype)
        with np.errstate(all="ignore"):
            expected = 1 / (1 + np.exp(-xf))
        got = run_op("sigmoid", x)
        assert got.dtype == expected.dtype
        rtol = 2e-7 if xf.dtype == np.float32 else 1e-15
        np.testing.assert_allclose(got, expected, rtol=rtol)
        old = np.empty_like(xf)
        numba_loops.serial(xf, old)
        np.testing.assert_allclose(got, old, rtol=rtol)
    special = run_op("sigmoid", np.array([np.nan, np.inf, -np.inf, -0.0], np.float32))
    np.testing.assert_array_equal(special, [np.nan, 1, 0, 0.5])


def test_concurrent_numpy_backed_calls_from_threads():
    x = special_values(np.float32, 2 * LARGE + 1)
    expected = {name: run_op(name, x) for name in ("exp", "sin", "sigmoid", "tanh")}
    failures = []

    def worker(seed):
        try:
            for i in range(12):
                name = sorted(expected)[(seed + i) % 4]
                same_bits(run_op(name, x), expected[name])
        except Exception as exc:  # noqa: BLE001
            failures.append(exc)

    _run_in_threads(worker, 4)
    assert not failures, failures


def test_split_run_covers_every_element_once_and_waits_for_all_chunks():
    size = 4 * LARGE + 7
    x = np.arange(size, dtype=np.int64)
    out = np.zeros(size, np.int64)
    parallel.split_run(lambda a, o: np.add(o, a + 1, out=o), (x, out))
    np.testing.assert_array_equal(out, x + 1)
    if parallel.split_parts(size) < 2:
        pytest.skip("one core: nothing is split")

    log = []

    def fail_first(a, o):  # the caller's chunk fails; the others finish late
        log.append(("start", int(a[0])))
        if a[0] == 0:
            time.sleep(0.02)  # (the pool has picked up its chunks by now)
            raise ValueError("boom")
        time.sleep(0.1)
        o[:] = a
        log.append(("end", int(a[0])))

    with pytest.raises(ValueError, match="boom"):
        parallel.split_run(fail_first, (x, out))
    started = {first for event, first in list(log) if event == "start" and first != 0}
    ended = {first for event, first in list(log) if event == "end"}
    assert started == ended  # no chunk was still running when split_run returned
    for first in ended:
        assert out[first] == first


def test_split_run_in_a_forked_child():
    if not hasattr(os, "fork"):
        pytest.skip("no fork")
    x = special_values(np.float32, 2 * LARGE)
    expected = run_op("exp", x)  # the parent's pool is running now
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        got = pool.apply_async(run_op, ("exp", x)).get(timeout=60)
    same_bits(got, expected)


def _run_in_threads(worker, count):
    """worker(seed) on ``count`` threads at once; returns when all have finished."""
    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
