"""gpu kernels of the ``NumpyFunction`` ops (statistics, sorting, searching), generated from
their rows (``numpy_functions.FUNCTIONS``).

A row's CPU kernel calls its NumPy function on the op's buffers; the gpu kernel calls xp's
function of the same dotted name (``xp_function``: ``numpy.nanmean`` -> ``cupy.nanmean``) the
same way: the keyword inputs named by ``arrays``, the output as ``out=`` where the row says
(``out_dtype`` given, or ``out_always``), else the result copied into the output(s) with
their req.  NumPy-array params (``q``, ``bins``) are moved to xp, scalar inputs become 0-d
xp arrays.

The rows whose function is ndengine's own get an xp twin in ``TWINS`` (``unique_count``,
``bincount_length``, ``select``) or a kernel twin in ``KERNELS`` (sort and partition sort
their output in place, as the CPU's do).  A call that xp's function cannot take (no such function, a
keyword it lacks, NotImplementedError for a value) runs on the host instead
(``host_fallback.host_run``).
"""
from __future__ import annotations

import functools
import operator

import numpy as np

from .kernels import accepts, device_value, host_run, module_of, quiet, write_value, xp_function
from ..families.numpy_functions import FUNCTIONS
from ..families.sorting import in_place_kernel
from ..outputs import detach_overlapping, write_with_req
from ..plans import OpReq

__all__ = ["planners", "TWINS", "KERNELS", "as_xp_inputs"]


def as_xp_inputs(xp, values):
    """Scalar inputs as 0-d xp arrays (CuPy's functions take arrays); arrays as they are."""
    if xp is np:
        return list(values)
    return [v if isinstance(v, xp.ndarray) else xp.asarray(np.asarray(v)) for v in values]


# ------------------------------------------------------- ndengine's own functions

def _unique_count(xp, a, *, axis=None, equal_nan=True):
    found = xp.unique(a, axis=axis, equal_nan=equal_nan)
    return np.intp(found.size if axis is None else found.shape[axis])


def _bincount_length(xp, x, weights=None, minlength=0):
    if x.size and bool(x.min() < 0):
        raise ValueError("'list' argument must have no negative elements")
    return np.intp(max(int(x.max()) + 1 if x.size else 0, operator.index(minlength)))


def _select(xp, *arrays, count):
    """numpy.select over the op's inputs (``count`` conditions, as many choices, the
    default) as NumPy computes it: the default, then each choice where its condition holds,
    the first condition last.  CuPy's select refuses a default that is an array (a 0-d one
    too) and takes its dtype from the choices alone."""
    arrays = [xp.asarray(a) for a in arrays]
    conditions, choices, default = arrays[:count], arrays[count:2 * count], arrays[-1]
    result = xp.empty(np.broadcast_shapes(*(a.shape for a in arrays)),
                      np.result_type(*(a.dtype for a in (*choices, default))))
    xp.copyto(result, default)
    for choice, condition in zip(choices[::-1], conditions[::-1]):
        xp.copyto(result, choice, where=condition)
    return result


TWINS = {"unique_count": _unique_count, "bincount_length": _bincount_length,
         "select": _select}


KERNELS = {"sort": functools.partial(in_place_kernel, "sort"),
           "partition": functools.partial(in_place_kernel, "partition")}
# keywords CuPy's ndarray.sort/partition lack, and the values of them that change nothing
# there: every sort kind gives the same sorted values, and CuPy sorts stably
_DROPPED = {"sort": {"kind": (None, "quicksort", "mergesort", "heapsort", "stable"),
                     "stable": (None, True, False)},
            "partition": {"kind": ("introselect",)}}


# ------------------------------------------------------------------ the kernel

def numpy_function_planner(row, op, inputs, params, cpu_plan):
    cpu_run = cpu_plan.run

    def run(inputs, outputs, req, params):
        xp = module_of(inputs, outputs)
        if not run_function(xp, row, inputs, outputs, req, params):
            host_run(xp, cpu_run, inputs, outputs, req, params)
    return run


def _function_of(xp, row):
    twin = TWINS.get(row.name)
    if twin is not None:
        return functools.partial(twin, xp)
    return xp_function(xp, row.function)


def run_function(xp, row, inputs, outputs, req, params) -> bool:
    """Run ``row``'s op with xp's function; False when xp cannot (the host runs it)."""
    arrays = params.get("arrays", ())
    out_dtype = params.get("out_dtype")
    numpy_params, own = row.split_params({k: v for k, v in params.items()
                                          if k not in ("arrays", "out_dtype")})
    kernel = KERNELS.get(row.name)
    if kernel is not None and xp is not np:
        dropped = _DROPPED[row.name]
        numpy_params = {k: v for k, v in numpy_params.items()
                        if k not in dropped or v not in dropped[k]}
    function = _function_of(xp, row) if kernel is None else None
    # NumPy's out= (in whose dtype it may accumulate); CuPy's functions take out= of
    # another shape or dtype less well: their result is copied in
    to_out = kernel is None and xp is np and len(outputs) == 1 and (
        out_dtype is not None or row.out_always)
    if kernel is None and (function is None or not accepts(
            function, [*numpy_params, *arrays, *(("out",) if to_out else ())])):
        return False
    values = detach_overlapping(as_xp_inputs(xp, inputs), outputs,
                                allow_same_view=kernel is not None, xp=xp)
    args, keywords = row.call_arguments(values, arrays)
    numpy_params = device_value(xp, numpy_params)
    try:
        with quiet(xp):
            if kernel is not None:
                kernel(xp, args, keywords, numpy_params, outputs, req)
                return True
            if to_out:
                write_with_req(outputs[0], OpReq(req[0]), lambda target: function(
                    *args, out=target, **keywords, **numpy_params), xp=xp)
                return True
            result = function(*args, **keywords, **numpy_params)
    except NotImplementedError:  # a value CuPy does not support (a sort kind, a method)
        if xp is np:
            raise
        return False
    write_results(xp, row.name, result if isinstance(result, tuple) else (result,),
                  outputs, req)
    return True


def write_results(xp, name, results, outputs, req):
    """Each result into its output, which must have the planned shape (see
    ``numpy_functions.write_results``)."""
    for out, result, r in zip(outputs, results, req):
        if np.shape(result) != out.shape:
            raise RuntimeError(f"{name}: the result has shape {np.shape(result)}, the "
                               f"output {out.shape}; the input changed after it was sized "
                               "(written by another thread meanwhile)")
        write_value(xp, out, OpReq(r), result)


def planners() -> dict:
    return {name: functools.partial(numpy_function_planner, row)
            for name, row in FUNCTIONS.items()}
