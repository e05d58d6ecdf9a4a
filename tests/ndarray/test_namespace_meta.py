"""NumPy's names that hold no array data (ndengine/ndarray/families/meta.py) and ``ndengine.emath``:
dtype spellings and tables, dtype queries on NDArrays, printing, the floating-point error
state acting on ndengine's ops, NumPy's testing & co.; emath against numpy.emath (one body,
xp=numpy and xp=ndengine)."""
import contextlib
import inspect
import io
import warnings

import numpy as np
import pytest

import ndengine as nd
from ndengine.ndarray.families import meta

from ndarray_helpers import raises_anywhere, run_xp

pytestmark = pytest.mark.usefixtures("nd_engine")

DTYPES = [np.dtype(d) for d in ("bool", "int8", "uint16", "int64", "float32", "float64",
                                "complex64")]


# ---------------------------------------------------------------- dtype names and tables
@pytest.mark.parametrize("name", meta.DTYPE_SPELLINGS[:-2])
def test_dtype_spellings_are_numpys_and_make_arrays(name):
    assert getattr(nd, name) is getattr(np, name)
    run_xp(lambda xp: xp.arange(4, dtype=getattr(xp, name)) * 3)


def test_booleans_and_type_tables_are_numpys():
    assert nd.True_ is np.True_ and nd.False_ is np.False_
    for name in meta.TYPE_TABLES:
        assert getattr(nd, name) is getattr(np, name)
    run_xp(lambda xp: xp.zeros(2, dtype=xp.sctypeDict["int16"]))


@pytest.mark.parametrize("dtype", [np.longdouble, np.clongdouble, np.str_, np.bytes_,
                                   np.void])
def test_dtypes_ndengine_cannot_hold_are_a_clear_error(dtype):
    name = np.dtype(dtype).name if dtype in (np.longdouble, np.clongdouble) else ""
    with pytest.raises(TypeError, match=f"does not support dtype {name}.*supported: bool"):
        nd.zeros(2, dtype=dtype)
    with pytest.raises(TypeError, match="does not support dtype"):
        nd.array(np.zeros(2, dtype=dtype))


# ---------------------------------------------------------------- dtype queries
@pytest.mark.parametrize("dtype", DTYPES)
def test_queries_take_ndarrays_as_numpy_takes_arrays(dtype):
    a, x = np.zeros((2, 3), dtype), nd.zeros((2, 3), dtype)
    for other in (1, 1.0, 1j, np.int8, np.float32(2), nd.zeros(1, np.int16)):
        numpy_other = other.asnumpy() if isinstance(other, nd.NDArray) else other
        assert nd.result_type(x, other) == np.result_type(a, numpy_other)
    for to in ("int16", "float32", "complex128"):
        for casting in ("safe", "same_kind", "unsafe"):
            assert nd.can_cast(x, to, casting) == np.can_cast(a, to, casting)
    assert (nd.ndim(x), nd.shape(x), nd.size(x), nd.size(x, 1)) == (2, (2, 3), 6, 3)
    assert nd.min_scalar_type(x) == np.min_scalar_type(a)
    assert nd.mintypecode([x, "f"]) == np.mintypecode([a, "f"])
    if dtype.kind in "fc" or dtype.kind in "iu":
        assert nd.common_type(x, nd.zeros(1, np.float32)) == \
            np.common_type(a, np.zeros(1, np.float32))


def test_min_scalar_type_of_a_0d_ndarray_reads_its_value():
    for value in (3, 300, -3, 1e50, 2.5):
        assert nd.min_scalar_type(nd.array(value)) == np.min_scalar_type(np.array(value))


def test_common_type_errors_and_einsum_path_as_numpys():
    run_xp(lambda xp: xp.common_type(xp.zeros(2, bool)))
    a, b, c = np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5))
    for optimize in ("greedy", "optimal", False):
        expected = np.einsum_path("ij,jk,kl->il", a, b, c, optimize=optimize)
        got = nd.einsum_path("ij,jk,kl->il", nd.array(a), nd.array(b), nd.array(c),
                             optimize=optimize)
        assert got == expected
    run_xp(lambda xp: xp.einsum_path("ij,jk->ik", xp.ones((2, 3)), xp.ones((2, 4))))


@pytest.mark.parametrize("name", ["common_type", "mintypecode", "min_scalar_type",
                                  "einsum_path"])
def test_own_queries_have_numpys_signatures(name):
    assert inspect.signature(getattr(nd, name)) == inspect.signature(getattr(np, name))
    assert name in nd.__all__


def test_python_level_queries_are_numpys():
    for name in ("promote_types", "isdtype", "isscalar", "iterable", "typename", "info"):
        assert getattr(nd, name) is getattr(np, name)
    assert not nd.isscalar(nd.array(1.0)) and nd.isscalar(1.0)
    assert nd.iterable(nd.zeros(2)) and not nd.iterable(nd.array(1.0))
    assert nd.isdtype(nd.zeros(2, np.int8).dtype, "integral")
    assert isinstance(nd.zeros((2, 2)).flat, nd.flatiter)


