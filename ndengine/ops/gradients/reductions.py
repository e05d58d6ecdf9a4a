"""Gradient rules of reductions (sum, mean, max, prod, std, var, ptp, average) and
accumulations (cumsum, cumprod, diff): ``REDUCTIONS`` (conventions: ops/gradients/rules.py;
the nan- and where- variants, medians and quantiles: gradients/statistics.py)."""
from __future__ import annotations

import math

import numpy as np

from .common import _one, _conj, _broadcast, _axes, _kept, _spread, _count, _inverse, _flip

__all__ = ["REDUCTIONS"]


def _sum(f, g, x, out, axis=None, keepdims=False, **_):
    return [_spread(f, g, x, axis, keepdims)]


def _mean(f, g, x, out, axis=None, keepdims=False, **_):
    count = _count(x.shape, _axes(axis, len(x.shape)))
    return [_spread(f, g, x, axis, keepdims, 1.0 / max(count, 1))]


def _extreme(f, g, x, out, axis=None, keepdims=False, **_):
    """max/min: the gradient goes to every element equal to the result."""
    g_full = _spread(f, g, x, axis, keepdims)
    out_full = _spread(f, out, x, axis, keepdims)
    return [f("where", f("equal", x, out_full), g_full, 0)]


def _ptp(f, g, x, out, axis=None, keepdims=False, **_):
    axes = _axes(axis, len(x.shape))
    g_full = _spread(f, g, x, axis, keepdims)
    high = f("max", x, axis=axes, keepdims=True)
    low = f("min", x, axis=axes, keepdims=True)
    return [f("subtract", f("where", f("equal", x, high), g_full, 0),
              f("where", f("equal", x, low), g_full, 0))]


def _exclusive_products(f, a):
    """Along the last axis: each element's product of the others (exact with zeros)."""
    lead, n = a.shape[:-1], a.shape[-1]
    ones = f("add", f.zeros(lead + (1,), a.dtype, a), 1)
    if n == 1:
        return ones

    def before(b):  # product of the elements before each one
        return f("concatenate", ones, f("cumprod", b[..., :-1], axis=-1), axis=-1)
    return f("multiply", before(a), before(a[..., ::-1])[..., ::-1])


def _prod(f, g, x, out, axis=None, keepdims=False, **_):
    shape, ndim = tuple(x.shape), len(x.shape)
    axes = _axes(axis, ndim)
    if not axes:
        return [g]
    kept = tuple(a for a in range(ndim) if a not in axes)
    perm = kept + axes
    moved = f.reshape(f.transpose(x, perm), tuple(shape[a] for a in kept) + (-1,))
    others = f.reshape(_exclusive_products(f, moved), tuple(shape[a] for a in perm))
    return [f("multiply", _spread(f, g, x, axis, keepdims),
              _conj(f, f.transpose(others, _inverse(perm))))]


def _dof(shape, axes, ddof):
    """N - ddof (NaN where it is not positive: NumPy's result is then inf or NaN)."""
    dof = _count(shape, axes) - ddof
    return dof if dof > 0 else math.nan


def _centered(f, x, axes):
    return f("subtract", x, f("mean", x, axis=axes, keepdims=True))


def _var(f, g, x, out, axis=None, keepdims=False, ddof=0, **_):
    axes = _axes(axis, len(x.shape))
    scale = 2.0 / _dof(x.shape, axes, ddof)
    return [f("multiply", _spread(f, g, x, axis, keepdims, scale), _centered(f, x, axes))]


def _std(f, g, x, out, axis=None, keepdims=False, ddof=0, **_):
    axes = _axes(axis, len(x.shape))
    scale = 1.0 / _dof(x.shape, axes, ddof)
    spread = f("true_divide", _spread(f, g, x, axis, keepdims, scale),
               _kept(f, out, x.shape, axes, keepdims))
    return [f("multiply", spread, _centered(f, x, axes))]


