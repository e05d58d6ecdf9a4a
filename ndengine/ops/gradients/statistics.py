"""Gradient rules of the nan- and where- reductions (nansum, nanmean, nanprod, nanstd,
nanvar, nanmax, nanmin; sum, mean, prod, max, min, std and var with NumPy's ``where=``,
``initial=``, ``mean=``, ``correction=``), and of medians and quantiles: ``STATISTICS``
(conventions: ops/gradients/rules.py).

The reductions read the elements ``where=`` selects and, for the nan- ones, that are not
NaN: the others take a zero gradient. ``initial=`` scales a product's gradient (a max's or
min's initial value takes none); ``mean=`` (std, var) is an input: the centre NumPy uses,
with its own gradient.

Medians and quantiles (median, nanmedian, quantile, percentile, nanquantile, nanpercentile):
the result interpolates between two order statistics of each reduced lane, ``(1 - t) *
sorted[lo] + t * sorted[hi]``, so the gradient goes to those two elements with weights ``1 -
t`` and ``t`` (one element when they coincide: a clipped or whole index). The positions are
NumPy's (``numpy.lib._function_base_impl._quantile``): the virtual index of the continuous
methods (linear, weibull, hazen, median_unbiased, normal_unbiased,
interpolated_inverted_cdf, midpoint with t of 0 or 1/2), or the index of lower, higher and
nearest; the nan- ones count each lane's non-NaN elements (NaNs sort last). A ``q`` given as
an array input takes the slope ``(sorted[hi] - sorted[lo]) * d index / d q`` (zero for the
discrete methods and midpoint). The three inverted-CDF step methods (inverted_cdf,
averaged_inverted_cdf, closest_observation) and ``weights=`` raise NotImplementedError.
Ties: the element argsort puts first takes the gradient. Ranks come from argsort (an op);
the weights are element-wise ops on them, so a lane of N elements and Q quantiles costs
Q * N.
"""
from __future__ import annotations

import math

import numpy as np

from .common import _is_array, _broadcast, _axes, _kept, _spread, _inverse
from .reductions import _prod

__all__ = ["STATISTICS"]


# ---------------------------------------------------------------- nan- and where- reductions

def _array_param(inputs, params, name):
    """The input ``name`` (named in ``arrays``), else None."""
    names = list(params.get("arrays", ()))
    return inputs[1 + names.index(name)] if name in names else None


def _mask(f, inputs, params, nan):
    """The elements the reduction reads: ``where=`` and, for a nan- one, not NaN (None:
    every element)."""
    x = inputs[0]
    mask = _array_param(inputs, params, "where")
    if nan:
        present = f("logical_not", f("isnan", x))
        mask = present if mask is None else f("logical_and", present, mask)
    return mask


def _masked(f, mask, grad):
    return grad if mask is None else f("where", mask, grad, 0)


def _count_of(f, x, mask, axes):
    """The number of elements each result reads (a number, or an array with the reduced
    axes kept)."""
    if mask is None:
        return math.prod(x.shape[a] for a in axes)
    return f("sum", _broadcast(f, mask, x.shape), axis=axes, keepdims=True)


def _reduction(kind, nan=False):
    """sum, mean, prod, std, var, max, min (``kind``), with ``where=``/``initial=``/
    ``mean=``/``correction=`` and, for ``nan``, NaNs skipped."""
    def rule(f, grads, inputs, outputs, params):
        x, g, out = inputs[0], grads[0], outputs[0]
        axis, keepdims = params.get("axis"), params.get("keepdims", False)
        axes = _axes(axis, len(x.shape))
        mask = _mask(f, inputs, params, nan)
        rest = [None] * (len(inputs) - 1)
        if kind == "sum":
            return [_masked(f, mask, _spread(f, g, x, axis, keepdims))] + rest
        if kind == "mean":
            grad = f("true_divide", _spread(f, g, x, axis, keepdims),
                     _count_of(f, x, mask, axes))
            return [_masked(f, mask, grad)] + rest
        if kind == "prod":
            initial = params.get("initial")
            if initial is not None:
                g = f("multiply", g, initial)
            ones = x if mask is None else f("where", mask, x, 1)
            (grad,) = _prod(f, g, ones, None, axis=axis, keepdims=keepdims)
            return [_masked(f, mask, grad)] + rest
        if kind == "extreme":  # max, min: every element equal to the result, where read
            chosen = f("equal", x, _spread(f, out, x, axis, keepdims))
            if mask is not None:
                chosen = f("logical_and", chosen, mask)
            return [f("where", chosen, _spread(f, g, x, axis, keepdims), 0)] + rest
        return _spread_var(f, g, x, out, inputs, params, mask, axes, kind == "std")
    return rule


