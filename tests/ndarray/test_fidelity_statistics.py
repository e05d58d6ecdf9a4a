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


_TOO_FEW = [("var", (0,), None, {"ddof": -1}), ("std", (0, 3), 0, {"ddof": -2}),
            ("var", (3,), None, {"ddof": 3}), ("std", (3,), None, {"ddof": 5}),
            ("var", (4, 2), 0, {"ddof": 4, "keepdims": True}), ("var", (2, 3), 1, {"ddof": 7})]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("case", _TOO_FEW)
def test_var_and_std_over_ddof_elements_or_fewer_give_numpys_value(dtype, case):
    """NumPy divides by max(count - ddof, 0): an empty slice with a negative ddof gives 0.0 (the
    sum of no squares over a positive count), ddof >= count gives sum(d*d) / 0: NaN, or inf
    where the squares sum to more than 0."""
    name, shape, axis, params = case
    values = (np.arange(int(np.prod(shape))) % 3 + 1).reshape(shape).astype(dtype)

    def run(xp):
        return getattr(xp, name)(xp.asarray(values), axis=axis, **params)
    with np.errstate(all="ignore"):
        expected = run(np)
    assert_same_bits(expected, run(nd), f"{name}({dtype}{shape}, axis={axis}, {params})")


def _warnings_of(body):
    """The warnings ``body`` gives (NumPy's FP warnings on), as (message, filename) pairs,
    ndengine's surfaced by waiting for the result."""
    import warnings
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="warn"):
        warnings.simplefilter("always")
        result = body()
        if isinstance(result, nd.NDArray):
            result.wait_to_read()
    return {(str(w.message), w.filename) for w in caught}


@pytest.mark.parametrize("name, shape, params", [
    ("mean", (0,), {}), ("mean", (0, 3), {"axis": 0}), ("var", (2, 0), {"axis": 1}),
    ("std", (0,), {"keepdims": True}), ("var", (3,), {"ddof": 3}), ("std", (4, 2), {"ddof": 8}),
    ("var", (0,), {"ddof": -1})])
def test_too_few_elements_warn_as_numpy_at_the_users_line(name, shape, params):
    """NumPy's "Mean of empty slice" / "Degrees of freedom <= 0 for slice" at every call and
    its FP warnings of the divisions (at the wait), each once and attributed to this file."""
    values = np.ones(shape)
    expected = {message for message, _ in _warnings_of(
        lambda: getattr(np, name)(values, **params))}
    array = nd.asarray(values)
    for _ in range(2):  # the second call runs the remembered plan: it warns again
        got = _warnings_of(lambda: getattr(nd, name)(array, **params))
        assert {message for message, _ in got} == expected
        assert {filename for _, filename in got} == {__file__}
