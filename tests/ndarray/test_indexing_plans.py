"""Advanced indexing and the plan memo: a key of ints, slices and integer index arrays is
planned once per spec (the arrays' dtypes and shapes), so a minibatch ``X[idx]`` or
``p[rows, y] -= 1`` repeated with new index values is not re-planned; bounds are still checked
at every call, as NumPy checks them; other keys (masks, None, Ellipsis) keep their answers."""
import pickle

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import ndengine as nd
from ndengine import ops
from ndengine.core.keys import memo_key
from ndengine.ops.families.indexing import IndexInput, MemoKey

from ndarray_helpers import raises_anywhere, run_xp


@pytest.fixture
def plan_builds(monkeypatch):
    """Counts, per op name, the plans invoke builds (its memo misses) for the indexing ops."""
    counts = {"take_index": 0, "assign_index": 0}
    for name in counts:
        op = ops.get(name)
        build = op.plan

        def counted(*args, _build=build, _name=name, **kwargs):
            counts[_name] += 1
            return _build(*args, **kwargs)
        monkeypatch.setattr(op, "plan", counted)
    return counts


def minibatches(xp, rows=12, batch=4, seed=3):
    """Rows picked by index arrays, batch after batch, and one-hot-like updates by index."""
    rng = np.random.default_rng(seed)
    data = np.arange(rows * 5, dtype=np.float32).reshape(rows, 5)
    labels = rng.integers(0, 5, rows)
    X, Y = xp.array(data), xp.array(labels)
    order = rng.permutation(rows)
    picked, positions = [], np.arange(batch)
    for start in range(0, rows, batch):
        idx = order[start:start + batch]
        xb, yb = X[idx], Y[idx]
        xb[positions, yb] -= 100
        xb[idx % 2 == 0] *= 2  # a mask: values decide the shape
        picked.append(xb)
    return xp.concatenate(picked)


@pytest.mark.usefixtures("nd_engine")
def test_minibatch_indexing_matches_numpy():
    run_xp(minibatches)


@pytest.mark.cpu_only  # the plan memo serves CPU calls (core/pipeline.py)
@pytest.mark.usefixtures("nd_engine")
@pytest.mark.parametrize("index", [np.asarray, nd.array], ids=["numpy", "ndarray"])
def test_new_index_values_of_one_spec_are_planned_once(plan_builds, index):
    """NumPy index arrays hit the memo by spec; integer NDArray ones are op inputs, whose new
    values (never read at the call) hit it alike."""
    X = nd.array(np.arange(60.0).reshape(12, 5))
    rng = np.random.default_rng(0)
    rows = np.arange(4)
    after_first = None
    for _ in range(5):
        idx = rng.permutation(12)[:4]
        cols = rng.integers(0, 5, 4)
        got = X[index(idx)]
        got[rows, index(cols)] -= 1
        want = np.arange(60.0).reshape(12, 5)[idx]
        want[rows, cols] -= 1
        np.testing.assert_array_equal(got.asnumpy(), want)
        after_first = after_first or dict(plan_builds)
    # the first step plans each signature (unless an earlier test did); the four later steps,
    # with new index values, hit the memo
    assert plan_builds == after_first


@pytest.mark.usefixtures("nd_engine")
@pytest.mark.parametrize("bad", [np.array([0, 12]), np.array([-13, 1]), np.array([99])])
def test_out_of_bounds_raises_at_the_call_after_a_planned_key(bad):
    a = np.arange(60.0).reshape(12, 5)
    X = nd.array(a)
    X[np.array([1, 2])].wait_to_read()  # planned: a later key of this spec hits the memo
    for key in (bad, (bad, slice(None)), (slice(None), bad % 5 + 5 * (bad > 0))):
        with pytest.raises(IndexError) as caught:
            a[key]
        with pytest.raises(IndexError, match=str(caught.value).split(" is ")[0]):
            X[key]
        with pytest.raises(IndexError):
            X[key] = 1.0
    np.testing.assert_array_equal(X.asnumpy(), a)  # nothing was written


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "uint32", "int64",
                                   "uint64"])
