"""Integer NDArray index arrays as inputs of the pushed take_index / assign_index
(ops/families/indexing.py): no wait at the call, values equal NumPy's (xp=numpy vs
xp=ndengine, the index arrays of xp), out-of-bounds indices failing the op at the next wait,
the plan memo by spec, the engine's order on the index arrays, and gradients (none to the
index). Run with NDENGINE_TEST_CONTEXT=gpu, the arrays live on a (fake) GPU and the GPU
kernels run."""
import numpy as np
import pytest

import ndengine as nd
from ndengine import autograd

from ndarray_helpers import run_xp

pytestmark = pytest.mark.usefixtures("nd_engine")

DATA = np.arange(6 * 5 * 4, dtype=np.float64).reshape(6, 5, 4)

# (key maker, description): the maker turns index lists into a key of xp's index arrays
KEYS = {
    "one array": lambda xp: xp.array([4, 0, -1, 2, 2]),
    "negative and repeated": lambda xp: (xp.array([-6, -1, 0, 0]),),
    "2-d array": lambda xp: xp.array([[1, -2], [0, 5]]),
    "two arrays": lambda xp: (xp.array([0, 5, -3]), xp.array([4, -5, 1])),
    "broadcast arrays": lambda xp: (xp.array([[0], [5]]), xp.array([1, 2, -1])),
    "slice then array": lambda xp: (slice(1, None, 2), xp.array([3, 0, -1])),
    "array, slice, array": lambda xp: (xp.array([1, 2]), slice(None), xp.array([0, -1])),
    "int and array": lambda xp: (2, xp.array([[0, 1], [4, 4]])),
    "numpy and ndarray arrays": lambda xp: (np.array([0, 1, 5]), xp.array([2, 2, -5])),
    "ellipsis then array": lambda xp: (Ellipsis, xp.array([3, 0])),
    "empty array": lambda xp: xp.array(np.zeros(0, dtype=np.intp)),
    "int32 array": lambda xp: xp.array(np.array([5, -1, 3], dtype=np.int32)),
    "uint8 array": lambda xp: (slice(None), xp.array(np.array([4, 0], dtype=np.uint8))),
}


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, np.complex128])
@pytest.mark.parametrize("name", list(KEYS))
def test_reads_and_writes_match_numpy(name, dtype):
    make_key = KEYS[name]

    def body(xp):
        x = xp.array(DATA.astype(dtype))
        key = make_key(xp)
        taken = x[key]
        x[key] = xp.array(np.ones(1, dtype))  # broadcast to the region
        written = x.copy()
        if dtype != np.bool_:
            x[key] += taken  # += reads then writes through the same index arrays
        return taken, written, x
    run_xp(body)


@pytest.mark.parametrize("name", ["one array", "two arrays", "array, slice, array"])
def test_index_arrays_made_by_pending_ops(name):
    """The index arrays are the results of earlier ops not yet run: the engine orders."""
    make_key = KEYS[name]

    def body(xp):
        x = xp.array(DATA)
        key = make_key(xp)
        parts = key if isinstance(key, tuple) else (key,)
        shifted = tuple(p + 0 if not isinstance(p, slice) else p for p in parts)
        y = x[shifted] * 2
        x[shifted] -= y
        return y, x
    run_xp(body)


def test_no_wait_at_the_call(monkeypatch):
    """Neither a read nor a write by an integer NDArray index waits for the index."""
    X, idx = nd.array(DATA), nd.array(np.array([3, 1, -1]))
    cols = nd.array(np.array([0, 4, 2]))
    waits = []
    for name in ("asnumpy", "wait_to_read"):
        monkeypatch.setattr(nd.NDArray, name, lambda self, *a, _n=name, **k: waits.append(_n))
    y = X[idx]
    X[idx, cols] -= 1
    X[1:, cols] = y[:, 0]
    monkeypatch.undo()
    assert waits == []
    want = DATA.copy()
    got_y = want[[3, 1, -1]]
    want[[3, 1, -1], [0, 4, 2]] -= 1
    want[1:, [0, 4, 2]] = got_y[:, 0]
    np.testing.assert_array_equal(y.asnumpy(), got_y)
    np.testing.assert_array_equal(X.asnumpy(), want)


