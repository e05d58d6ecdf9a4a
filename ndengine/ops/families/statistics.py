"""Statistics: NumPy's nan-reductions, any/all, ptp, count_nonzero, medians and quantiles,
average, cumulative sums and products, diff and histogram, each one op whose kernel calls
NumPy's own function (see ``numpy_functions``; NumPy's loops release the GIL).

Also ``sum_where`` & co.: np.sum, prod, mean, max, min, std and var called with NumPy's
``where=``, ``initial=``, ``mean=`` or ``correction=``, which the plain reductions
(``reductions``) do not take.
"""
from __future__ import annotations

import operator

import numpy as np

from .numpy_functions import (NumpyFunction, arg_reduce_shapes, axis_index, flat_or_same_shapes,
                              reduce_shapes)

# name -> NumPy function; a reduction over axis, with NumPy's out= (count_nonzero has none)
REDUCTIONS = {
    "any": np.any, "all": np.all, "ptp": np.ptp, "count_nonzero": np.count_nonzero,
    "nansum": np.nansum, "nanprod": np.nanprod, "nanmean": np.nanmean, "nanstd": np.nanstd,
    "nanvar": np.nanvar, "nanmin": np.nanmin, "nanmax": np.nanmax,
    "median": np.median, "nanmedian": np.nanmedian,
    # the plain reductions with where=/initial=/mean=/correction=
    "sum_where": np.sum, "prod_where": np.prod, "mean_where": np.mean, "max_where": np.max,
    "min_where": np.min, "std_where": np.std, "var_where": np.var,
}
_WITHOUT_OUT = ("count_nonzero",)
ARG_REDUCTIONS = {"nanargmin": np.nanargmin, "nanargmax": np.nanargmax}
QUANTILES = {"quantile": np.quantile, "percentile": np.percentile,
             "nanquantile": np.nanquantile, "nanpercentile": np.nanpercentile}
ACCUMULATIONS = {"cumsum": np.cumsum, "cumprod": np.cumprod, "nancumsum": np.nancumsum,
                 "nancumprod": np.nancumprod}
CUMULATIVE = {"cumulative_sum": np.cumulative_sum, "cumulative_prod": np.cumulative_prod}


def _quantile_shapes(shapes, params):
    """q's shape, then the reduced shape."""
    q_shape = shapes["q"] if "q" in shapes else np.shape(params["q"])
    return [tuple(q_shape) + reduce_shapes(shapes, params)[0]]


def _nan_quantile_shapes(shapes, params):
    """As quantile's; but NumPy's nanquantile of an empty array is nanmean's (no q axes)."""
    if 0 in shapes["a"]:
        return reduce_shapes(shapes, params)
    return _quantile_shapes(shapes, params)


def _cumulative_shapes(shapes, params):
    """np.cumulative_sum: a 0-d input is one element; include_initial adds one."""
    shape = list(shapes["a"] or (1,))
    axis = params.get("axis")
    axis = 0 if axis is None else axis_index(params, len(shape))
    shape[axis] += 1 if params.get("include_initial") else 0
    return [tuple(shape)]


def _diff_shapes(shapes, params):
    """The input's shape, with (length + prepended + appended - n) along the axis; a 0-d
    prepend or append is one element there."""
    shape = list(shapes["a"])
    n = operator.index(params.get("n", 1))
    if n == 0:
        return [tuple(shape)]
    axis = axis_index(params, len(shape))
    total = shape[axis] + sum(shapes[k][axis] if shapes[k] else 1
                              for k in ("prepend", "append") if k in shapes)
    shape[axis] = max(total - n, 0)
    return [tuple(shape)]


def _average_shapes(shapes, params):
    shape = reduce_shapes(shapes, params)[0]
    return [shape, shape] if params.get("returned") else [shape]


def histogram_bin_count(shapes, params):
    """The number of bins: measured (``bin_count``, for a bins rule such as 'auto'), the
    edges given, less one, or the integer given."""
    if "bin_count" in params:
        return params["bin_count"]
    if "bins" in shapes:
        return max(shapes["bins"][0] - 1, 0) if shapes["bins"] else 0
    bins = params.get("bins", 10)
    if isinstance(bins, np.ndarray):
        return max(len(bins) - 1, 0)
    return operator.index(bins)


def _histogram_shapes(shapes, params):
    count = histogram_bin_count(shapes, params)
    return [(count,), (count + 1,)]


def _histogram_bin_count(a, bins=10, range=None, weights=None):
    """The number of bins np.histogram makes for a bins rule ('auto', 'fd', ...)."""
    return np.intp(len(np.histogram_bin_edges(a, bins, range, weights)) - 1)


def _functions():
    made = []
    for name, function in REDUCTIONS.items():
        made.append(NumpyFunction(name, function, reduce_shapes,
                                  takes_out=name not in _WITHOUT_OUT,
                                  doc=f"numpy.{function.__name__} over axis (None, an int or "
                                      f"a tuple), keepdims"
                                      + (", where=, initial=, mean=, correction="
                                         if name.endswith("_where") else "")))
    for name, function in ARG_REDUCTIONS.items():
        made.append(NumpyFunction(name, function, arg_reduce_shapes, takes_out=True))
    for name, function in QUANTILES.items():
        rule = _nan_quantile_shapes if name.startswith("nan") else _quantile_shapes
        made.append(NumpyFunction(name, function, rule, takes_out=True,
                                  doc=f"numpy.{name}: q (a scalar, a NumPy array param or an "
                                      f"input), axis, method, keepdims, weights"))
    for name, function in ACCUMULATIONS.items():
        made.append(NumpyFunction(name, function, flat_or_same_shapes(None), takes_out=True,
                                  out_always=True))
    for name, function in CUMULATIVE.items():
        made.append(NumpyFunction(name, function, _cumulative_shapes, takes_out=True,
                                  out_always=True))
    made.append(NumpyFunction("diff", np.diff, _diff_shapes,
                              doc="numpy.diff: n, axis; prepend and append as inputs"))
    made.append(NumpyFunction("average", np.average, _average_shapes, num_outputs=2,
                              doc="numpy.average: axis, weights (an input), returned, keepdims"))
    made.append(NumpyFunction("histogram", np.histogram, _histogram_shapes, num_outputs=2,
                              own_params=("bin_count",),
                              doc="numpy.histogram: (hist, edges); bins an int, edges (a "
                                  "param or an input) or a rule with its measured bin_count"))
    made.append(NumpyFunction("histogram_bin_count", _histogram_bin_count,
                              lambda shapes, params: [()],
                              doc="the number of bins numpy.histogram makes for a bins rule"))
    return made


def register_all() -> None:
    for function in _functions():
        function.register(kind="reduce" if function.shapes is reduce_shapes else "other")


__all__ = ["REDUCTIONS", "ARG_REDUCTIONS", "QUANTILES", "ACCUMULATIONS", "CUMULATIVE",
           "histogram_bin_count", "register_all"]