def _spread_var(f, g, x, out, inputs, params, mask, axes, std):
    """var (std): 2 (x - m) / (N - ddof) (over 2 std); ``mean=`` as m takes the negated sum."""
    axis, keepdims = params.get("axis"), params.get("keepdims", False)
    ddof = params.get("correction", params.get("ddof", 0))
    ddof = 0 if ddof is None else ddof
    count = _count_of(f, x, mask, axes)
    if _is_array(count):
        dof = f("subtract", count, ddof)
        dof = f("where", f("greater", dof, 0), dof, math.nan)
    else:
        dof = count - ddof if count - ddof > 0 else math.nan
    center = _array_param(inputs, params, "mean")
    if center is not None:
        m = center
    elif mask is None:
        m = f("mean", x, axis=axes, keepdims=True)
    else:
        m = f("true_divide", f("sum", f("where", mask, x, 0), axis=axes, keepdims=True), count)
    scale = f("true_divide", _spread(f, g, x, axis, keepdims), dof)
    if std:
        scale = f("true_divide", scale, _kept(f, out, x.shape, axes, keepdims))
    else:
        scale = f("multiply", scale, 2)
    grad = _masked(f, mask, f("multiply", scale, f("subtract", x, m)))
    results = [grad] + [None] * (len(inputs) - 1)
    if center is not None:
        names = list(params["arrays"])
        results[1 + names.index("mean")] = f("negative", f("sum", grad, axis=axes,
                                                           keepdims=True))
    return results


# ---------------------------------------------------------------- medians and quantiles

_CONTINUOUS = {"linear": (1, 1), "weibull": (0, 0), "hazen": (0.5, 0.5),
               "median_unbiased": (1 / 3, 1 / 3), "normal_unbiased": (3 / 8, 3 / 8),
               "interpolated_inverted_cdf": (0, 1), "midpoint": (1, 1)}
_DISCRETE = {"lower": "floor", "higher": "ceil", "nearest": "rint"}


def _positions(f, q, count, method):
    """(lo, hi, t, slope) for fractions ``q`` and lane sizes ``count`` (arrays broadcasting
    together): the order statistics interpolated, the weight of ``hi``, d index / d q."""
    last = f("subtract", count, 1) if _is_array(count) else count - 1
    if method in _DISCRETE:
        index = f(_DISCRETE[method], f("multiply", q, last))
        index = f("maximum", f("minimum", index, last), 0)
        return index, index, None, None
    if method not in _CONTINUOUS:
        raise NotImplementedError(f"the gradient of a quantile with method={method!r} is not "
                                  "built (a step function of q): the continuous methods "
                                  f"({', '.join(_CONTINUOUS)}) and {', '.join(_DISCRETE)} "
                                  "have one")
    alpha, beta = _CONTINUOUS[method]
    span = f("add", count, 1 - alpha - beta) if _is_array(count) else count + 1 - alpha - beta
    virtual = f("add", f("multiply", q, span), alpha - 1)
    below = f("floor", virtual)
    lo = f("maximum", f("minimum", below, last), 0)
    hi = f("maximum", f("minimum", f("add", below, 1), last), 0)
    t = f("subtract", virtual, below)
    if method == "midpoint":
        t = f("where", f("equal", t, 0), 0.0, 0.5)
        return lo, hi, t, None
    return lo, hi, t, span


