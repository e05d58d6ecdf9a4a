"""The standard's manipulation, indexing, searching, set and sorting functions: generated
from tables onto ndengine's where only names and signatures differ, written out where the
standard asks for more (``unstack``, the ``unique_*`` named results, descending sorts)."""
from collections import namedtuple

from .. import ndarray

from ._generate import generate_all

__all__ = ["FUNCTIONS", "UniqueAllResult", "UniqueCountsResult", "UniqueInverseResult"]

_ROWS = [
    # manipulation
    ("broadcast_to", "x, /, shape", ndarray.broadcast_to),
    ("concat", "arrays, /, *, axis=0", ndarray.concatenate),
    ("expand_dims", "x, /, axis", ndarray.expand_dims),
    ("flip", "x, /, *, axis=None", ndarray.flip),
    ("moveaxis", "x, source, destination, /", ndarray.moveaxis),
    ("permute_dims", "x, /, axes", ndarray.transpose),
    ("repeat", "x, repeats, /, *, axis=None", ndarray.repeat),
    ("reshape", "x, /, shape, *, copy=None", ndarray.reshape),
    ("roll", "x, /, shift, *, axis=None", ndarray.roll),
    ("squeeze", "x, /, axis", ndarray.squeeze),
    ("stack", "arrays, /, *, axis=0", ndarray.stack),
    ("tile", "x, repetitions, /", ndarray.tile),
    # indexing
    ("take", "x, indices, /, *, axis=None", ndarray.take),
    ("take_along_axis", "x, indices, /, *, axis=-1", ndarray.take_along_axis),
    # searching
    ("argmax", "x, /, *, axis=None, keepdims=False", ndarray.argmax),
    ("argmin", "x, /, *, axis=None, keepdims=False", ndarray.argmin),
    ("count_nonzero", "x, /, *, axis=None, keepdims=False", ndarray.count_nonzero),
    ("nonzero", "x, /", ndarray.nonzero),
    ("searchsorted", "x1, x2, /, *, side='left', sorter=None", ndarray.searchsorted),
    ("where", "condition, x1, x2, /", ndarray.where),
]

UniqueAllResult = namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices",
                                                 "counts"])
UniqueCountsResult = namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def broadcast_arrays(*arrays):
    """Array API ``broadcast_arrays``: ndengine's, as the standard's list."""
    return list(ndarray.broadcast_arrays(*arrays))


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
    return ndarray.unique(x, equal_nan=False, **returns)


def unique_all(x, /):
    """Array API ``unique_all``: values, first indices, inverse indices and counts."""
    values, indices, inverse, counts = _unique(x, return_index=True, return_inverse=True,
                                               return_counts=True)
    return UniqueAllResult(values, indices, ndarray.reshape(inverse, x.shape), counts)


def unique_counts(x, /):
    """Array API ``unique_counts``: values and their counts."""
    return UniqueCountsResult(*_unique(x, return_counts=True))


def unique_inverse(x, /):
    """Array API ``unique_inverse``: values and, with ``x``'s shape, each element's index
    into them."""
    values, inverse = _unique(x, return_inverse=True)
    return UniqueInverseResult(values, ndarray.reshape(inverse, x.shape))


def unique_values(x, /):
    """Array API ``unique_values``: the distinct values."""
    return _unique(x)


def sort(x, /, *, axis=-1, descending=False, stable=True):
    """Array API ``sort``: ndengine's ``sort``; descending is its reversed view."""
    ascending = ndarray.sort(x, axis=axis, stable=stable or None)
    return ndarray.flip(ascending, axis=axis) if descending else ascending


def argsort(x, /, *, axis=-1, descending=False, stable=True):
    """Array API ``argsort``. Descending sorts the reversed array ascending and maps the
    positions back, so that equal elements keep their order when ``stable``."""
    if not descending:
        return ndarray.argsort(x, axis=axis, stable=stable or None)
    reversed_order = ndarray.argsort(ndarray.flip(x, axis=axis), axis=axis, stable=stable or None)
    return ndarray.flip(x.shape[axis] - 1 - reversed_order, axis=axis)


FUNCTIONS = generate_all(_ROWS)
FUNCTIONS.update(broadcast_arrays=broadcast_arrays, unstack=unstack, unique_all=unique_all,
                 unique_counts=unique_counts, unique_inverse=unique_inverse,
                 unique_values=unique_values, sort=sort, argsort=argsort)
