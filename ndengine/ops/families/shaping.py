"""Shape-changing copies run by NumPy's own functions: tile, repeat, roll, pad, tril, triu, diag,
diagonal, trace, indices, fftfreq, rfftfreq (see numpy_operators for the table's columns).

The shape functions mirror NumPy's own argument handling, so bad arguments raise NumPy's
errors when the op is pushed, not when it runs.
"""
from __future__ import annotations

import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ..dtypes import check_dtype, is_array_spec
from .numpy_operators import numpy_operator, stand_in
from ..shapes import shape_of


def _index(value):
    """An int as NumPy's shape arithmetic takes it (bools are ints there too, NumPy's bool
    among them: an array param keeps its dtype)."""
    if isinstance(value, (np.bool_, np.ndarray)) and value.dtype == bool and not value.ndim:
        return int(value)
    return operator.index(value)


# tile / repeat ---------------------------------------------------------------

def tile_shapes(A, *, reps):
    shape = shape_of(A)
    try:
        reps = tuple(reps)
    except TypeError:
        reps = (reps,)
    reps = tuple(_index(n) for n in reps)
    reps = (1,) * (len(shape) - len(reps)) + reps
    shape = (1,) * (len(reps) - len(shape)) + shape
    out = tuple(n * r for n, r in zip(shape, reps))
    if any(n < 0 for n in out):  # an empty array tiles any number of times into nothing
        raise ValueError("negative dimensions are not allowed")
    return [out]


def repeat_counts(repeats):
    """``repeats`` as NumPy's repeat converts it: intp values, at most 1-d. An array is cast
    under the 'safe' rule (a float array: NumPy's TypeError); anything else (Python or NumPy
    scalars, lists) is converted value by value, floats truncated, as NumPy does."""
    if isinstance(repeats, np.ndarray):
        if repeats.ndim > 1:
            raise ValueError("object too deep for desired array")
        return repeats.astype(np.intp, casting="safe")
    counts = np.asarray(repeats)
    if counts.ndim > 1:
        raise ValueError("setting an array element with a sequence. The requested array "
                         "would exceed the maximum number of dimension of 1.")
    return np.array(repeats, dtype=np.intp)


def repeat_shapes(a, *, repeats, axis=None):
    shape = shape_of(a) or (1,)  # NumPy takes a 0-d array as 1-d along an axis
    if axis is None:
        length, shape, axis = int(np.prod(shape)), (int(np.prod(shape)),), 0
    else:
        axis = normalize_axis_index(_index(axis), len(shape))
        length = shape[axis]
    counts = repeat_counts(repeats)
    if counts.size == 1:
        total = length * int(counts.ravel()[0])
        if total < 0:
            raise ValueError("negative dimensions are not allowed")
    else:
        if counts.size != length:
            raise ValueError(f"operands could not be broadcast together with shape "
                             f"({length},) ({counts.size},)")
        if (counts < 0).any():
            raise ValueError("repeats may not contain negative values.")
        total = int(counts.sum())
    return [shape[:axis] + (total,) + shape[axis + 1:]]


# roll ------------------------------------------------------------------------

def same_shape(a, **params):
    """The input's shape (roll: its shift and axis are checked by the probe, as NumPy does)."""
    return [shape_of(a)]


# pad -------------------------------------------------------------------------

_PAD_KWARGS = {"empty": (), "edge": (), "wrap": (), "constant": ("constant_values",),
               "linear_ramp": ("end_values",), "maximum": ("stat_length",),
               "mean": ("stat_length",), "median": ("stat_length",),
               "minimum": ("stat_length",), "reflect": ("reflect_type",),
               "symmetric": ("reflect_type",)}


def pad_pairs(pad_width, ndim):
    """NumPy's ``_as_pairs(pad_width, ndim, as_index=True)``: ((before, after), ...); a dict
    maps axes to widths (the other axes get none)."""
    if isinstance(pad_width, dict):
        pairs = [(0, 0)] * ndim
        for axis, width in pad_width.items():
            if type(width) is int:
                pairs[axis] = (width, width)
            elif type(width) is tuple and len(width) == 2 and all(type(w) is int
                                                                 for w in width):
                pairs[axis] = width
            else:
                raise TypeError(f"pad_width: {width!r} is neither an int nor a pair of ints")
        pad_width = pairs
    widths = np.asarray(pad_width)
    if widths.dtype.kind != "i":
        raise TypeError("`pad_width` must be of integral type.")
    widths = np.round(widths).astype(np.intp, copy=False)
    if widths.ndim < 3:
        flat = widths.ravel()
        if widths.size == 1:
            pair = (int(flat[0]), int(flat[0]))
            if flat[0] < 0:
                raise ValueError("index can't contain negative values")
            return (pair,) * ndim
        if widths.size == 2 and widths.shape != (2, 1):
            if flat[0] < 0 or flat[1] < 0:
                raise ValueError("index can't contain negative values")
            return ((int(flat[0]), int(flat[1])),) * ndim
    if widths.min() < 0:
        raise ValueError("index can't contain negative values")
    return tuple(tuple(pair) for pair in np.broadcast_to(widths, (ndim, 2)).tolist())


