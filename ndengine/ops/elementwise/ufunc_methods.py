"""NumPy's ufunc methods as one op, ``ufunc_method``: reduce, accumulate, reduceat, outer, at.

The kernel calls the ufunc's own method on the op's buffers (``np.add.at(out, index, v)``,
``np.add.reduce(x, axis, out=target)``), so values and dtypes are NumPy's by construction.
Infer runs the same method on stand-ins of at most one element per axis (zero strides,
no memory) for NumPy's result dtype and NumPy's errors at the call; shapes follow from
the method's rule.

Params: ``ufunc`` (a NumPy ufunc), ``method`` (its name), then the method's keyword
arguments (``axis``, ``dtype``, ``keepdims``, ``initial``, ``indices`` for reduceat,
``index`` for at: NumPy arrays or tuples, snapshots the caller owns) and ``out_dtype``
(the dtype of a given ``out=`` array, which NumPy's reductions accumulate in).
Inputs: the method's array operands (for ``at``: the written array, then the values).
"""
from __future__ import annotations

import numpy as np

from ..dtypes import check_dtype, is_array_spec
from ..outputs import detach_overlapping, single_output, write_with_req
from ..registry import OpReq, add_operator, numpy_backed
from ..shapes import normalize_axes, reduced_shape, shape_of

METHODS = ("reduce", "accumulate", "reduceat", "outer", "at")
_as_strided = np.lib.stride_tricks.as_strided


def _stand_in(value, full_axis=None):
    """``value`` (an array spec) as a NumPy array over one element: every axis of length
    min(n, 1), except ``full_axis`` which keeps its length (zero strides, no copy)."""
    if not is_array_spec(value):
        return value  # Python scalars go to NumPy as they are
    shape = shape_of(value)
    if full_axis is not None:
        full_axis = normalize_axes(full_axis, len(shape))[0]
    small = tuple(n if i == full_axis else min(n, 1) for i, n in enumerate(shape))
    return _as_strided(np.zeros(1, check_dtype(value.dtype)), small, (0,) * len(small))


def _writable_stand_in(value):
    """A writable array of ``value``'s full shape over one element (for ``at``)."""
    shape = shape_of(value)
    return _as_strided(np.zeros(1, check_dtype(value.dtype)), shape, (0,) * len(shape))


def infer(*inputs, ufunc, method, out_dtype=None, **kwargs):
    if method not in METHODS:
        raise TypeError(f"unknown ufunc method {method!r}")
    if method == "at":
        x = inputs[0]
        values = [_stand_in(v) if is_array_spec(v) else v for v in inputs[1:]]
        ufunc.at(_writable_stand_in(x), kwargs["index"], *values)  # NumPy's errors
        return [(shape_of(x), check_dtype(x.dtype))]
    axis = kwargs.get("axis", 0)
    if method == "reduceat":
        stand_ins = [_stand_in(inputs[0], full_axis=axis)]
    else:
        stand_ins = [_stand_in(v) for v in inputs]
    result = getattr(ufunc, method)(*stand_ins, **kwargs)
    dtype = result.dtype
    if out_dtype is not None:  # NumPy's own check (and loop choice) for that out
        getattr(ufunc, method)(*stand_ins, out=np.empty(result.shape, out_dtype), **kwargs)
        dtype = out_dtype
    shapes = [shape_of(v) if is_array_spec(v) else () for v in inputs]
    if method == "outer":
        shape = shapes[0] + shapes[1]
    elif method == "accumulate":
        shape = shapes[0]
    elif method == "reduceat":
        shape = list(shapes[0])
        shape[normalize_axes(axis, len(shape))[0]] = len(kwargs["indices"])
        shape = tuple(shape)
    elif not shapes[0]:  # NumPy's reduce of a 0-d array takes axis 0 and -1 as no axis
        shape = ()
    else:
        shape = reduced_shape(shapes[0], normalize_axes(axis, len(shapes[0])),
                              kwargs.get("keepdims", False))
    return [(shape, check_dtype(dtype))]


def kernel(inputs, outputs, req, ufunc, method, out_dtype=None, **kwargs):
    out, req = single_output(outputs, req)
    if req is OpReq.NULL:
        return
    if method == "at":
        x = inputs[0]
        if x is not out:  # the caller passes the written array as out: normally in place
            np.copyto(out, x)
        ufunc.at(out, kwargs["index"], *inputs[1:])
        return
    operands = detach_overlapping(list(inputs), [out], allow_same_view=False)
    write_with_req(out, req, lambda target: getattr(ufunc, method)(*operands, out=target,
                                                                   **kwargs))


def register_all() -> None:
    add_operator(numpy_backed("ufunc_method", num_inputs=None, kind="other", infer=infer,
                          doc="NumPy's ufunc.reduce/accumulate/reduceat/outer/at on arrays")
                 .set_kernel("cpu", kernel))
