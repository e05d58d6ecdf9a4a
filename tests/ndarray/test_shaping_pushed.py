"""The functions pushed as one op each (tile, repeat, roll, pad, tril, triu, diag, diagonal,
trace, indices, take, take_along_axis, choose, put, put_along_axis, compress) and their NDArray
methods, differential against NumPy; index arrays read at the call or at the run; nothing
waits at the call; NumPy's docstring examples."""
import inspect
import threading
import time

import numpy as np
import pytest
from hypothesis import assume, given, strategies as st

import ndengine as nd
from ndengine import engine as _engine
from ndengine.engine import FnProperty
from ndengine.ndarray.pushed import PUSHED
from ndarray_helpers import DTYPES, FLOATS, INTS, run_xp, shapes, values
from numpy_doc_examples import run_doc_examples

pytestmark = pytest.mark.usefixtures("nd_engine")

SELECTION = ("take", "take_along_axis", "choose", "put", "put_along_axis", "compress")
PRODUCTS = ("vdot", "inner", "outer", "tensordot", "kron", "einsum")


def draw_array(data, min_dims=0, max_dims=3, dtypes=DTYPES, max_side=4):
    dtype = data.draw(st.sampled_from(dtypes), label="dtype")
    shape = data.draw(shapes(min_dims=min_dims, max_dims=max_dims, max_side=max_side),
                      label="shape")
    return data.draw(values(dtype, shape, finite=True), label="x")


def run_each(calls, *args):
    for call in calls:
        run_xp(call, *args)


@given(data=st.data())
def test_tile_repeat_roll(data):
    x = draw_array(data)
    reps = data.draw(st.one_of(st.integers(-1, 3), st.lists(st.integers(0, 3), max_size=4)),
                     label="reps")
    repeats = data.draw(st.one_of(st.integers(-1, 3),
                                  st.lists(st.integers(0, 3), min_size=1, max_size=4)),
                        label="repeats")
    axis = data.draw(st.one_of(st.none(), st.integers(-x.ndim - 1, x.ndim)), label="axis")
    shift = data.draw(st.one_of(st.integers(-7, 7), st.lists(st.integers(-7, 7), max_size=3)),
                      label="shift")
    axes = data.draw(st.one_of(st.none(), st.integers(-x.ndim - 1, x.ndim),
                               st.lists(st.integers(-x.ndim - 1, x.ndim), max_size=3)),
                     label="axes")
    run_each([lambda xp, v: xp.tile(xp.array(v), reps),
              lambda xp, v: xp.repeat(xp.array(v), repeats, axis),
              lambda xp, v: xp.array(v).repeat(repeats, axis=axis),
              lambda xp, v: xp.repeat(xp.array(v), xp.array(repeats), axis),
              lambda xp, v: xp.roll(xp.array(v), shift, axes),
              lambda xp, v: xp.roll(xp.array(v), xp.array(shift), axes)], x)


PAD_MODES = ["constant", "edge", "reflect", "wrap", "symmetric", "linear_ramp", "maximum",
             "mean", "minimum", "empty", "bogus"]


@given(data=st.data(), mode=st.sampled_from(PAD_MODES))
def test_pad(data, mode):
    x = draw_array(data, dtypes=[d for d in DTYPES if d != bool])
    width = data.draw(st.one_of(st.integers(-1, 3), st.tuples(st.integers(0, 3),
                                                             st.integers(0, 3)),
                                st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2)),
                                         min_size=x.ndim, max_size=x.ndim)), label="width")
    kwargs = {}
    if mode == "constant" and data.draw(st.booleans(), label="value"):
        kwargs["constant_values"] = data.draw(st.integers(0, 9))
    if mode in ("reflect", "symmetric"):
        kwargs["reflect_type"] = data.draw(st.sampled_from(["even", "odd"]))
    if mode == "empty":
        run_xp(lambda xp, v: xp.zeros(xp.pad(xp.array(v), width, mode).shape, v.dtype), x)
        return
    run_xp(lambda xp, v: xp.pad(xp.array(v), width, mode, **kwargs), x)
    if "constant_values" in kwargs:
        run_xp(lambda xp, v: xp.pad(xp.array(v), width, constant_values=xp.array(
            [kwargs["constant_values"], 1], dtype=v.dtype)), x)


