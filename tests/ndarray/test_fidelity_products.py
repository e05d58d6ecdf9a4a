"""Products of arrays whose dtype has two spellings (int64: 'l' and 'q' on LP64 platforms;
uint64: 'L' and 'Q'; int32: 'i' and 'l' where long is 32 bits): equal dtypes, so one plan
serves both spellings, yet numpy.dot insists on an out of exactly its result's spelling. Each
spelling after the other, in either order, gives NumPy's result. numpy.dot's scalar
operands: Python scalars are strong (dot makes arrays of them), and a 0-d operand outside
its BLAS path is multiply(a, b, out)."""
import itertools

import numpy as np
import pytest

import ndengine as nd
from ndarray_helpers import run_xp

pytestmark = pytest.mark.usefixtures("nd_engine")

# pairs of type codes spelling one dtype on this platform, in both orders
_SPELLINGS = [(first, second) for first, second in itertools.permutations("bhilqBHILQ", 2)
              if np.dtype(first) == np.dtype(second)]

# (operands made straight from NumPy arrays: an op's result may carry the spelling of the
# call that made its plan)
_PRODUCTS = {
    "dot_1d": lambda xp, m: xp.dot(_vector(xp, m.dtype.char), _vector(xp, m.dtype.char)),
    "dot_2d": lambda xp, m: xp.dot(m, m),
    "dot_method": lambda xp, m: m.dot(m),
    "matmul": lambda xp, m: m @ m,
    "tensordot": lambda xp, m: xp.tensordot(m, m),
    "vdot": lambda xp, m: xp.asarray(xp.vdot(m, m)),
    "inner": lambda xp, m: xp.inner(m, m),
    "einsum": lambda xp, m: xp.einsum("ij,jk", m, m),
    "multi_dot": lambda xp, m: xp.linalg.multi_dot([m, m, m]),
}

# functions whose out= NumPy takes in either spelling
_INTO_OUT = {
    "add": lambda xp, m, out: xp.add(m, m, out=out),
    "multiply": lambda xp, m, out: xp.multiply(m, 3, out=out),
    "matmul": lambda xp, m, out: xp.matmul(m, m, out=out),
    "einsum": lambda xp, m, out: xp.einsum("ij,jk", m, m, out=out),
}


def _matrix(xp, code):
    return xp.asarray(np.arange(4, dtype=code).reshape(2, 2))


def _vector(xp, code):
    return xp.asarray(np.arange(4, dtype=code))


def test_this_platform_has_two_spellings_of_a_dtype():
    assert ("q", "l") in _SPELLINGS or ("i", "l") in _SPELLINGS


@pytest.mark.parametrize("product", sorted(_PRODUCTS))
@pytest.mark.parametrize("first, second", _SPELLINGS, ids="".join)
def test_each_spelling_after_the_other(first, second, product):
    def body(xp):
        return [_PRODUCTS[product](xp, _matrix(xp, code)) for code in (first, second)]
    run_xp(body)


@pytest.mark.parametrize("function", sorted(_INTO_OUT))
@pytest.mark.parametrize("first, second", _SPELLINGS, ids="".join)
def test_out_of_the_other_spelling(first, second, function):
    def body(xp):
        out = xp.zeros((2, 2), dtype=second)
        result = _INTO_OUT[function](xp, _matrix(xp, first), out)
        assert result is out
        return out
    run_xp(body)


@pytest.mark.parametrize("first, second", _SPELLINGS, ids="".join)
def test_dot_takes_an_out_of_the_other_spelling(first, second):
    # A documented difference: NumPy's dot refuses it, ndengine's takes it (an NDArray's
    # spelling may be that of an earlier call with an equal dtype, whose plan served it).
    expected = np.dot(_matrix(np, first), _matrix(np, first))
    out = nd.zeros((2, 2), dtype=second)
    assert nd.dot(_matrix(nd, first), _matrix(nd, first), out=out) is out
    np.testing.assert_array_equal(out.asnumpy(), expected)
    out = nd.zeros((2, 2), dtype=second)
    nd.linalg.multi_dot([_matrix(nd, first)] * 2, out=out)
    np.testing.assert_array_equal(out.asnumpy(), expected)


_SCALAR_OPERANDS = [(np.int8, 2), (np.float32, 2.5), (np.float32, 2), (np.uint8, True),
                    (np.int16, np.int16(3)), (np.float32, 1j)]


@pytest.mark.parametrize("dtype, scalar", _SCALAR_OPERANDS, ids=repr)
def test_dot_with_a_python_scalar_makes_it_an_array(dtype, scalar):
    run_xp(lambda xp: [xp.dot(xp.arange(4, dtype=dtype), scalar),
                       xp.dot(scalar, xp.ones((2, 2), dtype=dtype))])


# (a's shape, a's dtype, out's shape, out's dtype): NumPy's dot of a 0-d operand is
# multiply(a, b, out) outside its BLAS path (float32/64, complex64/128 operands of at most
# two dimensions), whose out is exact
_ZERO_D_OUTS = [((4,), "int64", (4,), "float64"), ((4,), "int64", (3, 4), "int64"),
                ((4,), "int64", (4,), "int8"), ((4,), "int64", (4,), "bool"),
                ((1, 1, 4), "float64", (1, 1, 4), "float32"),
                ((4,), "float64", (4,), "float32"), ((4,), "float64", (4,), "float64")]


@pytest.mark.parametrize("shape, dtype, out_shape, out_dtype", _ZERO_D_OUTS, ids=repr)
def test_dot_of_a_zero_d_operand_into_out(shape, dtype, out_shape, out_dtype):
    def body(xp):
        out = xp.zeros(out_shape, dtype=out_dtype)
        assert xp.dot(xp.ones(shape, dtype=dtype), xp.asarray(2, dtype=dtype), out=out) is out
        return out
    run_xp(body)