def test_the_compiled_bounds_check_finds_numpys_out_of_bounds_indices(dtype, monkeypatch):
    """The bounds of an index array are checked by a Numba loop once it is compiled (NumPy's
    reductions before): both find exactly NumPy's IndexErrors, at the call."""
    from ndengine.ops.families import indexing
    from ndengine.ops.runtime import compile_queue, deferred_loops
    monkeypatch.setattr(deferred_loops, "_jit_after", 0)
    monkeypatch.setattr(indexing, "_outside_slots", {})  # a fresh slot: the loop compiles
    a = np.arange(130.0)
    X = nd.array(a)
    info = np.iinfo(dtype)
    for _ in range(2):  # the compile, then the compiled loop
        for values in ([0, 129], [info.min, 0], [info.max], [130], [-130], [-131], [3] * 9):
            if not all(info.min <= v <= info.max for v in values):
                continue
            key = np.array(values, dtype=object).astype(dtype)
            try:
                want = a[key]
            except IndexError:
                with pytest.raises(IndexError):
                    X[key]
            else:
                np.testing.assert_array_equal(X[key].asnumpy(), want)
        assert compile_queue.drain(60)
    slot = indexing._outside_slots[np.dtype(dtype)]
    assert slot[0] is indexing._outside_loop  # the Numba loop runs


@pytest.mark.usefixtures("nd_engine")
@pytest.mark.parametrize("key", [
    (np.array([1, 0]), Ellipsis), (None, np.array([2])), np.array([True, False, True, False]),
    (np.array([[0], [3]]), np.array([1, 2])), (1, np.array([-1, 0])),
    (np.array([[0, 1], [3, 3]]), np.array([[4, 0], [-5, 2]])),
    (np.uint8(2), slice(None, None, -1)), (np.array([], dtype=np.intp),)])
def test_other_keys_keep_numpy_answers(key):
    a = np.arange(20.0).reshape(4, 5)

    def read_and_write(xp):
        x = xp.array(a)
        y = x[key]
        x[key] = -1.0
        return xp.concatenate([y.reshape(-1), x.reshape(-1)])
    run_xp(read_and_write)


def test_memo_key_equals_keys_of_its_spec_only():
    shape = (10, 4)
    one = memo_key((np.array([1, 2]), slice(None, 3)), shape)
    two = memo_key((np.array([7, 9]), slice(None, 3)), shape)
    assert type(one) is MemoKey and one == two and hash(one) == hash(two)
    others = [memo_key((np.array([1, 2, 3]), slice(None, 3)), shape),            # shape
              memo_key((np.array([1, 2], dtype=np.int32), slice(None, 3)), shape),  # dtype
              memo_key((np.array([1, 2]), slice(None, 2)), shape),               # slice
              memo_key((np.array([1, 2]), 1), shape)]                            # int part
    assert all(type(k) is MemoKey and k != one for k in others)
    assert one != tuple(one) and tuple(one) != one  # a plain tuple key is another key
    assert memo_key(np.array([1, 2]), shape) == memo_key((np.array([3, 4]),), shape)
    back = pickle.loads(pickle.dumps(one))
    assert back == one and np.array_equal(back[0], one[0])


@pytest.mark.parametrize("key", [np.array([True, False]), (np.array([1]), None),
                                 np.array([[1, 2], [10, 0]]), np.array([[0, -11], [1, 2]]),
                                 (Ellipsis, np.array([1])), np.array([10]), np.array([-11]),
                                 np.array([1.0]), (0, 0, np.array([0])), [1, 2], (10, 0),
                                 (0, -5), True, (np.bool_(True), 1), (1, 2, 3)])
def test_memo_key_leaves_keys_it_does_not_cover(key):
    assert memo_key(key, (10, 4)) is key


def test_memo_key_compares_ints_by_type_only():
    """In bounds, an int's value changes no shape: element after element is one key."""
    shape = (10, 4)
    keys = [memo_key((i, j), shape) for i in range(-10, 10) for j in range(-4, 4)]
    assert all(type(k) is MemoKey and k == keys[0] and hash(k) == hash(keys[0]) for k in keys)
    assert [tuple(k) for k in keys] == [(i, j) for i in range(-10, 10) for j in range(-4, 4)]
    assert memo_key(3, shape) == memo_key(-1, shape) != keys[0]
    assert memo_key(np.int32(3), shape) != memo_key(3, shape)  # another type, another key
    assert memo_key((3, slice(1, None)), shape) != memo_key((3, slice(2, None)), shape)


@pytest.mark.usefixtures("nd_engine")
def test_element_after_element_is_one_plan():
    a = np.arange(300.0).reshape(30, 10)
    x = nd.array(a)
    op = nd.ops.get("take_index")
    x[0, 0].wait_to_read()
    planned = sum(len(memo.recent) + len(memo.older) for memo in op.memos.values())
    values = [float(x[i, j]) for i in range(-30, 30) for j in range(10)]
    assert values == [a[i, j] for i in range(-30, 30) for j in range(10)]
    after = sum(len(memo.recent) + len(memo.older) for memo in op.memos.values())
    assert after == planned
    for key in ((30, 0), (0, -11)):
        with pytest.raises(IndexError, match="out of bounds"):
            x[key]


