"""Basic views (core/views.py's ``basic_view`` and ``view_geometry``, array_methods.py's
``x[key]`` and ``x[key] = v``), differential against NumPy: the geometry kept per (array
geometry, key), the NumPy view a small array's view carries from its making, and the write
of a view onto itself that pushes nothing. Every test runs under all three engines."""
import threading

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import ndengine as nd
from ndengine.core import views as core_views

pytestmark = pytest.mark.usefixtures("nd_engine")

SMALL_SHAPES = hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=6)


def fresh_data(view):
    """The NumPy view ``_data`` makes for ``view``'s geometry when none was kept."""
    twin = view._view_of(view.shape, view._offset, view._strides, view.dtype, False)
    assert twin._view_cache is None
    return twin._data()


def interface(a):
    found = a.__array_interface__
    return found["data"][0], found["shape"], found["strides"], found["typestr"]


@given(data=st.data(), dtype=st.sampled_from(["float64", "int32", "bool"]))
def test_a_basic_view_is_numpys_view_of_the_same_memory(data, dtype):
    shape = data.draw(SMALL_SHAPES, label="shape")
    base = np.arange(int(np.prod(shape))).astype(dtype).reshape(shape)
    key = data.draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True),
                    label="key")
    x = nd.array(base)
    parent_key = data.draw(st.sampled_from([(), (slice(None, None, -1),)]), label="parent")
    parent, expected = x[parent_key], base[parent_key]  # a view of a view too
    try:
        want = expected[key]
    except IndexError:
        with pytest.raises(IndexError):
            parent[key]
        return
    if not isinstance(want, np.ndarray):  # an int for every axis: a scalar, not a view
        assert parent[key].item() == want
        return
    view = parent[key]
    assert view.shape == want.shape and view.dtype == want.dtype
    assert view.base is x  # NumPy's: the owner, for a view of a view too
    kept = view._view_cache
    if kept is not None:  # a small array's view carries NumPy's own view of the key
        if want.size:
            assert interface(kept) == interface(fresh_data(view))
        np.testing.assert_array_equal(kept, want)
    np.testing.assert_array_equal(view.asnumpy(), want)


@pytest.fixture
def asked(monkeypatch):
    """The shapes of the arrays whose stand-in (``_fake``) NumPy was asked, in order."""
    shapes = []
    fake = nd.NDArray._fake

    def counting_fake(self):
        shapes.append(self.shape)
        return fake(self)
    monkeypatch.setattr(nd.NDArray, "_fake", counting_fake)
    return shapes


def test_the_geometry_of_a_key_is_asked_of_numpy_once_per_array_geometry(asked):
    core_views._slicings.clear()
    u = nd.array(np.arange(10.0))
    for _ in range(3):  # (keys of ints and slices alone never ask: test_keys_of_ints_and_...)
        assert u[None, 1:-1].shape == (1, 8) and u[2:][..., ::2].shape == (4,)
    assert asked == [(10,), (8,)]  # u[None, 1:-1], then [..., ::2] of an (8,) view


@given(data=st.data())
def test_element_writes_and_row_views_by_ints_are_numpys(data):
    """Keys of ints for the leading axes (an element's 0-d view, a row) take their geometry
    from the strides, without asking NumPy: written element by element through strided,
    reversed and offset parents, the values are NumPy's."""
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5))
    base = np.arange(float(np.prod(shape))).reshape(shape)
    parent_key = data.draw(st.sampled_from([(), (slice(None, None, -1),), (slice(1, None),),
                                            (Ellipsis, slice(None, None, 2))]))
    x, expected = nd.array(base), base.copy()
    parent, want_parent = x[parent_key], expected[parent_key]
    if not want_parent.size:
        return
    count = data.draw(st.integers(1, want_parent.ndim))
    keys = [tuple(data.draw(st.integers(-n, n - 1)) for n in want_parent.shape[:count])
            for _ in range(5)]
    for i, key in enumerate(keys):
        parent[key] = -1.0 - i
        want_parent[key] = -1.0 - i
        np.testing.assert_array_equal(parent[key].asnumpy(), want_parent[key])
    np.testing.assert_array_equal(x.asnumpy(), expected)


def test_keys_of_ints_and_slices_never_ask_numpy(asked):
    x = nd.array(np.arange(60.0).reshape(3, 4, 5))[:, ::-1]
    asked.clear()  # (the reversed view asked once)
    for i in range(3):
        for j in range(4):
            x[i, j] = i * j
            x[i, j, 2] = -1.0
            x[i, j:j + 2, ::-2] = 7.0
    assert x[2].shape == (4, 5) and x[1:, 2::-1].shape == (2, 3, 5) and asked == []
    expected = np.arange(60.0).reshape(3, 4, 5)[:, ::-1]
    for i in range(3):
        for j in range(4):
            expected[i, j] = i * j
            expected[i, j, 2] = -1.0
            expected[i, j:j + 2, ::-2] = 7.0
    np.testing.assert_array_equal(x.asnumpy(), expected)
    with pytest.raises(IndexError):
        x[3] = 0.0  # out of bounds: NumPy's own error, from the stand-in
    assert asked


def test_a_view_of_a_large_array_has_a_numpy_view_once_its_memory_is_taken():
    x = nd.empty(1 << 18)  # a pool chunk: no memory before an op runs on it
    view = x[1:-1]
    assert view._view_cache is None
    x[...] = 2.0
    np.testing.assert_array_equal(view.asnumpy(), np.full((1 << 18) - 2, 2.0))
    np.testing.assert_array_equal(x.asnumpy(), np.full(1 << 18, 2.0))  # x's NumPy view made
    later = x[2:]  # the memory is taken: the view carries NumPy's own view of it
    assert later._view_cache is not None
    assert interface(later._view_cache) == interface(fresh_data(later))
    np.testing.assert_array_equal(later.asnumpy(), np.full((1 << 18) - 2, 2.0))


def _ops_seen(nd_engine, body):
    seen = []

    def hook(name, ctx, reads, writes, info, start, end, failed):
        seen.append(name)
    previous = nd_engine.set_run_hook(hook)
    try:
        body()
        nd.waitall()
    finally:
        nd_engine.set_run_hook(previous)
    return [name for name in seen if name not in ("delete_variable",)]


@pytest.mark.parametrize("key", [slice(1, -1), (slice(None, None, 2),), (Ellipsis, 3),
                                 (slice(None), None), 4])
def test_writing_a_view_onto_itself_pushes_nothing(nd_engine, key):
    u = nd.array(np.arange(10.0))
    expected = np.arange(10.0)

    def body():
        view = u[key] if not isinstance(key, int) else u[key:key + 1].reshape(())
        u[key] = view  # NumPy copies the bytes onto themselves: nothing changes
    seen = _ops_seen(nd_engine, body)
    assert not [name for name in seen if "copy" in name or "bulk" in name], seen
    np.testing.assert_array_equal(u.asnumpy(), expected)


def test_writing_another_view_of_the_same_memory_copies(nd_engine):
    u = nd.array(np.arange(10.0))
    u[1:] = u[:-1]  # overlapping: NumPy reads it all before writing
    expected = np.arange(10.0)
    expected[1:] = expected[:-1].copy()
    np.testing.assert_array_equal(u.asnumpy(), expected)
    v = nd.array(np.arange(6.0))
    v[::-1] = v  # the same memory, another geometry
    np.testing.assert_array_equal(v.asnumpy(), np.arange(6.0)[::-1])


def test_an_augmented_assignment_to_a_slice_of_a_small_array(nd_engine):
    u0 = np.linspace(0, 1, 50)
    u = nd.array(u0)
    for _ in range(20):
        u[1:-1] += 0.25 * (u[2:] - 2 * u[1:-1] + u[:-2])
        u0[1:-1] += 0.25 * (u0[2:] - 2 * u0[1:-1] + u0[:-2])
    np.testing.assert_array_equal(u.asnumpy(), u0)


def test_views_made_while_another_thread_writes_the_array_read_the_written_values(nd_engine):
    u = nd.array(np.zeros(100))
    done = []

    def writer():
        for i in range(200):
            u[:] = float(i)
        done.append(True)
    thread = threading.Thread(target=writer)
    thread.start()
    thread.join()
    assert done and np.all(u[10:20].asnumpy() == 199.0)
