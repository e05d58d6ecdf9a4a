"""Writing results into preallocated outputs: OpReq handling and memory overlap.

Outputs may be views (``a[1:]``, ``a.T``) that share memory with an input.
NumPy semantics are "as if every input were read before anything is written",
so an input that overlaps an output in any way other than being the very same
view is copied first.  The very same view is safe for element-wise loops
(``a += a`` reads element i just before writing element i).

The helpers take the array module ``xp`` of the arrays they handle (``numpy``, the
default, or ``cupy``: see ``outputs.array_module``), so the CPU kernels and the gpu
kernels share them: ``xp.may_share_memory``, ``xp.copy``, ``xp.empty`` and ``xp.add``
exist in both.
"""
from __future__ import annotations

import sys
from typing import Callable

import numpy as np

from .plans import OpReq


def data_address(a) -> int:
    """The address of ``a``'s first element: NumPy's ``__array_interface__``, CuPy's
    ``a.data.ptr`` (a device pointer)."""
    if isinstance(a, np.ndarray):
        return a.__array_interface__["data"][0]
    return a.data.ptr


def array_module(x):
    """``cupy`` when ``x`` is a CuPy array (tested by its type's module, so CuPy is never
    imported where it is absent), else ``numpy``."""
    if type(x).__module__.startswith("cupy"):
        return sys.modules["cupy"]  # imported: one of its arrays exists
    return np


def same_view(a, b) -> bool:
    """Whether ``a`` and ``b`` are the very same view (address, shape, strides, dtype)."""
    if a is b:  # an op's target and output are often one NumPy view (the array's own)
        return True
    return (data_address(a) == data_address(b)
            and a.shape == b.shape and a.strides == b.strides and a.dtype == b.dtype)


def detach_overlapping(inputs, outputs, *, allow_same_view=True, copy=None, xp=np) -> list:
    """Copy every array input that overlaps an output (unless it is that output's exact view);
    ``copy(array)`` makes each copy (default ``xp.copy``)."""
    if copy is None:
        copy = xp.copy
    array_type, may_share_memory = xp.ndarray, xp.may_share_memory
    detached = []
    for value in inputs:
        if isinstance(value, array_type):
            for out in outputs:
                if may_share_memory(value, out) and not (allow_same_view and same_view(value, out)):
                    value = copy(value)
                    break
        detached.append(value)
    return detached


def write_with_req(out, req: OpReq, compute: Callable, xp=np) -> None:
    """Run ``compute(target)`` so that ``out`` ends up written as ``req`` asks."""
    if type(req) is not OpReq:  # (the enum's call costs as much as a small kernel)
        req = OpReq(req)
    if req is OpReq.NULL:
        return
    if req is OpReq.ADD_TO:
        # Accumulate through a temporary: the result must be complete before
        # it is added, and inputs may alias ``out``.
        result = xp.empty(out.shape, out.dtype)
        compute(result)
        xp.add(out, result, out=out)
        return
    compute(out)


def write_value(out, req, value, casting="same_kind", xp=np) -> None:
    """Write the computed ``value`` into ``out`` as ``req`` asks, cast by ``casting`` (as
    ``copyto``'s). A plain write (WRITE_TO, WRITE_INPLACE: nearly every call of a NumPy-backed
    kernel) is one assignment, without `write_with_req`'s closure; an unsafe one is NumPy's
    setitem, which casts as ``copyto(casting="unsafe")`` does at a fraction of its dispatch."""
    if req is _WRITE_TO or req is _WRITE_INPLACE:
        if casting == "unsafe":
            out[...] = value
        else:
            xp.copyto(out, value, casting=casting)
        return
    write_with_req(out, req, lambda target: xp.copyto(target, value, casting=casting), xp)


_WRITE_TO, _WRITE_INPLACE = OpReq.WRITE_TO, OpReq.WRITE_INPLACE


def single_output(outputs, req):
    if len(outputs) != 1 or len(req) != 1:
        raise ValueError(f"expected one output and one req, got {len(outputs)} and {len(req)}")
    request = req[0]
    return outputs[0], request if type(request) is OpReq else OpReq(request)
