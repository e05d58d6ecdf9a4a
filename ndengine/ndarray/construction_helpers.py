"""NumPy's construction and indexing helpers on NDArrays: append, delete, resize, rollaxis,
logspace, tri, tril_indices, triu_indices, diag_indices, fill_diagonal, ix_, trim_zeros
(``HELPERS``, NumPy's parameter lists through ``signatures.numpy_function``).

Each is NumPy's own algorithm written over ndengine's functions, so every step is a pushed
op (or a view) with NumPy's dtypes and errors, and autograd and fusion see the steps:
append is a concatenate; delete a take of the kept indices (computed at the call from the
length and ``obj``, with NumPy's own ``delete`` on an index range, so its errors are
NumPy's); resize a concatenate of repeats; rollaxis a transpose (a view); logspace a power
of a linspace; tri a comparison of two aranges; fill_diagonal a put into the array (in
place). What depends on values waits, as ``nonzero`` does: tril_indices and triu_indices
(nonzero of a tri), ix_ of a boolean array (its nonzero), trim_zeros (it reads which
slices along each axis hold a nonzero). An NDArray given as ``obj`` or ``new_shape`` is
read at the call (the result's shape depends on it).
"""
import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from ..core import NDArray
from .arguments import array_of, first_context, read_values
from .creation import arange, linspace, zeros
from .functions import FUNCTIONS
from .pushed import PUSHED
from .shaping import SHAPING
from .signatures import numpy_function
from .statistics import FUNCTIONS as _STATISTICS

__all__ = ["HELPERS"]

_concatenate, _ravel = SHAPING["concatenate"], SHAPING["ravel"]


def _append(arr, values, axis=None):
    ctx = first_context(arr, values)
    arr = array_of(arr, ctx)
    if axis is None:
        arr = _ravel(arr) if arr.ndim != 1 else arr
        values, axis = _ravel(array_of(values, ctx)), arr.ndim - 1
    return _concatenate((arr, values), axis=axis)


def _delete(arr, obj, axis=None):
    arr = array_of(arr)
    if axis is None:
        arr, axis = (_ravel(arr) if arr.ndim != 1 else arr), 0
    axis = normalize_axis_index(axis, arr.ndim)
    kept = np.delete(np.arange(arr.shape[axis]), read_values(obj))  # NumPy's checks of obj
    return PUSHED["take"](arr, kept, axis=axis)


def _resize(a, new_shape):
    new_shape = read_values(new_shape)
    if isinstance(new_shape, (int, np.integer)):
        new_shape = (new_shape,)
    a = _ravel(array_of(a))
    new_size = 1
    for length in new_shape:
        new_size *= length
        if length < 0:
            raise ValueError("all elements of `new_shape` must be non-negative")
    if a.size == 0 or new_size == 0:
        return zeros(new_shape, dtype=a.dtype, ctx=a.context)
    repeats = (new_size + a.size - 1) // a.size
    return SHAPING["reshape"](_concatenate((a,) * repeats)[:new_size], new_shape)


def _rollaxis(a, axis, start=0):
    a = array_of(a)
    n = a.ndim
    axis = normalize_axis_index(axis, n)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise np.exceptions.AxisError(f"'start' arg requires {-n} <= start < {n + 1}, but "
                                      f"{start} was passed in")
    if axis < start:
        start -= 1  # the axis was removed before it
    if axis == start:
        return a[...]
    axes = [i for i in range(n) if i != axis]
    axes.insert(start, axis)
    return a.transpose(axes)


def _logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    if not isinstance(base, (float, int)) and np.ndim(base):
        # a base array is broadcast with the bounds: it may decide what axis means
        ctx = first_context(start, stop, base)
        start, stop, base = (array_of(v, ctx) for v in (start, stop, base))
        ndmax = len(np.broadcast_shapes(start.shape, stop.shape, base.shape))
        start, stop, base = (v.reshape((1,) * (ndmax - v.ndim) + v.shape)
                             for v in (start, stop, base))
        base = SHAPING["expand_dims"](base, axis)
    y = linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    result = FUNCTIONS["power"](base, y)
    return result if dtype is None else result.astype(dtype, copy=False)


def _tri(N, M=None, k=0, dtype=float, *, like=None):
    if M is None:
        M = N
    rows, columns = arange(N), arange(-k, M - k)
    result = FUNCTIONS["greater_equal"](rows.reshape(-1, 1), columns.reshape(1, -1))
    return result.astype(dtype, copy=False)


