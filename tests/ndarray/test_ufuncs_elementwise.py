"""NumPy's element-wise ufuncs on real dtypes, differential against NumPy: one body run with
xp=numpy and xp=ndengine over generated shapes, dtypes (bool, ints, floats), broadcasting,
Python and NumPy scalars; values, dtypes and errors (by type) must agree."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import ndengine as nd
from ndarray_helpers import DTYPES, python_scalars, run_xp, shapes, values

pytestmark = pytest.mark.usefixtures("nd_engine")

UNARY = ["log2", "log10", "exp2", "cbrt", "reciprocal", "sinh", "cosh", "arcsinh", "arccosh",
         "arctanh", "deg2rad", "rad2deg", "degrees", "radians", "trunc", "fix", "rint", "fabs",
         "absolute", "negative", "positive", "conjugate", "conj", "signbit", "isnan", "isinf",
         "isfinite", "logical_not", "bitwise_not", "invert"]
BINARY = ["hypot", "arctan2", "copysign", "nextafter", "logaddexp", "logaddexp2", "fmod",
          "remainder", "mod", "logical_and", "logical_or", "logical_xor", "bitwise_and",
          "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "heaviside", "fmax",
          "fmin", "float_power", "power", "equal", "not_equal", "less", "less_equal",
          "greater", "greater_equal", "divide", "true_divide"]
# within a tolerance (libm-level functions); everything else must be exact
TRANSCENDENTAL = {"log2", "log10", "exp2", "cbrt", "sinh", "cosh", "arcsinh", "arccosh",
                  "arctanh", "hypot", "arctan2", "logaddexp", "logaddexp2", "float_power",
                  "power"}
# NumPy 2's array-API names and other aliases: the same function as the name they alias
ALIASES = {"absolute": "abs", "conj": "conjugate", "bitwise_not": "invert", "remainder": "mod",
           "divide": "true_divide", "pow": "power", "acos": "arccos", "asin": "arcsin",
           "atan": "arctan", "atan2": "arctan2", "acosh": "arccosh", "asinh": "arcsinh",
           "atanh": "arctanh", "bitwise_invert": "invert", "bitwise_left_shift": "left_shift",
           "bitwise_right_shift": "right_shift"}

dtypes = st.sampled_from(DTYPES)
# which zero of (0.0, -0.0) these return differs between NumPy's own loops (SIMD, scalar)
EITHER_ZERO = {"fmax", "fmin", "maximum", "minimum"}


def tol(name):
    return "close" if name in TRANSCENDENTAL else "exact"


def compare(name):
    return {"tol": tol(name), "zero_sign": name not in EITHER_ZERO}


def numpy_scalars(dtype):
    return values(dtype, ()).map(lambda a: a[()])


@given(data=st.data())
@pytest.mark.parametrize("name", UNARY)
def test_unary(name, data):
    dtype = data.draw(dtypes)
    x = data.draw(values(dtype, data.draw(shapes())))
    run_xp(lambda xp, x: getattr(xp, name)(xp.array(x)), x, **compare(name))
    scalar = data.draw(st.one_of(python_scalars(), numpy_scalars(dtype)))
    run_xp(lambda xp: getattr(xp, name)(scalar), **compare(name))


@given(data=st.data())
@pytest.mark.parametrize("name", BINARY)
def test_binary_broadcasting(name, data):
    a_shape, b_shape = data.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=4)).input_shapes
    a = data.draw(values(data.draw(dtypes), a_shape))
    b = data.draw(values(data.draw(dtypes), b_shape))
    if name == "power" and b.dtype.kind in "iub":  # negative int powers: tested apart
        b = np.abs(b) % 5
    run_xp(lambda xp, a, b: getattr(xp, name)(xp.array(a), xp.array(b)), a, b, **compare(name))


@given(data=st.data(), scalar_left=st.booleans())
@pytest.mark.parametrize("name", BINARY)
def test_binary_with_scalars(name, data, scalar_left):
    dtype = data.draw(dtypes)
    a = data.draw(values(dtype, data.draw(shapes())))
    s = data.draw(st.one_of(python_scalars(), numpy_scalars(data.draw(dtypes))))
    if name == "power" and not scalar_left:
        s = abs(s) % 5
    elif name == "power" and a.dtype.kind in "iub":
        a = np.abs(a) % 5

    def body(xp, a):
        fn = getattr(xp, name)
        return fn(s, xp.array(a)) if scalar_left else fn(xp.array(a), s)
    run_xp(body, a, **compare(name))


@pytest.mark.parametrize("alias, name", sorted(ALIASES.items()))
def test_aliases_are_the_same_functions(alias, name):
    assert getattr(nd, alias) is getattr(nd, name)
    assert getattr(np, alias) is getattr(np, name)  # as in NumPy


# ----------------------------------------------------------- edges the C loops decide
def test_integer_edges_follow_numpys_loops():
    def body(xp):
        out = []
        for dtype in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
            info = np.iinfo(dtype)
            x = np.array([info.min, info.max, 0, 1, 5, info.max - 1], dtype)
            y = np.array([-1 if info.min else 1, 0, 0, 3, 64, 7], dtype)
            shifts = np.array([0, 1, info.bits - 1, info.bits, info.bits + 1, 3], dtype)
            out += [xp.fmod(xp.array(x), xp.array(y)), xp.remainder(xp.array(x), xp.array(y)),
                    xp.reciprocal(xp.array(x)), xp.reciprocal(xp.array(y)),
                    xp.left_shift(xp.array(x), xp.array(shifts)),
                    xp.right_shift(xp.array(x), xp.array(shifts)),
                    xp.fmax(xp.array(x), xp.array(y)), xp.fmin(xp.array(x), xp.array(y))]
            out += list(xp.divmod(xp.array(x), xp.array(y)))
            if info.min:  # negative shift counts: NumPy's loops give 0 (or -1)
                out += [xp.left_shift(xp.array(x), -1), xp.right_shift(xp.array(x), -3)]
        return out
    run_xp(body)


def test_float_edges_follow_numpys_loops():
    special = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 5e-324, 1e308, -2.5]

    def body(xp, dtype):
        x = np.array(special, dtype)
        a, b = np.meshgrid(x, x)
        out = []
        for name in ("fmod", "remainder", "copysign", "heaviside",
                     "nextafter", "hypot", "arctan2", "logaddexp", "logaddexp2"):
            out.append(getattr(xp, name)(xp.array(a), xp.array(b)))
        out += list(xp.divmod(xp.array(a), xp.array(b)))
        for name in ("trunc", "fix", "rint", "fabs", "signbit", "isnan", "isinf", "isfinite",
                     "reciprocal", "deg2rad", "rad2deg", "cbrt", "log2", "exp2", "arctanh"):
            out.append(getattr(xp, name)(xp.array(x)))
        return out
    for dtype in ("float32", "float64"):
        run_xp(body, dtype)
        # which zero of (0.0, -0.0) fmax/fmin return differs between NumPy's own loops
        x = np.array(special, dtype)
        a, b = np.meshgrid(x, x)
        for name in ("fmax", "fmin"):
            run_xp(lambda xp: getattr(xp, name)(xp.array(a), xp.array(b)), zero_sign=False)


def test_signed_zeros_are_numpys():
    # assert_array_equal calls 0.0 and -0.0 equal: compare the sign bits too (long arrays:
    # NumPy's contiguous SIMD loops).  Not fmax/fmin (nor maximum/minimum): which zero of
    # (0.0, -0.0) they return differs between NumPy's own SIMD and scalar loops.
    x = np.array([0.0, -0.0, 0.0, -0.0, np.nan, 1.5, -2.5, np.inf] * 40)
    y = np.array([-0.0, 0.0, 0.0, -0.0, -1.0, np.nan, -0.0, -np.inf] * 40)
    results = []
    with np.errstate(all="ignore"):
        for name in ("fmod", "remainder", "copysign", "heaviside", "nextafter"):
            results.append((name, getattr(nd, name)(nd.array(x), nd.array(y)),
                            getattr(np, name)(x, y)))
        for name in ("trunc", "fix", "rint", "reciprocal", "fabs", "cbrt", "sinh", "deg2rad",
                     "sign", "negative", "positive", "square", "sqrt", "floor", "ceil"):
            results.append((name, getattr(nd, name)(nd.array(y)), getattr(np, name)(y)))
    for name, got, expected in results:
        np.testing.assert_array_equal(np.signbit(got.asnumpy()), np.signbit(expected),
                                      err_msg=name)


# ------------------------------------------------------------------- dtype rules
@pytest.mark.parametrize("dtype", DTYPES)
def test_dtype_rules_and_float16_results(dtype):
    """Integer inputs to float ufuncs promote as NumPy's do; where NumPy's answer is float16
    (int8, uint8, bool inputs) so is ndengine's, from NumPy's loop; signbit answers."""
    x = np.array([1, 0, 1], dtype)
    for name in ("log2", "exp2", "cbrt", "sinh", "deg2rad", "fabs", "rint", "signbit", "isnan",
                 "reciprocal", "trunc", "logical_not"):
        run_xp(lambda xp: getattr(xp, name)(xp.array(x)), tol="close")
    for name in ("hypot", "arctan2", "copysign", "nextafter", "logaddexp", "heaviside",
                 "float_power", "fmod", "fmax", "logical_and", "left_shift"):
        run_xp(lambda xp: getattr(xp, name)(xp.array(x), xp.array(x)), tol="close")
        run_xp(lambda xp: getattr(xp, name)(xp.array(x), 2), tol="close")
        run_xp(lambda xp: getattr(xp, name)(xp.array(x), 2.5), tol="close")


@pytest.mark.parametrize("call", [
    lambda xp, x: xp.hypot(x, x, dtype=np.float32),
    lambda xp, x: xp.logical_and(x, x, dtype=np.float64),   # NumPy: no such loop
    lambda xp, x: xp.logical_or(x, 1000),                   # a bool loop: no OverflowError
    lambda xp, x: xp.left_shift(x, 300),                    # int8 meets 300: OverflowError
    lambda xp, x: xp.float_power(x, x, dtype=np.float32),   # float_power has float64 only
    lambda xp, x: xp.float_power(x, -1),
    lambda xp, x: xp.fmod(x, x, dtype=np.float64),
    lambda xp, x: xp.signbit(x, dtype=bool),
    lambda xp, x: xp.isnan(x, out=xp.zeros(3, dtype=np.int64)),
    lambda xp, x: xp.left_shift(x.astype(np.float32), 1),   # no float loop: TypeError
    lambda xp, x: xp.invert(x.astype(np.float64)),
    lambda xp, x: xp.heaviside(x, x, out=xp.zeros(3, dtype=np.int8)),  # same_kind: TypeError
    lambda xp, x: xp.arctan2(x, xp.ones((2, 3))),
    lambda xp, x: xp.arctan2(x, xp.ones(2)),                # shapes: ValueError
])
def test_dtype_argument_out_and_errors(call):
    run_xp(lambda xp: call(xp, xp.array(np.array([-3, 0, 7], np.int8))), tol="close")
