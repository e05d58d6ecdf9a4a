"""insert, extract, place, putmask, copyto, select, piecewise, the ``*_indices_from``
functions, mask_indices, apply_along_axis, apply_over_axes, vectorize and the index tricks
(mgrid, ogrid, r_, c_, s_, index_exp, ndindex, ndenumerate, broadcast) against NumPy: one
body run with xp=numpy and xp=ndengine, under all three engines; NumPy's signatures,
values, dtypes, errors and documentation examples."""
import inspect

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ndengine as nd

from ndarray_helpers import run_xp
from numpy_doc_examples import run_doc_examples
from stats_helpers import arrays_of

pytestmark = pytest.mark.usefixtures("nd_engine")

FUNCTIONS = ["insert", "extract", "place", "putmask", "copyto", "select", "piecewise",
             "diag_indices_from", "tril_indices_from", "triu_indices_from", "mask_indices",
             "apply_along_axis", "apply_over_axes"]
TRICKS = ["mgrid", "ogrid", "r_", "c_", "s_", "index_exp", "ndindex", "ndenumerate",
          "broadcast", "vectorize"]
NUMERIC = [np.dtype(d) for d in ("bool", "int8", "uint8", "int64", "float32", "float64")]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_signature_is_numpys(name):
    assert inspect.signature(getattr(nd, name)) == inspect.signature(getattr(np, name))
    assert name in nd.__all__


@pytest.mark.parametrize("name", TRICKS)
def test_index_tricks_are_exported(name):
    assert name in nd.__all__


# ---------------------------------------------------------------- insert, extract
def _insert_index(data, length):
    return data.draw(st.one_of(
        st.integers(-length, length),
        st.lists(st.integers(-length, length), max_size=3),
        st.builds(slice, st.integers(-length, length), st.none(), st.sampled_from([1, 2]))))


@settings(max_examples=15)
@given(a=arrays_of(NUMERIC, min_dims=1, max_dims=3, min_side=1, lo=-9, hi=9), data=st.data())
def test_insert(a, data):
    axis = data.draw(st.one_of(st.none(), st.integers(-a.ndim, a.ndim - 1)))
    length = a.size if axis is None else a.shape[axis]
    obj = _insert_index(data, length)
    values = data.draw(st.sampled_from([7, [1, 2], 2.5, [[3]], True]))
    run_xp(lambda xp: xp.insert(xp.array(a), obj, values, axis=axis))


def test_insert_places_each_value_where_numpy_does():
    a = np.arange(12).reshape(3, 4)
    run_xp(lambda xp: xp.insert(xp.array(a), [3, 1, 1], xp.array([[7, 8, 9]]).T, axis=1))
    run_xp(lambda xp: xp.insert(xp.array(a), 1, xp.array([7, 8, 9]), axis=1))
    run_xp(lambda xp: xp.insert(xp.array(a), [1], [[7], [8], [9]], axis=1))
    run_xp(lambda xp: xp.insert(xp.array(a), np.array([True, False, True, False]), 0,
                                axis=1))
    run_xp(lambda xp: xp.insert(xp.array(5.0), 0, 1))  # a 0-d array is raveled first


@pytest.mark.parametrize("obj, values, axis", [
    (5, 0, 1), ([0, -6], 0, 1), (1.5, 0, None), ([[0]], 0, 0), (0, [1, 2, 3], 0),
    (0, 0, 2)])
def test_insert_errors_are_numpys(obj, values, axis):
    run_xp(lambda xp: xp.insert(xp.array(np.ones((2, 4))), obj, values, axis=axis))


@given(a=arrays_of(NUMERIC, max_dims=3, lo=-3, hi=3))
def test_extract(a):
    run_xp(lambda xp: xp.extract(xp.array(a) > 0, xp.array(a)))
    run_xp(lambda xp: xp.extract(xp.array(a), xp.array(a) * 2))


# ---------------------------------------------------------------- in-place writes
def _written(xp, name, target, *args, **kwargs):
    array = xp.array(target)
    assert getattr(xp, name)(array, *args, **kwargs) is None
    return array