def _average(f, grads, inputs, outputs, params):
    """numpy.average: without weights the mean; with them sum(a * w) / sum(w) (a second
    output, ``returned``, is sum(w) broadcast)."""
    a = inputs[0]
    axis, keepdims = params.get("axis"), params.get("keepdims", False)
    if len(inputs) == 1:
        return _mean(f, grads[0], a, outputs[0], axis=axis, keepdims=keepdims)
    w = inputs[1]
    axes = _axes(axis, len(a.shape))
    wb = w
    if len(w.shape) != len(a.shape):  # 1-d weights along the one axis
        wb = f.reshape(w, tuple(n if i == axes[0] else 1 for i, n in enumerate(a.shape)))
    total = f("sum", _broadcast(f, wb, a.shape), axis=axes, keepdims=True)
    g = _kept(f, grads[0], a.shape, axes, keepdims)
    g_scaled = f("true_divide", g, total)
    da = f("multiply", g_scaled, wb)
    dw = f("multiply", g_scaled, f("subtract", a, _kept(f, outputs[0], a.shape, axes,
                                                          keepdims)))
    if len(grads) > 1:  # returned: the weights' sum (broadcast as the average)
        dw = f("add", dw, _kept(f, grads[1], a.shape, axes, keepdims))
    dw = f.sum_to(_broadcast(f, dw, a.shape), wb.shape)
    return [da, f.reshape(dw, w.shape)]


# ---------------------------------------------------------------- accumulations

def _reverse_cumsum(f, g, axis):
    return f("cumsum", g[_flip(axis)], axis=axis)[_flip(axis)]


def _accumulation(kind, nan=False):
    """cumsum/cumprod/cumulative_*/nancumsum/nancumprod: the gradient along the axis
    (flattened for axis None), through the initial element cumulative_* may prepend; the
    nan- ones give the NaNs a zero gradient."""
    def rule(f, g, x, out, axis=None, include_initial=False, **_):
        flat = axis is None or not x.shape
        source = f.reshape(x, (-1,)) if flat else x
        axis = 0 if flat else axis % len(x.shape)
        if include_initial:
            g = g[(slice(None),) * axis + (slice(1, None),)]
            out = out[(slice(None),) * axis + (slice(1, None),)]
        if kind == "sum":
            grad = _reverse_cumsum(f, g, axis)
        else:  # d out[j] / d x[i] = out[j] / x[i] (j >= i): a nonzero input
            divisor = f("where", f("isnan", source), 1, source) if nan else source  # NaN: 1
            grad = f("true_divide", _reverse_cumsum(f, f("multiply", g, _conj(f, out)), axis),
                     _conj(f, divisor))
        if nan:
            grad = f("where", f("isnan", source), 0, grad)
        return [f.reshape(grad, x.shape) if flat else grad]
    return _one(rule)


def _diff(f, grads, inputs, outputs, params):
    """numpy.diff's n differences of concatenate([prepend, a, append]) along the axis:
    the adjoint of each difference is a difference of the zero-padded gradient."""
    a, g = inputs[0], grads[0]
    n, ndim = params.get("n", 1), len(a.shape)
    names = list(params.get("arrays", ()))
    if n == 0:
        return [g] + [None] * (len(inputs) - 1)
    axis = params.get("axis", -1) % ndim
    for _ in range(n):
        widths = tuple((1, 1) if i == axis else (0, 0) for i in range(ndim))
        padded = f("pad", g, pad_width=widths, mode="constant")
        g = f("subtract", padded[(slice(None),) * axis + (slice(None, -1),)],
              padded[(slice(None),) * axis + (slice(1, None),)])

    def length(name):
        if name in names:
            shape = inputs[1 + names.index(name)].shape
        elif name in params:
            shape = np.shape(params[name])
        else:
            return 0
        return shape[axis] if shape else 1
    before, middle = length("prepend"), a.shape[axis]
    parts = {"prepend": (0, before), "append": (before + middle, None)}
    results = [g[(slice(None),) * axis + (slice(before, before + middle),)]]
    for name in names:
        start, stop = parts[name]
        results.append(g[(slice(None),) * axis + (slice(start, stop),)])
    return results


REDUCTIONS = {
    "sum": _one(_sum),
    "mean": _one(_mean),
    "max": _one(_extreme),
    "min": _one(_extreme),
    "prod": _one(_prod),
    "std": _one(_std),
    "var": _one(_var),
    "ptp": _one(_ptp),
    "average": _average,
    "cumsum": _accumulation("sum"),
    "cumprod": _accumulation("prod"),
    "cumulative_sum": _accumulation("sum"),
    "cumulative_prod": _accumulation("prod"),
    "nancumsum": _accumulation("sum", nan=True),
    "nancumprod": _accumulation("prod", nan=True),
    "diff": _diff,
}
