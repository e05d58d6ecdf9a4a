"""The standard's manipulation, indexing, searching, set and sorting functions: generated
from tables onto ndengine's where only names and signatures differ, written out where the
standard asks for more (``unstack``, the ``unique_*`` named results, descending sorts)."""
from collections import namedtuple

import ndengine as nd

from ._generate import generate_all

__all__ = ["FUNCTIONS", "UniqueAllResult", "UniqueCountsResult", "UniqueInverseResult"]

_ROWS = [
    # manipulation
    ("broadcast_to", "x, /, shape", nd.broadcast_to),
    ("concat", "arrays, /, *, axis=0", nd.concatenate),
    ("expand_dims", "x, /, axis", nd.expand_dims),
    ("flip", "x, /, *, axis=None", nd.flip),
    ("moveaxis", "x, source, destination, /", nd.moveaxis),
    ("permute_dims", "x, /, axes", nd.transpose),
    ("repeat", "x, repeats, /, *, axis=None", nd.repeat),
    ("reshape", "x, /, shape, *, copy=None", nd.reshape),
    ("roll", "x, /, shift, *, axis=None", nd.roll),
    ("squeeze", "x, /, axis", nd.squeeze),
    ("stack", "arrays, /, *, axis=0", nd.stack),
    ("tile", "x, repetitions, /", nd.tile),
    # indexing
    ("take", "x, indices, /, *, axis=None", nd.take),
    ("take_along_axis", "x, indices, /, *, axis=-1", nd.take_along_axis),
    # searching
    ("argmax", "x, /, *, axis=None, keepdims=False", nd.argmax),
    ("argmin", "x, /, *, axis=None, keepdims=False", nd.argmin),
    ("count_nonzero", "x, /, *, axis=None, keepdims=False", nd.count_nonzero),
    ("nonzero", "x, /", nd.nonzero),
    ("searchsorted", "x1, x2, /, *, side='left', sorter=None", nd.searchsorted),
    ("where", "condition, x1, x2, /", nd.where),
]

UniqueAllResult = namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices",
                                                 "counts"])
UniqueCountsResult = namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def broadcast_arrays(*arrays):
    """Array API ``broadcast_arrays``: ndengine's, as the standard's list."""
    return list(nd.broadcast_arrays(*arrays))


def unstack(x, /, *, axis=0):
    """Array API ``unstack``: the views ``x[..., i, ...]`` along ``axis``."""
    if x.ndim == 0:
        raise ValueError("unstack needs an array of at least one dimension")
    if not -x.ndim <= axis < x.ndim:
        raise IndexError(f"axis {axis} is out of bounds for an array of {x.ndim} dimensions")
    leading = (slice(None),) * (axis % x.ndim)
    return tuple(x[leading + (i,)] for i in range(x.shape[axis]))


def _unique(x, **returns):
    """ndengine's ``unique`` with the standard's rules: NaNs are distinct, and the inverse
    indices have ``x``'s shape. It waits for ``x``: the result's size depends on values."""
    return nd.unique(x, equal_nan=False, **returns)


def unique_all(x, /):
    """Array API ``unique_all``: values, first indices, inverse indices and counts."""
    values, indices, inverse, counts = _unique(x, return_index=True, return_inverse=True,
                                               return_counts=True)
    return UniqueAllResult(values, indices, nd.reshape(inverse, x.shape), counts)


def unique_counts(x, /):
    """Array API ``unique_counts``: values and their counts."""
    return UniqueCountsResult(*_unique(x, return_counts=True))


def unique_inverse(x, /):
    """Array API ``unique_inverse``: values and, with ``x``'s shape, each element's index
    into them."""
    values, inverse = _unique(x, return_inverse=True)
    return UniqueInverseResult(values, nd.reshape(inverse, x.shape))


def unique_values(x, /):
    """Array API ``unique_values``: the distinct values."""
    return _unique(x)


def sort(x, /, *, axis=-1, descending=False, stable=True):
    """Array API ``sort``: ndengine's ``sort``; descending is its reversed view."""
    ascending = nd.sort(x, axis=axis, stable=stable or None)
    return nd.flip(ascending, axis=axis) if descending else ascending


def argsort(x, /, *, axis=-1, descending=False, stable=True):
    """Array API ``argsort``. Descending sorts the reversed array ascending and maps the
    positions back, so that equal elements keep their order when ``stable``."""
    if not descending:
        return nd.argsort(x, axis=axis, stable=stable or None)
    reversed_order = nd.argsort(nd.flip(x, axis=axis), axis=axis, stable=stable or None)
    return nd.flip(x.shape[axis] - 1 - reversed_order, axis=axis)


FUNCTIONS = generate_all(_ROWS)
FUNCTIONS.update(broadcast_arrays=broadcast_arrays, unstack=unstack, unique_all=unique_all,
                 unique_counts=unique_counts, unique_inverse=unique_inverse,
                 unique_values=unique_values, sort=sort, argsort=argsort)