@given(a=arrays_of(NUMERIC, max_dims=3, lo=-9, hi=9), data=st.data())
def test_putmask_and_place(a, data):
    mask = data.draw(arrays_of([np.dtype(bool)], min_dims=a.ndim, max_dims=a.ndim))
    mask = np.resize(mask, a.shape)
    values = data.draw(st.sampled_from([[1], [4, 5, 6], 2.5, np.array([3, -1], np.int16)]))
    run_xp(lambda xp: _written(xp, "putmask", a, xp.array(mask), values))
    run_xp(lambda xp: _written(xp, "place", a, xp.array(mask), values))


def test_putmask_and_place_errors_are_numpys():
    a = np.arange(6.0)
    for name in ("putmask", "place"):
        run_xp(lambda xp: _written(xp, name, a, xp.array([True, False]), 1))  # sizes differ
        run_xp(lambda xp: getattr(xp, name)(list(a), [True] * 6, 1))  # not an array
    mask = np.array([True, False] * 3)
    run_xp(lambda xp: _written(xp, "place", a, mask, []))  # nothing to insert from
    run_xp(lambda xp: _written(xp, "place", a, ~np.ones(6, bool), []))


@given(a=arrays_of(NUMERIC, min_dims=1, max_dims=3, lo=-9, hi=9), data=st.data())
def test_copyto(a, data):
    src = data.draw(arrays_of(NUMERIC, min_dims=0, max_dims=1, lo=-9, hi=9))
    src = np.resize(src, a.shape[-1:]) if src.ndim else src
    where = data.draw(st.sampled_from([True, False, "mask"]))
    if where == "mask":
        where = np.arange(a.size).reshape(a.shape) % 2 == 0
    casting = data.draw(st.sampled_from(["same_kind", "unsafe", "safe", "no"]))
    run_xp(lambda xp: _written(xp, "copyto", a, xp.array(src), casting=casting,
                               where=xp.array(where)))


@pytest.mark.parametrize("dtype, src, where", [
    ("int8", 300, True), ("int8", 1.5, True), ("int64", 2.5, [True, False, True]),
    ("float32", [1, 2], True), ("float64", 1.0, [True, False]), ("uint8", -1, True),
    ("float32", 1e300, True)])
def test_copyto_python_scalars_and_errors_are_numpys(dtype, src, where):
    run_xp(lambda xp: _written(xp, "copyto", np.zeros(3, dtype), src, where=where))
    run_xp(lambda xp: xp.copyto([0, 0, 0], src))


# ---------------------------------------------------------------- select, piecewise
@given(a=arrays_of(NUMERIC, max_dims=3, lo=-9, hi=9), data=st.data())
def test_select(a, data):
    default = data.draw(st.sampled_from([0, 2.5, -1, np.int8(3)]))
    scalar_choice = data.draw(st.sampled_from([1, 7.5, True]))
    run_xp(lambda xp: xp.select([xp.array(a) > 2, xp.array(a) < -2],
                                [xp.array(a), scalar_choice], default))


@pytest.mark.parametrize("conditions, choices", [
    ([[True, False]], [[1, 2], [3, 4]]), ([], []), ([[1, 0]], [[1, 2]]),
    ([[True, False], [False, True]], [[1, 2], [3.5, 4]]), ([[True], [False]], [1, 2]),
    ([[True, False, True]], [[1, 2]])])
def test_select_shapes_and_errors_are_numpys(conditions, choices):
    run_xp(lambda xp: xp.select([xp.array(c) for c in conditions],
                                [xp.array(c) for c in choices]))


@settings(max_examples=15)
@given(a=arrays_of([np.dtype("int64"), np.dtype("float64")], max_dims=2, lo=-5, hi=5),
       data=st.data())
def test_piecewise(a, data):
    functions = data.draw(st.sampled_from([[-1, 1], [lambda x: x * 2, 0.5],
                                           [lambda x: -x, lambda x: x + 1, 9]]))
    otherwise = data.draw(st.booleans())  # one function more than conditions: the rest

    def body(xp):
        x = xp.array(a)
        conditions = [x < 0, x > 2, x == 0][:len(functions) - otherwise]
        return xp.piecewise(x, conditions, functions)
    run_xp(body)


