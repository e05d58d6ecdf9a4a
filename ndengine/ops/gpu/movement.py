"""gpu kernels of the data-movement, indexing, creation and ufunc-method ops.

Each mirrors its CPU kernel with xp in place of NumPy:

* ``copy`` (also astype, broadcast_to): ``xp.copyto(out, x, casting="unsafe")``; NumPy's
  copyto copes with overlap, CuPy's does not, so an overlapping input is copied first;
* ``concatenate``/``stack``: xp's with ``out=`` and ``casting="unsafe"`` (CuPy has both);
  ``split``: slices copied into each output;
* ``take_index``/``assign_index``: ``x[key]`` and ``out[key] = value`` (``xp.add.at`` with
  ``accumulate``) with the key's NumPy index arrays moved to xp (``device_value``) and its
  index inputs (``IndexInput`` places) put in (``resolve_key``); ``put``/``put_along_axis``: xp's, with
  NumPy's ``mode="raise"`` (CuPy's default wraps) checked here; the masked writes
  ``putmask``, ``place``, ``copyto``: xp's, on the target copied into the output, with
  NumPy's rules where CuPy's differ (mask shape, empty values, casts checked at the call);
* ``fill``, ``arange``, ``eye``, ``linspace`` (the ``creation.CREATION_TABLE`` rows):
  xp's function of the row's name with the row's params; ``linspace`` with array bounds and
  a bool ``arange`` are made by NumPy and moved (their data are params, on the host);
* ``ufunc_method``: the ufunc of the same name in xp and its method (reduce, accumulate,
  reduceat, outer, at); a keyword or ufunc CuPy's method lacks runs on the host.
"""
from __future__ import annotations

import numpy as np

from ..families.indexing import resolve_key
from ..families.creation import _arange_args, make_linspace, scalar_param
from .kernels import device_value, host_run, module_of, quiet, write_value
from .numpy_functions import as_xp_inputs
from ..families.movement import _split_axis, split_bounds
from ..outputs import detach_overlapping, same_view, write_with_req
from ..plans import OpReq
from .numpy_operators import _out_of_bounds

__all__ = ["planners"]

_NULL, _ADD_TO = OpReq.NULL, OpReq.ADD_TO


def _static(kernel):
    """A planner whose run is ``kernel(xp, inputs, outputs, req, **params)``."""
    def planner(op, inputs, params, cpu_plan):
        def run(inputs, outputs, req, params):
            kernel(module_of(inputs, outputs), inputs, outputs, req, **params)
        return run
    return planner


# ------------------------------------------------------------------ copies

def _copy(xp, inputs, outputs, req, shape=None, dtype=None):
    out, r = outputs[0], OpReq(req[0])
    if r is _NULL:
        return
    (x,) = detach_overlapping(list(inputs), [out], xp=xp)
    if xp is not np and isinstance(x, np.ndarray):
        x = xp.asarray(x)
    write_with_req(out, r, lambda target: xp.copyto(target, x, casting="unsafe"), xp=xp)


def _joining(name):
    def kernel(xp, inputs, outputs, req, axis=0):
        out, r = outputs[0], OpReq(req[0])
        if r is _NULL:
            return
        arrays = detach_overlapping(as_xp_inputs(xp, inputs), [out], allow_same_view=False,
                                    xp=xp)
        if axis is None:
            arrays, axis = [a.reshape(-1) for a in arrays], 0
        join = getattr(xp, name)
        write_with_req(out, r, lambda target: join(arrays, axis=axis, out=target,
                                                   casting="unsafe"), xp=xp)
    return kernel


def _split(xp, inputs, outputs, req, *, indices_or_sections, axis=0):
    (x,) = as_xp_inputs(xp, inputs)
    axis = _split_axis(x, axis)
    (x,) = detach_overlapping([x], outputs, allow_same_view=False, xp=xp)
    for out, r, (start, stop) in zip(outputs, req, split_bounds(x.shape[axis],
                                                                indices_or_sections)):
        write_value(xp, out, OpReq(r), x[(slice(None),) * axis + (slice(start, stop),)])


# ------------------------------------------------------------------ indexing

def _take_index(xp, inputs, outputs, req, *, key):
    out, r = outputs[0], OpReq(req[0])
    if r is _NULL:
        return
    x, *indices = as_xp_inputs(xp, inputs)
    key = device_value(xp, resolve_key(key, indices))
    (selected,) = detach_overlapping([x[key]], [out], xp=xp)
    write_value(xp, out, r, selected)


def _assign_index(xp, inputs, outputs, req, *, key, accumulate=False):
    out, r = outputs[0], OpReq(req[0])
    if r is _NULL:
        return
    if r is _ADD_TO:
        raise ValueError("assign_index writes in place; ADD_TO is not meaningful for it")
    target, value, *indices = inputs
    # an index input or the value may be the target's own memory: read them before writing
    value, *indices = detach_overlapping([value, *as_xp_inputs(xp, indices)], [out],
                                         allow_same_view=False, xp=xp)
    if not same_view(target, out):
        xp.copyto(out, target)
    if xp is not np and isinstance(value, np.ndarray):
        value = xp.asarray(value)
    key = device_value(xp, resolve_key(key, indices))
    if accumulate:
        xp.add.at(out, key, value)
    else:
        out[key] = value


def _in_place(write):
    """put, put_along_axis and the masked writes: the target copied into the output, then
    ``write(xp, out, *others, **params)`` writes there."""
    def kernel(xp, inputs, outputs, req, **params):
        out, r = outputs[0], OpReq(req[0])
        if r is _NULL:
            return
        target, *others = as_xp_inputs(xp, inputs)
        others = detach_overlapping(others, [out], allow_same_view=False, xp=xp)
        if not same_view(target, out):
            xp.copyto(out, target)
        write(xp, out, *others, **params)
    return kernel


