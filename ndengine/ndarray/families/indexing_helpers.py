"""NumPy's insert, extract, place, putmask, copyto, select, piecewise, diag_indices_from,
tril_indices_from, triu_indices_from, mask_indices, apply_along_axis, apply_over_axes and
vectorize on NDArrays (``INDEXING``, NumPy's parameter lists through
``signatures.numpy_function``).

Pushed ops: putmask, place and copyto write into their NDArray in place (one op each, NumPy's
own function inside it, ``ops.families.indexing_extra``); select is one op running
numpy.select. insert is a concatenate of the array and the broadcast values followed by a
take: the order of the take comes from NumPy's own insert on the index vector along
``axis`` (so where each value lands, and NumPy's errors for ``obj``, are NumPy's), computed
at the call from the shapes and ``obj`` (an NDArray ``obj`` is read). Compositions: extract
is a take of the raveled array at the nonzero of the raveled condition (a wait for the
count, as ``nonzero``); the ``*_from`` functions call their ``*_indices`` siblings on the
array's shape; mask_indices is the nonzero of ``mask_func(ones((n, n)), k)``.

Python callbacks get NDArrays: piecewise (NumPy's loop; it reads each condition's count),
apply_along_axis (one call per 1-d slice, the results stacked in the first result's dtype),
apply_over_axes. ``vectorize`` is NumPy's class: its function runs on the values, so for
NDArray arguments it reads them (a wait) and returns NDArrays on their context.
"""
import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ...core import NDArray
from ..arguments import array_of, first_context, operand_of, push, read_values
from ..construction_helpers import HELPERS
from ..creation import array, ones, zeros_like
from ..functions import FUNCTIONS, broadcast_to
from ..pushed import PUSHED
from ..shaping import SHAPING
from ..signatures import numpy_function
from ..statistics import FUNCTIONS as _STATISTICS

__all__ = ["INDEXING", "vectorize"]

_concatenate, _ravel, _moveaxis = SHAPING["concatenate"], SHAPING["ravel"], SHAPING["moveaxis"]


def _writable(function, value):
    if not isinstance(value, NDArray):
        raise TypeError(f"{function} writes into an NDArray (ndengine writes only into "
                        f"NDArrays), got {type(value).__name__}; for a NumPy array use "
                        f"numpy.{function}")


def _masked_write(name, target, mask, values):
    _writable(name, target)
    ctx = target.context
    if not isinstance(values, (NDArray, np.ndarray)):  # NumPy converts them to the dtype
        values = np.array(values, dtype=target.dtype)  # (arrays: under the 'safe' rule)
    push(name, [target, array_of(mask, ctx), array_of(values, ctx)], {}, out=target, ctx=ctx)


def _into_numpy(function, target, *args, **kwargs):
    """A write into a NumPy array (``numpy.copyto(np_array, x)`` dispatches here when x is an
    NDArray): NumPy's own function writes it, from the NDArrays' values (a wait), as NumPy's
    would have read them through ``__array__``. True if it did."""
    if type(target) is not np.ndarray:
        return False
    getattr(np, function)(target, *read_values(args),
                          **{key: read_values(value) for key, value in kwargs.items()})
    return True


def _putmask(a, /, mask, values):
    if not _into_numpy("putmask", a, mask, values):
        _masked_write("putmask", a, mask, values)


def _place(arr, mask, vals):
    if not _into_numpy("place", arr, mask, vals):
        _masked_write("place", arr, mask, vals)


def _copyto(dst, src, casting="same_kind", where=True):
    if _into_numpy("copyto", dst, src, casting=casting, where=where):
        return
    _writable("copyto", dst)
    ctx = dst.context
    inputs = [dst, operand_of(src, ctx), operand_of(where, ctx)]
    push("copyto", inputs, {"casting": casting}, out=dst, ctx=ctx)


def _inserted_count(indices, values_shape, ndim, axis):
    """How many slices NumPy's insert adds along ``axis`` for a one-index ``obj``: the
    values' length there (after NumPy's ``ndmin`` and, for a scalar index, its moveaxis)."""
    shape = (1,) * (ndim - len(values_shape)) + tuple(values_shape)
    if indices.ndim == 0:
        shape = shape[1:axis + 1] + shape[:1] + shape[axis + 1:]
    return shape[axis]


