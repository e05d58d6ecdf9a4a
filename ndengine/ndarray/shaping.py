"""Shapes as functions: views (reshape, transpose, moveaxis, swapaxes, squeeze, expand_dims,
ravel, flip, fliplr, flipud, rot90, atleast_1d/2d/3d, the split family), joins (concatenate,
stack, vstack, hstack, dstack, column_stack, row_stack, block), broadcast_arrays and meshgrid.

Each is NumPy's own algorithm on NDArrays: where NumPy returns a view, so does ndengine (a new
geometry over the same buffer and engine var, nothing pushed); joins push one concatenate op
per join. Broadcast results are copies (NumPy's are read-only views). ``SHAPING`` is the table
the module functions are made from (NumPy's parameter lists: signatures.numpy_function).
"""
import warnings

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from .. import ops
from ..core import NDArray
from ..ops.shapes import broadcast_shapes
from .functions import broadcast_to
from .arguments import array_of, first_context, push, read_values
from .signatures import numpy_function

__all__ = ["SHAPING", "ordered_view"]


# views -------------------------------------------------------------------------

def _reshape(a, shape, order="C", copy=None):
    return array_of(a).reshape(shape, order=order, copy=copy)


def _transpose(a, axes=None):
    return array_of(a).transpose(axes)


def _moveaxis(a, source, destination):
    a = array_of(a)
    source = normalize_axis_tuple(source, a.ndim, "source")
    destination = normalize_axis_tuple(destination, a.ndim, "destination")
    if len(source) != len(destination):
        raise ValueError("`source` and `destination` arguments must have the same number "
                         "of elements")
    order = [n for n in range(a.ndim) if n not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return a.transpose(order)


def _swapaxes(a, axis1, axis2):
    a = array_of(a)
    axis1, axis2 = normalize_axis_index(axis1, a.ndim), normalize_axis_index(axis2, a.ndim)
    order = list(range(a.ndim))
    order[axis1], order[axis2] = axis2, axis1
    return a.transpose(order)


def _squeeze(a, axis=None):
    return array_of(a).squeeze(axis)


def _expand_dims(a, axis):
    return array_of(a).expand_dims(axis)


def _strided_layout(a):
    """NumPy's flags for the array's geometry (a stand-in over one element)."""
    return np.lib.stride_tricks.as_strided(np.empty(1, a.dtype), a.shape, a.strides).flags


def ordered_view(a, order):
    """A view of ``a`` whose C order is the element order ``order`` asks for."""
    if order not in ("C", "F", "A", "K", None):
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got '{order}')")
    if order == "A":
        flags = _strided_layout(a)
        order = "F" if flags.f_contiguous and not flags.c_contiguous else "C"
    if order == "F":
        return a.transpose()
    if order == "K":  # memory order: axes by decreasing stride (NumPy keeps reversed axes)
        return a.transpose(sorted(range(a.ndim), key=lambda i: -abs(a.strides[i])))
    return a


def _ravel(a, order="C"):
    return ordered_view(array_of(a), order).reshape(-1)


def _flip(m, axis=None):
    m = array_of(m)
    axes = range(m.ndim) if axis is None else normalize_axis_tuple(axis, m.ndim)
    return m[tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(m.ndim))]


def _fliplr(m):
    m = array_of(m)
    if m.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return m[:, ::-1]


def _flipud(m):
    m = array_of(m)
    if m.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return m[::-1, ...]


def _rot90(m, k=1, axes=(0, 1)):
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    m = array_of(m)
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == m.ndim:
        raise ValueError("Axes must be different.")
    if not all(-m.ndim <= ax < m.ndim for ax in axes):
        raise ValueError(f"Axes={axes} out of range for array of ndim={m.ndim}.")
    k %= 4
    if k == 0:
        return m[:]
    if k == 2:
        return _flip(_flip(m, axes[0]), axes[1])
    order = list(range(m.ndim))
    order[axes[0]], order[axes[1]] = order[axes[1]], order[axes[0]]
    if k == 1:
        return _flip(m, axes[1]).transpose(order)
    return _flip(m.transpose(order), axes[1])


