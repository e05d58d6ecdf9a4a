"""Gradient rules of joins, moves and shapes that copy (concatenate, stack, split, roll,
tile, repeat, pad, diag, diagonal, trace, tril, triu): ``MOVEMENT`` (views need no rule:
the tape's view rule; conventions: ops/gradients/rules.py)."""
from __future__ import annotations

import math

import numpy as np

from .common import _one, _broadcast, _inverse, _scatter

__all__ = ["MOVEMENT"]


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


def _stack(f, grads, inputs, outputs, params):
    g = grads[0]
    axis = params.get("axis", 0) % len(g.shape)
    return [g[(slice(None),) * axis + (i,)] for i in range(len(inputs))]


def _split(f, grads, inputs, outputs, params):
    (x,) = inputs
    axis = params.get("axis", 0) % len(x.shape)
    return [f("concatenate", *grads, axis=axis)]


def _roll(f, grads, inputs, outputs, params):
    if len(inputs) > 1:  # an NDArray shift, read by the op
        raise NotImplementedError("the gradient of roll with an NDArray shift is not built: "
                                  "pass the shift as an int or a tuple")
    shift, axis = params.get("shift", 0), params.get("axis")
    back = tuple(-s for s in shift) if isinstance(shift, tuple) else -shift
    return [f("roll", grads[0], shift=back, axis=axis)]


def _tile(f, g, x, out, reps=1, **_):
    reps = tuple(int(r) for r in np.ravel(reps))
    ndim = max(len(x.shape), len(reps))
    reps = (1,) * (ndim - len(reps)) + reps
    shape = (1,) * (ndim - len(x.shape)) + tuple(x.shape)
    pairs = tuple(n for pair in zip(reps, shape) for n in pair)  # (r0, n0, r1, n1, ...)
    summed = f("sum", f.reshape(g, pairs), axis=tuple(range(0, 2 * ndim, 2)))
    return [f.reshape(summed, x.shape)]


def _repeat(f, g, x, out, repeats=1, axis=None, **_):
    counts = np.asarray(repeats).astype(np.intp).ravel()
    if axis is None:
        shape, axis = (math.prod(x.shape),), 0
    else:
        shape = tuple(x.shape) or (1,)
        axis = axis % len(shape)
    n = shape[axis]
    if counts.size == 1:
        r = int(counts[0])
        split = shape[:axis] + (n, r) + shape[axis + 1:]
        grad = f("sum", f.reshape(g, split), axis=axis + 1)
    else:  # each output position's source, as numpy.repeat places them
        source = np.repeat(np.arange(n), counts)
        grad = _scatter(f, shape, (slice(None),) * axis + (source,), g)
    return [f.reshape(grad, x.shape)]


_PAD_GATHERS = ("edge", "wrap", "reflect", "symmetric")


def _pad(f, grads, inputs, outputs, params):
    """constant/empty: the gradient's middle; edge/wrap/reflect/symmetric (reflect_type
    "even"): every output position read one input position, along each axis: the
    gradient is added back there (the positions: numpy.pad of an arange, metadata)."""
    from ..families.shaping import pad_pairs
    x, g = inputs[0], grads[0]
    mode = params.get("mode", "constant")
    pairs = pad_pairs(params.get("pad_width", 0), len(x.shape))
    middle = tuple(slice(lo, lo + n) for (lo, _), n in zip(pairs, x.shape))
    if mode in ("constant", "empty"):
        results = [g[middle]]
        names = list(params.get("keyword_inputs", ()))
        for name, value in zip(names, inputs[1:]):
            if name != "constant_values" or math.prod(value.shape) != 1:
                raise NotImplementedError(f"the gradient of pad's {name} (an array of "
                                          f"several values) is not built")
            rest = f("subtract", f("sum", g), f("sum", g[middle]))
            results.append(f.reshape(rest, value.shape))
        return results
    if mode not in _PAD_GATHERS or params.get("reflect_type", "even") != "even":
        raise NotImplementedError(
            f"the gradient of pad(mode={mode!r}"
            + (f", reflect_type={params['reflect_type']!r}" if "reflect_type" in params
               else "") + ") is not built: modes constant, empty, edge, wrap, reflect and "
            "symmetric (reflect_type 'even') have one")
    for axis, ((lo, hi), n) in enumerate(zip(pairs, x.shape)):
        if lo or hi:
            source = np.pad(np.arange(n), (lo, hi), mode=mode)
            shape = tuple(g.shape[:axis]) + (n,) + tuple(g.shape[axis + 1:])
            g = _scatter(f, shape, (slice(None),) * axis + (source,), g)
    return [g] + [None] * (len(inputs) - 1)


def _diagonal_positions(length, offset):
    """Rows and columns of the diagonal ``offset`` (``length`` elements)."""
    steps = np.arange(length)
    return steps + max(-offset, 0), steps + max(offset, 0)


def _diagonal(f, g, a, out, offset=0, axis1=0, axis2=1, **_):
    ndim = len(a.shape)
    axis1, axis2 = axis1 % ndim, axis2 % ndim
    others = tuple(i for i in range(ndim) if i not in (axis1, axis2))
    perm = others + (axis1, axis2)
    rows, cols = _diagonal_positions(g.shape[-1], offset)
    moved = _scatter(f, tuple(a.shape[i] for i in perm),
                     (slice(None),) * len(others) + (rows, cols), g)
    return [f.transpose(moved, _inverse(perm))]


def _trace(f, g, a, out, offset=0, axis1=0, axis2=1, **_):
    stand_in = np.broadcast_to(np.empty((), bool), a.shape)
    length = np.diagonal(stand_in, offset, axis1, axis2).shape[-1]
    spread = _broadcast(f, f.reshape(g, tuple(g.shape) + (1,)), tuple(g.shape) + (length,))
    return _diagonal(f, spread, a, None, offset=offset, axis1=axis1, axis2=axis2)


def _diag(f, g, v, out, k=0, **_):
    if len(v.shape) == 1:
        return [f("diagonal", g, offset=k)]
    rows, cols = _diagonal_positions(g.shape[0], k)
    return [_scatter(f, v.shape, (rows, cols), g)]


def _triangle(name):
    def rule(f, g, m, out, k=0, **_):
        grad = f(name, g, k=k)
        return [f("sum", grad, axis=0) if len(m.shape) == 1 else grad]
    return _one(rule)


MOVEMENT = {
    "concatenate": _concatenate,
    "stack": _stack,
    "split": _split,
    "roll": _roll,
    "tile": _one(_tile),
    "repeat": _one(_repeat),
    "pad": _pad,
    "diag": _one(_diag),
    "diagonal": _one(_diagonal),
    "trace": _one(_trace),
    "tril": _triangle("tril"),
    "triu": _triangle("triu"),
}
