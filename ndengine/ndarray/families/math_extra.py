"""NumPy's sinc, ediff1d, trapezoid, geomspace, vander and cross on NDArrays
(``COMPOSED``, NumPy's parameter lists through ``signatures.numpy_function``).

Each is NumPy's own algorithm written over ndengine's functions, as ``construction_helpers``
does, so every step is a pushed op (or a view) with NumPy's dtypes and errors, and autograd
and fusion see the steps: sinc is ``sin(pi*y)/(pi*y)`` with NumPy's 1e-20 for zeros;
ediff1d a subtraction of two shifted views, concatenated with ``to_begin``/``to_end`` cast
to the input's dtype; trapezoid the sum of NumPy's ``d * (y[1:] + y[:-1]) / 2.0``;
geomspace a logspace between the log10 of the bounds, its ends set to the bounds exactly
and its sign restored; vander a cumulative product of the repeated column (NumPy's
``multiply.accumulate``, so the powers are NumPy's bits, not ``power``'s); cross NumPy's
component formulas, in NumPy's order of operations, stacked along the last axis.

geomspace reads whether a bound is zero (NumPy's error): a wait where a bound is an NDArray.
"""
import warnings

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ..arguments import array_of, first_context
from ..construction_helpers import HELPERS
from ..creation import ones
from ..functions import FUNCTIONS, broadcast_to
from ..shaping import SHAPING
from ..signatures import numpy_function
from ..statistics import FUNCTIONS as _STATISTICS

__all__ = ["COMPOSED"]

_multiply, _subtract, _add = FUNCTIONS["multiply"], FUNCTIONS["subtract"], FUNCTIONS["add"]
_concatenate, _ravel = SHAPING["concatenate"], SHAPING["ravel"]


def _sinc(x):
    x = array_of(x)
    y = _multiply(np.pi, FUNCTIONS["where"](FUNCTIONS["equal"](x, 0), 1.0e-20, x))
    return FUNCTIONS["divide"](FUNCTIONS["sin"](y), y)


def _edge(values, dtype, ctx, name):
    """``to_begin``/``to_end`` raveled in the input's dtype, under NumPy's same_kind rule."""
    if values is None:
        return None
    values = array_of(values, ctx)
    if not np.can_cast(values.dtype, dtype, casting="same_kind"):
        raise TypeError(f"dtype of `{name}` must be compatible with input `ary` under the "
                        "`same_kind` rule.")
    return _ravel(values).astype(dtype, copy=False)


def _ediff1d(ary, to_end=None, to_begin=None):
    ctx = first_context(ary, to_end, to_begin)
    ary = _ravel(array_of(ary, ctx))
    begin = _edge(to_begin, ary.dtype, ctx, "to_begin")
    end = _edge(to_end, ary.dtype, ctx, "to_end")
    differences = _subtract(ary[1:], ary[:-1])
    if begin is None and end is None:
        return differences
    if differences.dtype != ary.dtype:  # NumPy subtracts into an array of the input's dtype
        differences = differences.astype(ary.dtype)
    parts = [part for part in (begin, differences, end) if part is not None]
    return _concatenate(parts)


def _trapezoid(y, x=None, dx=1.0, axis=-1):
    ctx = first_context(y, x, dx)
    y = array_of(y, ctx)
    if x is None:
        d = dx
    else:
        x = array_of(x, ctx)
        if x.ndim == 1:
            d = _STATISTICS["diff"](x)
            shape = [1] * y.ndim
            shape[axis] = d.shape[0]
            d = d.reshape(shape)
        else:
            d = _STATISTICS["diff"](x, axis=axis)
    upper = [slice(None)] * y.ndim
    lower = [slice(None)] * y.ndim
    upper[axis] = slice(1, None)
    lower[axis] = slice(None, -1)
    heights = _add(y[tuple(upper)], y[tuple(lower)])
    return _STATISTICS["sum"](FUNCTIONS["divide"](_multiply(d, heights), 2.0), axis=axis)


def _geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    ctx = first_context(start, stop)
    start, stop = array_of(start, ctx), array_of(stop, ctx)
    bounds_zero = [_STATISTICS["any"](FUNCTIONS["equal"](bound, 0)) for bound in (start, stop)]
    if any(bool(zero.item()) for zero in bounds_zero):
        raise ValueError("Geometric sequence cannot include zero")
    working = np.result_type(start.dtype, stop.dtype, float(num), np.zeros((), dtype))
    dtype = working if dtype is None else np.dtype(dtype)
    start, stop = start.astype(working), stop.astype(working)
    out_sign = FUNCTIONS["sign"](start)
    start = FUNCTIONS["divide"](start, out_sign)
    stop = FUNCTIONS["divide"](stop, out_sign)
    result = HELPERS["logspace"](FUNCTIONS["log10"](start), FUNCTIONS["log10"](stop), num=num,
                                 endpoint=endpoint, base=10.0, dtype=working)
    if num > 0:  # the ends exactly, as NumPy's
        result[0] = start
        if num > 1 and endpoint:
            result[-1] = stop
    result = _multiply(result, out_sign)
    if axis != 0:
        result = SHAPING["moveaxis"](result, 0, axis)
    return result.astype(dtype, copy=False)


