"""repeat's counts converted as NumPy converts them: an array (NumPy's or an NDArray) is cast
to intp under the 'safe' rule, at the call (a float array is NumPy's TypeError, never
truncated counts); Python and NumPy scalars and lists are converted value by value."""
import re

import numpy as np
import pytest

import ndengine as nd
from ndarray_helpers import run_xp

pytestmark = pytest.mark.usefixtures("nd_engine")

_REFUSED = [np.array([1.0, 2.0, 0.0]), np.array(2.0), np.array([1, 2, 0], np.uint64),
            np.array([[1, 2, 0]])]
_CONVERTED = [2.0, np.float64(2.0), [1.0, 2.5, 0.0], np.uint64(2), True,
              np.array([True, False, True]), np.array([1, 2, 0], np.int8), np.array([1, 2, 0])]


def _repeat(xp, counts, as_array, method):
    x = xp.arange(3)
    if as_array:
        counts = xp.asarray(counts)
    return x.repeat(counts) if method else xp.repeat(x, counts)


@pytest.mark.parametrize("method", [False, True], ids=["function", "method"])
@pytest.mark.parametrize("as_array", [False, True], ids=["numpy_counts", "xp_counts"])
@pytest.mark.parametrize("counts", _REFUSED, ids=repr)
def test_counts_numpy_refuses_raise_its_error_at_the_call(counts, as_array, method):
    with pytest.raises((TypeError, ValueError)) as numpy_error:
        _repeat(np, counts, as_array, method)
    with pytest.raises(numpy_error.type, match=f"^{re.escape(str(numpy_error.value))}$"):
        _repeat(nd, counts, as_array, method)


@pytest.mark.parametrize("method", [False, True], ids=["function", "method"])
@pytest.mark.parametrize("counts", _CONVERTED, ids=repr)
def test_counts_numpy_converts_give_its_result(counts, method):
    run_xp(_repeat, counts, False, method)
    if isinstance(counts, np.ndarray):
        run_xp(_repeat, counts, True, method)