def _insert_order(obj, length, values_shape, ndim, axis):
    """(order, count): the take order over ``concatenate([arr, values])`` along the axis
    and the number of slices inserted, from NumPy's insert on the index vector."""
    indices = np.arange(*obj.indices(length)) if isinstance(obj, slice) else np.asarray(obj)
    if indices.size == 1 and indices.dtype != bool:
        count = _inserted_count(indices, values_shape, ndim, axis)
    else:
        count = int(np.count_nonzero(indices)) if indices.dtype == bool else indices.size
    grid = [1] * ndim
    grid[axis] = length
    marks = [1] * ndim
    marks[0 if indices.ndim == 0 else axis] = count
    # inserted slot j holds -1 - j: NumPy places value j where it belongs
    placed = np.insert(np.arange(length).reshape(grid), obj,
                       (-1 - np.arange(count)).reshape(marks), axis=axis).reshape(-1)
    return np.where(placed < 0, length - 1 - placed, placed), count, indices.ndim == 0


def _insert(arr, obj, values, axis=None):
    ctx = first_context(arr, values)
    arr = array_of(arr, ctx)
    if axis is None:
        arr, axis = (_ravel(arr) if arr.ndim != 1 else arr), 0
    axis = normalize_axis_index(axis, arr.ndim)
    obj = read_values(obj)
    values = (values.astype(arr.dtype, copy=False) if isinstance(values, NDArray)
              else np.array(values, dtype=arr.dtype))  # NumPy's conversion (and its errors)
    order, count, scalar = _insert_order(obj, arr.shape[axis], values.shape, arr.ndim, axis)
    values = array_of(values, ctx)
    values = values.reshape((1,) * (arr.ndim - values.ndim) + values.shape)
    if scalar:
        values = _moveaxis(values, 0, axis)
    shape = list(arr.shape)
    shape[axis] = count
    while values.ndim > arr.ndim and values.shape[0] == 1:  # NumPy's assignment drops them
        values = values.reshape(values.shape[1:])
    joined = _concatenate([arr, broadcast_to(values, tuple(shape))], axis=axis)
    return PUSHED["take"](joined, order, axis=axis)


def _extract(condition, arr):
    (kept,) = _STATISTICS["nonzero"](_ravel(array_of(condition)))
    return PUSHED["take"](_ravel(array_of(arr)), kept)


def _select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    ctx = first_context(condlist, choicelist, default)
    inputs = [array_of(c, ctx) for c in condlist]
    inputs += [operand_of(c, ctx) for c in (*choicelist, default)]
    return push("select", inputs, {"count": len(condlist)}, ctx=ctx)[0]


def _conditions(x, condlist):
    """piecewise's conditions as NumPy reads them: one boolean array each."""
    if np.isscalar(condlist) or (
            not isinstance(condlist[0], (list, np.ndarray, NDArray)) and x.ndim != 0):
        condlist = [condlist]
    if any(isinstance(c, NDArray) for c in condlist):
        return [array_of(c, x.context).astype(bool, copy=False) for c in condlist]
    return list(array(np.asarray(condlist, dtype=bool), ctx=x.context))


def _piecewise(x, condlist, funclist, *args, **kw):
    x = array_of(x)
    conditions = _conditions(x, condlist)
    if len(conditions) == len(funclist) - 1:  # the "otherwise" condition
        otherwise = SHAPING["stack"](conditions) if conditions else None
        conditions.append(FUNCTIONS["logical_not"](_STATISTICS["any"](otherwise, axis=0))
                          if otherwise is not None else ones(x.shape, bool, ctx=x.context))
    elif len(conditions) != len(funclist):
        raise ValueError(f"with {len(conditions)} condition(s), either {len(conditions)} or "
                         f"{len(conditions) + 1} functions are expected")
    result = zeros_like(x)
    for condition, function in zip(conditions, funclist):
        if not callable(function):
            result[condition] = function
            continue
        selected = x[condition]
        if selected.size > 0:
            result[condition] = function(selected, *args, **kw)
    return result


def _diag_indices_from(arr):
    shape = np.shape(arr) if not isinstance(arr, NDArray) else arr.shape
    if len(shape) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return HELPERS["diag_indices"](shape[0], len(shape))


