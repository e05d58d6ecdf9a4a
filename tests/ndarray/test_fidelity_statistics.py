"""mean, var, std and their nan- forms over empty axes: NumPy's values bit for bit (mean of
an empty complex axis is nan+nanj; NumPy's 0 / 0 NaN has its sign bit set), dtypes and
shapes."""
import numpy as np
import pytest

import ndengine as nd
from fidelity_helpers import assert_same_bits

pytestmark = pytest.mark.usefixtures("nd_engine")

_DTYPES = ["complex128", "complex64", "float64", "float32", "float16", "int64", "bool"]
_EMPTY_CASES = [((0, 3), 0), ((3, 0), 1), ((0,), None), ((2, 0), None), ((2, 0, 3), (0, 1))]


def _empty_reduction(xp, name, input_dtype, shape, axis, **params):
    return getattr(xp, name)(xp.zeros(shape, input_dtype), axis=axis, **params)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's "Mean of empty slice"
@pytest.mark.parametrize("name", ["mean", "var", "std", "nanmean", "nanvar", "nanstd"])
@pytest.mark.parametrize("dtype", _DTYPES)
def test_reduction_of_an_empty_axis_gives_numpys_nan(name, dtype):
    for shape, axis in _EMPTY_CASES:
        for keepdims in (False, True):
            with np.errstate(all="ignore"):
                expected = _empty_reduction(np, name, dtype, shape, axis, keepdims=keepdims)
            got = _empty_reduction(nd, name, dtype, shape, axis, keepdims=keepdims)
            assert_same_bits(expected, got, f"{name}({dtype}{shape}, axis={axis})")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("result_dtype", ["complex128", "complex64", "float32", "int64"])
def test_mean_of_an_empty_axis_with_a_dtype_gives_numpys_value(result_dtype):
    for shape, axis in _EMPTY_CASES:
        with np.errstate(all="ignore"):
            expected = _empty_reduction(np, "mean", "float64", shape, axis, dtype=result_dtype)
        got = _empty_reduction(nd, "mean", "float64", shape, axis, dtype=result_dtype)
        assert_same_bits(expected, got, f"mean(float64{shape}, axis={axis}, dtype={result_dtype})")
