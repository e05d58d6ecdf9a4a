"""Gradient rules, one table over op names (tinygrad's ``gradient.py`` is the model).

``RULES[name](f, grads, inputs, outputs, params)`` gives one gradient per input (None where
an input takes none: a condition, an index, a Python scalar), for the op's output gradients
``grads``. Rules are written with ops, through ``f``, which the autograd layer supplies:
``f(name, *inputs, **params)`` pushes the op ``name`` and returns its output, and
``f.zeros(shape, dtype, like)``, ``f.reshape(x, shape)``, ``f.transpose(x, axes)``,
``f.scatter_add(like, index, values)`` (zeros shaped as ``like``, ``values`` added at
``index``, repeats accumulating: ``numpy.add.at``); arrays are sliced with ``[...]``.
They never compute on data themselves, so gradients are ordinary pushed ops. A gradient may
have the broadcast shape: the caller sums it down to its input's shape.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["RULES"]


def _one(rule):
    """A rule of an op with one output: ``rule(f, g, *inputs, out=, **params)``."""
    def full(f, grads, inputs, outputs, params):
        return rule(f, grads[0], *inputs, out=outputs[0], **params)
    return full


def _unary(derivative):
    """``g * derivative(f, x, out)``."""
    return _one(lambda f, g, x, out, **_: [f("multiply", g, derivative(f, x, out))])


def _is_array(x):
    return hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, (int, float))


def _true_divide(f, g, x, y, out, **_):
    return [f("true_divide", g, y),
            f("negative", f("true_divide", f("multiply", g, out), y)) if _is_array(y) else None]


def _power(f, g, x, y, out, **_):
    dx = f("multiply", g, f("multiply", y, f("power", x, f("subtract", y, 1))))
    dy = f("multiply", g, f("multiply", out, f("log", x))) if _is_array(y) else None
    return [dx, dy]


def _select(condition):
    """maximum/minimum: the gradient goes to the chosen input (ties: the first)."""
    def rule(f, g, x, y, out, **_):
        first = f(condition, x, y)
        return [f("where", first, g, 0), f("where", first, 0, g) if _is_array(y) else None]
    return rule


def _spread(f, g, x, axis, keepdims, scale=None):
    """A reduction's gradient: ``g`` (of the reduced shape) broadcast back over ``x``."""
    ndim = len(x.shape)
    if axis is None:
        axes = tuple(range(ndim))
    else:
        axes = tuple(a % ndim for a in ((axis,) if isinstance(axis, int) else axis))
    if not keepdims:
        g = f.reshape(g, tuple(1 if i in axes else n for i, n in enumerate(x.shape)))
    if scale is not None:
        g = f("multiply", g, scale)
    return f("add", f.zeros(x.shape, g.dtype, g), g)


def _sum(f, g, x, out, axis=None, keepdims=False, **_):
    return [_spread(f, g, x, axis, keepdims)]


def _mean(f, g, x, out, axis=None, keepdims=False, **_):
    ndim = len(x.shape)
    axes = range(ndim) if axis is None else ((axis,) if isinstance(axis, int) else axis)
    count = math.prod(x.shape[a % ndim] for a in axes)
    return [_spread(f, g, x, axis, keepdims, 1.0 / max(count, 1))]


def _extreme(f, g, x, out, axis=None, keepdims=False, **_):
    """max/min: the gradient goes to every element equal to the result."""
    g_full = _spread(f, g, x, axis, keepdims)
    out_full = _spread(f, out, x, axis, keepdims)
    return [f("where", f("equal", x, out_full), g_full, 0)]


def _matmul(f, g, x, y, out, **_):
    if len(x.shape) < 2 or len(y.shape) < 2:
        raise NotImplementedError("the gradient of matmul/dot of 1-d arrays is not built yet: "
                                  "reshape the vector to a (1, n) or (n, 1) matrix")
    def swap(a):  # the last two axes exchanged
        ndim = len(a.shape)
        return f.transpose(a, tuple(range(ndim - 2)) + (ndim - 1, ndim - 2))
    return [f("matmul", g, swap(y)), f("matmul", swap(x), g)]


def _where(f, g, condition, x, y, out, **_):
    return [None, f("where", condition, g, 0) if _is_array(x) else None,
            f("where", condition, 0, g) if _is_array(y) else None]