def test_piecewise_errors_and_scalars_are_numpys():
    run_xp(lambda xp: xp.piecewise(xp.array([1, 2]), [[True, False]], [1, 2, 3]))
    run_xp(lambda xp: xp.piecewise(xp.array(3.0), [True], [lambda x: x + 1]))


# ---------------------------------------------------------------- indices
@pytest.mark.parametrize("shape", [(3, 3), (4, 4, 4), (2, 3), (5,), (0, 0)])
def test_indices_from(shape):
    a = np.ones(shape)
    run_xp(lambda xp: list(xp.diag_indices_from(xp.array(a))))
    for k in (-1, 0, 2):
        run_xp(lambda xp: list(xp.tril_indices_from(xp.array(a), k=k)))
        run_xp(lambda xp: list(xp.triu_indices_from(xp.array(a), k)))


@pytest.mark.parametrize("function", ["triu", "tril"])
@pytest.mark.parametrize("n, k", [(3, 0), (4, 1), (4, -2), (0, 0)])
def test_mask_indices(function, n, k):
    run_xp(lambda xp: list(xp.mask_indices(n, getattr(xp, function), k)))


# ---------------------------------------------------------------- callbacks
@pytest.mark.parametrize("axis", [0, 1, -1, 3])
def test_apply_along_axis(axis):
    a = np.arange(24.0).reshape(2, 3, 4)
    run_xp(lambda xp: xp.apply_along_axis(lambda v: v[::-1] * 2, axis, xp.array(a)))
    run_xp(lambda xp: xp.apply_along_axis(lambda v: v.sum(), axis, xp.array(a)))
    run_xp(lambda xp: xp.apply_along_axis(lambda v: xp.outer(v, v), axis, xp.array(a)))


def test_apply_along_axis_keeps_the_first_results_dtype_and_refuses_empty_iterations():
    run_xp(lambda xp: xp.apply_along_axis(lambda v: v[0] if v[0] > 0 else 0.5, 1,
                                          xp.array([[0, 1], [2, 3]])))
    run_xp(lambda xp: xp.apply_along_axis(lambda v: v, 1, xp.array(np.ones((0, 3)))))


@pytest.mark.parametrize("axes", [0, [0, 2], [-1], []])
def test_apply_over_axes(axes):
    a = np.arange(24).reshape(2, 3, 4)
    run_xp(lambda xp: xp.apply_over_axes(xp.sum, xp.array(a), axes))
    run_xp(lambda xp: xp.apply_over_axes(lambda x, axis: x[0], xp.array(a), 0))


def test_vectorize_returns_ndarrays_for_ndarrays():
    def clipped(x, limit):
        return x if x < limit else limit
    a = np.arange(6.0).reshape(2, 3)
    run_xp(lambda xp: xp.vectorize(clipped)(xp.array(a), 3))
    run_xp(lambda xp: list(xp.vectorize(lambda x: (x, -x), otypes=[int, float])(
        xp.array(a))))
    assert isinstance(nd.vectorize(clipped), np.vectorize)
    assert not isinstance(nd.vectorize(clipped)(a, 3), nd.NDArray)  # NumPy in, NumPy out


# ---------------------------------------------------------------- index tricks
@pytest.mark.parametrize("key", [
    np.s_[0:5, 0:3], np.s_[-1:1:5j, 0:4:0.5], np.s_[0:5], np.s_[-1:1:5j], np.s_[3:0:-1],
    np.s_[0:3:2, 1:2, 0:1:2j], np.s_[1:1]])
def test_mgrid_and_ogrid(key):
    run_xp(lambda xp: xp.mgrid[key])
    run_xp(lambda xp: xp.ogrid[key] if isinstance(key, slice) else list(xp.ogrid[key]))


@pytest.mark.parametrize("key", [
    (np.array([1, 2, 3]), 0, 0, np.array([4, 5, 6])), (np.s_[-1:1:6j], [0] * 3, 5, 6),
    ("-1", np.ones((2, 3)), np.zeros((2, 3))), ("0,2", [1, 2, 3], [4, 5, 6]),
    ("0,2,0", [1, 2, 3], [4, 5, 6]), ("1,2,0", [1, 2, 3], [4, 5, 6]),
    (1.5, np.array([1, 2], np.int8)), (np.array([1, 2], np.uint8), 300),
    ("a", [1]), ([1], "0"), ("3", [1, 2])])
