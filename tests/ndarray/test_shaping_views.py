"""Shapes as functions, differential against NumPy: the view functions (moveaxis, swapaxes,
transpose, squeeze, expand_dims, ravel, flip, rot90, atleast_*d, the split family), the joins
(concatenate, stack, vstack, hstack, dstack, column_stack, row_stack, block), broadcast_arrays
and meshgrid; their views share memory as NumPy's do; NumPy's docstring examples."""
import inspect

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import ndengine as nd
from ndengine.ndarray.shaping import SHAPING
from ndarray_helpers import DTYPES, run_xp, shapes, values
from numpy_doc_examples import run_doc_examples

pytestmark = pytest.mark.usefixtures("nd_engine")

LAYOUTS = {"plain": lambda a: a, "T": lambda a: a.T, "reversed": lambda a: a[::-1],
           "strided": lambda a: a[..., ::2]}


def draw_array(data, min_dims=0, max_dims=3, dtypes=DTYPES):
    dtype = data.draw(st.sampled_from(dtypes), label="dtype")
    shape = data.draw(shapes(min_dims=min_dims, max_dims=max_dims), label="shape")
    return data.draw(values(dtype, shape, finite=True), label="x")


def run_each(calls, *args):
    for call in calls:
        run_xp(call, *args)


@given(data=st.data())
def test_axis_functions(data):
    x = draw_array(data)
    ndim = x.ndim
    a1, a2 = (data.draw(st.integers(-ndim - 1, ndim), label="axis") for _ in range(2))
    perm = data.draw(st.permutations(range(ndim)), label="perm")
    k = data.draw(st.integers(-5, 5), label="k")
    layout = LAYOUTS[data.draw(st.sampled_from(sorted(LAYOUTS)), label="layout")]

    def call(f):
        return lambda xp, v: f(xp, layout(xp.array(v)) if v.ndim else xp.array(v))
    run_each([call(f) for f in (
        lambda xp, a: xp.moveaxis(a, a1, a2), lambda xp, a: xp.moveaxis(a, (a1, a2), (0, -1)),
        lambda xp, a: xp.swapaxes(a, a1, a2), lambda xp, a: a.swapaxes(a1, a2),
        lambda xp, a: xp.transpose(a, perm), lambda xp, a: xp.transpose(a),
        lambda xp, a: xp.squeeze(a), lambda xp, a: xp.squeeze(a, a1),
        lambda xp, a: xp.expand_dims(a, (a1, a2)), lambda xp, a: xp.flip(a, a1),
        lambda xp, a: xp.flip(a), lambda xp, a: xp.fliplr(a), lambda xp, a: xp.flipud(a),
        lambda xp, a: xp.rot90(a, k, axes=(a1, a2)), lambda xp, a: xp.rot90(a),
        lambda xp, a: xp.reshape(a, -1), lambda xp, a: xp.reshape(a, (1, -1), order="F"))], x)


@given(data=st.data(), order=st.sampled_from(["C", "F", "A", "K", "X"]))
def test_ravel_and_flatten_orders(data, order):
    x = draw_array(data, min_dims=1)
    layout = LAYOUTS[data.draw(st.sampled_from(sorted(LAYOUTS)), label="layout")]
    run_each([lambda xp, v: xp.ravel(layout(xp.array(v)), order),
              lambda xp, v: layout(xp.array(v)).ravel(order),
              lambda xp, v: layout(xp.array(v)).flatten(order)], x)


@given(data=st.data())
def test_atleast_broadcast_arrays_meshgrid(data):
    (sa, sb), _ = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3,
                                                              max_side=3), label="shapes")
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    a, b = (data.draw(values(dtype, s, finite=True)) for s in (sa, sb))
    sparse, copy = data.draw(st.booleans()), data.draw(st.booleans())
    indexing = data.draw(st.sampled_from(["xy", "ij", "yx"]))
    run_each([lambda xp, u, v: xp.atleast_1d(xp.array(u)),
              lambda xp, u, v: xp.atleast_2d(xp.array(u), v),
              lambda xp, u, v: xp.atleast_3d(u, xp.array(v)),
              lambda xp, u, v: xp.broadcast_arrays(xp.array(u), xp.array(v)),
              lambda xp, u, v: xp.meshgrid(xp.array(u), xp.array(v), sparse=sparse,
                                           copy=copy, indexing=indexing)], a, b)


CASTINGS = ["no", "equiv", "safe", "same_kind", "unsafe"]


@given(data=st.data())
def test_joins(data):
    shape = data.draw(shapes(min_dims=0, max_dims=3, max_side=3), label="shape")
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)), label="axis")
    other = list(shape)
    if shape and data.draw(st.booleans(), label="grow"):
        other[axis % len(shape)] += 1  # fine for concatenate along axis, not for stack
    a = data.draw(values(data.draw(st.sampled_from(DTYPES)), shape, lo=-100, hi=100))
    b = data.draw(values(data.draw(st.sampled_from(DTYPES)), tuple(other), lo=-100, hi=100))
    dtype = data.draw(st.sampled_from([None, *DTYPES]), label="dtype")
    casting = data.draw(st.sampled_from(CASTINGS), label="casting")
    run_each([
        lambda xp, u, v: xp.concatenate([xp.array(u), xp.array(v)], axis),
        lambda xp, u, v: xp.concatenate((xp.array(u), v), axis=axis, dtype=dtype,
                                        casting=casting),
        lambda xp, u, v: xp.concatenate([xp.array(u), v], axis=None),
        lambda xp, u, v: xp.stack([xp.array(u), xp.array(v)], axis, dtype=dtype,
                                  casting=casting),
        lambda xp, u, v: xp.stack([xp.array(u)] * 3, axis=axis),
        lambda xp, u, v: xp.vstack([xp.array(u), xp.array(v)], dtype=dtype, casting=casting),
        lambda xp, u, v: xp.hstack((xp.array(u), xp.array(v))),
        lambda xp, u, v: xp.dstack([xp.array(u), xp.array(v)]),
        lambda xp, u, v: xp.column_stack([xp.array(u), xp.array(v)]),
        lambda xp, u, v: xp.block([xp.array(u), xp.array(v)]),
        lambda xp, u, v: xp.block([[xp.array(u)], [xp.array(v)]])], a, b)