def _triangle_indices_from(name):
    def indices_from(arr, k=0):
        shape = np.shape(arr) if not isinstance(arr, NDArray) else arr.shape
        if len(shape) != 2:
            raise ValueError("input array must be 2-d")
        return HELPERS[name](shape[-2], k=k, m=shape[-1])
    return indices_from


def _mask_indices(n, mask_func, k=0):
    masked = array_of(mask_func(ones((n, n), int), k))
    return _STATISTICS["nonzero"](FUNCTIONS["not_equal"](masked, 0))


def _apply_along_axis(func1d, axis, arr, *args, **kwargs):
    arr = array_of(arr)
    axis = normalize_axis_index(axis, arr.ndim)
    slices = _moveaxis(arr, axis, -1)
    outer = slices.shape[:-1]
    if any(n == 0 for n in outer):
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    results = []
    for index in np.ndindex(outer):
        result = array_of(func1d(slices[index], *args, **kwargs), arr.context)
        if results:  # NumPy's buffer holds the first result's dtype
            result = result.astype(results[0].dtype, copy=False)
        results.append(result)
    stacked = SHAPING["stack"](results).reshape(outer + results[0].shape)
    inner = results[0].ndim
    order = (list(range(axis)) + list(range(stacked.ndim - inner, stacked.ndim))
             + list(range(axis, stacked.ndim - inner)))
    return stacked.transpose(order)


def _apply_over_axes(func, a, axes):
    value = array_of(a)
    count = value.ndim
    for axis in (axes,) if np.ndim(axes) == 0 else axes:
        axis = axis + count if axis < 0 else axis
        result = array_of(func(value, axis))
        if result.ndim != value.ndim:
            result = SHAPING["expand_dims"](result, axis)
            if result.ndim != value.ndim:
                raise ValueError("function is not returning an array of the correct shape")
        value = result
    return value


class vectorize(np.vectorize):  # noqa: N801 - NumPy's name
    """As ``numpy.vectorize``; for NDArray arguments the function runs on their values (read
    at the call: a wait) and the results are NDArrays on their context."""

    def __call__(self, *args, **kwargs):
        arrays = [v for v in (*args, *kwargs.values()) if isinstance(v, NDArray)]
        if not arrays:
            return super().__call__(*args, **kwargs)
        ctx = arrays[0].context
        result = super().__call__(*(read_values(v) for v in args),
                                  **{k: read_values(v) for k, v in kwargs.items()})
        if isinstance(result, tuple):
            return tuple(array(r, ctx=ctx) for r in result)
        return array(result, ctx=ctx)


_IN_PLACE = "One pushed op (NumPy's function inside it), writing into the NDArray in place."
_ROWS = {
    "insert": (_insert, "A pushed concatenate and take; NumPy's insert on the index vector "
                        "orders it (an NDArray ``obj`` is read at the call)."),
    "extract": (_extract, "take(ravel(arr), nonzero(ravel(condition))): waits for the count."),
    "place": (_place, _IN_PLACE),
    "putmask": (_putmask, _IN_PLACE),
    "copyto": (_copyto, _IN_PLACE),
    "select": (_select, "One pushed op (numpy.select inside it)."),
    "piecewise": (_piecewise, "NumPy's loop over NDArrays: the functions get NDArrays; each "
                              "condition's count is read."),
    "diag_indices_from": (_diag_indices_from, "diag_indices on the array's shape."),
    "tril_indices_from": (_triangle_indices_from("tril_indices"),
                          "tril_indices on the array's shape: waits for the count."),
    "triu_indices_from": (_triangle_indices_from("triu_indices"),
                          "triu_indices on the array's shape: waits for the count."),
    "mask_indices": (_mask_indices, "nonzero(mask_func(ones((n, n)), k)): waits for the count."),
    "apply_along_axis": (_apply_along_axis, "One call per 1-d slice (an NDArray view), "
                                            "results stacked in the first one's dtype."),
    "apply_over_axes": (_apply_over_axes, "NumPy's loop; the function gets NDArrays."),
}

INDEXING = {name: numpy_function(name, getattr(np, name), implementation, doc)
            for name, (implementation, doc) in _ROWS.items()}
INDEXING["vectorize"] = vectorize
vectorize.__module__ = "ndengine"