def test_memo_key_of_index_inputs_is_their_spec():
    shape = (10, 4)
    one = memo_key((IndexInput(0, np.dtype(np.int64), (3,)), slice(1, None)), shape)
    same = memo_key((IndexInput(0, np.dtype(np.int64), (3,)), slice(1, None)), shape)
    assert type(one) is MemoKey and one == same and hash(one) == hash(same)
    assert one != memo_key((IndexInput(0, np.dtype(np.int32), (3,)), slice(1, None)), shape)
    assert one != memo_key((np.array([1, 2, 3]), slice(1, None)), shape)  # not an input
    assert pickle.loads(pickle.dumps(one)) == one


@pytest.mark.usefixtures("nd_engine")
@pytest.mark.parametrize("dtype", ["int8", "uint16", "int32", "int64"])
def test_rows_by_an_index_ndarray_are_gathered_with_numpys_values_and_errors(dtype):
    """``X[idx]`` with an integer NDArray: checked when the op runs (the compiled check once
    compiled), gathered straight into the output; NumPy's IndexError at the wait."""
    from ndengine.ops.runtime import compile_queue
    a = np.arange(120.0).reshape(40, 3)
    X = nd.array(a)
    info = np.iinfo(dtype)
    keys = [np.array([3, 0, 39, 3]), np.array([[1, 2], [5, 6]]), np.array([], dtype=int)]
    if info.min < 0:
        keys.append(np.array([-1, -40, 7]))
    for _ in range(20):  # the check's NumPy stand-in, then its compiled loop
        for key in keys:
            np.testing.assert_array_equal(X[nd.array(key.astype(dtype))].asnumpy(), a[key])
        compile_queue.drain(60)
    for bad in ([0, 40], [-41] if info.min < 0 else [info.max]):
        index = nd.array(np.array(bad).astype(dtype))
        raises_anywhere(IndexError, lambda: X[index].asnumpy(), match="out of bounds")


@pytest.mark.usefixtures("nd_engine")
@given(data=st.data())
def test_one_boolean_mask_reads_and_writes_as_numpy(data):
    """A key of one mask of the leading axes (``x[x > 0]``, ``x[m] = v``) is keyed by the
    mask's shape and count: its result's shape comes from them without a pass over the
    mask; values, errors and dtypes are NumPy's (masks of another shape included)."""
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5))
    base = np.arange(float(np.prod(shape))).reshape(shape) - 3
    mask_ndim = data.draw(st.integers(1, len(shape)))
    mask_shape = shape[:mask_ndim]
    if data.draw(st.booleans()):  # now and then a mask NumPy refuses
        mask_shape = tuple(n + 1 for n in mask_shape)
    mask = data.draw(hnp.arrays(np.bool_, mask_shape))
    region = (int(mask.sum()),) + shape[mask_ndim:]
    values = [-1.0, np.full(region, 7.0), np.full(region[1:], 5.0)]
    if np.prod(region):  # (NumPy writes an empty value of more axes into an empty region)
        values.append(np.full((2,) + region, 1.0))  # NumPy's error
    value = data.draw(st.sampled_from(values))

    def read(xp):
        x = xp.array(base)
        return x[xp.array(mask)] if xp is nd else x[mask]

    def write(xp):
        x = xp.array(base)
        x[xp.array(mask) if xp is nd else mask] = xp.asarray(value) if xp is nd else value
        return x
    run_xp(read)
    run_xp(write, any_error=True)


@pytest.mark.usefixtures("nd_engine")
def test_masks_of_one_count_share_a_plan(plan_builds):
    x = nd.array(np.arange(12.0).reshape(3, 4))
    op = ops.get("take_index")
    x[np.eye(3, 4, dtype=bool)].wait_to_read()  # three True
    memos = lambda: sum(len(m.recent) + len(m.older) for m in op.memos.values())  # noqa: E731
    before = memos()
    for shift in range(4):
        mask = np.roll(np.eye(3, 4, dtype=bool), shift, axis=1)
        want = np.arange(12.0).reshape(3, 4)[mask]
        np.testing.assert_array_equal(x[nd.array(mask)].asnumpy(), want)
        x[mask] = -1.0
    assert memos() == before
    assert type(memo_key(np.ones(3, bool), (3, 4))) is MemoKey
    assert type(memo_key(np.ones(4, bool), (3, 4))) is np.ndarray  # NumPy's IndexError then
