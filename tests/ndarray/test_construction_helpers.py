"""append, delete, resize, rollaxis, logspace, tri, tril_indices, triu_indices, diag_indices,
fill_diagonal, ix_ and trim_zeros against NumPy: one body run with xp=numpy and xp=ndengine,
over generated shapes, dtypes and arguments (bad ones included: NumPy's errors)."""
import inspect

import numpy as np
import pytest
from hypothesis import given, strategies as st

import ndengine as nd

from ndarray_helpers import run_xp
from stats_helpers import arrays_of

pytestmark = pytest.mark.usefixtures("nd_engine")

NAMES = ["append", "delete", "resize", "rollaxis", "logspace", "tri", "tril_indices",
         "triu_indices", "diag_indices", "fill_diagonal", "ix_", "trim_zeros"]


@pytest.mark.parametrize("name", NAMES)
def test_signature_is_numpys(name):
    assert inspect.signature(getattr(nd, name)) == inspect.signature(getattr(np, name))
    assert name in nd.__all__


def axes(ndim):
    return st.one_of(st.none(), st.integers(-ndim - 1, ndim))


@given(data=st.data())
def test_append(data):
    a = data.draw(arrays_of(max_dims=3))
    axis = data.draw(axes(a.ndim))
    shape = list(a.shape)
    if axis is not None and -a.ndim <= axis < a.ndim:
        shape[axis] = data.draw(st.integers(0, 2))
    b = data.draw(arrays_of(min_dims=len(shape), max_dims=len(shape))).reshape(-1)
    values = np.resize(b, shape) if b.size else np.zeros(shape, b.dtype)
    run_xp(lambda xp: xp.append(xp.array(a), xp.array(values), axis=axis))
    run_xp(lambda xp: xp.append(xp.array(a), 2.5))


@given(data=st.data())
def test_delete(data):
    a = data.draw(arrays_of(max_dims=3))
    axis = data.draw(axes(a.ndim))
    length = a.size if axis is None else (a.shape[axis] if -a.ndim <= axis < a.ndim else 1)
    obj = data.draw(st.one_of(
        st.integers(-length - 1, length),
        st.lists(st.integers(-length, max(length - 1, 0)), max_size=4),
        st.just(slice(None, None, 2)),
        st.lists(st.booleans(), min_size=length, max_size=length)))
    run_xp(lambda xp: xp.delete(xp.array(a), obj, axis=axis))


def test_delete_reads_an_ndarray_obj():
    run_xp(lambda xp: xp.delete(xp.arange(6.0), xp.array([1, 4])))


@given(data=st.data())
def test_resize(data):
    a = data.draw(arrays_of(max_dims=2))
    shape = data.draw(st.one_of(st.integers(-1, 7),
                                st.lists(st.integers(0, 4), max_size=3).map(tuple)))
    run_xp(lambda xp: xp.resize(xp.array(a), shape))


@given(data=st.data())
def test_rollaxis(data):
    a = data.draw(arrays_of(min_dims=1, max_dims=4))
    axis = data.draw(st.integers(-a.ndim - 1, a.ndim))
    start = data.draw(st.integers(-a.ndim - 2, a.ndim + 1))
    run_xp(lambda xp: xp.rollaxis(xp.array(a), axis, start))


def test_rollaxis_is_a_view():
    x = nd.zeros((2, 3, 4))
    view = nd.rollaxis(x, 2)
    view[0] = 5.0
    assert x.asnumpy()[:, :, 0].tolist() == [[5.0] * 3] * 2


@given(start=st.floats(-3, 3), stop=st.floats(-3, 3), num=st.integers(0, 7),
       endpoint=st.booleans(), base=st.sampled_from([10.0, 2, 0.5, [2.0, 3.0]]),
       dtype=st.sampled_from([None, np.float32, np.int64]), axis=st.sampled_from([0, -1]))
def test_logspace(start, stop, num, endpoint, base, dtype, axis):
    run_xp(lambda xp: xp.logspace(start, stop, num=num, endpoint=endpoint, base=base,
                                  dtype=dtype, axis=axis), tol="close")


def test_logspace_of_array_bounds():
    run_xp(lambda xp: xp.logspace(xp.array([0.0, 1.0]), 3.0, num=4, axis=1), tol="close")


@given(n=st.integers(-1, 6), m=st.one_of(st.none(), st.integers(-1, 6)), k=st.integers(-7, 7),
       dtype=st.sampled_from([float, int, bool, np.float32]))
def test_tri_and_triangle_indices(n, m, k, dtype):
    run_xp(lambda xp: xp.tri(n, m, k, dtype=dtype))
    run_xp(lambda xp: list(xp.tril_indices(n, k, m)))
    run_xp(lambda xp: list(xp.triu_indices(n, k, m)))


@given(n=st.integers(0, 5), ndim=st.integers(0, 4))
def test_diag_indices(n, ndim):
    run_xp(lambda xp: list(xp.diag_indices(n, ndim)))
    run_xp(lambda xp: xp.ones((n,) * max(ndim, 1))[xp.diag_indices(n, max(ndim, 1))])


@given(data=st.data())
def test_fill_diagonal(data):
    a = data.draw(arrays_of(min_dims=1, max_dims=3, min_side=1, lo=-5, hi=5))
    if a.ndim == 3 and data.draw(st.booleans()):
        a = np.zeros((a.shape[0],) * 3, a.dtype)
    val = data.draw(st.one_of(st.integers(-3, 3), st.lists(st.integers(0, 5), min_size=1,
                                                           max_size=3)))
    wrap = data.draw(st.booleans())

    def body(xp):
        x = xp.array(a)
        assert xp.fill_diagonal(x, val, wrap=wrap) is None
        return x
    run_xp(body)


def test_fill_diagonal_writes_only_ndarrays():
    with pytest.raises(TypeError, match="writes into an NDArray"):
        nd.fill_diagonal(np.zeros((2, 2)), 1)


@given(data=st.data())
def test_ix(data):
    count = data.draw(st.integers(0, 3))
    args = [data.draw(arrays_of(dtypes=[np.dtype(np.intp), np.dtype(bool)], min_dims=1,
                                max_dims=2 if i == 0 else 1)) for i in range(count)]
    run_xp(lambda xp: list(xp.ix_(*(xp.array(a) for a in args))))
    run_xp(lambda xp: list(xp.ix_([], [0, 2])))


@given(data=st.data())
def test_trim_zeros(data):
    a = data.draw(arrays_of(max_dims=3, lo=-1, hi=1))
    trim = data.draw(st.sampled_from(["fb", "f", "b", "BF", "x"]))
    axis = data.draw(st.one_of(axes(a.ndim), st.just((0, -1)) if a.ndim > 1 else st.none()))
    run_xp(lambda xp: xp.trim_zeros(xp.array(a), trim, axis=axis))


def test_trim_zeros_sees_pending_writes():
    x = nd.zeros(6)
    x[2:4] = 1.0
    assert nd.trim_zeros(x).tolist() == [1.0, 1.0]
