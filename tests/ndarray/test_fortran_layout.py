"""Fortran layout (core/array_methods.py): ``order='F'``, ``asfortranarray``, and the copies
NumPy makes in Fortran order ('K' and 'A' of a Fortran-ordered array) give NumPy's values,
flags (C_CONTIGUOUS, F_CONTIGUOUS, OWNDATA), strides and ``base``; one body with
``xp=numpy`` and ``xp=ndengine``."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ndengine as nd

pytestmark = pytest.mark.usefixtures("nd_engine")

SHAPES = [(3, 4), (2, 3, 4), (1, 5), (5, 1), (4,), (), (0, 3), (2, 1, 3)]


def _layout(x):
    """What a layout is: the strides of the axes longer than 1 of a non-empty array (NumPy
    leaves the others arbitrary), the contiguity flags, who owns the memory."""
    flags = x.flags
    strides = tuple(s for s, n in zip(x.strides, x.shape) if n > 1) if x.size else None
    return (x.shape, x.dtype, strides, bool(flags.c_contiguous), bool(flags.f_contiguous),
            bool(flags.owndata), x.base is None)


def _same(body, *args):
    """``body(xp, *args)`` with NumPy and with ndengine: the same values and layout (an
    ``empty`` result's values are left out)."""
    want, got = body(np, *args), body(nd, *args)
    assert isinstance(got, nd.NDArray), type(got)
    assert _layout(got) == _layout(want), (_layout(got), _layout(want))
    return want, got


def _source(xp, shape, fortran=False):
    values = np.arange(float(np.prod(shape, dtype=int))).reshape(shape) + 0.5
    array = xp.asarray(values)
    return xp.asfortranarray(array) if fortran else array


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name, args", [("zeros", ()), ("ones", ()), ("full", (7.5,)),
                                        ("empty", ())])
def test_creation_in_fortran_order(name, args, shape):
    want, got = _same(lambda xp: getattr(xp, name)(shape, *args, order="F"))
    if name != "empty":
        np.testing.assert_array_equal(got.asnumpy(), want)


@pytest.mark.parametrize("n, m, k", [(3, None, 0), (3, 5, 1), (5, 3, -2), (1, 4, 0), (4, 4, 9)])
def test_eye_in_fortran_order(n, m, k):
    want, got = _same(lambda xp: xp.eye(n, m, k, dtype=np.int16, order="F"))
    np.testing.assert_array_equal(got.asnumpy(), want)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("fortran", [False, True])
@pytest.mark.parametrize("call", [
    lambda xp, a: xp.asfortranarray(a),
    lambda xp, a: xp.array(a, order="F"),
    lambda xp, a: xp.array(a),                       # 'K': the source's layout
    lambda xp, a: xp.array(a, order="A"),
    lambda xp, a: xp.array(a, order="C"),
    lambda xp, a: xp.asarray(a, order="F"),
    lambda xp, a: xp.asarray(a, order="C"),
    lambda xp, a: xp.copy(a),
    lambda xp, a: xp.copy(a, order="F"),
    lambda xp, a: a.copy(),                          # the method's default: 'C'
    lambda xp, a: a.copy(order="K"),
    lambda xp, a: a.copy(order="A"),
    lambda xp, a: a.astype(np.float32),              # 'K'
    lambda xp, a: a.astype(np.int64, order="F"),
    lambda xp, a: a.astype(np.float32, order="C"),
    lambda xp, a: xp.zeros_like(a),
    lambda xp, a: xp.ones_like(a, order="F"),
    lambda xp, a: xp.full_like(a, 3, order="A"),
    lambda xp, a: xp.empty_like(a, order="C"),
    lambda xp, a: xp.require(a, requirements="F"),
    lambda xp, a: xp.ascontiguousarray(a),
], ids=lambda call: "")
def test_copies_keep_or_make_numpys_layout(call, fortran, shape):
    def body(xp):
        return call(xp, _source(xp, shape, fortran))
    want, got = _same(body)
    if "empty" not in str(call.__code__.co_names):
        np.testing.assert_array_equal(got.asnumpy(), want)


def test_numpy_sources_keep_their_layout():
    source = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    _same(lambda xp: xp.array(source))
    _same(lambda xp: xp.array(source, order="C"))
    _same(lambda xp: xp.asarray(source, dtype=np.float32))


def test_ops_read_fortran_arrays_through_their_strides():
    """Values of every kind of op on Fortran-ordered arrays are NumPy's; views of them are
    views (NumPy's strides); element-wise results are C-ordered (the one layout difference,
    documented)."""
    def body(xp):
        a = _source(xp, (3, 4), fortran=True)
        b = xp.asfortranarray(_source(xp, (3, 4)) * 2)
        return [a + b, xp.exp(a), a.sum(axis=0), a @ b.T, a[1:, ::2], a.T, a.ravel(),
                a.reshape(4, 3), a[::-1] * 1]
    for want, got in zip(body(np), body(nd)):
        np.testing.assert_allclose(got.asnumpy(), want)
    a = _source(nd, (3, 4), fortran=True)
    assert a[1:, ::2].strides == _source(np, (3, 4), fortran=True)[1:, ::2].strides
    assert (a + 1).flags.c_contiguous  # NumPy's would be F-ordered: same values


def test_writes_into_fortran_arrays():
    def body(xp):
        a = xp.zeros((3, 4), order="F")
        a[1] = xp.arange(4.0)
        a[:, 2] += 5
        a *= 2
        return a
    want, got = _same(body)
    np.testing.assert_array_equal(got.asnumpy(), want)


def test_orders_are_checked_as_numpy_checks_them():
    for xp in (np, nd):
        with pytest.raises(ValueError, match="only 'C' or 'F'"):
            xp.zeros((2, 2), order="K")
        with pytest.raises(ValueError):
            xp.array([[1.0]], order="X")
        with pytest.raises(TypeError):
            xp.ones((2, 2)).astype(np.int8, casting="safe")
    with pytest.raises(ValueError):  # copy=False cannot give another layout
        nd.array(nd.ones((2, 3)), order="F", copy=False)


@settings(max_examples=15, deadline=None)
@given(shape=st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple),
       dtype=st.sampled_from([np.int8, np.float32, np.float64, np.complex64]))
def test_fortran_copies_over_generated_shapes(shape, dtype):
    source = np.arange(int(np.prod(shape, dtype=int))).reshape(shape).astype(dtype)
    want, got = _same(lambda xp: xp.asfortranarray(xp.asarray(source)))
    np.testing.assert_array_equal(got.asnumpy(), want)
    want, got = _same(lambda xp: xp.asarray(source).astype(np.float64, order="F"))
    np.testing.assert_array_equal(got.asnumpy(), want)
