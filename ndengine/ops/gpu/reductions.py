"""gpu kernels of the plain reductions (``reductions.REDUCTIONS``: sum, prod, mean, std, var,
max, min, argmax, argmin), generated from that table.

Each row's NumPy function (``np.sum``) is called as xp's function of the same name
(``cupy.sum``, which takes ``axis`` as an int or a tuple, ``dtype``, ``keepdims``, ``ddof``),
with ``out=`` the output on NumPy (as the CPU kernel: NumPy accumulates in out's dtype),
its result copied in on CuPy (whose CUB path mishandles some ``out=``; ``dtype=`` the
output's where NumPy would have accumulated in it), and with the CPU kernel's rules
(``Reduction.kernel``) for what NumPy's call alone does not say:

* an empty mean/std/var is NaN, written without NumPy's warning (cast into an int output
  as NumPy casts it);
* argmax/argmin write their intp result through the output's dtype;
* a float16 mean/std/var is computed as NumPy computes it without ``out=`` (in float32)
  unless the caller gave an ``out=`` (``out_dtype``), in whose dtype NumPy accumulates;
* std/var with an integer ``dtype=`` compute in float and cast, as NumPy does.

The axes are normalised by the same ``Reduction.axes`` the CPU uses (NumPy's legacy rule
for axis 0 or -1 of a 0-d array included).
"""
from __future__ import annotations

import functools
import math

import numpy as np

from .kernels import module_of, quiet, write_value, xp_function
from ..outputs import detach_overlapping, write_with_req
from ..plans import OpReq
from ..families.reductions import _ARG_REDUCTIONS, _STATISTICS, REDUCTIONS, Reduction

__all__ = ["planners"]


def reduction_planner(reduction, op, inputs, params, cpu_plan):
    def run(inputs, outputs, req, params):
        reduce_into(reduction, inputs, outputs, req, **params)
    return run


def reduce_into(reduction, inputs, outputs, req, axis=None, keepdims=False, ddof=0,
                dtype=None, out_dtype=None):
    out, r = outputs[0], OpReq(req[0])
    if r is OpReq.NULL:
        return
    xp = module_of(inputs, outputs)
    x = inputs[0]
    if not isinstance(x, xp.ndarray):
        x = xp.asarray(np.asarray(x))
    axes = reduction.axes(x, axis)
    if r is not OpReq.ADD_TO:
        (x,) = detach_overlapping([x], [out], allow_same_view=False, xp=xp)
    function = xp_function(xp, reduction.numpy_fn)
    name = reduction.name
    axis_arg = None if axis is None else axes
    empty = math.prod(x.shape[a] for a in axes) == 0

    if name in _ARG_REDUCTIONS:  # (axis 0 or -1 of a 0-d array: NumPy's legacy rule)
        write_value(xp, out, r, function(x, axis=axis if x.ndim else None,
                                         keepdims=keepdims))
        return
    if empty and name in _STATISTICS:  # NumPy's NaN, minus its warning
        write_value(xp, out, r, np.nan)
        return
    extra = {"ddof": ddof} if name in ("std", "var") else {}
    if dtype is not None:
        extra["dtype"] = dtype
    if out_dtype is None and ((name in _STATISTICS and x.dtype == np.float16)
                              or (extra and out.dtype.kind in "iub")):
        # NumPy's answer without out= (float16 in float32; std/var(dtype=int) in float)
        with quiet(xp):
            write_value(xp, out, r, function(x, axis=axis_arg, keepdims=keepdims, **extra))
        return

    if xp is not np:  # CuPy's out= of another dtype (or a 0-d one) is fragile: copy in,
        if out_dtype is not None and name in ("sum", "prod", "mean", "std", "var") and (
                name in ("sum", "prod") or out.dtype.kind in "fc"):
            extra.setdefault("dtype", out.dtype)  # having accumulated in out's dtype
        write_value(xp, out, r, function(x, axis=axis_arg, keepdims=keepdims, **extra))
        return

    def compute(target):
        with quiet(xp):
            function(x, axis=axis_arg, keepdims=keepdims, out=target, **extra)
    write_with_req(out, r, compute, xp=xp)


def planners() -> dict:
    return {name: functools.partial(reduction_planner, Reduction(name)) for name in REDUCTIONS}
