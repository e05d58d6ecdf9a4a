"""Element access: an int for every axis gives a new 0-d array where NumPy gives a scalar (a
copy that ``v += 1`` changes alone) and keeps NumPy's views for keys with an Ellipsis or a
newaxis; negative and out-of-range indices as NumPy's; ``iter()`` of a 0-d array raises at
the call. Each body runs with xp=numpy and xp=ndengine, under the three engines. Elements at
large offsets: test_indexing_large_offsets.py."""
import numpy as np
import pytest

import ndengine as nd
from ndengine import autograd

from ndarray_helpers import run_xp

pytestmark = pytest.mark.usefixtures("nd_engine")


# ---------------------------------------------------------------- an int for every axis: copies
A2 = np.arange(12).reshape(3, 4)


@pytest.mark.parametrize("dtype", ["float32", "int64"])
@pytest.mark.parametrize("shape, key", [
    ((12,), 0), ((12,), -1), ((12,), -12), ((12,), np.int64(5)), ((3, 4), (1, 2)),
    ((3, 4), (-1, -4)), ((3, 4), (np.intp(-3), 3)), ((2, 3, 2), (1, -1, 0))])
def test_an_int_for_every_axis_gives_an_independent_copy(shape, key, dtype):
    a = np.arange(12, dtype=dtype).reshape(shape)

    def body(xp):
        x = xp.array(a)
        v = x[key]
        v += 100  # the copy alone
        x[key] += 1  # through __setitem__: x changes
        w = x[key]
        x[key] = -5  # a later write leaves w as it was
        return [x, v, w]
    run_xp(body)


def test_an_accumulator_started_from_an_element_leaves_it():
    def body(xp):
        x = xp.array(A2, dtype="float64")
        total = x[0, 0]
        for i in range(3):
            for j in range(4):
                total += x[i, j]
        return [x, total]
    run_xp(body)


@pytest.mark.parametrize("key", [3, -4, (0, 4), (-4, 0), (0, 0, 0), (1, -5)])
def test_out_of_range_elements_raise_index_error(key):
    shape = (3,) if not isinstance(key, tuple) else (3, 4)

    def read(xp):
        return xp.zeros(shape)[key]

    def write(xp):
        x = xp.zeros(shape)
        x[key] = 1.0
        return x
    run_xp(read)
    run_xp(write)


def test_an_ellipsis_keeps_an_element_a_view():
    def body(xp):
        x = xp.array(A2[0], dtype="float64")
        v = x[..., 1]  # NumPy: a 0-d view, not a scalar
        v += 10
        m = xp.array(A2, dtype="float64")
        u = m[1, ..., 2]
        u *= 3
        return [x, v, m, u]
    run_xp(body)


def test_keys_of_a_zero_d_array():
    def body(xp):
        x = xp.array(3.0)
        view = x[...]  # a view
        view += 1
        row = x[None]  # a (1,) view
        row[0] = 7
        copied = x[()]  # NumPy's scalar: a copy
        copied += 100
        x[()] += 1
        kept = x[()]
        x[...] = 2
        x[None] = 9  # writes through a newaxis
        return [x, view, row, copied, kept]
    run_xp(body)


def test_iterating_gives_copies_of_elements_and_views_of_rows():
    def body(xp):
        x = xp.array([1.5, 2.5])
        for element in x:
            element += 1  # a copy (NumPy's scalar): x unchanged
        m = xp.array(A2)
        for row in m:
            row += 1  # a view: m changes
        return [x, m, list(x), list(m)]
    run_xp(body)


def test_iter_of_a_zero_d_array_raises_at_the_call():
    for xp in (np, nd):
        zero_d = xp.array(1.5)
        assert not np.iterable(zero_d)
        with pytest.raises(TypeError, match="iteration over a 0-d array"):
            iter(zero_d)
        assert np.iterable(xp.array([1.5]))


def test_gradients_through_elements():
    values = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    x = nd.array(values)
    x.attach_grad()
    with autograd.record():
        y = x[0, 1] * 3 + x[-1, -1] * x[0, 0]
    y.backward()
    expected = np.zeros_like(values)
    expected[0, 1] = 3
    expected[-1, -1] = values[0, 0]
    expected[0, 0] = values[-1, -1]
    np.testing.assert_allclose(x.grad.asnumpy(), expected)
    assert x.asnumpy().tolist() == values.tolist()  # reading elements wrote nothing


def test_an_element_read_while_recording_leaves_its_array_writable():
    """An element is a copy, not a view on autograd's tape: its array may be written by
    index afterwards (a view would forbid that: the value a backward needs would be gone)."""
    values = np.array([1.0, 2.0, 3.0])
    x = nd.array(values)
    x.attach_grad()
    with autograd.record():
        z = x * 2
        y = z[0] * 3
        z[1] = 5
        loss = y + (z * z).sum()
    loss.backward()
    # loss = 3 z0 + z0^2 + 25 + z2^2 with z = 2 x; z1 was overwritten: no gradient
    expected = 2 * np.array([3 + 2 * 2 * values[0], 0, 2 * 2 * values[2]])
    np.testing.assert_allclose(x.grad.asnumpy(), expected)
