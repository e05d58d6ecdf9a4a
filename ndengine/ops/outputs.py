"""Writing results into preallocated outputs: OpReq handling and memory overlap.

Outputs may be views (``a[1:]``, ``a.T``) that share memory with an input.
NumPy semantics are "as if every input were read before anything is written",
so an input that overlaps an output in any way other than being the very same
view is copied first.  The very same view is safe for element-wise loops
(``a += a`` reads element i just before writing element i).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .registry import OpReq


def same_view(a: np.ndarray, b: np.ndarray) -> bool:
    return (a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
            and a.shape == b.shape and a.strides == b.strides and a.dtype == b.dtype)


def detach_overlapping(inputs, outputs, *, allow_same_view=True, copy=np.copy) -> list:
    """Copy every array input that overlaps an output (unless it is that output's exact view);
    ``copy(array)`` makes each copy."""
    detached = []
    for value in inputs:
        if isinstance(value, np.ndarray):
            for out in outputs:
                if np.may_share_memory(value, out) and not (allow_same_view and same_view(value, out)):
                    value = copy(value)
                    break
        detached.append(value)
    return detached


def write_with_req(out: np.ndarray, req: OpReq, compute: Callable[[np.ndarray], None]) -> None:
    """Run ``compute(target)`` so that ``out`` ends up written as ``req`` asks."""
    req = OpReq(req)
    if req is OpReq.NULL:
        return
    if req is OpReq.ADD_TO:
        # Accumulate through a temporary: the result must be complete before
        # it is added, and inputs may alias ``out``.
        result = np.empty(out.shape, out.dtype)
        compute(result)
        np.add(out, result, out=out)
        return
    compute(out)


def single_output(outputs, req):
    if len(outputs) != 1 or len(req) != 1:
        raise ValueError(f"expected one output and one req, got {len(outputs)} and {len(req)}")
    return outputs[0], OpReq(req[0])
