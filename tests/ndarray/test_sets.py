"""isin, union1d, intersect1d, setdiff1d, setxor1d, unique_values, unique_counts,
unique_inverse, unique_all against NumPy: one body run with xp=numpy and xp=ndengine, over
generated dtypes and shapes (small value ranges, so the arrays share elements)."""
import inspect

import numpy as np
import pytest
from hypothesis import given, strategies as st

import ndengine as nd

from ndarray_helpers import run_xp
from stats_helpers import arrays_of

pytestmark = pytest.mark.usefixtures("nd_engine")

SET_NAMES = ["isin", "union1d", "intersect1d", "setdiff1d", "setxor1d", "unique_values",
             "unique_counts", "unique_inverse", "unique_all"]


def overlapping():
    """Arrays of every dtype, values in a small range (or NaN and inf), so they overlap."""
    return st.one_of(arrays_of(lo=-3, hi=3), arrays_of(max_dims=2))


@pytest.mark.parametrize("name", SET_NAMES)
def test_signature_is_numpys(name):
    assert inspect.signature(getattr(nd, name)) == inspect.signature(getattr(np, name))
    assert name in nd.__all__


@given(data=st.data())
def test_isin(data):
    kind = data.draw(st.sampled_from([None, "sort", "table"]))
    # kind='table' allocates one bool per integer of the values' range: small ranges only
    values = arrays_of(lo=-3, hi=3) if kind == "table" else overlapping()
    a, b = data.draw(values), data.draw(values)
    invert = data.draw(st.booleans())
    run_xp(lambda xp: xp.isin(xp.array(a), xp.array(b), invert=invert, kind=kind))


def test_isin_errors_and_scalars():
    run_xp(lambda xp: xp.isin(xp.array([1.5, 2.0]), xp.array([2.0]), kind="table"))
    run_xp(lambda xp: xp.isin(xp.array([1, 2]), xp.array([2]), kind="bogus"))
    run_xp(lambda xp: xp.isin(2, [1, 2, 3]))
    run_xp(lambda xp: xp.isin(xp.arange(6).reshape(2, 3), [4, 0], assume_unique=True))


@given(data=st.data())
@pytest.mark.parametrize("name", ["union1d", "intersect1d", "setdiff1d", "setxor1d"])
def test_two_array_routines(name, data):
    a, b = data.draw(overlapping()), data.draw(overlapping())
    run_xp(lambda xp: getattr(xp, name)(xp.array(a), xp.array(b)))


@given(data=st.data())
def test_intersect1d_return_indices(data):
    a = data.draw(arrays_of(lo=-3, hi=3))
    b = data.draw(arrays_of(lo=-3, hi=3))
    assume_unique = data.draw(st.booleans())
    if assume_unique:
        a, b = np.unique(a), np.unique(b)
    run_xp(lambda xp: xp.intersect1d(xp.array(a), xp.array(b), assume_unique=assume_unique,
                                     return_indices=True))


@given(data=st.data())
@pytest.mark.parametrize("name", ["setdiff1d", "setxor1d"])
def test_assume_unique(name, data):
    a = np.unique(data.draw(arrays_of(lo=-3, hi=3)))
    b = np.unique(data.draw(arrays_of(lo=-3, hi=3)))
    run_xp(lambda xp: getattr(xp, name)(xp.array(a), xp.array(b), assume_unique=True))


@given(data=st.data())
@pytest.mark.parametrize("name", ["unique_values", "unique_counts", "unique_inverse",
                                  "unique_all"])
def test_unique_functions(name, data):
    a = data.draw(overlapping())
    run_xp(lambda xp: list(getattr(xp, name)(xp.array(a)))
           if name != "unique_values" else xp.unique_values(xp.array(a)))


def test_unique_results_are_named_tuples_with_numpys_fields():
    x = [3, 1, 3, np.nan, np.nan]
    for name in ("unique_counts", "unique_inverse", "unique_all"):
        got, expected = getattr(nd, name)(x), getattr(np, name)(x)
        assert type(got).__name__ == type(expected).__name__
        assert got._fields == expected._fields
        for field in got._fields:
            assert isinstance(getattr(got, field), nd.NDArray)
            np.testing.assert_array_equal(getattr(got, field).asnumpy(),
                                          getattr(expected, field))


def test_mixed_inputs_and_lists():
    run_xp(lambda xp: xp.union1d(xp.array([1, 2]), [2.5, 1.0]))
    run_xp(lambda xp: xp.setdiff1d([[5, 1], [1, 7]], xp.array([7], dtype=xp.uint8)))
    run_xp(lambda xp: xp.setxor1d(xp.array([True, False]), [1, 3]))
    run_xp(lambda xp: xp.intersect1d(xp.array([1, 2]), [2], return_indices=True,
                                     assume_unique=True))


def test_value_sized_routines_see_pending_writes():
    """They wait for their inputs: an earlier pushed write is in the result."""
    x = nd.zeros(5, dtype=np.int64)
    x[2:] = 7
    assert nd.intersect1d(x, [7, 8]).tolist() == [7]
    x[:] = 3
    assert nd.setdiff1d(x, [7]).tolist() == [3]
    assert nd.union1d(x, [1]).tolist() == [1, 3]
    assert nd.isin(x, [3]).tolist() == [True] * 5