def test_r_(key):
    run_xp(lambda xp: xp.r_[tuple(xp.array(k) if isinstance(k, np.ndarray) else k
                                  for k in key)])


@pytest.mark.parametrize("key", [
    (np.array([1, 2, 3]), np.array([4, 5, 6])), (np.array([[1, 2, 3]]), 0, 0, [[4, 5, 6]]),
    (np.s_[0:3], [7.5, 8, 9])])
def test_c_(key):
    run_xp(lambda xp: xp.c_[tuple(xp.array(k) if isinstance(k, np.ndarray) else k
                                  for k in key)])


def test_matrix_directives_are_refused_clearly():
    with pytest.raises(ValueError, match="matrix"):
        nd.r_["r", [1, 2], [3, 4]]
    with pytest.raises(ValueError, match="matrix"):
        nd.r_["1, 2; 3, 4"]


def test_s_index_exp_and_ndindex_index_ndarrays():
    a = np.arange(24).reshape(2, 3, 4)
    run_xp(lambda xp: xp.array(a)[xp.s_[1, ::2]])
    run_xp(lambda xp: xp.array(a)[xp.index_exp[..., 1:3]])
    assert list(nd.ndindex(2, 3)) == list(np.ndindex(2, 3))


def test_ndenumerate_reads_an_ndarray_once():
    a = np.arange(6.0).reshape(2, 3)
    assert list(nd.ndenumerate(nd.array(a))) == list(np.ndenumerate(a))
    x = nd.array(a)
    pairs = nd.ndenumerate(x)
    x += 1  # after it is made: it has read the values already
    assert list(pairs) == list(np.ndenumerate(a))


@pytest.mark.parametrize("shapes", [[(3,), (2, 1)], [(), (4,)], [(2, 3), (3,), (1, 1, 3)],
                                    [(3,), (2,)], [(0, 2), (2,)]])
def test_broadcast(shapes):
    arrays = [np.arange(int(np.prod(s))).reshape(s) for s in shapes]
    try:
        expected = np.broadcast(*arrays)
    except ValueError:
        with pytest.raises(ValueError, match="shape mismatch"):
            nd.broadcast(*(nd.array(a) for a in arrays))
        return
    got = nd.broadcast(*(nd.array(a) for a in arrays))
    for attribute in ("shape", "ndim", "nd", "size", "numiter", "index"):
        assert getattr(got, attribute) == getattr(expected, attribute), attribute
    assert all(isinstance(a, nd.NDArray) for a in got.arrays)
    assert list(got) == list(expected) and got.index == expected.index
    got.reset()
    expected.reset()
    assert next(got) == next(expected) if expected.size else got.index == 0
    assert [list(i) for i in got.iters] == [list(i) for i in expected.iters]


# ---------------------------------------------------------------- NumPy's examples
@pytest.mark.parametrize("name", FUNCTIONS + ["vectorize", "ndenumerate", "broadcast"])
def test_numpy_doc_examples(name):
    run_doc_examples(getattr(np, name))


@pytest.mark.parametrize("name", ["mgrid", "ogrid", "r_", "c_", "s_", "index_exp"])
def test_numpy_doc_examples_of_index_tricks(name):
    run_doc_examples(type(getattr(np, name)), skip=("'r'", "'c'"))


def test_writes_into_a_numpy_array_from_ndarrays_are_numpys():
    """numpy.copyto/putmask/place into NumPy's own array, given NDArrays, dispatch here and
    write the NumPy array as NumPy does (reading the NDArrays' values)."""
    source, mask = nd.arange(4.0), nd.array([True, False, True, False])
    target = np.zeros(4)
    np.copyto(target, source, where=mask)
    np.testing.assert_array_equal(target, [0.0, 0.0, 2.0, 0.0])
    np.putmask(target, mask, nd.full(4, 7.0))
    np.testing.assert_array_equal(target, [7.0, 0.0, 7.0, 0.0])
    np.place(target, mask, [5, 6])
    np.testing.assert_array_equal(target, [5.0, 0.0, 6.0, 0.0])
