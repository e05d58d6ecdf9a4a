"""``import ndengine as np``: NumPy's dtype names, constants, dtype queries, conversions
(asarray & co.), creation with NumPy's parameter order, ``ndarray``, and the error for a NumPy
name ndengine lacks."""
import pickle
import warnings

import numpy as np
import pytest

import ndengine as nd

from ndarray_helpers import run_xp

pytestmark = pytest.mark.usefixtures("nd_engine")

DTYPE_NAMES = ["bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
               "uint64", "float16", "float32", "float64", "complex64", "complex128", "bool",
               "intp", "int_", "half", "single", "double", "csingle", "cdouble"]


# ---------------------------------------------------------------- names
@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_dtype_names_are_numpys(name):
    assert getattr(nd, name) is getattr(np, name)
    run_xp(lambda xp: xp.zeros(3, getattr(xp, name)))
    run_xp(lambda xp: xp.array([1, 0, 2], dtype=getattr(xp, name)))
    assert nd.ones(2, getattr(nd, name)).dtype == getattr(np, name)


@pytest.mark.parametrize("name", ["longdouble", "clongdouble", "float128", "str_", "datetime64"])
def test_dtypes_ndengine_lacks_say_so(name):
    assert not hasattr(nd, name)
    with pytest.raises(AttributeError, match=f"does not have numpy.{name}: .*no such dtype"):
        getattr(nd, name)


def test_constants_and_dtype_queries():
    for name in ("pi", "e", "inf", "euler_gamma"):
        assert getattr(nd, name) == getattr(np, name)
    assert np.isnan(nd.nan) and nd.newaxis is None
    assert nd.finfo(nd.float32).eps == np.finfo(np.float32).eps
    assert nd.iinfo(nd.int8).max == 127 and nd.iinfo("uint16").max == 65535
    assert nd.dtype("float32") == np.float32 and nd.dtype is np.dtype
    x = nd.arange(3.0)
    assert nd.issubdtype(x.dtype, nd.floating) and not nd.issubdtype(x.dtype, nd.integer)
    run_xp(lambda xp: xp.arange(6.0).reshape(2, 3)[:, xp.newaxis, :] * xp.pi)
    run_xp(lambda xp: xp.array([1.0, -2.0]) * xp.inf)


def test_ndarray_answers_isinstance_and_keeps_the_package():
    x = nd.zeros(2)
    assert isinstance(x, nd.ndarray) and isinstance(x, (list, nd.ndarray))
    assert not isinstance(np.zeros(2), nd.ndarray) and not isinstance([1], nd.ndarray)
    assert issubclass(nd.NDArray, nd.ndarray) and not issubclass(np.ndarray, nd.ndarray)
    assert "exp" in nd.ndarray.FUNCTIONS  # the package is still there, under its name
    from ndengine.ndarray import creation  # and its submodules import
    assert creation.zeros is nd.zeros


def test_missing_numpy_name_says_ndengine_lacks_it():
    assert not hasattr(nd, "median_of_the_moon")
    with pytest.raises(AttributeError, match="module 'ndengine' has no attribute"):
        nd.median_of_the_moon  # noqa: B018
    with pytest.raises(AttributeError, match=r"does not have numpy\.frompyfunc; .*"
                                             r"numpy\.frompyfunc\(x\.asnumpy\(\)\)"):
        nd.frompyfunc  # noqa: B018
    assert not hasattr(nd, "frompyfunc")
    with pytest.raises(AttributeError, match=r"does not have numpy\.ma; "):
        nd.ma  # noqa: B018


def test_every_numpy_name_either_exists_or_is_an_attribute_error():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        names = [n for n in dir(np) if not n.startswith("_")]
    for name in names:
        try:
            getattr(nd, name)
        except AttributeError as exc:
            assert "ndengine" in str(exc), name


def test_star_import_pickle_and_dunders():
    namespace = {}
    exec("from ndengine import *", namespace)  # noqa: S102
    assert namespace["float32"] is np.float32 and namespace["asarray"] is nd.asarray
    assert isinstance(nd.ones(1), namespace["ndarray"])
    assert all(hasattr(nd, name) for name in nd.__all__)
    assert pickle.loads(pickle.dumps(nd.exp)) is nd.exp
    assert pickle.loads(pickle.dumps(nd.asarray)) is nd.asarray
    x = pickle.loads(pickle.dumps(nd.arange(3)))
    np.testing.assert_array_equal(x.asnumpy(), [0, 1, 2])
    for dunder in ("__wrapped__", "__path__x", "__array_function__"):
        assert not hasattr(nd, dunder)


# ---------------------------------------------------------------- conversions
@pytest.mark.parametrize("dtype", [None, "float64", "float32", "int8"])
def test_asarray(dtype):
    x = nd.arange(4.0)
    y = nd.asarray(x, dtype)
    assert (y is x) == (dtype in (None, "float64"))
    run_xp(lambda xp: xp.asarray(xp.arange(4.0), dtype))
    run_xp(lambda xp: xp.asarray([[1, 2], [3, 4]], dtype))
    run_xp(lambda xp: xp.asarray(np.arange(3), dtype))
    run_xp(lambda xp: xp.asarray(7, dtype))