def _put(xp, out, indices, values, mode="raise"):
    if mode == "raise":  # CuPy's put does not check, and its default mode is "wrap"
        _out_of_bounds(xp, indices, out.size, 0)
    xp.put(out, indices, values, mode=mode)


def _put_along_axis(xp, out, indices, values, axis):
    _out_of_bounds(xp, indices, out.size if axis is None else out.shape[axis], axis)
    xp.put_along_axis(out, indices, values, axis)


def _putmask(xp, out, mask, values):
    """NumPy's putmask takes a mask of the target's size, CuPy's only of its shape; CuPy's
    refuses the cast NumPy checked at the call ('safe'), and an empty ``values`` (NumPy:
    nothing written) would repeat by a modulo of zero."""
    if values.size:
        xp.putmask(out, mask.reshape(out.shape), values.astype(out.dtype, copy=False))


def _place(xp, out, mask, vals):
    """CuPy's place, with NumPy's error for an empty ``vals`` where the mask holds a True
    (one device sync; CuPy's message differs)."""
    if vals.size == 0:
        if bool(mask.any()):
            raise ValueError("Cannot insert from an empty array!")
        return
    xp.place(out, mask, vals.astype(out.dtype, copy=False))


def _copyto(xp, out, src, where, casting="same_kind"):
    """NumPy checked ``casting`` at the call, with its rules for Python scalars; on CuPy a
    scalar ``src`` arrives as a 0-d array, whose dtype CuPy's check would hold against it,
    so the cast itself is unchecked. ``where`` may be a Python bool (NumPy's default)."""
    xp.copyto(out, src, casting="unsafe", where=xp.asarray(where, dtype=bool))


# ------------------------------------------------------------------ creation

def _creation(make):
    def kernel(xp, inputs, outputs, req, **params):
        out, r = outputs[0], OpReq(req[0])
        if r is _NULL:
            return
        rest = {k: v for k, v in params.items() if k != "dtype"}  # the output has it
        write_value(xp, out, r, make(xp, out.dtype, **rest))
    return kernel


def _fill(xp, dtype, *, value=0, **_):
    return np.asarray(value).astype(dtype)  # moved by write_value (broadcast by copyto)


def _arange(xp, dtype, *, start=0, stop=None, step=1, **_):
    start, stop, step = (scalar_param(v) for v in _arange_args(start, stop, step))
    if dtype.kind == "b":  # at most two elements (infer): NumPy's own, moved
        return np.arange(start, stop, step, dtype=dtype)
    return xp.arange(start, stop, step, dtype=dtype)


def _linspace(xp, dtype, *, start, stop, num=50, endpoint=True, **_):
    if np.ndim(start) or np.ndim(stop):  # array bounds: NumPy's, moved
        return make_linspace(dtype, start=start, stop=stop, num=num, endpoint=endpoint)
    return xp.linspace(scalar_param(start), scalar_param(stop), num, endpoint=endpoint,
                       dtype=dtype)


def _eye(xp, dtype, *, N, M=None, k=0, **_):
    return xp.eye(N, M, k, dtype=dtype)


# ------------------------------------------------------------------ ufunc methods
# the keywords CuPy's ufunc methods take (beyond the operands and out=)
_METHOD_KEYWORDS = {"reduce": {"axis", "dtype", "keepdims"}, "accumulate": {"axis", "dtype"},
                    "reduceat": {"indices", "axis", "dtype"}, "outer": set(),
                    "at": {"index"}}


def _ufunc_method_planner(op, inputs, params, cpu_plan):
    cpu_run = cpu_plan.run

    def run(inputs, outputs, req, params):
        xp = module_of(inputs, outputs)
        if not _ufunc_method(xp, inputs, outputs, req, **params):
            host_run(xp, cpu_run, inputs, outputs, req, params)
    return run


def _ufunc_method(xp, inputs, outputs, req, ufunc, method, out_dtype=None, **kwargs) -> bool:
    out, r = outputs[0], OpReq(req[0])
    if r is _NULL:
        return True
    xp_ufunc = getattr(xp, ufunc.__name__, None)
    if xp is not np and (xp_ufunc is None or not hasattr(xp_ufunc, method)
                         or not kwargs.keys() <= _METHOD_KEYWORDS[method]):
        return False
    kwargs = device_value(xp, kwargs)
    try:
        with quiet(xp):
            if method == "at":
                x, *values = as_xp_inputs(xp, inputs)
                if x is not out:
                    xp.copyto(out, x)
                xp_ufunc.at(out, kwargs["index"], *values)
                return True
            operands = detach_overlapping(as_xp_inputs(xp, inputs), [out],
                                          allow_same_view=False, xp=xp)
            write_with_req(out, r, lambda target: getattr(xp_ufunc, method)(
                *operands, out=target, **kwargs), xp=xp)
    except NotImplementedError:  # a ufunc CuPy's method does not support
        if xp is np:
            raise
        return False
    return True


def planners() -> dict:
    return {
        "copy": _static(_copy),
        "concatenate": _static(_joining("concatenate")),
        "stack": _static(_joining("stack")),
        "split": _static(_split),
        "take_index": _static(_take_index),
        "assign_index": _static(_assign_index),
        "put": _static(_in_place(_put)),
        "put_along_axis": _static(_in_place(_put_along_axis)),
        "putmask": _static(_in_place(_putmask)),
        "place": _static(_in_place(_place)),
        "copyto": _static(_in_place(_copyto)),
        "fill": _static(_creation(_fill)),
        "arange": _static(_creation(_arange)),
        "linspace": _static(_creation(_linspace)),
        "eye": _static(_creation(_eye)),
        "ufunc_method": _ufunc_method_planner,
    }
