"""diagflat, fromfunction, the readers (fromiter, frombuffer, fromstring, fromfile),
asanyarray, asarray_chkfinite, asfortranarray, require, isfortran, array_equiv,
shares_memory, may_share_memory, broadcast_shapes and NumPy 2's astype, unstack,
matrix_transpose, permute_dims, vecdot, matvec and vecmat against NumPy: one body run
with xp=numpy and xp=ndengine, under all three engines; NumPy's signatures, values,
dtypes, errors and documentation examples."""
import inspect

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ndengine as nd

from ndarray_helpers import run_xp
from numpy_doc_examples import run_doc_examples
from stats_helpers import arrays_of

pytestmark = pytest.mark.usefixtures("nd_engine")

FUNCTIONS = ["diagflat", "fromfunction", "fromiter", "frombuffer", "fromfile", "asanyarray",
             "asarray_chkfinite", "asfortranarray", "require", "isfortran", "array_equiv",
             "shares_memory", "may_share_memory", "astype", "unstack", "matrix_transpose",
             "permute_dims", "broadcast_shapes"]
PRODUCTS = ["vecdot", "matvec", "vecmat"]
NUMERIC = [np.dtype(d) for d in ("bool", "int8", "uint8", "int64", "float32", "float64")]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_signature_is_numpys(name):
    assert inspect.signature(getattr(nd, name)) == inspect.signature(getattr(np, name))
    assert name in nd.__all__


def test_fromstring_and_products_are_exported():
    assert "sep" in inspect.signature(nd.fromstring).parameters
    assert {"fromstring", *PRODUCTS} <= set(nd.__all__)


# ---------------------------------------------------------------- construction
@given(v=arrays_of(NUMERIC, max_dims=2, lo=-9, hi=9), k=st.integers(-2, 2))
def test_diagflat(v, k):
    run_xp(lambda xp: xp.diagflat(xp.array(v), k))


@pytest.mark.parametrize("dtype", [float, int, np.float32])
def test_fromfunction(dtype):
    run_xp(lambda xp: xp.fromfunction(lambda i, j: i * 10 + j, (3, 4), dtype=dtype))
    run_xp(lambda xp: xp.fromfunction(lambda i, j, scale: (i + j) * scale, (2, 2),
                                      dtype=dtype, scale=3))


def test_readers(tmp_path):
    run_xp(lambda xp: xp.fromiter((x * x for x in range(5)), dtype=np.int16))
    run_xp(lambda xp: xp.fromiter(range(5), float, count=3))
    run_xp(lambda xp: xp.fromiter(range(2), float, count=3))  # too few: NumPy's error
    raw = np.arange(6, dtype=np.int32).tobytes()
    run_xp(lambda xp: xp.frombuffer(raw, dtype=np.int32, count=3, offset=4))
    run_xp(lambda xp: xp.frombuffer(raw, dtype=np.int64, offset=1))  # not a multiple
    run_xp(lambda xp: xp.fromstring("1, 2, 3.5", sep=","))
    path = tmp_path / "values.bin"
    np.arange(5.0).tofile(path)
    run_xp(lambda xp: xp.fromfile(path, dtype=float, offset=8))
    text = tmp_path / "values.txt"
    text.write_text("1 2 3 4")
    run_xp(lambda xp: xp.fromfile(text, dtype=int, sep=" "))


def test_frombuffer_copies_the_buffer():
    buffer = bytearray(np.arange(3, dtype=np.int8).tobytes())
    got = nd.frombuffer(buffer, dtype=np.int8)
    buffer[0] = 9
    np.testing.assert_array_equal(got.asnumpy(), [0, 1, 2])


@pytest.mark.parametrize("value", [[1, 2], 3.5, np.arange(4, dtype=np.uint8)])
@pytest.mark.parametrize("dtype", [None, np.float32])
def test_asanyarray_and_asfortranarray(value, dtype):
    run_xp(lambda xp: xp.asanyarray(value, dtype=dtype))
    run_xp(lambda xp: xp.asfortranarray(value, dtype=dtype))  # NumPy's values (and ndim 1)
    x = nd.array(np.arange(4.0))
    assert nd.asanyarray(x) is x


