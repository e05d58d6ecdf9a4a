"""Python operators on NDArrays against NumPy: binary, reflected, in-place, unary, comparisons,
bitwise, with Python scalars and broadcasting, over generated shapes and dtypes."""
import operator

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import ndengine as nd

from ndarray_helpers import (DTYPES, FLOATS, INTS, python_scalars, run_xp, values)

pytestmark = pytest.mark.usefixtures("nd_engine")

ARITHMETIC = {"+": operator.add, "-": operator.sub, "*": operator.mul,
              "/": operator.truediv, "//": operator.floordiv, "%": operator.mod,
              "**": operator.pow}
BITWISE = {"&": operator.and_, "|": operator.or_, "^": operator.xor}
COMPARISON = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
              ">": operator.gt, ">=": operator.ge}
BINARY = {**ARITHMETIC, **BITWISE, **COMPARISON}
IN_PLACE = {"+": operator.iadd, "-": operator.isub, "*": operator.imul,
            "/": operator.itruediv, "//": operator.ifloordiv, "%": operator.imod,
            "**": operator.ipow, "&": operator.iand, "|": operator.ior, "^": operator.ixor}
UNARY = {"-": operator.neg, "+": operator.pos, "abs": abs, "~": operator.invert}

dtypes = st.sampled_from(DTYPES)


def operand_values(op, dtype, shape, exponent=False):
    if op == "**" and exponent:  # no negative int exponents (a kernel error, tested apart)
        return values(dtype, shape, lo=0, hi=4) if dtype.kind != "f" else \
            values(dtype, shape, lo=-3, hi=3)
    return values(dtype, shape)


# Python ints outside some integer dtype's range: NumPy 2 compares them (arithmetic raises)
EXTREME_INTS = [-129, 128, 256, -32769, 65536, 2**31, -2**31 - 1, 2**32, 2**63, -2**63 - 1,
                2**64, -2**64]


def scalar_for(op, data, exponent=False):
    if op == "**" and exponent:
        return data.draw(st.one_of(st.booleans(), st.integers(0, 4), st.floats(-3, 3)))
    if op in COMPARISON:
        return data.draw(st.one_of(python_scalars(), st.sampled_from(EXTREME_INTS),
                                   st.integers(-2**70, 2**70)))
    return data.draw(python_scalars())


@given(data=st.data())
@pytest.mark.parametrize("op", list(BINARY))
def test_binary_array_array(op, data):
    fn = BINARY[op]
    in_shapes = data.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=4)).input_shapes
    dt_a, dt_b = data.draw(dtypes), data.draw(dtypes)
    a = data.draw(operand_values(op, dt_a, in_shapes[0]))
    b = data.draw(operand_values(op, dt_b, in_shapes[1], exponent=True))
    run_xp(lambda xp, a, b: fn(xp.array(a), xp.array(b)), a, b,
           tol="close" if op == "**" else "exact")


@given(data=st.data(), scalar_left=st.booleans())
@pytest.mark.parametrize("op", list(BINARY))
def test_binary_array_python_scalar(op, data, scalar_left):
    fn = BINARY[op]
    dtype = data.draw(dtypes)
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    a = data.draw(operand_values(op, dtype, shape, exponent=scalar_left))
    s = scalar_for(op, data, exponent=not scalar_left)
    if scalar_left:
        body = lambda xp, a: fn(s, xp.array(a))  # noqa: E731
    else:
        body = lambda xp, a: fn(xp.array(a), s)  # noqa: E731
    run_xp(body, a, tol="close" if op == "**" else "exact")


@pytest.mark.parametrize("body", [lambda xp: xp.array([1, 2, 3], dtype=np.uint8) < 300,
                                  lambda xp: xp.array([1, 2, 3], dtype=np.uint8) == -1,
                                  lambda xp: 1000 > xp.array([1, -2], dtype=np.int8),
                                  lambda xp: xp.array([0, 2**63], dtype=np.uint64) >= -2**64,
                                  lambda xp: xp.array([True], dtype=bool) != 2**64,  # both raise
                                  lambda xp: xp.array([1, 2], dtype=np.uint8) + 300])  # both raise
def test_comparison_with_out_of_range_python_int(body):
    run_xp(body)


