"""Strategies shared by the statistics and sorting tests (tests/test_stats_*.py,
tests/test_sorting_*.py)."""
import numpy as np
from hypothesis import strategies as st

from ndarray_helpers import DTYPES, values, shapes


def any_axis(ndim, *, tuples=True, bad=True):
    """None, an int axis, a tuple of axes, now and then an axis out of bounds."""
    choices = [st.none()]
    if ndim:
        choices.append(st.integers(-ndim, ndim - 1))
        if tuples:
            choices.append(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim)
                           .map(tuple))
    if bad:
        choices.append(st.just(ndim))
    return st.one_of(choices)


@st.composite
def arrays_of(draw, dtypes=DTYPES, min_dims=0, max_dims=3, min_side=0, **bounds):
    """An array of a drawn dtype (floats with NaN and inf unless bounded)."""
    dtype = draw(st.sampled_from(dtypes))
    return draw(values(dtype, shapes(min_dims=min_dims, max_dims=max_dims,
                                     min_side=min_side), **bounds))


@st.composite
def with_nans(draw, dtypes=("float32", "float64"), min_dims=0, max_dims=3, min_side=0):
    """Float arrays where NaN is common (whole NaN slices included)."""
    a = draw(arrays_of([np.dtype(d) for d in dtypes], min_dims, max_dims, min_side,
                       lo=-50, hi=50))
    mask = draw(values(np.dtype(bool), a.shape))
    a = a.copy()
    a[mask] = np.nan
    return a
