"""NumPy's protocols with NDArrays: ``__array__(dtype, copy)`` as NumPy 2 defines it (an
NDArray always gives a copy, so ``copy=False`` is NumPy's ValueError for an object that
cannot avoid one), and NumPy's functions given an argument NumPy makes an object array of
(None, say), which ndengine cannot hold: NumPy's own function runs on NumPy copies."""
import re

import matplotlib
import numpy as np
import pytest

import ndengine as nd
from fidelity_helpers import assert_same_bits

pytestmark = pytest.mark.usefixtures("nd_engine")

_CONVERSIONS = {
    "asarray": lambda x: np.asarray(x),
    "array": lambda x: np.array(x),
    "array_copy": lambda x: np.array(x, copy=True),
    "asarray_copy": lambda x: np.asarray(x, copy=True),
    "asarray_dtype": lambda x: np.asarray(x, dtype=np.float32),
    "array_copy_dtype": lambda x: np.array(x, dtype=np.int8, copy=True),
    "flat": lambda x: np.asarray(x.flat, dtype=np.float32),
}


@pytest.mark.parametrize("convert", sorted(_CONVERSIONS))
def test_a_copy_allowed_is_a_copy_of_the_values(convert):
    values = np.arange(6).reshape(2, 3)
    x = nd.array(values)
    got = _CONVERSIONS[convert](x)
    assert_same_bits(_CONVERSIONS[convert](values), got, convert)
    got[...] = 7  # NumPy's own array: writes to it leave the NDArray as it was
    assert_same_bits(values, x, convert)


_NO_COPY = {
    "asarray": lambda x: np.asarray(x, copy=False),
    "array": lambda x: np.array(x, copy=False),
    "asarray_dtype": lambda x: np.asarray(x, dtype=np.float32, copy=False),
    "dunder": lambda x: x.__array__(copy=False),
}


@pytest.mark.parametrize("convert", sorted(_NO_COPY))
def test_no_copy_is_numpys_error_for_an_object_that_cannot_avoid_one(convert):
    with pytest.raises(ValueError) as numpy_error:
        np.array([0, 1, 2], copy=False)  # NumPy's own case of an object it must copy
    with pytest.raises(ValueError, match=f"^{re.escape(str(numpy_error.value))}$"):
        _NO_COPY[convert](nd.arange(3))


def test_ndengine_array_without_a_copy_gives_numpys_error():
    with pytest.raises(ValueError) as numpy_error:
        np.array([0, 1, 2], copy=False)
    with pytest.raises(ValueError, match=f"^{re.escape(str(numpy_error.value))}$"):
        nd.array([0, 1, 2], copy=False)


_OBJECT_ARGUMENTS = {
    "broadcast_arrays": lambda xp: np.broadcast_arrays(xp.arange(3), None),
    "broadcast_arrays_list": lambda xp: np.broadcast_arrays([None], xp.ones((2, 1))),
    "concatenate": lambda xp: np.concatenate([xp.arange(2), [None]]),
    "stack": lambda xp: np.stack([xp.arange(2), [None, 1]]),
}


@pytest.mark.parametrize("call", sorted(_OBJECT_ARGUMENTS))
def test_an_object_argument_runs_numpys_function(call):
    expected = _OBJECT_ARGUMENTS[call](np)
    got = _OBJECT_ARGUMENTS[call](nd)
    expected, got = (r if isinstance(r, (tuple, list)) else [r] for r in (expected, got))
    assert len(got) == len(expected)
    for e, g in zip(expected, got):
        assert type(g) is np.ndarray and g.dtype == e.dtype and g.shape == e.shape, call
        assert g.tolist() == e.tolist(), call


def test_matplotlib_bar_of_ndarrays():
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def bars(xp):
        figure, axes = plt.subplots()
        try:
            drawn = axes.bar(xp.arange(3), xp.ones(3) * 2)
            figure.canvas.draw()
            return [(b.get_x(), b.get_width(), b.get_height()) for b in drawn]
        finally:
            plt.close(figure)

    assert bars(nd) == bars(np)
