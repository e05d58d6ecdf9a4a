"""Data movement: copy (also astype / broadcast_to), concatenate, stack, split."""
from __future__ import annotations

import numpy as np

from ..dtypes import check_dtype, is_array_spec, result_type
from ..outputs import detach_overlapping, single_output, write_with_req
from ..plans import Plan
from ..registry import OpReq, add_operator, kernel_run, numpy_backed
from ..shapes import broadcast_shapes, normalize_axis_index, shape_of

_WRITE_TO = OpReq.WRITE_TO
_WRITE_INPLACE = OpReq.WRITE_INPLACE


# copy ------------------------------------------------------------------------

def infer_copy(x, *, shape=None, dtype=None):
    source = shape_of(x)
    target = source if shape is None else tuple(int(n) for n in shape)
    if broadcast_shapes(source, target) != target:
        raise ValueError(f"cannot broadcast input of shape {source} to shape {target}")
    dtype = check_dtype(dtype) if dtype is not None else result_type(x)
    return [(target, dtype)]


def plan_copy(op, inputs, params, target, aliases, req) -> Plan:
    """copy's planner: a plain write is NumPy's copyto (which copes with overlap itself)."""
    outputs = op.general_infer(inputs, params)
    if req not in (None, _WRITE_TO, _WRITE_INPLACE):
        return Plan(outputs, kernel_run(copy_kernel))

    def run(inputs, outputs, req, params):
        np.copyto(outputs[0], inputs[0], casting="unsafe")
    return Plan(outputs, run)


def copy_kernel(inputs, outputs, req, shape=None, dtype=None):
    """out[...] = input, broadcast and cast (unsafe casting, like astype)."""
    out, req = single_output(outputs, req)
    if req is OpReq.NULL:
        return
    x = inputs[0]
    write_with_req(out, req, lambda target: np.copyto(target, x, casting="unsafe"))


# concatenate / stack ---------------------------------------------------------

def _array_specs(name, inputs):
    if not inputs:
        raise ValueError(f"{name} needs at least one array")
    for value in inputs:
        if not is_array_spec(value):
            raise TypeError(f"{name} takes arrays, got {type(value).__name__}")
    return [shape_of(v) for v in inputs]


def infer_concatenate(*inputs, axis=0):
    shapes = _array_specs("concatenate", inputs)
    dtype = result_type(*inputs)
    if axis is None:
        return [((sum(int(np.prod(s)) for s in shapes),), dtype)]
    if any(len(s) == 0 for s in shapes):
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    ndim = len(shapes[0])
    axis = normalize_axis_index(axis, ndim)
    for s in shapes:
        if len(s) != ndim or any(s[i] != shapes[0][i] for i in range(ndim) if i != axis):
            listed = ", ".join(map(str, shapes))
            raise ValueError(f"concatenate: shapes {listed} differ outside axis {axis}")
    out = list(shapes[0])
    out[axis] = sum(s[axis] for s in shapes)
    return [(tuple(out), dtype)]


def infer_stack(*inputs, axis=0):
    shapes = _array_specs("stack", inputs)
    if any(s != shapes[0] for s in shapes):
        raise ValueError(f"all input arrays must have the same shape, got {', '.join(map(str, shapes))}")
    axis = normalize_axis_index(axis, len(shapes[0]) + 1)
    out = list(shapes[0])
    out.insert(axis, len(shapes))
    return [(tuple(out), result_type(*inputs))]


def _joining_kernel(numpy_fn):
    def kernel(inputs, outputs, req, axis=0):
        out, req = single_output(outputs, req)
        if req is OpReq.NULL:
            return
        arrays = detach_overlapping([np.asarray(v) for v in inputs], [out], allow_same_view=False)
        if axis is None:
            arrays = [a.ravel() for a in arrays]
            axis = 0
        write_with_req(out, req, lambda target: numpy_fn(arrays, axis=axis, out=target,
                                                         casting="unsafe"))
    return kernel


# split -----------------------------------------------------------------------

def split_bounds(length: int, indices_or_sections) -> list[tuple[int, int]]:
    """(start, stop) per piece, exactly as numpy.split slices."""
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        if length % sections:
            raise ValueError("array split does not result in an equal division")
        step = length // sections
        return [(i * step, (i + 1) * step) for i in range(sections)]
    cuts = [0] + [int(i) for i in indices_or_sections] + [length]
    return [(start, stop) for start, stop in zip(cuts[:-1], cuts[1:])]


def _split_axis(x, axis):
    return normalize_axis_index(axis, len(shape_of(x)))


def count_split_outputs(x, params) -> int:
    axis = _split_axis(x, params.get("axis", 0))
    return len(split_bounds(shape_of(x)[axis], params["indices_or_sections"]))


def infer_split(x, *, indices_or_sections, axis=0):
    shape = shape_of(x)
    axis = _split_axis(x, axis)
    results = []
    for start, stop in split_bounds(shape[axis], indices_or_sections):
        piece = list(shape)
        piece[axis] = len(range(shape[axis])[start:stop])
        results.append((tuple(piece), result_type(x)))
    return results


def split_kernel(inputs, outputs, req, *, indices_or_sections, axis=0):
    x = np.asarray(inputs[0])
    axis = _split_axis(x, axis)
    (x,) = detach_overlapping([x], outputs, allow_same_view=False)
    bounds = split_bounds(x.shape[axis], indices_or_sections)
    for out, r, (start, stop) in zip(outputs, req, bounds):
        piece = x[(slice(None),) * axis + (slice(start, stop),)]
        write_with_req(out, r, lambda target, piece=piece: np.copyto(target, piece))


def register_all() -> None:
    add_operator(numpy_backed("copy", num_inputs=1, kind="other", infer=infer_copy,
                          planner=plan_copy, scalars_by_type=True,
                          inplace=((0, 0),),
                          doc="out[...] = x with broadcasting and casting "
                              "(copy, astype, broadcast_to)"))
    add_operator(numpy_backed("concatenate", num_inputs=None, kind="other", infer=infer_concatenate,
                          doc="numpy.concatenate(arrays, axis)")
                 .set_kernel("cpu", _joining_kernel(np.concatenate)))
    add_operator(numpy_backed("stack", num_inputs=None, kind="other", infer=infer_stack,
                          doc="numpy.stack(arrays, axis)").set_kernel("cpu", _joining_kernel(np.stack)))
    add_operator(numpy_backed("split", num_inputs=1, num_outputs=count_split_outputs, kind="other",
                          infer=infer_split, doc="numpy.split(x, indices_or_sections, axis)")
                 .set_kernel("cpu", split_kernel))
