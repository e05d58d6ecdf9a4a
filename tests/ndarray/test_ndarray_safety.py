"""Nothing silent: NumPy's result or NumPy's error at the call, for attribute assignment,
scalar and shape arguments, setitem broadcasting and contexts, the HTML repr and array()'s
argument order. Differential against NumPy (the xp harness) wherever NumPy has the operation.
"""
import warnings

import numpy as np
import pytest

import ndengine as nd

from ndarray_helpers import assert_same, run_xp

pytestmark = pytest.mark.usefixtures("nd_engine")


# ---------------------------------------------------------------- x.shape = ..., x.dtype = ...
@pytest.mark.parametrize("shape", [(3, 2), 6, (-1,), (1, 6, 1), (2, -1), (4,), (5, 2), (2, 2.0)])
def test_shape_assignment_reshapes_in_place(shape):
    def body(xp):
        x = xp.array(np.arange(6.0).reshape(2, 3))
        y = x
        x.shape = shape
        assert y is x and x.shape == np.empty((2, 3)).reshape(shape).shape
        return x
    run_xp(body)


def test_shape_assignment_errors_as_numpy():
    x = nd.array(np.arange(6.0).reshape(2, 3))
    with pytest.raises(ValueError, match="cannot reshape array of size 6 into shape"):
        x.shape = (4,)
    with pytest.raises(AttributeError, match="Incompatible shape for in-place modification"):
        x.T.shape = (6,)  # a transposed view needs a copy
    assert x.shape == (2, 3)
    assert_same(np.arange(6.0).reshape(2, 3), x.asnumpy())


def test_shape_assignment_waits_for_pending_ops():
    x = nd.array(np.arange(6.0))
    y = x * 1
    z = y + 1  # pushed with y's old geometry
    y.shape = (2, 3)
    w = y * 10  # and this one with the new
    assert_same(np.arange(6.0) + 1, z.asnumpy())
    assert_same(np.arange(6.0).reshape(2, 3) * 10, w.asnumpy())


def test_shape_assignment_of_a_view_changes_that_view_only():
    x = nd.array(np.arange(12.0))
    v = x[2:8]
    v.shape = (2, 3)
    v[1] = -1
    expected = np.arange(12.0)
    expected[5:8] = -1
    assert x.shape == (12,)
    assert_same(expected, x.asnumpy())


def test_dtype_is_read_only():
    x = nd.zeros(3, dtype=np.float32)
    with pytest.raises(AttributeError, match="read-only"):
        x.dtype = np.int32
    with pytest.raises(AttributeError):
        x.dtype = np.float64
    assert x.dtype == np.float32
    assert_same(np.zeros(3, np.float32), x.asnumpy())


# ---------------------------------------------------------------- scalars into arrays
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "uint32", "int64", "bool",
                                   "float32", "float64"])
@pytest.mark.parametrize("value", [np.nan, float("inf"), -float("inf"), 300, -1, 2.7, -0.5,
                                   1e10, 2 ** 63, -2 ** 63, 10 ** 30, 1e300, True,
                                   np.float64(np.nan), np.float32(np.inf), np.int64(300)])
@pytest.mark.parametrize("key", [0, slice(None), [0, 2], "mask"])
def test_setitem_scalar_as_numpy(dtype, value, key):
    def body(xp):
        x = xp.zeros(3, dtype=dtype)
        k = np.array([True, False, True]) if key == "mask" else key
        x[k] = value
        return x
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # float32 overflow: NumPy only warns
        run_xp(body)


def test_setitem_scalar_errors_are_numpys():
    a = nd.zeros(3, dtype=np.int32)
    with pytest.raises(ValueError, match="cannot convert float NaN to integer"):
        a[0] = np.nan
    with pytest.raises(OverflowError, match="cannot convert float infinity to integer"):
        a[:] = float("inf")
    b = nd.zeros(3, dtype=np.uint8)
    with pytest.raises(OverflowError, match="Python integer 300 out of bounds for uint8"):
        b[1] = 300
    assert_same(np.zeros(3, np.int32), a.asnumpy())


@pytest.mark.parametrize("dtype", ["int32", "uint8", "float32", "bool"])
@pytest.mark.parametrize("value", [np.nan, float("inf"), 300, -1, 2.5, 2 ** 70, True])
def test_full_scalar_as_numpy(dtype, value):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        run_xp(lambda xp: xp.full((3,), value, dtype=dtype))
    # NumPy warns for NaN into int ("invalid value encountered in cast"): so must ndengine,
    # at the call (the oracle ran first and warned once, when it warns at all)
    assert len(caught) in (0, 2), [str(w.message) for w in caught]