def _tril_indices(n, k=0, m=None):
    return _STATISTICS["nonzero"](_tri(n, m, k=k, dtype=bool))


def _triu_indices(n, k=0, m=None):
    return _STATISTICS["nonzero"](FUNCTIONS["logical_not"](_tri(n, m, k=k - 1, dtype=bool)))


def _diag_indices(n, ndim=2):
    index = arange(n)
    return (index,) * ndim


def _fill_diagonal(a, val, wrap=False):
    if not isinstance(a, NDArray):
        raise TypeError("fill_diagonal writes into an NDArray (ndengine writes only into "
                        "NDArrays); for a NumPy array use numpy.fill_diagonal")
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    end = None
    if a.ndim == 2:
        step = a.shape[1] + 1
        if not wrap:  # a tall matrix's diagonal does not wrap around
            end = a.shape[1] * a.shape[1]
    else:
        if len(set(a.shape)) != 1:
            raise ValueError("All dimensions of input must be of equal length")
        step = 1 + int(np.cumprod(a.shape[:-1]).sum())
    PUSHED["put"](a, np.arange(a.size)[:end:step], val)


def _ix_(*args):
    ctx = first_context(*args)
    out = []
    for k, new in enumerate(args):
        if not isinstance(new, NDArray):
            new = np.asarray(new)
            if new.size == 0:
                new = new.astype(np.intp)  # an empty list indexes, as NumPy's
            new = array_of(new, ctx)
        if new.ndim != 1:
            raise ValueError("Cross index must be 1 dimensional")
        if new.dtype == bool:
            (new,) = _STATISTICS["nonzero"](new)
        out.append(new.reshape((1,) * k + (new.size,) + (1,) * (len(args) - k - 1)))
    return tuple(out)


def _trim_zeros(filt, trim="fb", axis=None):
    filt = array_of(filt)
    trim = trim.lower()
    if trim not in {"fb", "bf", "f", "b"}:
        raise ValueError(f"unexpected character(s) in `trim`: {trim!r}")
    axes = tuple(range(filt.ndim)) if axis is None else normalize_axis_tuple(
        axis, filt.ndim, argname="axis")
    if not axes:
        return filt
    # per axis, which slices hold a nonzero: NumPy's bounds of argwhere(filt), read here
    holds = [_STATISTICS["any"](filt, axis=tuple(i for i in range(filt.ndim) if i != ax))
             for ax in range(filt.ndim)]
    found = [np.flatnonzero(h.asnumpy()) for h in holds]
    key = []
    for ax, where in enumerate(found):
        if ax not in axes:
            key.append(slice(None))
        elif where.size == 0:  # all zeros: an empty slice along every axis trimmed
            key.append(slice(0, 0))
        else:
            key.append(slice(int(where[0]) if "f" in trim else None,
                             int(where[-1]) + 1 if "b" in trim else None))
    return filt[tuple(key)]


_ROWS = {
    "append": (_append, "A pushed concatenate (of the raveled arrays where axis is None)."),
    "delete": (_delete, "A pushed take of the kept indices; an NDArray ``obj`` is read at "
                        "the call."),
    "resize": (_resize, "A pushed concatenate of repeats, reshaped; an NDArray ``new_shape`` "
                        "is read at the call."),
    "rollaxis": (_rollaxis, "A view (a transpose), as NumPy's."),
    "logspace": (_logspace, "power(base, linspace(...)), pushed ops; NDArray bounds are read "
                            "at the call, as linspace reads them."),
    "tri": (_tri, "A pushed comparison of two aranges (``like=`` is taken; the result is an "
                  "NDArray)."),
    "tril_indices": (_tril_indices, "nonzero(tri(n, m, k, dtype=bool)): waits for the count."),
    "triu_indices": (_triu_indices, "nonzero(~tri(n, m, k - 1, dtype=bool)): waits for the "
                                    "count."),
    "diag_indices": (_diag_indices, "(arange(n),) * ndim, one array, as NumPy's."),
    "fill_diagonal": (_fill_diagonal, "A pushed put into ``a`` (an NDArray), in place."),
    "ix_": (_ix_, "Views of the index arrays; a boolean one becomes its nonzero (waits)."),
    "trim_zeros": (_trim_zeros, "A view of ``filt``; reads which slices hold a nonzero "
                                "(waits)."),
}

HELPERS = {name: numpy_function(name, getattr(np, name), implementation, doc)
           for name, (implementation, doc) in _ROWS.items()}
