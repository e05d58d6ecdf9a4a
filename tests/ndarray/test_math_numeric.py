"""gcd, lcm, ldexp, frexp, modf, spacing, bitwise_count (ufunc objects whose kernel is NumPy's
ufunc) and i0, unwrap, sort_complex, real_if_close against NumPy: one body run with
xp=numpy and xp=ndengine; NumPy's signatures, values, dtypes and errors."""
import inspect
import pickle

import numpy as np
import pytest
from hypothesis import given, strategies as st

import ndengine as nd

from ndarray_helpers import run_xp
from numpy_doc_examples import run_doc_examples
from stats_helpers import arrays_of

pytestmark = pytest.mark.usefixtures("nd_engine")

UFUNCS = ["gcd", "lcm", "ldexp", "frexp", "modf", "spacing", "bitwise_count"]
FUNCTIONS = ["i0", "unwrap", "sort_complex", "real_if_close"]
INTS = [np.dtype(d) for d in ("bool", "int8", "uint8", "int16", "int64", "uint64")]
FLOATS = [np.dtype(d) for d in ("float16", "float32", "float64")]
ALL = INTS + FLOATS + [np.dtype("complex128")]


@pytest.mark.parametrize("name", UFUNCS)
def test_ufunc_objects_are_numpys(name):
    function, numpy_ufunc = getattr(nd, name), getattr(np, name)
    assert isinstance(function, nd.ufunc) and name in nd.__all__
    assert (function.nin, function.nout) == (numpy_ufunc.nin, numpy_ufunc.nout)
    assert function.types == [t for t in numpy_ufunc.types if "O" not in t and "g" not in t]
    assert pickle.loads(pickle.dumps(function)) is function


@pytest.mark.parametrize("name", FUNCTIONS)
def test_signature_is_numpys(name):
    assert inspect.signature(getattr(nd, name)) == inspect.signature(getattr(np, name))
    assert name in nd.__all__


@given(a=arrays_of(ALL, lo=-40, hi=40), b=arrays_of(ALL, lo=-40, hi=40))
def test_binary_ufuncs(a, b):
    for name in ("gcd", "lcm", "ldexp"):
        run_xp(lambda xp: getattr(xp, name)(xp.array(a), xp.array(b)))
        run_xp(lambda xp: getattr(xp, name)(xp.array(a), 3))  # a weak Python int


@given(a=arrays_of(ALL, lo=-6e4, hi=6e4))
def test_unary_ufuncs(a):
    for name in ("frexp", "modf", "spacing", "bitwise_count"):
        run_xp(lambda xp: getattr(xp, name)(xp.array(a)))


def test_special_values():
    values = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, 1e308]
    for name in ("frexp", "modf", "spacing"):
        run_xp(lambda xp: getattr(xp, name)(xp.array(values)))
    run_xp(lambda xp: xp.bitwise_count(xp.array([-1, 0, 2 ** 62], dtype=xp.int64)))
    run_xp(lambda xp: xp.gcd(xp.array([0, -12, 2 ** 40]), xp.array([0, 18, 2 ** 20])))


@pytest.mark.parametrize("name", ["frexp", "modf"])
def test_two_outputs_into_out(name):
    def body(xp):
        x = xp.array([[0.25, -3.5, 8.0]], dtype=xp.float32)
        first = xp.zeros((2, 3), dtype=xp.float64)  # broadcast into, cast same_kind
        result = getattr(xp, name)(x, out=(first, None))
        return first, result[1]
    run_xp(body)


def test_out_errors():
    run_xp(lambda xp: xp.frexp(xp.ones(2), out=(xp.zeros(2), xp.zeros(2, dtype=xp.int8))))
    run_xp(lambda xp: xp.modf(xp.ones(2), out=xp.zeros(2)))
    run_xp(lambda xp: xp.divmod(xp.ones(2), 2, out=(xp.zeros(2),)))
    run_xp(lambda xp: xp.frexp(xp.ones(2), out=(xp.zeros(3), None)))
    run_xp(lambda xp: xp.modf(xp.ones(2), dtype=xp.float32))
    run_xp(lambda xp: xp.gcd(xp.ones(2), xp.ones(2)))
    run_xp(lambda xp: xp.spacing(xp.arange(3)))
    run_xp(lambda xp: xp.ldexp(xp.ones(2), 1.5))


def test_numpys_ufuncs_dispatch_and_methods():
    x = nd.array([12, 18, 30])
    assert np.gcd(x, 4).dtype == np.int64 and isinstance(np.gcd(x, 4), nd.NDArray)
    assert nd.gcd.reduce(x).item() == 6 and np.lcm.reduce(x).item() == 180
    assert nd.add.reduce([1, 2, 3]).item() == 6  # a list alone: the current context
    np.testing.assert_array_equal(nd.gcd.outer(x, x).asnumpy(),
                                  np.gcd.outer(x.asnumpy(), x.asnumpy()))
    mantissa, exponent = np.frexp(nd.array([4.0]))
    assert isinstance(mantissa, nd.NDArray) and exponent.dtype == np.int32
    with pytest.raises(ValueError, match="binary"):  # NumPy's error, before the outputs'
        nd.modf.outer(x, x)


# ---------------------------------------------------------------- functions
@given(a=arrays_of(ALL, lo=-9, hi=9))
def test_i0_and_sort_complex(a):
    run_xp(lambda xp: xp.i0(xp.array(a)), tol="close")
    run_xp(lambda xp: xp.sort_complex(xp.array(a)))


@given(p=arrays_of(FLOATS[1:] + INTS[1:], min_dims=1, lo=-20, hi=20), data=st.data())
def test_unwrap(p, data):
    axis = data.draw(st.integers(-p.ndim - 1, p.ndim))
    discont = data.draw(st.sampled_from([None, 1.0, 4]))
    period = data.draw(st.sampled_from([2 * np.pi, 3, 360.0]))
    run_xp(lambda xp: xp.unwrap(xp.array(p), discont, axis=axis, period=period), tol="close")


def test_real_if_close():
    run_xp(lambda xp: xp.real_if_close(xp.array([2.1 + 4e-14j, 5.2 + 3e-15j])))
    run_xp(lambda xp: xp.real_if_close(xp.array([2.1 + 4e-13j]), tol=1000))
    run_xp(lambda xp: xp.real_if_close(xp.array([2.1 + 1e-3j])))
    run_xp(lambda xp: xp.real_if_close([1, 2]))
    x = nd.array([1.0 + 1j])
    assert nd.real_if_close(x) is x  # NumPy returns its input when nothing changes


@pytest.mark.parametrize("name", UFUNCS + FUNCTIONS)
def test_numpy_documentation_examples(name):
    run_doc_examples(getattr(np, name))