@given(data=st.data())
def test_triangles_and_diagonals(data):
    x = draw_array(data)
    k = data.draw(st.integers(-4, 4), label="k")
    a1, a2 = (data.draw(st.integers(-x.ndim - 1, x.ndim)) for _ in range(2))
    dtype = data.draw(st.sampled_from([None, *DTYPES]), label="dtype")
    run_each([lambda xp, v: xp.tril(xp.array(v), k), lambda xp, v: xp.triu(xp.array(v), k=k),
              lambda xp, v: xp.diag(xp.array(v), k),
              lambda xp, v: xp.diagonal(xp.array(v), k, a1, a2),
              lambda xp, v: xp.array(v).diagonal(k, axis1=a1, axis2=a2),
              lambda xp, v: xp.trace(xp.array(v), k, a1, a2, dtype),
              lambda xp, v: xp.array(v).trace(k, a1, a2, dtype=dtype)], x)


def test_take_wrap_along_an_empty_axis():
    # NumPy (2.4) loops forever on np.take(np.empty((0, 0)), [-1], axis=0, mode="wrap"); the
    # result can only be empty (shape (1, 0)), and a non-empty one is NumPy's IndexError
    x = nd.array(np.empty((0, 0)))
    for index in ([-1], [3, -2], np.array([-1], np.intp)):
        got = nd.take(x, index, axis=0, mode="wrap")
        assert got.shape == (len(index), 0) and got.asnumpy().shape == (len(index), 0)
        assert x.take(index, axis=1, mode="wrap").asnumpy().shape == (0, len(index))
    with pytest.raises(IndexError, match="non-empty take from an empty axes"):
        nd.take(nd.array(np.empty((0, 3))), [1], axis=0, mode="wrap")


@given(data=st.data(), mode=st.sampled_from(["raise", "wrap", "clip", "bogus"]))
def test_take_and_put(data, mode):
    x = draw_array(data, min_dims=1)
    n = x.size
    index = data.draw(st.lists(st.integers(-n - 2, n + 2), max_size=4), label="index")
    axis = data.draw(st.one_of(st.none(), st.integers(-x.ndim - 1, x.ndim)), label="axis")
    as_nd = data.draw(st.booleans(), label="as_nd")

    if mode == "wrap" and index and x.size == 0:
        # NumPy's take never returns here when the taken axis is empty (its wrap loop adds
        # the axis length, 0): no oracle; test_take_wrap_along_an_empty_axis checks ours
        assume(axis is None or not -x.ndim <= axis < x.ndim or x.shape[axis] != 0)

    def indices(xp):  # NumPy arrays are checked at the call, NDArrays when the op runs
        return xp.array(index, dtype=np.intp) if as_nd else index

    def put(xp, v, method):
        a = xp.array(v)
        if method:
            a.put(indices(xp), [7, 8], mode=mode)
        else:
            xp.put(a, indices(xp), 9, mode)
        return a
    run_each([lambda xp, v: xp.take(xp.array(v), indices(xp), axis, mode=mode),
              lambda xp, v: xp.array(v).take(indices(xp), axis=axis, mode=mode),
              lambda xp, v: put(xp, v, False), lambda xp, v: put(xp, v, True)], x)


@given(data=st.data())
def test_along_axis_and_compress(data):
    x = draw_array(data, min_dims=1, dtypes=FLOATS + INTS)
    axis = data.draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1)), label="axis")
    condition = data.draw(st.lists(st.booleans(), max_size=5), label="condition")

    def order(xp, a):
        return xp.array(np.argsort(np.asarray(a), axis=axis))

    def put_along(xp, v):
        a = xp.array(v)
        xp.put_along_axis(a, order(xp, v), -1 if axis is None else xp.array(v), axis)
        return a
    run_each([lambda xp, v: xp.take_along_axis(xp.array(v), order(xp, v), axis),
              lambda xp, v: xp.take_along_axis(xp.array(v), np.argsort(v, axis=axis), axis),
              put_along,
              lambda xp, v: xp.compress(condition, xp.array(v), axis),
              lambda xp, v: xp.compress(xp.array(condition, dtype=bool), xp.array(v), axis),
              lambda xp, v: xp.array(v).compress(condition, axis)], x)