_ATLEAST_KEYS = {  # (ndim to reach, ndim of the input) -> index adding the missing axes
    (2, 1): (None, slice(None)), (3, 1): (None, slice(None), None),
    (3, 2): (slice(None), slice(None), None)}


def _atleast(ndim):
    def atleast(*arys):
        results = []
        ctx = first_context(*arys)
        for ary in arys:
            ary = array_of(ary, ctx)
            if ary.ndim == 0:
                ary = ary.reshape((1,) * ndim)
            elif ary.ndim < ndim:
                ary = ary[_ATLEAST_KEYS[ndim, ary.ndim]]
            results.append(ary)
        return results[0] if len(results) == 1 else tuple(results)
    return atleast


def _broadcast_arrays(*args, subok=False):
    ctx = first_context(*args)
    arrays = [array_of(x, ctx) for x in args]
    shape = broadcast_shapes(*(x.shape for x in arrays))
    return tuple(x if x.shape == shape else broadcast_to(x, shape) for x in arrays)


def _meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    ndim = len(xi)
    ctx = first_context(*xi)
    ones = (1,) * ndim
    grids = [array_of(x, ctx).reshape(ones[:i] + (-1,) + ones[i + 1:])
             for i, x in enumerate(xi)]
    if indexing == "xy" and ndim > 1:
        grids[0] = grids[0].reshape((1, -1) + ones[2:])
        grids[1] = grids[1].reshape((-1, 1) + ones[2:])
    if sparse:
        return tuple(g.copy() if copy else g for g in grids)
    shape = broadcast_shapes(*(g.shape for g in grids))
    return tuple(broadcast_to(g, shape) if g.shape != shape else (g.copy() if copy else g)
                 for g in grids)


# joins -------------------------------------------------------------------------

def _sequence(arrays, name="stack"):
    if not hasattr(arrays, "__getitem__"):
        raise TypeError('arrays to stack must be passed as a "sequence" type such as list or '
                        'tuple.')
    ctx = first_context(*arrays) if isinstance(arrays, (list, tuple)) else first_context(arrays)
    return [array_of(x, ctx) for x in arrays]


def _concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    if out is not None and dtype is not None:
        raise TypeError("concatenate() only takes `out` or `dtype` as an argument, but both "
                        "were provided.")
    ctx = first_context(*arrays) if isinstance(arrays, (list, tuple)) else first_context(arrays)
    arrays = [array_of(x, ctx) for x in arrays]
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    if isinstance(axis, (bool, np.bool_)):
        raise TypeError("an integer is required for the axis")
    np.can_cast(np.bool_, np.bool_, casting)  # NumPy's ValueError for an unknown rule
    if type(out) is tuple:  # NumPy's functions take one array (ufuncs take a tuple)
        raise TypeError("'out' must be an array")
    [(shape, result)] = ops.get("concatenate").infer(*arrays, axis=axis)  # shapes first
    if isinstance(out, NDArray) and out.shape != shape:
        raise ValueError("Output array has wrong dimensionality" if out.ndim != len(shape)
                         else "Output array is the wrong shape")
    given = out.dtype if isinstance(out, NDArray) else dtype
    target = result if given is None else ops.check_dtype(given)
    for x in arrays:  # NumPy casts each input to the output's dtype under ``casting``
        if not np.can_cast(x.dtype, target, casting):
            raise TypeError(f"Cannot cast array data from {x.dtype!r} to {target!r} "
                            f"according to the rule {casting!r}")
    if given is not None:
        arrays = [x if x.dtype == target else x.astype(target) for x in arrays]
    return push("concatenate", arrays, {"axis": axis}, out=out)[0]