def test_join_outputs_and_errors():
    x = np.arange(6.0).reshape(2, 3)
    run_each([
        lambda xp: xp.concatenate([xp.array(x), x], out=xp.zeros((4, 3), dtype=np.float32)),
        lambda xp: xp.concatenate([xp.array(x), x], out=xp.zeros((4, 3), dtype=np.int64)),
        lambda xp: xp.concatenate([xp.array(x)], out=xp.zeros((2, 3)), dtype=np.float64),
        lambda xp: xp.concatenate([xp.array(x)], casting="bogus"),
        lambda xp: xp.concatenate([]), lambda xp: xp.stack([]),
        lambda xp: xp.concatenate([xp.array(1.0)]),
        lambda xp: xp.stack([xp.array(x), xp.array(x[:1])]),
        lambda xp: xp.stack([xp.array(x), x], out=xp.zeros((2, 2, 3))),
        lambda xp: xp.vstack(xp.array(v) for v in x),
        lambda xp: xp.block([xp.array(x), [xp.array(x)]]), lambda xp: xp.block([[], []]),
        lambda xp: xp.block((xp.array(x), x)), lambda xp: xp.block(xp.array(x)),
        lambda xp: xp.block([[1, 2], [3, 4]]), lambda xp: xp.block(5),
        lambda xp: xp.column_stack([xp.array(2.0), xp.array(3.0)])])


def test_row_stack_is_deprecated_as_in_numpy():
    for xp in (np, nd):
        with pytest.warns(DeprecationWarning, match="row_stack"):
            result = xp.row_stack([xp.ones(2), xp.zeros(2)])
        assert np.asarray(result).tolist() == [[1.0, 1.0], [0.0, 0.0]]


@given(data=st.data())
def test_splits(data):
    x = draw_array(data, min_dims=1, max_dims=3)
    axis = data.draw(st.integers(-x.ndim - 1, x.ndim), label="axis")
    cuts = data.draw(st.one_of(st.integers(-1, 5), st.lists(st.integers(-5, 7), max_size=3)),
                     label="cuts")
    run_each([lambda xp, v: xp.split(xp.array(v), cuts, axis),
              lambda xp, v: xp.array_split(xp.array(v), cuts, axis=axis),
              lambda xp, v: xp.hsplit(xp.array(v), cuts),
              lambda xp, v: xp.vsplit(xp.array(v), cuts),
              lambda xp, v: xp.dsplit(xp.array(v), cuts)], x)


def test_view_functions_share_memory_as_numpys():
    def body(xp):
        a = xp.array(np.arange(24.0).reshape(2, 3, 4))
        views = [xp.moveaxis(a, 0, -1), xp.swapaxes(a, 0, 2), xp.transpose(a), xp.flip(a, 1),
                 xp.rot90(a), xp.rot90(a, 3, (1, 2)), xp.squeeze(a[:1]), xp.expand_dims(a, 0),
                 xp.ravel(a), xp.atleast_3d(a), xp.split(a, 2)[1], xp.fliplr(a),
                 xp.array_split(a, 3, axis=1)[2], xp.dsplit(a, [1])[1], a.swapaxes(1, 2),
                 xp.reshape(a, (4, 6))]
        for i, view in enumerate(views):
            view[(1,) * view.ndim if min(view.shape) > 1 else (0,) * view.ndim] = -1.0 - i
        return a
    run_xp(body)


def test_nd_split_family_and_joins_keep_pushing_order():
    x = nd.array(np.arange(12.0).reshape(3, 4))
    top, bottom = nd.array_split(x, [1])
    joined = nd.vstack([bottom, top])
    x[...] = 0  # pushed after the join: the join saw the old values
    assert joined.asnumpy().tolist() == np.vstack([np.arange(4.0, 12).reshape(2, 4),
                                                   np.arange(4.0).reshape(1, 4)]).tolist()
    assert top.asnumpy().tolist() == [[0.0] * 4]


@pytest.mark.parametrize("name", sorted(set(SHAPING) - {"row_stack"}))
def test_numpy_doc_examples(name):
    # NumPy's examples that need what ndengine lacks: np.all on NDArrays, .base, np.ma
    run_doc_examples(getattr(np, name), skip=("np.all(", ".base", "np.ma."))


def test_signatures_are_numpys():
    for name in SHAPING:
        numpy_name = "vstack" if name == "row_stack" else name
        assert inspect.signature(getattr(nd, name)) == inspect.signature(getattr(np, numpy_name))
    for name in ("ravel", "swapaxes", "flatten"):
        assert "self" not in inspect.signature(getattr(nd.ones(2), name)).parameters
    with pytest.raises(TypeError, match="bogus"):
        nd.moveaxis(nd.ones(2), 0, 0, bogus=1)
    with pytest.raises(TypeError, match="bogus"):
        nd.ones((2, 2)).swapaxes(0, 1, bogus=1)