def test_integer_wraparound():
    info = np.iinfo(np.int8)
    for dtype in INTS:
        info = np.iinfo(dtype)
        v = np.array([info.min, info.max, info.max - 1, info.min + 1, 0], dtype)
        for fn in (operator.add, operator.sub, operator.mul):
            run_xp(lambda xp, v: fn(xp.array(v), xp.array(v[::-1])), v)
            run_xp(lambda xp, v: fn(xp.array(v), 1), v)
        run_xp(lambda xp, v: -xp.array(v), v)
        run_xp(lambda xp, v: abs(xp.array(v)), v)
        run_xp(lambda xp, v: xp.array(v) ** 3, v)


@given(data=st.data(), use_scalar=st.booleans())
@pytest.mark.parametrize("op", list(IN_PLACE))
def test_in_place(op, data, use_scalar):
    fn = IN_PLACE[op]
    dtype = data.draw(dtypes)
    shape_a = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    a = data.draw(operand_values(op, dtype, shape_a))
    if use_scalar:
        b = scalar_for(op, data, exponent=True)
        make_b = lambda xp: b  # noqa: E731
    else:
        # mostly broadcastable into a, sometimes not (both must then raise)
        shape_b = data.draw(st.one_of(
            hnp.broadcastable_shapes(shape_a, min_dims=0, max_dims=len(shape_a), min_side=0,
                                     max_side=4),
            hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)))
        b = data.draw(operand_values(op, data.draw(dtypes), shape_b, exponent=True))
        make_b = lambda xp: xp.array(b)  # noqa: E731

    def body(xp, a):
        x = xp.array(a)
        y = fn(x, make_b(xp))
        assert y is x  # in place: the same object
        return x

    run_xp(body, a, tol="close" if op == "**" else "exact", any_error=True)


@pytest.mark.parametrize("dtype,other", [(np.int32, 1.5), (np.int64, np.float32),
                                         (np.uint8, np.int8), (np.bool_, 1),
                                         (np.int16, np.uint64)])
def test_in_place_casting_errors(dtype, other):
    """int += float and friends: NumPy's same_kind rule refuses them; so must we."""
    def body(xp):
        x = xp.array(np.ones(3, dtype))
        if isinstance(other, type):
            x += xp.array(np.ones(3, other))
        else:
            x += other
        return x
    with pytest.raises(TypeError):
        body(np)
    with pytest.raises(TypeError):
        body(nd)


def test_in_place_int_true_divide_raises():
    for xp in (np, nd):
        x = xp.array([1, 2, 3])
        with pytest.raises(TypeError):
            x /= 2
        np.testing.assert_array_equal(np.asarray(x), [1, 2, 3])  # untouched


def test_in_place_float32_plus_float64_casts():
    run_xp(lambda xp: _iadd(xp.array(np.float32([1, 2])), xp.array([0.1, 0.2])))


def _iadd(x, y):
    x += y
    return x


@given(data=st.data())
@pytest.mark.parametrize("op", list(UNARY))
def test_unary(op, data):
    fn = UNARY[op]
    dtype = data.draw(dtypes)
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    a = data.draw(values(dtype, shape))
    run_xp(lambda xp, a: fn(xp.array(a)), a)


@given(data=st.data())
def test_matmul_operator(data):
    dtype = data.draw(st.sampled_from(INTS[:1] + INTS[3:4] + FLOATS))
    n, k, m = (data.draw(st.integers(0, 4)) for _ in range(3))
    form = data.draw(st.sampled_from(["mm", "mv", "vm", "vv", "batch"]))
    sa = {"mm": (n, k), "mv": (n, k), "vm": (k,), "vv": (k,), "batch": (2, n, k)}[form]
    sb = {"mm": (k, m), "mv": (k,), "vm": (k, m), "vv": (k,), "batch": (k, m)}[form]
    lo, hi = (-10, 10)
    a = data.draw(values(dtype, sa, lo=lo, hi=hi))
    b = data.draw(values(dtype, sb, lo=lo, hi=hi))
    run_xp(lambda xp, a, b: xp.array(a) @ xp.array(b), a, b, tol="close")
    # reflected: a NumPy array on the left
    run_xp(lambda xp, a, b: a @ xp.array(b), a, b, tol="close")