def _quantile(percent=False, nan=False, median=False):
    def rule(f, grads, inputs, outputs, params):
        x, g = inputs[0], grads[0]
        names = list(params.get("arrays", ()))
        if "weights" in names or params.get("weights") is not None:
            raise NotImplementedError("the gradient of a weighted quantile (weights=, method "
                                      "inverted_cdf) is not built")
        method = params.get("method", "linear")
        q_input = _array_param(inputs, params, "q")
        if median:
            q = 0.5
        elif q_input is not None:
            q = f("true_divide", q_input, 100) if percent else q_input
        else:
            q = np.asarray(params["q"], dtype=np.float64) / (100 if percent else 1)
        q_shape = tuple(np.shape(q) if not _is_array(q) else q.shape)
        shape, ndim = tuple(x.shape), len(x.shape)
        axes = _axes(params.get("axis"), ndim)
        kept = tuple(a for a in range(ndim) if a not in axes)
        perm = kept + axes
        lanes = tuple(shape[a] for a in kept)
        n = math.prod(shape[a] for a in axes)
        moved = f.reshape(f.transpose(x, perm), lanes + (n,))
        rank = f("argsort", f("argsort", moved, axis=-1), axis=-1)
        lead = (1,) * (len(lanes) + 1)
        q = f.reshape(q, q_shape + lead) if _is_array(q) else np.reshape(q, q_shape + lead)
        if not _is_array(q):  # a param: an operand of the ops, on the gradient's device
            q = f("add", f.zeros(q.shape, np.float64, g), q)
        count = n
        if nan:
            count = f("sum", f("logical_not", f("isnan", moved)), axis=-1, keepdims=True)
        lo, hi, t, slope = _positions(f, q, count, method)
        g = f.reshape(g, q_shape + lanes + (1,))
        at_lo, at_hi = f("equal", rank, lo), f("equal", rank, hi)
        if _is_array(t):
            grad = f("add", f("where", at_lo, f("multiply", g, f("subtract", 1, t)), 0),
                     f("where", at_hi, f("multiply", g, t), 0))
        else:  # one order statistic
            grad = f("where", at_lo, g, 0)
        if q_shape:
            grad = f("sum", grad, axis=tuple(range(len(q_shape))))
        if nan:
            grad = f("where", f("isnan", moved), 0, grad)
        grad = f.transpose(f.reshape(grad, lanes + tuple(shape[a] for a in axes)),
                           _inverse(perm))
        results = [grad] + [None] * (len(inputs) - 1)
        if q_input is not None and slope is not None:
            gap = f("sum", f("subtract", f("where", at_hi, moved, 0), f("where", at_lo, moved, 0)),
                    axis=-1, keepdims=True)
            dq = f("multiply", f("multiply", g, gap), slope)
            dq = f("sum", dq, axis=tuple(range(len(q_shape), len(dq.shape))))
            if percent:
                dq = f("true_divide", dq, 100)
            results[1 + names.index("q")] = f.reshape(dq, q_input.shape)
        return results
    return rule


STATISTICS = {
    "nansum": _reduction("sum", nan=True),
    "nanmean": _reduction("mean", nan=True),
    "nanprod": _reduction("prod", nan=True),
    "nanstd": _reduction("std", nan=True),
    "nanvar": _reduction("var", nan=True),
    "nanmax": _reduction("extreme", nan=True),
    "nanmin": _reduction("extreme", nan=True),
    "sum_where": _reduction("sum"),
    "mean_where": _reduction("mean"),
    "prod_where": _reduction("prod"),
    "std_where": _reduction("std"),
    "var_where": _reduction("var"),
    "max_where": _reduction("extreme"),
    "min_where": _reduction("extreme"),
    "median": _quantile(median=True),
    "nanmedian": _quantile(nan=True, median=True),
    "quantile": _quantile(),
    "percentile": _quantile(percent=True),
    "nanquantile": _quantile(nan=True),
    "nanpercentile": _quantile(percent=True, nan=True),
}