@given(data=st.data(), mode=st.sampled_from(["raise", "wrap", "clip"]))
def test_choose(data, mode):
    shape = data.draw(shapes(max_dims=2, max_side=3), label="shape")
    picks = data.draw(values(np.int64, shape, lo=-1, hi=3), label="picks")
    dtypes = [data.draw(st.sampled_from(DTYPES)) for _ in range(3)]
    choices = [data.draw(values(d, shape[-1:], finite=True)) for d in dtypes]
    run_each([lambda xp, a, *cs: xp.choose(xp.array(a), [xp.array(c) for c in cs], mode=mode),
              lambda xp, a, *cs: xp.choose(a, [xp.array(cs[0]), 2.5, 7], mode=mode),
              lambda xp, a, *cs: xp.array(a).choose([xp.array(c) for c in cs], mode=mode)],
             picks, *choices)


def test_outputs_and_index_errors():
    x = np.arange(12.0).reshape(3, 4)
    run_each([
        lambda xp: xp.take(xp.array(x), [1, 0], axis=1, out=xp.zeros((3, 2))),
        lambda xp: xp.take(xp.array(x), [1], out=xp.zeros(2)),
        lambda xp: xp.compress([1, 0, 1], xp.array(x), axis=0, out=xp.zeros((2, 4))),
        lambda xp: xp.trace(xp.array(x), out=xp.zeros(())),
        lambda xp: xp.choose([0, 1], [xp.array(x[0, :2]), 5], out=xp.zeros(2)),
        lambda xp: xp.take(xp.array(np.empty(0)), [0]),
        lambda xp: xp.take(xp.array(x), [[5]], axis=0),
        lambda xp: xp.take(xp.array(x), xp.array([[5]]), axis=0),
        lambda xp: xp.choose(xp.array([0, 3]), [xp.array(x[0, :2])] * 2),
        lambda xp: xp.compress([[True]], xp.array(x)),
        lambda xp: xp.compress([0, 0, 0, 1], xp.array(x), axis=0),
        lambda xp: xp.take_along_axis(xp.array(x), xp.array([[0.5]]), 1),
        lambda xp: xp.take_along_axis(xp.array(x), xp.array([0]), 1),
        lambda xp: xp.take_along_axis(xp.array(x), xp.array([[9]]), 1),
        lambda xp: xp.put(xp.array(x), [99], 1), lambda xp: xp.put(xp.zeros(0), [0], 1),
        lambda xp: xp.put(xp.array(x, dtype=np.int64), [0], np.nan),
        lambda xp: xp.indices((2, 3)), lambda xp: xp.indices((2, 0, 3), np.int8, True),
        lambda xp: xp.indices([2, -1]), lambda xp: xp.indices((2,), dtype=np.float32)])


def test_put_needs_an_ndarray_and_writes_in_place():
    with pytest.raises(TypeError, match="NDArray"):
        nd.put(np.zeros(3), [0], 1)
    a = nd.zeros(4)
    before = a + 0  # pushed before the put: sees zeros
    assert nd.put(a, [1, 3], nd.array([5.0, 6.0])) is None
    assert before.tolist() == [0.0] * 4 and a.tolist() == [0.0, 5.0, 0.0, 6.0]


def test_index_arrays_are_snapshots_taken_at_the_call():
    x = nd.array(np.arange(5.0))
    index = np.array([0, 1])
    taken = nd.take(x * 1, index)
    index[:] = 4
    assert taken.tolist() == [0.0, 1.0]


