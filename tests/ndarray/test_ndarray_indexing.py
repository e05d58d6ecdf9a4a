"""Indexing: basic keys give views (same buffer, same engine var), advanced keys and an int for
every axis give copies (test_indexing_elements.py); __setitem__; overlapping in-place updates
give NumPy's answers."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import ndengine as nd

from ndarray_helpers import run_xp, values

pytestmark = pytest.mark.usefixtures("nd_engine")


def var_of(x):
    return x._chunk.var  # NDArray.var is the variance method (see test_ndarray_members)


@pytest.mark.parametrize("key", [
    0, -1, slice(1, 3), slice(None, None, 2), slice(None, None, -1), slice(3, 0, -2),
    (slice(None), 1), (1, slice(None, None, -1)), (Ellipsis, 2), (None, 0), (0, None, 1),
    (slice(None), None, slice(1, None)), (Ellipsis,), (-2, Ellipsis, -3), (1, Ellipsis, None),
    (slice(10, 20),), (slice(-100, 100, 3), slice(None, None, -3))])
def test_basic_key_is_a_view(key):
    a = np.arange(20.0).reshape(4, 5)
    run_xp(lambda xp: xp.array(a)[key])
    x = nd.array(a)
    v = x[key]
    assert var_of(v) is var_of(x)
    assert v._chunk is x._chunk


def test_view_writes_reach_parent_and_back():
    a = np.arange(20.0).reshape(4, 5)
    x = nd.array(a) * 1  # pending
    v = x[1:3, ::-2]
    v += 100  # through the view
    a2 = a.copy()
    a2[1:3, ::-2] += 100
    x *= 2  # through the parent, after the view's write
    a2 *= 2
    np.testing.assert_array_equal(v.asnumpy(), a2[1:3, ::-2])
    np.testing.assert_array_equal(x.asnumpy(), a2)
    s = x[2, 3, ...]  # a 0-d view (x[2, 3] is a copy, NumPy's scalar)
    s[...] = -1
    a2[2, 3] = -1
    np.testing.assert_array_equal(x.asnumpy(), a2)
    assert s.shape == () and s.item() == -1


def test_view_ordering_with_pending_ops():
    """Reads of a view wait for writes to the parent pushed before them, and vice versa."""
    x = nd.zeros(1000)
    views = [x[i::10] for i in range(10)]
    for i, v in enumerate(views):
        v += i
        x += 1
    expected = np.zeros(1000)
    for i in range(10):
        expected[i::10] += i
        expected += 1
    s = views[3].sum()  # reads through a view, after all the writes
    x[:] = 0
    np.testing.assert_allclose(s.item(), expected[3::10].sum())
    np.testing.assert_array_equal(x.asnumpy(), 0)


@pytest.mark.parametrize("key", [
    [0, 2], np.array([3, 0, 0]), (np.array([0, 1]), np.array([4, 2])), [True, False, True, False],
    np.array([[True, False, True, False, True]] * 4), (slice(None), [0, -1]),
    (Ellipsis, np.array([1])), np.array([], dtype=np.intp), (1, [2, 3])])
def test_advanced_key_is_a_copy(key):
    a = np.arange(20.0).reshape(4, 5)
    run_xp(lambda xp: xp.array(a)[key])
    x = nd.array(a)
    c = x[key]
    assert var_of(c) is not var_of(x)
    c[...] = -7
    np.testing.assert_array_equal(x.asnumpy(), a)  # parent untouched


def test_ndarray_as_index():
    a = np.arange(10) * 3
    x = nd.array(a)
    idx = nd.array([1, 3, 5])
    np.testing.assert_array_equal(x[idx].asnumpy(), a[[1, 3, 5]])
    mask = x > 10
    np.testing.assert_array_equal(x[mask].asnumpy(), a[a > 10])
    x[mask] = 0
    a[a > 10] = 0
    np.testing.assert_array_equal(x.asnumpy(), a)


def test_bad_keys_raise_like_numpy():
    a = np.arange(6).reshape(2, 3)
    for key in [5, (0, 3), (0, 0, 0), [0, 5], (Ellipsis, Ellipsis), 1.5, "a",
                np.array([True, False, True])]:
        run_xp(lambda xp: xp.array(a)[key])


@pytest.mark.parametrize("key", [
    (slice(None), 1), [0, 2], (np.array([0, 1]), np.array([1, 0])), np.array([True, False, True]),
    (slice(None, None, -1), slice(1, None)), (Ellipsis, [0, 0])])
@pytest.mark.parametrize("value", ["scalar", "row", "ndarray"])
def test_setitem_advanced_and_basic(key, value):
    a = np.arange(9.0).reshape(3, 3)

    def body(xp):
        x = xp.array(a)
        v = {"scalar": 5, "row": np.array([-1.0]), "ndarray": xp.array(np.array(-2.5))}[value]
        x[key] = v
        return x
    run_xp(body)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float32", "float64"])
def test_setitem_python_scalars_repeatedly(dtype):
    # Scalar assignment infers once per (scalar type, target); the values must still count.
    def body(xp):
        x = xp.zeros((3, 4), dtype=dtype)
        for i, value in enumerate([True, 1, 7, 2.75, -0.0, 0, False, 3]):
            if np.dtype(dtype).kind == "u" and value < 0:
                continue
            x[i % 3, i % 4] = value
            x[i % 3] = value if i % 2 else x[(i + 1) % 3]
        return x
    run_xp(body)


@given(data=st.data())
def test_generated_basic_keys(data):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5))
    a = data.draw(values(np.int32, shape))
    key = data.draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
    run_xp(lambda xp: xp.array(a)[key])

    # a view writes through to its parent; an int for every axis gives a copy (NumPy's
    # scalar), which ``v += 1`` changes alone; ``x[key] += 1`` writes through __setitem__
    def write(xp):
        x = xp.array(a)
        x[key] = 77
        x[key] += 1
        v = x[key]
        v += 1
        return [x, v]
    run_xp(write)


# ---------------------------------------------------------------- overlapping in-place
OVERLAP = {
    "a += a": lambda a: a.__iadd__(a),
    "a[1:] += a[:-1]": lambda a: a[1:].__iadd__(a[:-1]),
    "a[:-1] += a[1:]": lambda a: a[:-1].__iadd__(a[1:]),
    "a[::-1] += a": lambda a: a[::-1].__iadd__(a),
    "a[:, 0] += a[0, :]": lambda a: a[:, 0].__iadd__(a[0, :]),
    "m += m.T": lambda a: a.__iadd__(a.T),
    "a *= a[::-1]": lambda a: a.__imul__(a[::-1]),
    "a[1:] = a[:-1]": lambda a: a.__setitem__(slice(1, None), a[:-1]),
    "a[::-1] = a": lambda a: a.__setitem__(slice(None, None, -1), a),
}


@pytest.mark.parametrize("name", list(OVERLAP))
@pytest.mark.parametrize("shape", [(4, 4), (7, 7)])
def test_overlapping_in_place(name, shape):
    a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)

    def body(xp):
        x = xp.array(a) + 0  # pending under threaded engines
        OVERLAP[name](x)
        return x
    run_xp(body)


def test_overlapping_in_place_1d():
    a = np.arange(10)

    def body(xp):
        x = xp.array(a)
        x[1:] += x[:-1]
        x[::-1] += x
        x[2:] -= x[:-2]
        return x
    run_xp(body)