# ---------------------------------------------------------------- printing
def test_ndarray_printing_honours_numpys_print_options():
    a = np.array([1.123456789, 2.5, 1e-9])
    x = nd.array(a)
    with nd.printoptions(precision=2, suppress=True):
        assert str(x) == str(a) and nd.array2string(x) == np.array2string(a)
        assert repr(x).startswith("NDArray([1.12, 2.5 , 0.  ]")
    previous = nd.get_printoptions()
    try:
        nd.set_printoptions(threshold=3, edgeitems=1)
        assert str(nd.arange(10)) == str(np.arange(10)) == "[0 ... 9]"
    finally:
        nd.set_printoptions(**previous)
    assert nd.get_printoptions() == previous
    assert nd.array_repr(x) == np.array_repr(a) and nd.array_str(x) == np.array_str(a)
    assert nd.format_float_positional(nd.float32(0.1)) == "0.1"
    assert (nd.base_repr(10, 3), nd.binary_repr(-3, width=4)) == ("101", "1101")


# ---------------------------------------------------------------- floating-point error state
def test_errstate_raise_fails_the_op():
    with nd.errstate(divide="raise"):
        raises_anywhere(FloatingPointError, lambda: (nd.array([1.0]) / 0).asnumpy(),
                        match="divide by zero")
    with nd.errstate(invalid="raise"), pytest.raises(FloatingPointError):
        np.sqrt(np.array([-1.0]))  # the same object as NumPy's: NumPy's ops too


def test_errstate_ignore_and_warn_as_numpy():
    with nd.errstate(divide="ignore"):
        with _no_warning():
            assert nd.log(nd.array([0.0])).asnumpy()[0] == -np.inf
    with nd.errstate(divide="warn"), pytest.warns(RuntimeWarning, match="divide by zero"):
        nd.log(nd.array([0.0])).asnumpy()


def test_seterr_and_seterrcall_act_on_ndengine_ops():
    calls = []
    old, old_call = nd.seterr(invalid="call"), nd.seterrcall(lambda *a: calls.append(a))
    try:
        assert nd.geterr()["invalid"] == "call" and nd.geterrcall() is not None
        nd.sqrt(nd.array([-1.0])).asnumpy()
        np.sqrt(np.array([-1.0]))
        assert len(calls) == 2 and calls[0] == calls[1]  # as NumPy calls it, for both
    finally:
        nd.seterr(**old)
        nd.seterrcall(old_call)
    assert nd.getbufsize() == np.getbufsize() and nd.setbufsize is np.setbufsize


@contextlib.contextmanager
def _no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# ---------------------------------------------------------------- modules
def test_testing_asserts_take_ndarrays():
    x = nd.array([1.0, 2.0])
    nd.testing.assert_allclose(x, [1.0, 2.0 + 1e-9])
    nd.testing.assert_array_equal(x, np.array([1.0, 2.0]))
    with pytest.raises(AssertionError, match="Mismatched elements: 1 / 2"):
        nd.testing.assert_allclose(x, [1.0, 2.5])


def test_numpys_modules_and_info():
    for name in meta.MODULES:
        assert getattr(nd, name) is getattr(np, name)
    with pytest.raises(nd.exceptions.AxisError):
        nd.sum(nd.zeros(2), axis=3)
    out = io.StringIO()
    nd.info(nd.emath.sqrt, output=out)
    assert "sqrt(x)" in out.getvalue() and "As ``numpy.emath.sqrt``" in out.getvalue()


# ---------------------------------------------------------------- emath
EMATH = ["sqrt", "log", "log2", "log10", "arccos", "arcsin", "arctanh"]
EMATH_VALUES = [[-1, 4, 0.25], [0, 1, 2], [0.5, -0.5, 0]]


@pytest.mark.parametrize("name", EMATH + ["logn", "power"])
def test_emath_signatures_are_numpys(name):
    assert inspect.signature(getattr(nd.emath, name)) == \
        inspect.signature(getattr(np.emath, name))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", EMATH)
def test_emath_unary_as_numpy(name, dtype):
    for values in EMATH_VALUES:
        run_xp(lambda xp: getattr(xp.emath, name)(xp.asarray(np.array(values).astype(dtype))))


@pytest.mark.parametrize("dtype", DTYPES)
def test_emath_power_and_logn_as_numpy(dtype):
    for values in EMATH_VALUES:
        base = np.array(values).astype(dtype)
        for p in (2, -2, [1, -1, 2], 0.5):
            run_xp(lambda xp: xp.emath.power(xp.asarray(base), xp.asarray(p)))
        run_xp(lambda xp: xp.emath.logn(2, xp.asarray(base)))
    run_xp(lambda xp: xp.emath.sqrt(-4))  # a Python scalar: a 0-d array, as NumPy