@pytest.mark.parametrize("value", [[1.0, 2.0], [1.0, np.nan], [np.inf], [1, 2], [True],
                                   np.array([1.0, -np.inf], np.float32)])
def test_asarray_chkfinite(value):
    run_xp(lambda xp: xp.asarray_chkfinite(xp.array(value)))
    run_xp(lambda xp: xp.asarray_chkfinite(value, dtype=np.float64))


@pytest.mark.parametrize("requirements", [None, "C", ["A", "W"], ["ENSUREARRAY", "O"],
                                          ["C", "F"], "X"])
def test_require(requirements):
    run_xp(lambda xp: xp.require(xp.array([[1, 2], [3, 4]]), np.float32, requirements))


def test_require_copies_for_owndata_and_meets_fortran_order():
    x = nd.array([1.0, 2.0])
    assert nd.require(x, requirements="O") is not x
    assert nd.require(x, requirements="C") is x
    assert nd.require(x, requirements="F") is x  # one axis: C and F are one layout
    square = nd.array(np.arange(6.0).reshape(2, 3))
    fortran = nd.require(square, requirements="F")
    assert fortran.flags.f_contiguous and not fortran.flags.c_contiguous
    np.testing.assert_array_equal(fortran.asnumpy(), square.asnumpy())
    with pytest.raises(ValueError, match="both"):
        nd.require(square, requirements="CF")


# ---------------------------------------------------------------- layout and memory
@pytest.mark.parametrize("view", [lambda a: a, lambda a: a.T, lambda a: a[:, ::2],
                                  lambda a: a[0], lambda a: a.T[::2]])
def test_isfortran_reads_the_views_geometry(view):
    a = np.arange(12.0).reshape(3, 4)
    assert nd.isfortran(view(nd.array(a))) == np.isfortran(view(a))
    got = nd.asfortranarray(view(nd.array(a)))
    assert nd.isfortran(got) == np.isfortran(np.asfortranarray(view(a)))
    assert got.flags.f_contiguous
    np.testing.assert_array_equal(got.asnumpy(), np.asfortranarray(view(a)))


@pytest.mark.parametrize("first, second", [
    (lambda a: a, lambda a: a), (lambda a: a[0], lambda a: a[1]),
    (lambda a: a[:, :2], lambda a: a[:, 2:]), (lambda a: a[:, ::2], lambda a: a[:, 1::2]),
    (lambda a: a[::2], lambda a: a.T), (lambda a: a[1:], lambda a: a[:0]),
    (lambda a: a.reshape(-1)[1:5], lambda a: a[1])])
def test_shares_memory_of_views(first, second):
    a = np.arange(24.0).reshape(4, 6)
    x = nd.array(a)
    for function in ("shares_memory", "may_share_memory"):
        expected = getattr(np, function)(first(a), second(a))
        assert getattr(nd, function)(first(x), second(x)) == expected, function


def test_separate_arrays_share_no_memory():
    a = np.arange(4.0)
    assert not nd.shares_memory(nd.array(a), nd.array(a))
    assert not nd.may_share_memory(nd.array(a), a)
    assert nd.shares_memory(a, a[1:]) and not nd.shares_memory(a, a.copy())


@pytest.mark.parametrize("max_work", [-1, 0, 1, 1000])
def test_shares_memory_max_work_is_numpys(max_work):
    a = np.zeros(10**5, np.int8)
    x = nd.array(a)

    def outcome(function, first, second):
        try:
            return function(first, second, max_work=max_work)
        except np.exceptions.TooHardError:
            return "too hard"
    for name in ("shares_memory", "may_share_memory"):
        assert outcome(getattr(nd, name), x[::107], x[::109]) == outcome(
            getattr(np, name), a[::107], a[::109])


@pytest.mark.parametrize("a1, a2", [
    ([1, 2], [1, 2]), ([1, 2], [[1, 2], [1, 2]]), ([1, 2], [1, 3]), ([1, 2], [1, 2, 3]),
    ([np.nan], [np.nan]), ([], [[]]), (1, [1, 1])])
def test_array_equiv(a1, a2):
    assert nd.array_equiv(nd.array(a1), a2) is np.array_equiv(a1, a2)
    assert nd.array_equiv(a1, nd.array(a2)) is np.array_equiv(a1, a2)