def _clip(f, g, x, out, a_min=None, a_max=None, **_):
    inside = f("equal", out, x)  # not clipped (a bound equal to x passes the gradient)
    return [f("where", inside, g, 0)]


def _concatenate(f, grads, inputs, outputs, params):
    """Each input's gradient: its slab of the output's."""
    g, axis = grads[0], params.get("axis", 0)
    flat = axis is None  # the inputs were raveled
    axis = 0 if flat else axis % len(g.shape)
    results, start = [], 0
    for x in inputs:
        length = math.prod(x.shape) if flat else x.shape[axis]
        part = g[(slice(None),) * axis + (slice(start, start + length),)]
        results.append(f.reshape(part, x.shape) if flat else part)
        start += length
    return results


def _take_index(f, g, x, out, key=None, **_):
    return [f.scatter_add(x, key, g)]


def _roll(f, g, x, out, shift=0, axis=None, **_):
    back = tuple(-s for s in shift) if isinstance(shift, tuple) else -shift
    return [f("roll", g, shift=back, axis=axis)]


def _pad(f, g, x, out, pad_width=0, mode="constant", **_):
    if mode != "constant":
        raise NotImplementedError(f"the gradient of pad(mode={mode!r}) is not built yet")
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.intp).reshape(-1, 2)
                             if np.ndim(pad_width) > 1 else np.asarray(pad_width, np.intp),
                             (len(x.shape), 2))
    return [g[tuple(slice(int(lo), int(lo) + n) for (lo, _), n in zip(widths, x.shape))]]


def _repeat(f, g, x, out, repeats=1, axis=None, **_):
    if not isinstance(repeats, int):
        raise NotImplementedError("the gradient of repeat with per-element repeats is not "
                                  "built yet")
    if axis is None:
        size = math.prod(x.shape)
        return [f.reshape(f("sum", f.reshape(g, (size, repeats)), axis=1), x.shape)]
    axis %= len(x.shape)
    shape = x.shape[:axis] + (x.shape[axis], repeats) + x.shape[axis + 1:]
    return [f("sum", f.reshape(g, shape), axis=axis + 1)]


def _copy(f, g, x, out, dtype=None, **_):
    return [g if not _is_array(x) or g.dtype == x.dtype else f("copy", g, dtype=x.dtype)]


RULES = {
    "add": _one(lambda f, g, x, y, out, **_: [g, g]),
    "subtract": _one(lambda f, g, x, y, out, **_: [g, f("negative", g)]),
    "multiply": _one(lambda f, g, x, y, out, **_: [f("multiply", g, y), f("multiply", g, x)]),
    "true_divide": _one(_true_divide),
    "negative": _one(lambda f, g, x, out, **_: [f("negative", g)]),
    "positive": _one(lambda f, g, x, out, **_: [g]),
    "exp": _unary(lambda f, x, out: out),
    "expm1": _unary(lambda f, x, out: f("add", out, 1)),
    "log": _unary(lambda f, x, out: f("reciprocal", x)),
    "log1p": _unary(lambda f, x, out: f("reciprocal", f("add", x, 1))),
    "sqrt": _unary(lambda f, x, out: f("true_divide", 0.5, out)),
    "square": _unary(lambda f, x, out: f("multiply", x, 2)),
    "sin": _unary(lambda f, x, out: f("cos", x)),
    "cos": _unary(lambda f, x, out: f("negative", f("sin", x))),
    "tanh": _unary(lambda f, x, out: f("subtract", 1, f("square", out))),
    "sigmoid": _unary(lambda f, x, out: f("multiply", out, f("subtract", 1, out))),
    "relu": _unary(lambda f, x, out: f("greater", x, 0)),
    "abs": _unary(lambda f, x, out: f("sign", x)),
    "power": _one(_power),
    "maximum": _one(_select("greater_equal")),
    "minimum": _one(_select("less_equal")),
    "where": _one(_where),
    "clip": _one(_clip),
    "copy": _one(_copy),
    "sum": _one(_sum),
    "mean": _one(_mean),
    "max": _one(_extreme),
    "min": _one(_extreme),
    "matmul": _one(_matmul),
    "dot": _one(_matmul),
    "concatenate": _concatenate,
    "take_index": _one(_take_index),
    "roll": _one(_roll),
    "pad": _one(_pad),
    "repeat": _one(_repeat),
}