def test_asarray_copy_argument():
    x = nd.arange(3)
    assert nd.asarray(x, copy=False) is x and nd.array(x, copy=None) is x
    assert nd.asarray(x, copy=True) is not x
    run_xp(lambda xp: xp.asarray(xp.arange(3), "float32", copy=False))  # ValueError both
    run_xp(lambda xp: xp.array(xp.arange(3), copy=False) + 1)
    with pytest.raises(ValueError):  # ndengine's memory is its own: never a NumPy buffer
        nd.asarray(np.arange(3), copy=False)


def test_ascontiguousarray_and_copy():
    x = nd.arange(6).reshape(2, 3)
    assert nd.ascontiguousarray(x) is x
    run_xp(lambda xp: xp.ascontiguousarray(xp.arange(6).reshape(2, 3).T))
    run_xp(lambda xp: xp.ascontiguousarray(xp.arange(6.0)[::2], "float32"))
    t = nd.ascontiguousarray(x.T)
    assert t.strides == (16, 8)
    y = nd.copy(x)
    y[0, 0] = 100
    assert x[0, 0].item() == 0
    run_xp(lambda xp: xp.copy(xp.arange(4)[::-1]))
    run_xp(lambda xp: xp.copy([[1.5, 2]]))


def test_array_numpy_order_and_ndmin():
    run_xp(lambda xp: xp.array([1, 2], "float32", ndmin=3))
    run_xp(lambda xp: xp.array(xp.array(5), ndmin=2))
    run_xp(lambda xp: xp.array([[1, 2]], order="C"))
    run_xp(lambda xp: xp.array([1], order="X"))
    run_xp(lambda xp: xp.array([1], order=1))
    run_xp(lambda xp: xp.zeros(3, order="F"))  # one dimension: C and F are one order
    assert nd.zeros((2, 3), order="F").flags.f_contiguous  # tests/ndarray/test_fortran_layout.py
    assert nd.array([1, 2], ctx=nd.cpu(1)).context == nd.cpu(1)


# ---------------------------------------------------------------- creation
@pytest.mark.parametrize("proto", [[1, 2, 3], [[1.5], [2.5]], np.arange(6).reshape(2, 3), 4.5,
                                   "ndarray"])
@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "empty_like", "full_like"])
def test_like_of_anything(name, proto):
    def body(xp, dtype=None, shape=None):
        source = xp.arange(4, dtype=xp.int16) if isinstance(proto, str) else proto
        args = (source, 7) if name == "full_like" else (source,)
        result = getattr(xp, name)(*args, dtype=dtype, shape=shape)
        return result if name != "empty_like" else (result.shape, result.dtype.name)
    if name == "empty_like":
        for kw in ({}, {"dtype": "float32"}, {"shape": (2, 2)}):
            assert body(nd, **kw) == body(np, **kw)
        return
    run_xp(body)
    run_xp(body, "float32")
    run_xp(body, shape=(2, 2))
    run_xp(body, shape=-1)


def test_like_keeps_the_prototypes_context():
    x = nd.zeros(2, ctx=nd.cpu(2))
    assert nd.empty_like(x).context == nd.cpu(2)
    assert nd.zeros_like([1, 2], ctx=nd.cpu(1)).context == nd.cpu(1)


def test_identity_and_eye():
    run_xp(lambda xp: xp.identity(3))
    run_xp(lambda xp: xp.identity(2, xp.int8))
    run_xp(lambda xp: xp.identity(-1))
    run_xp(lambda xp: xp.eye(2, 3, 1, "int32"))


@pytest.mark.parametrize("args", [(0, 1, 5), (2.0, 3.0, 4, False), ([0, 1], [2, 5], 3),
                                  (0, 1, 70000), ([0, 10], 1.0, 70001)])
@pytest.mark.parametrize("axis", [0, -1])
def test_linspace_retstep_and_axis(args, axis):
    got, step = nd.linspace(*args, retstep=True, axis=axis)
    want, want_step = np.linspace(*args, retstep=True, axis=axis)
    np.testing.assert_array_equal(got.asnumpy(), want, strict=True)
    np.testing.assert_array_equal(step, want_step, strict=True)
    run_xp(lambda xp: xp.linspace(*args, axis=axis))


def test_the_ndarray_constructor_makes_an_uninitialised_array_as_numpys():
    for shape, kwargs in (((2, 3), {}), ((4,), {"dtype": np.int32}), ((), {"dtype": "f4"})):
        got, want = nd.ndarray(shape, **kwargs), np.ndarray(shape, **kwargs)
        assert isinstance(got, nd.NDArray) and isinstance(got, nd.ndarray)
        assert got.shape == want.shape and got.dtype == want.dtype
    with pytest.raises(TypeError, match="owns its memory"):
        nd.ndarray((2,), buffer=b"\0" * 16)
    with pytest.raises(NotImplementedError, match="C-ordered"):
        nd.ndarray((2, 2), order="F")