def _vander(x, N=None, increasing=False):
    x = array_of(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    if N is None:
        N = len(x)
    dtype = np.promote_types(x.dtype, int)
    column = x.astype(dtype, copy=False).reshape(-1, 1)
    powers = [ones((len(x), min(N, 1)), dtype=dtype, ctx=x.context)]
    if N > 1:
        repeated = broadcast_to(column, (len(x), N - 1))
        powers.append(_STATISTICS["cumprod"](repeated, axis=1))
    result = _concatenate(powers, axis=1)
    return result if increasing else result[:, ::-1]


def _cross_components(a, b):
    """NumPy's cross formulas on the last axes' components (a missing third one is zero),
    in NumPy's order of operations."""
    a0, a1, b0, b1 = a[..., 0], a[..., 1], b[..., 0], b[..., 1]
    a2 = a[..., 2] if a.shape[-1] == 3 else None
    b2 = b[..., 2] if b.shape[-1] == 3 else None
    third = _subtract(_multiply(a0, b1), _multiply(a1, b0))
    if a2 is None and b2 is None:
        return None, third
    negative = FUNCTIONS["negative"]
    if a2 is None:
        return (_multiply(a1, b2), negative(_multiply(a0, b2)), third), None
    if b2 is None:
        return (negative(_multiply(a2, b1)), _multiply(a2, b0), third), None
    return (_subtract(_multiply(a1, b2), _multiply(a2, b1)),
            _subtract(_multiply(a2, b0), _multiply(a0, b2)), third), None


def _cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if axis is not None:
        axisa, axisb, axisc = (axis,) * 3
    ctx = first_context(a, b)
    a, b = array_of(a, ctx), array_of(b, ctx)
    if a.ndim < 1 or b.ndim < 1:
        raise ValueError("At least one array has zero dimension")
    axisa = normalize_axis_index(axisa, a.ndim, msg_prefix="axisa")
    axisb = normalize_axis_index(axisb, b.ndim, msg_prefix="axisb")
    a, b = SHAPING["moveaxis"](a, axisa, -1), SHAPING["moveaxis"](b, axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n"
                         "(dimension must be 2 or 3)")
    if a.shape[-1] == 2 or b.shape[-1] == 2:
        warnings.warn("Arrays of 2-dimensional vectors are deprecated. Use arrays of "
                      "3-dimensional vectors instead. (deprecated in NumPy 2.0)",
                      DeprecationWarning, stacklevel=3)
    shape = np.broadcast_shapes(a.shape[:-1], b.shape[:-1])
    if a.shape[-1] == 3 or b.shape[-1] == 3:
        axisc = normalize_axis_index(axisc, len(shape) + 1, msg_prefix="axisc")
    dtype = np.promote_types(a.dtype, b.dtype)
    a, b = a.astype(dtype, copy=False), b.astype(dtype, copy=False)
    components, planar = _cross_components(a, b)
    if planar is not None:  # two 2-vectors: the z component alone
        return broadcast_to(planar, shape).astype(dtype, copy=False)
    components = [broadcast_to(c, shape).astype(dtype, copy=False) for c in components]
    return SHAPING["moveaxis"](SHAPING["stack"](components, axis=-1), -1, axisc)


_ROWS = {
    "sinc": (_sinc, "sin(pi*y)/(pi*y), y = where(x == 0, 1e-20, x): pushed ops."),
    "ediff1d": (_ediff1d, "A pushed subtraction of shifted views, concatenated with "
                          "``to_begin``/``to_end``."),
    "trapezoid": (_trapezoid, "sum(d * (y[1:] + y[:-1]) / 2.0, axis): pushed ops."),
    "geomspace": (_geomspace, "A logspace between log10 of the bounds, pushed ops; reads "
                              "whether a bound is zero (a wait for an NDArray bound)."),
    "vander": (_vander, "A pushed cumulative product of the repeated column (NumPy's bits)."),
    "cross": (_cross, "NumPy's component formulas, pushed ops, stacked."),
}

COMPOSED = {name: numpy_function(name, getattr(np, name), implementation, doc)
            for name, (implementation, doc) in _ROWS.items()}
