"""Selection by index arrays, run by NumPy's own functions: take, take_along_axis, choose, and
the in-place put and put_along_axis (see numpy_operators for the table's columns).

Index arrays are inputs of the op: their values are read when it runs, so an out-of-bounds
index in an NDArray raises NumPy's IndexError at the wait (the API layer checks index arrays
it is given as NumPy arrays or lists at the call).
"""
from __future__ import annotations

import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ..dtypes import check_dtype
from .numpy_operators import numpy_operator, split_inputs, tiny
from ..outputs import detach_overlapping, same_view, single_output
from ..plans import OpReq
from ..registry import add_operator, numpy_backed
from ..shapes import broadcast_shapes, shape_of


def taken_length(shape, axis):
    """The length of the axis that take/take_along_axis select along (None: flattened)."""
    if axis is None:
        return int(np.prod(shape))
    return shape[normalize_axis_index(operator.index(axis), len(shape))]


def take_shapes(a, indices, *, axis=None, mode="raise"):
    shape, taken = shape_of(a) or (1,), shape_of(indices)  # a 0-d array taken as 1-d
    length = taken_length(shape, axis)
    if axis is None:
        out = taken
    else:
        axis = normalize_axis_index(operator.index(axis), len(shape))
        out = shape[:axis] + taken + shape[axis + 1:]
    if length == 0 and int(np.prod(out)) > 0:
        raise IndexError("cannot do a non-empty take from an empty axes.")
    return [out]


def take(a, indices, axis=None, **params):
    """``np.take``, except where NumPy never returns: ``mode="wrap"`` along an empty axis with
    an empty result (its wrap loop adds the axis length, 0, until the index is >= 0). The
    result is empty then (a non-empty one raises in ``take_shapes``), so it is made here."""
    if params.get("mode") == "wrap" and taken_length(np.shape(a) or (1,), axis) == 0:
        (shape,) = take_shapes(a, indices, axis=axis, mode="wrap")
        out = params.get("out")
        return out if out is not None else np.empty(shape, np.asarray(a).dtype)
    return np.take(a, indices, axis=axis, **params)


def along_axis_shape(arr, indices, axis):
    """The shape of ``take_along_axis(arr, indices, axis)`` (NumPy's fancy-index broadcast)."""
    shape, taken = shape_of(arr), shape_of(indices)
    if axis is None:
        shape, axis = (int(np.prod(shape)),), 0
    axis = normalize_axis_index(operator.index(axis), len(shape))
    out = []
    for i, (n, m) in enumerate(zip(shape, taken)):
        if i == axis or n == m or n == 1 or m == 1:
            out.append(m if i == axis or n == 1 else n)
        else:
            along = tuple(n if j == i else 1 for j in range(len(shape)))
            raise IndexError(f"shape mismatch: indexing arrays could not be broadcast "
                             f"together with shapes {along} {taken}")
    return tuple(out)


def take_along_axis_shapes(arr, indices, *, axis=-1):
    return [along_axis_shape(arr, indices, axis)]


def choose_shapes(a, *choices, mode="raise"):
    try:
        return [broadcast_shapes(shape_of(a), *(shape_of(c) for c in choices))]
    except ValueError:
        raise ValueError("shape mismatch: objects cannot be broadcast to a single "
                         "shape") from None


def choose_call(function, inputs, params):
    return function(inputs[0], inputs[1:], **params)


# put / put_along_axis: in place ----------------------------------------------

def put_shapes(a, ind, v, *, mode="raise"):
    if int(np.prod(shape_of(a))) == 0 and int(np.prod(shape_of(ind))) > 0:
        raise IndexError("cannot replace elements of an empty array")
    return [shape_of(a)]


def put_along_axis_shapes(arr, indices, values, *, axis):
    region = along_axis_shape(arr, indices, axis)
    value_shape = shape_of(values)
    extra = len(value_shape) - len(region)
    if extra > 0 and all(n == 1 for n in value_shape[:extra]):
        value_shape = value_shape[extra:]
    try:
        fits = broadcast_shapes(value_shape, region) == region
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"shape mismatch: value array of shape {shape_of(values)} could not "
                         f"be broadcast to indexing result of shape {region}")
    return [shape_of(arr)]


def in_place_operator(name, function, shapes):
    """``function(target, *others, **params)`` writing into the op's target (input 0)."""
    def infer(*inputs, **params):
        arrays, params = split_inputs(inputs, params)
        target = arrays[0]
        # NumPy's own checks of dtypes and params first, on one-element stand-ins
        with np.errstate(all="ignore"):
            function(tiny(target), *(tiny(x) for x in arrays[1:]), **params)
        return [(shapes(*arrays, **params)[0], check_dtype(target.dtype))]

    def kernel(inputs, outputs, req, **params):
        out, req = single_output(outputs, req)
        if req is OpReq.NULL:
            return
        target, *others = inputs
        others = detach_overlapping(others, [out], allow_same_view=False)
        if not same_view(np.asarray(target), out):
            np.copyto(out, target)
        function(out, *others, **params)

    return add_operator(numpy_backed(name, num_inputs=3, kind="other", infer=infer,
                                 inplace=((0, 0),), write_mode=OpReq.WRITE_INPLACE,
                                 doc=f"numpy.{name}, in place, run by NumPy inside the "
                                     "pushed op").set_kernel("cpu", kernel))


def register_all() -> None:
    # gathers: their work is their output's size (Operator.sized_by_outputs)
    numpy_operator("take", take, take_shapes, dtypes="probe", num_inputs=2,
                   probe_first=True, sized_by_outputs=True)
    numpy_operator("take_along_axis", np.take_along_axis, take_along_axis_shapes,
                   dtypes="probe", num_inputs=2, sized_by_outputs=True)
    numpy_operator("choose", np.choose, choose_shapes, dtypes="probe", call=choose_call)
    in_place_operator("put", np.put, put_shapes)
    in_place_operator("put_along_axis", np.put_along_axis, put_along_axis_shapes)