def _stack(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    arrays = _sequence(arrays)
    if not arrays:
        raise ValueError("need at least one array to stack")
    if len({x.shape for x in arrays}) != 1:
        raise ValueError("all input arrays must have the same shape")
    axis = normalize_axis_index(axis, arrays[0].ndim + 1)
    key = (slice(None),) * axis + (None,)
    return _concatenate([x[key] for x in arrays], axis, out, dtype, casting)


def _as_tuple(result):
    return result if isinstance(result, tuple) else (result,)


def _vstack(tup, dtype=None, casting="same_kind"):
    arrays = _as_tuple(_atleast(2)(*_sequence(tup)))
    return _concatenate(arrays, 0, dtype=dtype, casting=casting)


def _row_stack(tup, dtype=None, casting="same_kind"):
    warnings.warn("`row_stack` alias is deprecated. Use `np.vstack` directly.",
                  DeprecationWarning, stacklevel=3)
    return _vstack(tup, dtype, casting)


def _hstack(tup, dtype=None, casting="same_kind"):
    arrays = _as_tuple(_atleast(1)(*_sequence(tup)))
    axis = 0 if arrays and arrays[0].ndim == 1 else 1
    return _concatenate(arrays, axis, dtype=dtype, casting=casting)


def _dstack(tup):
    return _concatenate(_as_tuple(_atleast(3)(*_sequence(tup))), 2)


def _column_stack(tup):
    columns = []
    for x in _sequence(tup):
        if x.ndim < 2:  # NumPy: array(x, ndmin=2).T
            x = x.reshape(1, -1).transpose()
        columns.append(x)
    return _concatenate(columns, 1)


def _block_depths(arrays, index=()):
    """numpy.block's check of the nesting: (index of a bottom element, its max ndim)."""
    if type(arrays) is tuple:
        where = "".join(f"[{i}]" for i in index) or "arrays"
        raise TypeError(f"{where} is a tuple. Only lists can be used to arrange blocks, and "
                        "np.block does not allow implicit conversion from tuple to ndarray.")
    if type(arrays) is list and arrays:
        depths = [_block_depths(x, index + (i,)) for i, x in enumerate(arrays)]
        first, max_ndim = depths[0]
        for where, ndim in depths[1:]:
            max_ndim = max(max_ndim, ndim)
            if len(where) != len(first):
                raise ValueError(f"List depths are mismatched. First element was at depth "
                                 f"{len(first)}, but there is an element at depth "
                                 f"{len(where)} ({''.join(f'[{i}]' for i in where)})")
            if where[-1] is None:
                first = where
        return first, max_ndim
    if type(arrays) is list:
        return index + (None,), 0
    return index, np.ndim(arrays) if not isinstance(arrays, NDArray) else arrays.ndim


def _block(arrays):
    bottom, max_ndim = _block_depths(arrays)
    if bottom and bottom[-1] is None:
        where = "".join(f"[{i}]" for i in bottom[:-1]) or "arrays"
        raise ValueError(f"List at {where} cannot be empty")
    depth, ndim = len(bottom), max(max_ndim, len(bottom))
    ctx = first_context(arrays)

    def assemble(part, level):
        if level < depth:
            return _concatenate([assemble(x, level + 1) for x in part], -(depth - level))
        part = array_of(part, ctx)
        return part.reshape((1,) * (ndim - part.ndim) + part.shape)

    result = assemble(arrays, 0)
    return result.copy() if depth == 0 else result


# splits: views of the input, as NumPy's ----------------------------------------

def _array_split(ary, indices_or_sections, axis=0):
    ary = array_of(ary)
    total = ary.shape[axis]
    indices_or_sections = read_values(indices_or_sections)
    try:
        count = len(indices_or_sections) + 1
        bounds = [0, *indices_or_sections, total]
    except TypeError:
        count = int(indices_or_sections)
        if count <= 0:
            raise ValueError("number sections must be larger than 0.") from None
        each, extras = divmod(total, count)
        sizes = [0] + extras * [each + 1] + (count - extras) * [each]
        bounds = np.array(sizes, dtype=np.intp).cumsum().tolist()
    moved = _swapaxes(ary, axis, 0)
    return [_swapaxes(moved[bounds[i]:bounds[i + 1]], axis, 0) for i in range(count)]


def _split(ary, indices_or_sections, axis=0):
    indices_or_sections = read_values(indices_or_sections)
    try:
        len(indices_or_sections)
    except TypeError:
        ary = array_of(ary)
        if ary.shape[axis] % indices_or_sections:
            raise ValueError("array split does not result in an equal division") from None
    return _array_split(ary, indices_or_sections, axis)


def _split_along(name, min_ndim, axis_for):
    def split(ary, indices_or_sections):
        ary = array_of(ary)
        if ary.ndim < min_ndim:
            raise ValueError(f"{name} only works on arrays of {min_ndim} or more dimensions")
        return _split(ary, indices_or_sections, axis_for(ary.ndim))
    return split


SHAPING = {
    # name: (NumPy function: its parameters, implementation)
    "reshape": (np.reshape, _reshape), "transpose": (np.transpose, _transpose),
    "moveaxis": (np.moveaxis, _moveaxis), "swapaxes": (np.swapaxes, _swapaxes),
    "squeeze": (np.squeeze, _squeeze), "expand_dims": (np.expand_dims, _expand_dims),
    "ravel": (np.ravel, _ravel), "flip": (np.flip, _flip), "fliplr": (np.fliplr, _fliplr),
    "flipud": (np.flipud, _flipud), "rot90": (np.rot90, _rot90),
    "atleast_1d": (np.atleast_1d, _atleast(1)), "atleast_2d": (np.atleast_2d, _atleast(2)),
    "atleast_3d": (np.atleast_3d, _atleast(3)),
    "broadcast_arrays": (np.broadcast_arrays, _broadcast_arrays),
    "meshgrid": (np.meshgrid, _meshgrid),
    "concatenate": (np.concatenate, _concatenate), "stack": (np.stack, _stack),
    "vstack": (np.vstack, _vstack), "row_stack": (np.vstack, _row_stack),
    "hstack": (np.hstack, _hstack), "dstack": (np.dstack, _dstack),
    "column_stack": (np.column_stack, _column_stack), "block": (np.block, _block),
    "split": (np.split, _split), "array_split": (np.array_split, _array_split),
    "hsplit": (np.hsplit, _split_along("hsplit", 1, lambda ndim: 1 if ndim > 1 else 0)),
    "vsplit": (np.vsplit, _split_along("vsplit", 2, lambda ndim: 0)),
    "dsplit": (np.dsplit, _split_along("dsplit", 3, lambda ndim: 2)),
}

_VIEW = "A view sharing the input's buffer and engine var, as NumPy's; nothing is pushed."
_JOIN = "One pushed concatenate op (inputs of another dtype: pushed casts first)."
_SPLIT = ("Views of the input, as NumPy's; an NDArray ``indices_or_sections`` is read at the "
          "call (the pieces' shapes depend on it).")
_NOTES = {"concatenate": _JOIN, "stack": _JOIN, "vstack": _JOIN, "row_stack": _JOIN,
          "hstack": _JOIN, "dstack": _JOIN, "column_stack": _JOIN,
          "block": "Pushed concatenate ops, one per level of nesting.",
          "split": _SPLIT, "array_split": _SPLIT, "hsplit": _SPLIT, "vsplit": _SPLIT,
          "dsplit": _SPLIT, "ravel": _VIEW[:-1] + " where the layout allows, else a pushed "
                                                  "copy.",
          "reshape": _VIEW[:-1] + " where the layout allows, else a pushed copy.",
          "broadcast_arrays": "Inputs that need broadcasting become pushed copies (NumPy's "
                              "are read-only views); the others are returned as they are.",
          "meshgrid": "Broadcast grids are pushed copies (NumPy's are read-only views)."}

SHAPING = {name: numpy_function(name, numpy_fn, implementation, _NOTES.get(name, _VIEW))
           for name, (numpy_fn, implementation) in SHAPING.items()}