def test_a_later_write_to_the_index_does_not_change_the_selection():
    X, idx = nd.array(DATA), nd.array(np.array([5, 0]))
    y = X[idx]
    X[idx] = 0.0
    idx[:] = 1  # pushed after both: they read [5, 0]
    want = DATA.copy()
    np.testing.assert_array_equal(y.asnumpy(), DATA[[5, 0]])
    want[[5, 0]] = 0.0
    np.testing.assert_array_equal(X.asnumpy(), want)


def _error_of(push, wait):
    """The error of the op ``push()`` pushes: raised at the push by the NaiveEngine (which
    runs each op there), at ``wait(result)`` by the threaded engines, never at the call."""
    if nd.engine.get().kind == "NaiveEngine":
        with pytest.raises(IndexError) as caught:
            push()
    else:
        result = push()
        with pytest.raises(IndexError) as caught:
            wait(result)
    return str(caught.value), "\n".join(getattr(caught.value, "__notes__", []))


def test_out_of_bounds_fails_the_op_at_the_next_wait():
    X = nd.array(DATA)
    bad = nd.array(np.array([1, 6]))
    message, notes = _error_of(lambda: X[bad], lambda y: y.asnumpy())
    assert message == "index 6 is out of bounds for axis 0 with size 6"
    assert "take_index" in notes and "test_indexing_inputs.py" in notes
    Z = nd.array(DATA)

    def write():
        Z[:, nd.array(np.array([-6]))] = 1.0
    message, notes = _error_of(write, lambda _: Z.asnumpy())
    assert message == "index -6 is out of bounds for axis 1 with size 5"
    assert "assign_index" in notes and "test_indexing_inputs.py" in notes


def test_numpy_index_arrays_still_fail_at_the_call():
    X = nd.array(DATA)
    with pytest.raises(IndexError, match="index 6 is out of bounds"):
        X[np.array([1, 6])]


def test_boolean_and_0d_ndarray_indices_keep_numpy_answers():
    def body(xp):
        x = xp.array(DATA)
        mask = xp.array(DATA[:, 0, 0] > 30)
        picked = x[mask]
        x[mask] = -1.0
        return picked, x[xp.array(2)], x[1, xp.array(np.int32(-1))], x
    run_xp(body)


def test_a_float_ndarray_index_is_numpys_error():
    def body(xp):
        return xp.array(DATA)[xp.array([1.0, 2.0])]
    run_xp(body)


def test_gradients_flow_to_the_data_not_to_the_index():
    """The minibatch pattern: rows picked by an NDArray index, a write by (rows, labels)."""
    def loss_grad(index_of):
        X = nd.array(DATA[:, :, 0])
        X.attach_grad()
        idx, labels = index_of([4, 1, 4, -1]), index_of([0, 2, 2, 4])
        with autograd.record():
            xb = X[idx] * 1.0
            xb[np.arange(4), labels] = xb[np.arange(4), labels] * 3.0
            xb[:, labels] = xb[:, labels] + 1.0
            loss = (xb * xb).sum()
        loss.backward()
        return X.grad.asnumpy()
    want = loss_grad(np.array)
    got = loss_grad(lambda values: nd.array(np.array(values)))
    np.testing.assert_allclose(got, want)
    assert np.count_nonzero(want)


def test_create_graph_through_an_ndarray_index():
    x = nd.array(np.array([1.0, 2.0, 3.0]))
    x.attach_grad()
    idx = nd.array(np.array([2, 2, 0]))
    with autograd.record():
        y = (x[idx] ** 3).sum()
        (g,) = autograd.grad(y, [x], create_graph=True)
        z = g.sum()
    z.backward()
    # y = 2 x2^3 + x0^3: g = (3 x0^2, 0, 6 x2^2); dz/dx = (6 x0, 0, 12 x2)
    np.testing.assert_allclose(x.grad.asnumpy(), [6.0, 0.0, 36.0])


def test_index_on_another_context_is_moved():
    if nd.current_context().device_type != "gpu":
        pytest.skip("needs the data on a GPU (NDENGINE_TEST_CONTEXT=gpu)")
    X = nd.array(DATA)
    idx = nd.array(np.array([0, -1]), ctx=nd.cpu(0))
    X[idx] += 1.0
    want = DATA.copy()
    want[[0, -1]] += 1.0
    np.testing.assert_array_equal(X[idx].asnumpy(), want[[0, -1]])
    assert X[idx].context == X.context