def pad_shapes(array, *, pad_width, mode="constant", **kwargs):
    shape = shape_of(array)
    pairs = pad_pairs(pad_width, len(shape))
    if not callable(mode):
        try:
            unsupported = set(kwargs) - set(_PAD_KWARGS[mode])
        except (KeyError, TypeError):
            raise ValueError(f"mode '{mode}' is not supported") from None
        if unsupported:
            raise ValueError(f"unsupported keyword arguments for mode '{mode}': "
                             f"{unsupported}")
        if mode not in ("constant", "empty"):
            for axis, (n, pair) in enumerate(zip(shape, pairs)):
                if n == 0 and any(pair):
                    raise ValueError(f"can't extend empty axis {axis} using modes other "
                                     "than 'constant' or 'empty'")
        # NumPy's own checks of the other arguments (a NaN constant into ints, a bad
        # stat_length, ...), on a copy at most 2 wide per axis padded at most 2 per side
        probe = np.zeros(tuple(min(n, 2) for n in shape), check_dtype(array.dtype))
        widths = np.array([(min(a, 2), min(b, 2)) for a, b in pairs], np.intp)
        np.pad(probe, widths.reshape(len(shape), 2) if shape else pad_width, mode,
               **{k: stand_in(v) if is_array_spec(v) else v for k, v in kwargs.items()})
    return [tuple(n + a + b for n, (a, b) in zip(shape, pairs))]


# tril / triu / diag / diagonal / trace ---------------------------------------

def triangle_shapes(m, *, k=0):
    shape = shape_of(m)
    if not shape:
        raise TypeError("tri() missing 1 required positional argument: 'N'")
    return [shape * 2 if len(shape) == 1 else shape]


def diag_shapes(v, *, k=0):
    shape = shape_of(v)
    k = _index(k)
    if len(shape) == 1:
        n = shape[0] + abs(k)
        return [(n, n)]
    if len(shape) == 2:
        return [np.diagonal(stand_in(v), k).shape]
    raise ValueError("Input must be 1- or 2-d.")


def diagonal_shapes(a, *, offset=0, axis1=0, axis2=1):
    return [np.diagonal(stand_in(a), offset, axis1, axis2).shape]


def trace_shapes(a, *, offset=0, axis1=0, axis2=1, dtype=None):
    return [np.diagonal(stand_in(a), offset, axis1, axis2).shape[:-1]]


# creation: indices, fftfreq, rfftfreq ----------------------------------------

def indices_dims(dimensions):
    return tuple(_index(n) for n in dimensions)


def indices_shapes(*, dimensions, dtype=int, sparse=False):
    dims = indices_dims(dimensions)
    if any(n < 0 for n in dims):
        raise ValueError("negative dimensions are not allowed")
    if sparse:
        return [tuple(n if i == j else 1 for j, n in enumerate(dims)) for i in range(len(dims))]
    return [(len(dims),) + dims]


def indices_dtypes(*, dimensions, dtype=int, sparse=False):
    dims = indices_dims(dimensions)
    count = len(dims) if sparse else 1
    return [check_dtype(dtype)] * count


def frequency_scale(n, d):
    """``1.0 / (n * d)`` as numpy.fft computes it (its ZeroDivisionError for n == 0)."""
    if not isinstance(n, (int, np.integer)):
        raise ValueError("n should be an integer")
    return 1.0 / (n * d)


def fftfreq_shapes(*, n, d=1.0):
    frequency_scale(n, d)
    if n < 0:
        raise ValueError("negative dimensions are not allowed")
    return [(int(n),)]


def rfftfreq_shapes(*, n, d=1.0):
    frequency_scale(n, d)
    return [(max(int(n) // 2 + 1, 0),)]  # numpy's arange(0, n // 2 + 1): empty below 0


def frequency_dtypes(*, n, d=1.0):
    return [check_dtype((np.empty(0, int) * frequency_scale(n, d)).dtype)]


def no_inputs_call(function, inputs, params):
    return function(**params)


def register_all() -> None:
    table = {
        # name: (NumPy function, shape function, dtype rule, kernel call)
        "tile": (np.tile, tile_shapes, "same", None),
        "repeat": (np.repeat, repeat_shapes, "same", None),
        "roll": (np.roll, same_shape, "probe", None),
        "pad": (np.pad, pad_shapes, "same", None),
        "tril": (np.tril, triangle_shapes, "probe", None),
        "triu": (np.triu, triangle_shapes, "probe", None),
        "diag": (np.diag, diag_shapes, "probe", None),
        "diagonal": (np.diagonal, diagonal_shapes, "probe", None),
        "trace": (np.trace, trace_shapes, "probe", None),
        "indices": (np.indices, indices_shapes, indices_dtypes, no_inputs_call),
        "fftfreq": (np.fft.fftfreq, fftfreq_shapes, frequency_dtypes, no_inputs_call),
        "rfftfreq": (np.fft.rfftfreq, rfftfreq_shapes, frequency_dtypes, no_inputs_call),
    }
    # params whose values change neither shape nor dtype: plans keyed by their type
    value_params = {"roll": ("shift",), "tril": ("k",), "triu": ("k",)}
    for name, (function, shapes, dtypes, call) in table.items():
        numpy_operator(name, function, shapes, dtypes=dtypes,
                       **({"call": call} if call else {}),
                       value_params=value_params.get(name, ()),
                       doc=f"numpy.{name}, run by NumPy inside the pushed op")