def test_broadcast_shapes_is_numpys():
    assert nd.broadcast_shapes((2, 1), (3,)) == (2, 3)
    with pytest.raises(ValueError):
        nd.broadcast_shapes((2,), (3,))


# ---------------------------------------------------------------- NumPy 2 array API names
@given(a=arrays_of(NUMERIC, max_dims=3, lo=-9, hi=9), data=st.data())
def test_astype(a, data):
    dtype = data.draw(st.sampled_from(NUMERIC))
    copy = data.draw(st.booleans())
    run_xp(lambda xp: xp.astype(xp.array(a), dtype, copy=copy))
    run_xp(lambda xp: xp.astype(xp.array(a), dtype, device="cpu"))


def test_astype_takes_only_arrays_and_keeps_them_without_a_copy():
    run_xp(lambda xp: xp.astype([1, 2], np.float32))
    x = nd.array([1.0])
    assert nd.astype(x, np.float64, copy=False) is x


@given(a=arrays_of(NUMERIC, max_dims=3, lo=-9, hi=9), data=st.data())
def test_unstack_matrix_transpose_permute_dims(a, data):
    axis = data.draw(st.integers(-a.ndim - 1, max(a.ndim, 1)))
    run_xp(lambda xp: list(xp.unstack(xp.array(a), axis=axis)))
    run_xp(lambda xp: xp.matrix_transpose(xp.array(a)))
    axes = data.draw(st.one_of(st.none(), st.permutations(range(a.ndim)).map(tuple)))
    run_xp(lambda xp: xp.permute_dims(xp.array(a), axes))


_CORE_SHAPES = {"vecdot": ((3,), (3,)), "matvec": ((2, 3), (3,)), "vecmat": ((3,), (3, 2))}


@settings(max_examples=15)
@given(name=st.sampled_from(PRODUCTS), batch=st.sampled_from([(), (2,), (4, 1)]),
       dtypes=st.tuples(st.sampled_from(NUMERIC + [np.dtype("complex128")]),
                        st.sampled_from(NUMERIC)))
def test_vector_matrix_products(name, batch, dtypes):
    first, second = _CORE_SHAPES[name]
    x1 = (np.arange(np.prod(batch + first)) % 5 - 2).astype(dtypes[0]).reshape(batch + first)
    x2 = (np.arange(np.prod(second)) % 3 + 1).astype(dtypes[1]).reshape(second)
    if dtypes[0].kind == "c":
        x1 = x1 * (1 - 2j)
    run_xp(lambda xp: getattr(xp, name)(xp.array(x1), xp.array(x2)), tol="close")
    run_xp(lambda xp: getattr(xp, name)(xp.array(x2), xp.array(x1)), tol="close")


@pytest.mark.parametrize("call", [
    lambda xp, a, b: xp.vecdot(a, b[:, None], axis=0),
    lambda xp, a, b: xp.vecdot(a, b[:, None], axis=-2, keepdims=True),
    lambda xp, a, b: xp.vecdot(a, a, keepdims=True),
    lambda xp, a, b: xp.matvec(a.T, b, axes=[(-1, -2), (-1,), (-1,)]),
    lambda xp, a, b: xp.vecdot(a, b, dtype=np.float32),
    lambda xp, a, b: xp.vecdot(a, a, out=xp.zeros(3, np.float32)),
    lambda xp, a, b: xp.vecdot(a, b),  # core lengths differ
    lambda xp, a, b: xp.vecdot(a, a, axis=2),
    lambda xp, a, b: xp.matvec(b, b)])
def test_vector_products_axes_out_and_errors(call):
    a, b = np.arange(12.0).reshape(3, 4), np.arange(3.0)
    run_xp(lambda xp: call(xp, xp.array(a), xp.array(b)), tol="close")


# ---------------------------------------------------------------- NumPy's examples
_SKIPS = {"asfortranarray": ("flags", "order='F'", "x is y"),
          "isfortran": ("order='F'", "b", "C.flags", "isfortran(C)"),
          "require": ("flags",), "shares_memory": ("192163377", "max_work=1000"),
          "fromfile": ("np.save", "np.load")}


@pytest.mark.parametrize("name", FUNCTIONS + PRODUCTS)
def test_numpy_doc_examples(name):
    run_doc_examples(getattr(np, name), skip=_SKIPS.get(name, ()))