def test_full_errors_are_numpys():
    with pytest.raises(OverflowError, match="Python integer 300 out of bounds for uint8"):
        nd.full((3,), 300, dtype=np.uint8)
    with pytest.warns(RuntimeWarning, match="invalid value encountered in cast"):
        nd.full((3,), np.nan, dtype=np.int32)


@pytest.mark.parametrize("shape", [(-1,), -2, "12", 2.5, (2, 2.0), None, True, (2, -1),
                                   np.array([2, 3]), (np.int64(2), 3), [], ()])
@pytest.mark.parametrize("make", ["zeros", "ones", "empty", "full"])
def test_creation_shapes_as_numpy(shape, make):
    def body(xp):
        if make == "full":
            return xp.full(shape, 7.0)
        made = getattr(xp, make)(shape)
        return made if make != "empty" else made.shape == np.empty(shape).shape
    if make == "empty":
        try:
            np.empty(shape)
        except Exception as exc:  # noqa: BLE001 - the oracle's error is the expectation
            with pytest.raises(type(exc)):
                nd.empty(shape)
            return
        assert nd.empty(shape).shape == np.empty(shape).shape
        return
    run_xp(body)


@pytest.mark.parametrize("args,kwargs", [
    ((0, 10, 0), {}), ((np.nan,), {}), ((np.inf,), {}), ((-1, 300, 100), {"dtype": "uint8"}),
    ((3,), {"dtype": "bool"}), ((2,), {"dtype": "bool"}), ((np.array(4),), {}),
    ((np.array([3]),), {}), ((5,), {"dtype": "uint8"}), ((0.5, 3.5, 0.5), {})])
def test_arange_params_as_numpy(args, kwargs):
    run_xp(lambda xp: xp.arange(*args, **kwargs))


@pytest.mark.parametrize("args,kwargs", [
    ((0, 1, -1), {}), ((0, 1, 2.5), {}), ((0, 1, np.int64(3)), {}),
    ((np.array([0.0, 1.0]), 2, 3), {}), ((0, np.array([[1.0], [2.0]]), 4), {})])
def test_linspace_params_as_numpy(args, kwargs):
    run_xp(lambda xp: xp.linspace(*args, **kwargs), tol="close")


@pytest.mark.parametrize("args,kwargs", [
    ((-1,), {}), ((2.5,), {}), ((2, -1), {}), ((2,), {"k": 1.5}), ((np.int64(3),), {}),
    ((3, 2), {"k": -1})])
def test_eye_params_as_numpy(args, kwargs):
    run_xp(lambda xp: xp.eye(*args, **kwargs))


@pytest.mark.parametrize("make,error", [
    (lambda xp: xp.eye(2.5), TypeError), (lambda xp: xp.eye(-1), ValueError),
    (lambda xp: xp.eye(2, k=1.5), TypeError), (lambda xp: xp.arange(0, 10, 0), ZeroDivisionError),
    (lambda xp: xp.arange(np.nan), ValueError), (lambda xp: xp.arange(np.inf), ValueError),
    (lambda xp: xp.arange(-1, 300, 100, dtype="uint8"), OverflowError),
    (lambda xp: xp.arange(3, dtype=bool), TypeError), (lambda xp: xp.linspace(0, 1, 2.5), TypeError),
    (lambda xp: xp.linspace(0, 1, -1), ValueError), (lambda xp: xp.zeros("12"), TypeError),
    (lambda xp: xp.empty((-1,)), ValueError), (lambda xp: xp.ones(2.5), TypeError),
    (lambda xp: xp.full((2, 2), [1, 2, 3]), ValueError),
    (lambda xp: xp.full((3,), 300, dtype="uint8"), OverflowError),
    (lambda xp: xp.full_like(xp.zeros(2, dtype="int8"), 1000), OverflowError)])
def test_creation_errors_at_the_call(make, error):
    with pytest.raises(error):
        make(np)
    with pytest.raises(error):
        make(nd)  # at the call: no wait in between


@pytest.mark.parametrize("fill", [[1, 2, 3], [1, 2], np.ones((2, 1)), np.ones((1, 2, 3))])
def test_full_array_fill_broadcasts_as_numpy(fill):
    run_xp(lambda xp: xp.full((2, 3), fill))


