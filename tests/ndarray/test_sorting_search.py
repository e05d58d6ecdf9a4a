"""sort, argsort, partition, argpartition, lexsort, searchsorted, unique, nonzero, argwhere,
flatnonzero and where(condition) against NumPy: one body run with xp=numpy and xp=ndengine;
x.sort() and x.partition() in place."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import ndengine as nd

from ndarray_helpers import DTYPES, run_xp, values
from stats_helpers import arrays_of

pytestmark = pytest.mark.usefixtures("nd_engine")

KINDS = [None, "quicksort", "mergesort", "heapsort", "stable", "bogus"]


@given(data=st.data())
@pytest.mark.parametrize("name", ["sort", "argsort"])
def test_sort_and_argsort(name, data):
    a = data.draw(arrays_of())
    axis = data.draw(st.one_of(st.none(), st.integers(-a.ndim - 1, a.ndim)))
    kind = data.draw(st.sampled_from(KINDS))
    stable = data.draw(st.sampled_from([None, None, True, False]))
    run_xp(lambda xp: getattr(xp, name)(xp.array(a), axis=axis, kind=kind, stable=stable))


@given(data=st.data())
def test_sort_method_sorts_in_place(data):
    a = data.draw(arrays_of(min_dims=1))
    axis = data.draw(st.integers(-a.ndim - 1, a.ndim))
    kind = data.draw(st.sampled_from(KINDS))

    def body(xp):
        x = xp.array(a)
        before = x + 0 if a.dtype != bool else x.copy()  # pushed before: the old values
        assert x.sort(axis=axis, kind=kind) is None
        return [before, x]
    run_xp(body)


def test_sort_method_of_a_view_and_errors():
    def body(xp):
        x = xp.array(np.array([[5, 1, 4], [9, 0, 2], [3, 3, 1]]))
        x[1:].sort(axis=0)  # a view: the base array sees the sorted rows
        x[:, 0].sort()
        return x
    run_xp(body)
    run_xp(lambda xp: xp.ones(3).sort(axis=None))  # NumPy's TypeError
    run_xp(lambda xp: xp.array(np.float64(3)).sort())  # a 0-d array has no axis -1


@given(data=st.data())
@pytest.mark.parametrize("name", ["partition", "argpartition"])
def test_partition(name, data):
    a = data.draw(arrays_of(min_dims=1))
    axis = data.draw(st.one_of(st.none(), st.integers(-a.ndim - 1, a.ndim)))
    length = a.size if axis is None else a.shape[axis % a.ndim] if -a.ndim <= axis < a.ndim \
        else 1
    kth = data.draw(st.one_of(st.integers(-length - 1, length),
                              st.lists(st.integers(-length, max(length - 1, 0)), max_size=3),
                              st.just(1.5), st.just(True)))
    run_xp(lambda xp: getattr(xp, name)(xp.array(a), kth, axis=axis))


def test_partition_method_and_kth_as_ndarray():
    a = np.array([7, 1, 7, 7, 1, 5, 7, 2, 3, 2, 6, 2, 3, 0])

    def body(xp):
        x = xp.array(a)
        assert x.partition(4) is None
        y = xp.array(a.reshape(2, 7))
        y.partition(xp.array([1, 5]), axis=1)
        return [x, y, xp.array(a).argpartition(xp.array(3))]
    run_xp(body)


@given(data=st.data())
def test_lexsort(data):
    shape = data.draw(st.sampled_from([(5,), (3, 4), (0,), ()]))
    count = data.draw(st.integers(1, 3))
    keys = [data.draw(values(data.draw(st.sampled_from(DTYPES)), shape, lo=0, hi=3))
            for _ in range(count)]
    axis = data.draw(st.sampled_from([-1, 0, 1, None]))
    as_array = data.draw(st.booleans()) and len({k.dtype for k in keys}) == 1
    run_xp(lambda xp: xp.lexsort(xp.array(np.stack(keys)) if as_array
                                 else [xp.array(k) for k in keys], axis=axis))


@given(data=st.data())
def test_searchsorted(data):
    a = np.sort(data.draw(arrays_of(min_dims=1, max_dims=1)))
    v = data.draw(st.one_of(arrays_of([a.dtype], max_dims=2),
                            st.integers(-5, 5), st.floats(-5, 5)))
    side = data.draw(st.sampled_from(["left", "right", "middle"]))
    use_sorter = data.draw(st.booleans())

    def body(xp):
        shuffled = a[::-1].copy()
        sorter = xp.array(np.argsort(shuffled, kind="stable")) if use_sorter else None
        vv = xp.array(v) if isinstance(v, np.ndarray) else v
        return xp.searchsorted(xp.array(shuffled if use_sorter else a), vv, side=side,
                               sorter=sorter)
    run_xp(body)
    run_xp(lambda xp: xp.array(a).searchsorted(xp.array(a[:2]), "right"))


def test_searchsorted_errors():
    run_xp(lambda xp: xp.searchsorted(xp.ones((2, 2)), 1.0))
    run_xp(lambda xp: xp.searchsorted(xp.arange(3.0), 1.0, sorter=xp.array([0, 1])))


# ---------------------------------------------------------------- value-sized results
@given(data=st.data())
@pytest.mark.parametrize("name", ["nonzero", "argwhere", "flatnonzero", "where"])
def test_nonzero_family(name, data):
    a = data.draw(arrays_of())
    run_xp(lambda xp: getattr(xp, name)(xp.array(a)))


def test_nonzero_method_and_where_arguments():
    a = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    run_xp(lambda xp: [*(xp.array(a) > 3).nonzero(), *xp.where(xp.array(a) > 3),
                       xp.where(xp.array(a) > 3, xp.array(a), -1)])
    run_xp(lambda xp: xp.where(xp.array(a) > 3, xp.array(a)))  # one of x and y: ValueError


@given(data=st.data())
def test_unique(data):
    a = data.draw(st.one_of(arrays_of(lo=-3, hi=3), arrays_of(max_dims=2)))
    flags = {k: data.draw(st.booleans())
             for k in ("return_index", "return_inverse", "return_counts")}
    axis = data.draw(st.one_of(st.none(), st.integers(-a.ndim - 1, a.ndim)))
    equal_nan = data.draw(st.booleans())
    run_xp(lambda xp: xp.unique(xp.array(a), axis=axis, equal_nan=equal_nan, **flags))


def test_bincount_and_nonzero_see_pending_writes():
    """The value-sized functions wait for the input: an earlier write is in the result."""
    x = nd.zeros(6, dtype=np.int64)
    x[2] = 4  # pushed: nonzero below waits for it
    x[5] = 1
    assert [v.tolist() for v in nd.nonzero(x)] == [[2, 5]]
    assert nd.bincount(x).tolist() == [4, 1, 0, 0, 1]
    assert nd.unique(x).tolist() == [0, 1, 4]


# ---------------------------------------------------------------- NumPy's examples
EXAMPLES = [
    lambda xp: xp.sort(xp.array([[1, 4], [3, 1]])),
    lambda xp: xp.sort(xp.array([[1, 4], [3, 1]]), axis=None),
    lambda xp: xp.sort(xp.array([[1, 4], [3, 1]]), axis=0),
    lambda xp: xp.argsort(xp.array([3, 1, 2])),
    lambda xp: xp.argsort(xp.array([[0, 3], [2, 2]]), axis=0),
    lambda xp: xp.argsort(xp.array([[0, 3], [2, 2]]), axis=1),
    lambda xp: xp.argsort(xp.array([[0, 3], [2, 2]]), kind="stable", stable=True),
    lambda xp: xp.partition(xp.array([7, 1, 7, 7, 1, 5, 7, 2, 3, 2, 6, 2, 3, 0]), 4),
    lambda xp: xp.partition(xp.array([7, 1, 7, 7, 1, 5, 7, 2, 3, 2, 6, 2, 3, 0]), (4, 8)),
    lambda xp: xp.argpartition(xp.array([3, 4, 2, 1]), 3),
    lambda xp: xp.argpartition(xp.array([3, 4, 2, 1]), (1, 3)),
    lambda xp: xp.lexsort((xp.array([9, 4, 0, 4, 0, 2, 1]), xp.array([1, 5, 1, 4, 3, 4, 4]))),
    lambda xp: xp.lexsort((xp.array([[1, 2, 3, 4], [4, 3, 2, 1], [2, 1, 4, 3]]),
                           xp.array([[2, 2, 1, 1], [1, 2, 1, 2], [1, 1, 2, 1]])), axis=1),
    lambda xp: xp.searchsorted(xp.array([11, 12, 13, 14, 15]), 13),
    lambda xp: xp.searchsorted(xp.array([11, 12, 13, 14, 15]), 13, side="right"),
    lambda xp: xp.searchsorted(xp.array([11, 12, 13, 14, 15]), xp.array([-10, 20, 12, 13])),
    lambda xp: xp.unique(xp.array([1, 1, 2, 2, 3, 3])),
    lambda xp: xp.unique(xp.array([[1, 1], [2, 3]])),
    lambda xp: xp.unique(xp.array([[1, 0, 0], [1, 0, 0], [2, 3, 4]]), axis=0),
    lambda xp: xp.unique(xp.array([1, 2, 6, 4, 2, 3, 2]), return_index=True),
    lambda xp: xp.unique(xp.array([1, 2, 6, 4, 2, 3, 2]), return_inverse=True),
    lambda xp: xp.unique(xp.array([1, 2, 6, 4, 2, 3, 2]), return_counts=True),
    lambda xp: xp.unique(xp.array([1.0, np.nan, 3, np.nan]), equal_nan=False),
    lambda xp: xp.nonzero(xp.array([[3, 0, 0], [0, 4, 0], [5, 6, 0]])),
    lambda xp: xp.nonzero(xp.array(3)),  # 0-d: NumPy's ValueError
    lambda xp: xp.argwhere(xp.arange(6).reshape(2, 3) > 1),
    lambda xp: xp.argwhere(xp.array(3)),
    lambda xp: xp.flatnonzero(xp.arange(-2, 3)),
    lambda xp: xp.where(xp.array([[True, False], [True, True]])),
]


@pytest.mark.parametrize("case", range(len(EXAMPLES)))
def test_numpy_examples(case):
    run_xp(EXAMPLES[case])


def test_methods_are_numpys():
    a = np.array([[3, 1, 2], [0, 5, 4]], np.int16)
    run_xp(lambda xp: [xp.array(a).argsort(), xp.array(a).argsort(axis=0, kind="stable"),
                       xp.array(a).argpartition(1, axis=1), *xp.array(a).nonzero(),
                       xp.array(a[0]).searchsorted(2)])
    assert isinstance(np.argsort(nd.array(a)), nd.NDArray)  # NumPy's function, our method
    assert not hasattr(nd.array(a), "ptp")  # NumPy 2 has no ndarray.ptp