@pytest.mark.parametrize("name", sorted(set(PUSHED) - set(PRODUCTS)))
def test_numpy_doc_examples(name):
    run_doc_examples(getattr(np, name), skip=("np.all(",))


def test_signatures_and_methods_are_numpys():
    for name in PUSHED:
        assert inspect.signature(getattr(nd, name)) == inspect.signature(getattr(np, name))
    x = nd.ones((2, 2))
    assert list(inspect.signature(x.put).parameters) == ["indices", "values", "mode"]
    assert list(inspect.signature(x.compress).parameters) == ["condition", "axis", "out"]
    with pytest.raises(TypeError, match="bogus"):
        nd.tile(x, 2, bogus=1)


# ------------------------------------------------------------------ nothing waits
def _held_engine_calls(x, m):
    """One call of each kind on arrays whose producer is still running."""
    return [nd.tile(x, 2), nd.repeat(x, 2, 0), nd.roll(x, 1), nd.pad(x, 1, "reflect"),
            nd.tril(x), nd.diagonal(x), nd.trace(x), nd.take(x, [0, 1]), nd.choose([0, 1],
            [x[0, :2], x[1, :2]]), nd.take_along_axis(x, nd.zeros((1, 3), dtype=int), 0),
            nd.concatenate([x, x]), nd.stack([x, x]), nd.block([[x, x]]), nd.kron(x, x),
            nd.einsum("ij,kj->ik", x, x), nd.tensordot(x, x), nd.outer(x, x), nd.inner(x, x),
            nd.linalg.inv(m), nd.linalg.svd(m)[1], nd.linalg.qr(m)[0], nd.linalg.norm(x),
            nd.linalg.eigh(m)[0], nd.linalg.solve(m, x[:, 0]), nd.fft.fftshift(x),
            nd.linalg.det(m), nd.linalg.pinv(x), nd.linalg.matrix_power(m, 3)]


def test_pushed_functions_return_before_their_inputs_are_ready():
    eng = _engine.get()
    if type(eng).__name__ == "NaiveEngine":
        pytest.skip("the NaiveEngine runs every op at its push")
    x0 = np.arange(9.0).reshape(3, 3)
    m0 = x0 + 10 * np.eye(3)
    release = threading.Event()
    x, m = nd.array(x0), nd.array(m0)
    for arr in (x, m):  # a slow writer of each input: every op below waits for it
        eng.push_sync(lambda run_ctx: release.wait(10), nd.cpu(0), (), (arr.engine_var,),
                      FnProperty.NORMAL)
    start = time.perf_counter()
    results = _held_engine_calls(x, m)
    elapsed = time.perf_counter() - start
    release.set()
    assert elapsed < 5, f"the calls took {elapsed:.1f} s: something waited"
    expected = _held_engine_calls(x0, m0)  # NumPy inputs: the same ops, no hold
    for got, want in zip(results, expected):
        np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-12, atol=1e-12)


def test_shifts_and_diagonals_are_keyed_by_type_one_plan_for_every_value():
    """roll's shift and tril/triu's k change neither shape nor dtype: a loop over their
    values is one plan each (a plan per value was ~25 us a call), with NumPy's values."""
    a = np.arange(24.0).reshape(4, 6)
    x = nd.array(a)
    counts = {}
    for name, call in (("roll", lambda xp, v, i: xp.roll(v, i)),
                       ("tril", lambda xp, v, i: xp.tril(v, i % 9 - 4)),
                       ("triu", lambda xp, v, i: xp.triu(v, i % 9 - 4))):
        op = nd.ops.get(name)
        call(nd, x, 0).wait_to_read()
        before = sum(len(m.recent) + len(m.older) for m in op.memos.values())
        for i in range(-30, 30):
            np.testing.assert_array_equal(call(nd, x, i).asnumpy(), call(np, a, i))
        counts[name] = sum(len(m.recent) + len(m.older) for m in op.memos.values()) - before
    assert counts == {"roll": 0, "tril": 0, "triu": 0}
    run_xp(lambda xp: xp.roll(xp.array(a), 2.5))  # a float shift: NumPy's TypeError still