# ---------------------------------------------------------------- setitem broadcasting
@pytest.mark.parametrize("target_shape,key,value_shape", [
    ((3,), slice(None), (1, 3)), ((3,), slice(None), (1, 1, 3)), ((3,), slice(None), (2, 3)),
    ((2, 3), 0, (1, 1, 3)), ((2, 3), (Ellipsis, 1), (1, 2)), ((3,), 0, (1,)),
    ((3,), (0, Ellipsis), (1, 1)), ((), Ellipsis, (1, 1)), ((), (), (1,)),
    ((4,), [0, 2], (1, 2)), ((4,), [0, 2], (1, 1, 1)), ((4,), [0, 2], (2, 2)),
    ((2, 3), "mask", (1, 3)), ((2, 3), ([0, 1], [1, 2]), (1, 1, 2))])
def test_setitem_value_with_leading_ones_as_numpy(target_shape, key, value_shape):
    def body(xp):
        x = xp.zeros(target_shape)
        k = np.array([True, False]) if key == "mask" else key
        x[k] = xp.array(np.arange(1.0, 1.0 + np.prod(value_shape)).reshape(value_shape))
        return x
    run_xp(body)


# ---------------------------------------------------------------- contexts
def test_setitem_from_another_context_raises():
    x = nd.zeros(3, ctx=nd.cpu(0))
    y = nd.ones(3, ctx=nd.cpu(1))
    with pytest.raises(ValueError, match="different contexts.*copyto.*as_in_context"):
        x[:] = y
    with pytest.raises(ValueError, match="different contexts"):
        x[[0, 1]] = y[:2]
    with pytest.raises(ValueError, match="different contexts"):
        x[1] = y[0]
    assert_same(np.zeros(3), x.asnumpy())
    x[:] = y.as_in_context(nd.cpu(0))  # the documented ways stay allowed
    y.copyto(x)
    assert_same(np.ones(3), x.asnumpy())


# ---------------------------------------------------------------- _repr_html_
def test_repr_html_empty_and_1d():
    html = nd.zeros((0, 3))._repr_html_()
    assert "shape=(0, 3)" in html
    row = nd.arange(3)._repr_html_()
    assert row.count("<tr>") == 1 and row.count("<td>") == 3  # 1-D: one row
    assert nd.zeros((2, 3))._repr_html_().count("<tr>") == 2
    assert nd.zeros((0,))._repr_html_().count("<td>") == 0


# ---------------------------------------------------------------- array(obj, dtype)
def test_array_takes_dtype_second_as_numpy():
    run_xp(lambda xp: xp.array([1, 2], np.float32))
    run_xp(lambda xp: xp.array([1.5, 2], "int8"))
    assert nd.array([1, 2], ctx=nd.cpu(1)).context == nd.cpu(1)
    assert nd.array(nd.array([1, 2]), np.float32, ctx=nd.cpu(0)).dtype == np.float32
    with pytest.raises(TypeError):
        nd.array([1, 2], np.float32, nd.cpu(0))  # ctx is keyword-only


# ---------------------------------------------------------------- failed arrays made whole again
def _failed_int_array():
    """An int64 array of shape (3,) whose op failed in its kernel (int ** negative int)."""
    y = nd.array([1, 2, 3])
    with pytest.raises(ValueError):  # NaiveEngine raises at the call, the others at the wait
        y **= nd.array([1, -1, 2])  # in place: y exists whichever engine raises
        y.wait_to_read()
    return y


@pytest.mark.parametrize("key", [Ellipsis, slice(None), (slice(None, None, -1),)])
def test_overwriting_a_failed_array_completely_makes_it_valid(key):
    y = _failed_int_array()
    y[key] = 7
    np.testing.assert_array_equal(y.asnumpy(), np.full(3, 7))
    y[...] = nd.array([4, 5, 6])
    np.testing.assert_array_equal((y + 1).asnumpy(), [5, 6, 7])
    nd.waitall()


def test_a_partial_write_keeps_a_failed_array_failed():
    y = _failed_int_array()
    with pytest.raises(ValueError):  # NaiveEngine raises at the call, the others at the wait
        y[1:] = 0  # y[0] is still the failed op's garbage: the error stays
        y.asnumpy()
    with pytest.raises(ValueError):
        y[...] = y  # reads y itself: not an overwrite of a sound value
        y.asnumpy()
    nd.waitall()


def test_package_cancel_drops_queued_array_ops():
    assert nd.cancel() >= 0
    assert issubclass(nd.Cancelled, Exception)


def test_split_pieces_are_views_as_numpy_s():
    for xp in (np, nd):
        a = xp.arange(12.0).reshape(3, 4)
        pieces = xp.split(a, [1, 3], axis=1)
        a += 1  # NumPy's pieces are views: they see the write
        pieces[0][...] = -1  # and writes to a piece show in the array
        got = [np.asarray(p) for p in pieces] + [np.asarray(a)]
        if xp is np:
            want = got
        else:
            for w, g in zip(want, got):
                np.testing.assert_array_equal(w, g)
