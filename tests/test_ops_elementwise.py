"""Differential tests: element-wise kernels against NumPy."""
import os
import threading

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import ndengine.ops as ops
from ndengine.ops import OpReq

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
    if error is None and np.asarray(expected).dtype not in DTYPES:
        error = TypeError("unsupported result dtype")  # e.g. np.round(bool) is float16
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
    np.testing.assert_array_equal(run_op("power", a.astype(float), -1), a.astype(float) ** -1.0)


def test_bitwise_on_floats_fails_at_infer_time():
    with pytest.raises(TypeError):
        ops.get("bitwise_and").infer(np.ones(2), np.ones(2))
    with pytest.raises(TypeError):
        ops.get("invert").infer(np.ones(2, np.float32))


def test_shape_mismatch_names_both_shapes():
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4,\)"):
        ops.get("add").infer(np.ones((2, 3)), np.ones(4))


def test_unsupported_dtype_is_refused():
    with pytest.raises(TypeError, match="does not support dtype float16"):
        ops.get("exp").infer(np.ones(2, np.float16))
    with pytest.raises(TypeError, match="complex128"):
        ops.get("add").infer(np.ones(2, complex), 1)


@pytest.mark.parametrize("decimals", [-1, 0, 2])
def test_round_half_to_even_with_decimals(decimals):
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 1.25, 12.345, 15.0, 25.0], np.float64)
    np.testing.assert_array_equal(run_op("round", x, decimals=decimals), np.round(x, decimals))
    i = np.array([15, 25, -35, 7], np.int16)
    np.testing.assert_array_equal(run_op("round", i, decimals=decimals), np.round(i, decimals))


@FAST
@given(x=hnp.arrays(st.sampled_from([np.int8, np.int64, np.uint8, np.float32, np.float64, bool]),
                    hnp.array_shapes(min_dims=0, max_dims=2, min_side=0)),
       a_min=st.none() | st.integers(-5, 5), a_max=st.none() | st.integers(-5, 5))
def test_clip_matches_numpy(x, a_min, a_max):
    # NumPy raises OverflowError for clip(uint, None, -1) but clamps clip(uint, -1, 3);
    # ndengine clamps out-of-range int bounds in both cases.
    one_sided_negative = (a_min is None) != (a_max is None) and min(
        b for b in (a_min, a_max) if b is not None) < 0
    assume(not (x.dtype.kind == "u" and one_sided_negative))
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

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures
