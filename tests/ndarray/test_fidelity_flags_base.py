"""``x.base`` and ``x.flags`` against NumPy's, over the views NumPy's slicing, transposes and
reshapes give: ``base`` names the array that owns the memory (None for an owner; a view of a
view names the owner, as NumPy collapses the chain), and ``flags`` reports NumPy's contiguity of
the same geometry, without a wait."""
import numpy as np
import pytest

import ndengine as nd

pytestmark = pytest.mark.usefixtures("nd_engine")

# each: (name, a function of the owner giving a view of it)
_VIEWS = {
    "slice": lambda a: a[1:],
    "step": lambda a: a[::2],
    "column": lambda a: a[:, 1],
    "transpose": lambda a: a.T,
    "reshape": lambda a: a.reshape(-1),
    "view_of_view": lambda a: a[1:][:, ::2],
    "expand": lambda a: a[None],
    "ellipsis": lambda a: a[...],
    "reversed": lambda a: a[::-1],
}
_FLAG_NAMES = ("c_contiguous", "f_contiguous", "owndata", "writeable", "aligned",
               "writebackifcopy", "fnc", "forc", "behaved", "carray", "farray", "contiguous")


@pytest.mark.parametrize("view", sorted(_VIEWS))
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.complex128])
def test_views_name_the_owner_and_report_numpys_flags(view, dtype):
    values = np.arange(24).astype(dtype).reshape(4, 6).copy()  # an owner
    x = nd.array(values)
    got, want = _VIEWS[view](x), _VIEWS[view](values)
    assert x.base is None and values.base is None
    assert got.base is x  # NumPy: want.base is values
    assert want.base is values
    for name in _FLAG_NAMES:
        assert getattr(got.flags, name) == getattr(want.flags, name), (view, name)
        assert got.flags[name.upper()] == want.flags[name.upper()], (view, name)
    assert repr(got.flags) == repr(want.flags)


def test_new_arrays_own_their_memory():
    x = nd.ones((2, 3))
    for fresh in (x + 1, x.copy(), nd.zeros(3), nd.array([1, 2]), x.reshape(3, 2).copy()):
        assert fresh.base is None and fresh.flags.owndata
    assert not x[0].flags.owndata


def test_a_view_keeps_its_owner_alive():
    view = nd.arange(5)[1:]
    assert view.base.shape == (5,)
    assert np.array_equal(view.base.asnumpy(), np.arange(5))


def test_flag_letters_and_errors_are_numpys():
    x, values = nd.ones((2, 2)), np.ones((2, 2))
    for key in ("C", "F", "O", "W", "A", "X", "FNC", "FORC", "B", "CA", "FA", "CONTIGUOUS"):
        assert x.flags[key] == values.flags[key], key
    with pytest.raises(KeyError):
        x.flags["NOPE"]
    x.flags.writeable = True  # already so: nothing to do
    with pytest.raises(ValueError, match="read-only"):
        x.flags.writeable = False
    with pytest.raises(ValueError):
        x.flags.c_contiguous = False
    assert (x + 1).flags.writeable  # nothing was changed