@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_matmul_in_place(dtype):
    a = np.arange(9, dtype=dtype).reshape(3, 3) - 4
    b = np.arange(9, dtype=dtype).reshape(3, 3)[::-1] * 2

    def body(xp):
        x = xp.array(a)
        x @= xp.array(b)
        x @= x  # reads and writes the same array
        return x
    run_xp(body, tol="close")


def test_matmul_shape_mismatch_both_raise():
    run_xp(lambda xp: xp.array(np.ones((2, 3))) @ xp.array(np.ones((2, 3))))
    run_xp(lambda xp: xp.array(np.ones(3)) @ 2.0)


def test_bitwise_on_floats_raises():
    for op in ("&", "|", "^"):
        run_xp(lambda xp: BINARY[op](xp.array([1.0, 2.0]), xp.array([1.0, 2.0])))
    run_xp(lambda xp: ~xp.array([1.0]))


def test_bool_arithmetic_rules():
    b = np.array([True, False, True])
    run_xp(lambda xp: xp.array(b) + xp.array(b))      # bool: logical or
    run_xp(lambda xp: xp.array(b) * True)
    run_xp(lambda xp: xp.array(b) - xp.array(b))      # TypeError both
    run_xp(lambda xp: -xp.array(b))                   # TypeError both
    run_xp(lambda xp: xp.array(b) + 1)                # int64
    run_xp(lambda xp: xp.array(b) / 2)
    run_xp(lambda xp: ~xp.array(b))


@pytest.mark.parametrize("exponent", [2, 2.0, 3, True, 0, 1])
@pytest.mark.parametrize("shape", [(), (3,)])
def test_bool_power_follows_the_operator_not_the_ufunc(exponent, shape):
    # NumPy's ``array ** 2`` is square(array): int8 for bools, where power gives int64
    b = np.ones(shape, bool)
    run_xp(lambda xp: xp.array(b) ** exponent)
    run_xp(lambda xp: exponent ** xp.array(b))


@pytest.mark.parametrize("exponent", [2, -1, 0.5, 2.0, 3, -1.0, 1])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_power_follows_the_operator_at_the_range_edges(exponent, dtype):
    # NumPy's ``array ** 2`` is square(array), ``** -1`` reciprocal, ``** 0.5`` sqrt: for
    # complex values near the largest finite one these differ from np.power's (inf)
    big = np.sqrt(np.finfo(dtype).max) * 1.0000001
    c = np.array([big + 3e15j, big * (1 + 1j), 1 - 2j, 0j], dtype)
    run_xp(lambda xp: xp.array(c) ** exponent)

    def in_place(xp):
        x = xp.array(c)
        x **= exponent
        return x
    run_xp(in_place)


def test_operator_with_numpy_operands():
    """NumPy arrays and NumPy scalars on either side become NDArray operands."""
    x = nd.array([1.0, 2.0, 3.0])
    for other in (np.array([1.0, 2.0, 3.0]), np.float32(2), np.int64(3), [1, 2, 3]):
        r = x * other
        assert isinstance(r, nd.NDArray)
        np.testing.assert_array_equal(r.asnumpy(), np.array([1.0, 2.0, 3.0]) * other)
    r = np.float32(2) * x  # NumPy scalar on the left defers to us too
    assert isinstance(r, nd.NDArray), type(r)
    np.testing.assert_array_equal(r.asnumpy(), [2.0, 4.0, 6.0])


@pytest.mark.parametrize("scalar", [np.float64(2), np.float32(0.5), np.int64(3), np.int8(-2),
                                    np.uint8(7), np.bool_(True)])
@pytest.mark.parametrize("dtype", ["int8", "uint16", "float32", "bool"])
def test_numpy_scalars_are_strongly_typed(scalar, dtype):
    """NumPy 2: NumPy scalars (unlike Python scalars) take part in promotion by dtype."""
    a = np.array([1, 0, 1], dtype)
    run_xp(lambda xp: xp.array(a) * scalar)
    run_xp(lambda xp: scalar + xp.array(a))


def test_chained_operators_are_ordered():
    """A long chain of in-place and out-of-place ops without waits gives NumPy's answer."""
    def body(xp):
        x = xp.array(np.arange(12, dtype=np.float64).reshape(3, 4))
        y = x * 2
        for i in range(20):
            x += y
            y = y - x / 3
            x *= 0.5
        return x + y
    run_xp(body, tol="close")
