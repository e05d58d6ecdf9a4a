"""gpu kernels of the ``numpy_operator`` rows (linalg, fft, products, shaping, selection:
``families.numpy_operators.NUMPY_OPERATORS``), and of dot, matmul and lstsq.

A row's CPU kernel is ``call(function, arrays, params)`` with its NumPy function; the gpu
kernel makes the same call with xp's function of the same dotted name
(``numpy.linalg.svd`` -> ``cupy.linalg.svd``, ``numpy.fft.rfft`` -> ``cupy.fft.rfft``), the
inputs that overlap an output copied first, and writes each result into its output with its
req.  Where xp has no such function it has a twin here (``TWINS``: ``linalg.svdvals`` is
``svd(compute_uv=False)``, ``linalg.multi_dot`` a chain of ``dot``; ``take``,
``take_along_axis`` check their indices as NumPy does, CuPy wraps them); a call xp's
function cannot take (a keyword it lacks, NotImplementedError) runs on the host.

Params that CuPy reads as host values (sizes, shifts, pad widths, axes) stay on the host
(``HOST_PARAMS``: a NumPy array there becomes a list); other NumPy-array params move to xp.
A complex result for a real output (eig of a real matrix: CuPy's is always complex) is taken
as real when every imaginary part is zero, as NumPy does, and refused otherwise.
"""
from __future__ import annotations

import functools

import numpy as np

from .kernels import (
    accepts, device_value, host_run, module_of, quiet, to_host, write_value, xp_function)
from .numpy_functions import as_xp_inputs
from ..families.numpy_operators import COMPLEX_BY_VALUE, NUMPY_OPERATORS, split_inputs
from ..outputs import detach_overlapping, write_with_req
from ..plans import OpReq

__all__ = ["planners", "TWINS", "HOST_PARAMS"]

HOST_PARAMS = frozenset(("repeats", "reps", "shift", "axis", "pad_width", "axes", "s",
                         "dimensions", "stat_length", "constant_values", "end_values", "k",
                         "offset", "n", "d"))


def _host_params(xp, params):
    if xp is np:
        return params
    return {k: (np.asarray(to_host(v)).tolist() if k in HOST_PARAMS and
                (isinstance(v, np.ndarray) or type(v).__module__.startswith("cupy"))
                else device_value(xp, v)) for k, v in params.items()}


# ------------------------------------------------------------------ twins

def _out_of_bounds(xp, indices, length, axis):
    """NumPy's IndexError for the first index outside [-length, length) (one device sync)."""
    if not indices.size:
        return
    bad = (indices < -length) | (indices >= length)
    if bool(bad.any()):
        first = int(indices.reshape(-1)[int(xp.argmax(bad.reshape(-1)))])
        raise IndexError(f"index {first} is out of bounds for axis {axis} with size {length}")


def _take(xp, a, indices, axis=None, mode="raise", out=None):
    """``np.take`` by xp's take, which has no ``mode`` (CuPy's wraps): the indices are
    checked, clipped or wrapped here first."""
    shape = a.shape or (1,)
    length = int(np.prod(shape)) if axis is None else shape[axis]
    if mode == "raise":
        _out_of_bounds(xp, indices, length, 0 if axis is None else axis)
    elif mode == "clip":
        indices = xp.clip(indices, 0, max(length - 1, 0))
    elif length == 0:  # "wrap" along an empty axis: an empty result, else NumPy's error
        shape = (a.shape[:axis] + xp.shape(indices) + a.shape[axis + 1:]) \
            if axis is not None else xp.shape(indices)
        if int(np.prod(shape)):
            raise IndexError("cannot do a non-empty take from an empty axes.")
        return xp.empty(shape, a.dtype)
    else:  # "wrap"
        indices = indices % length
    return xp.take(a.reshape(-1) if axis is None or not a.shape else a, indices,
                   axis=None if axis is None else axis % len(shape))


def _take_along_axis(xp, arr, indices, axis=-1):
    length = arr.size if axis is None else arr.shape[axis]
    _out_of_bounds(xp, indices, length, axis)
    return xp.take_along_axis(arr, indices, axis)


def _choose(xp, a, choices, mode="raise"):
    """``np.choose`` by xp's, which takes the choices as one array (CuPy: not a list)."""
    if xp is np:
        return np.choose(a, choices, mode=mode)
    return xp.choose(a, xp.stack(xp.broadcast_arrays(*choices)), mode=mode)


def _svdvals(xp, x):
    return xp.linalg.svd(x, compute_uv=False)


def _multi_dot(xp, arrays, **params):
    return functools.reduce(xp.dot, arrays)


TWINS = {"take": _take, "take_along_axis": _take_along_axis, "choose": _choose,
         "linalg.svdvals": _svdvals,
         "linalg.multi_dot": _multi_dot}


# ------------------------------------------------------------------ the kernels

def numpy_operator_planner(name, row, op, inputs, params, cpu_plan):
    cpu_run = cpu_plan.run

    def run(inputs, outputs, req, params):
        xp = module_of(inputs, outputs)
        if not run_row(xp, name, row, inputs, outputs, req, params):
            host_run(xp, cpu_run, inputs, outputs, req, params)
    return run


def run_row(xp, name, row, inputs, outputs, req, params) -> bool:
    twin = TWINS.get(name)
    function = functools.partial(twin, xp) if twin is not None else \
        xp_function(xp, row.function)
    if function is None:
        return False
    values = detach_overlapping(as_xp_inputs(xp, inputs), outputs, allow_same_view=False,
                                xp=xp)
    arrays, params = split_inputs(values, params)
    params = _host_params(xp, params)
    if twin is None and not accepts(function, [k for k in params if k != "subscripts"]):
        return False  # (einsum's subscripts go positionally)
    try:
        with quiet(xp):
            results = row.call(function, arrays, params)
    except NotImplementedError:
        if xp is np:
            raise
        return False
    results = tuple(results) if isinstance(results, tuple) else (results,)
    for out, r, value in zip(outputs, req, results):
        dtype = value.dtype if hasattr(value, "dtype") else np.asarray(value).dtype
        if dtype.kind == "c" and out.dtype.kind != "c":
            if bool((value.imag != 0).any()):
                raise TypeError(f"{name}: the result is complex; "
                                + COMPLEX_BY_VALUE.format(hint=row.hint))
            value = value.real  # NumPy gives these real
        write_value(xp, out, OpReq(r), value)
    return True


def _product_planner(function):
    """dot, matmul: ``out=`` where the output is C-contiguous in the result's dtype (NumPy's
    BLAS insists on it), else the result copied in."""
    def planner(op, inputs, params, cpu_plan):
        def run(inputs, outputs, req, params):
            out, r = outputs[0], OpReq(req[0])
            if r is OpReq.NULL:
                return
            xp = module_of(inputs, outputs)
            a, b = detach_overlapping(as_xp_inputs(xp, inputs), [out], allow_same_view=False,
                                      xp=xp)
            compute = xp_function(xp, function)
            result_dtype = np.result_type(a.dtype, b.dtype) if not params else None

            def into(target):
                if target.flags.c_contiguous and target.dtype == result_dtype:
                    compute(a, b, out=target)
                else:
                    xp.copyto(target, compute(a, b, **params), casting="unsafe")
            with quiet(xp):
                write_with_req(out, r, into, xp=xp)
        return run
    return planner


def _lstsq_planner(op, inputs, params, cpu_plan):
    def run(inputs, outputs, req, params):
        xp = module_of(inputs, outputs)
        a, b = as_xp_inputs(xp, inputs)
        results = xp.linalg.lstsq(a, b, rcond=params.get("rcond"))
        for out, r, value in zip(outputs, req, results):
            if out.shape != value.shape:  # the residuals, empty below full rank: not read
                value = xp.zeros(out.shape, out.dtype)
            write_value(xp, out, OpReq(r), value)
    return run


def planners() -> dict:
    found = {name: functools.partial(numpy_operator_planner, name, row)
             for name, row in NUMPY_OPERATORS.items()}
    found["dot"] = _product_planner(np.dot)
    found["matmul"] = _product_planner(np.matmul)
    found["linalg.lstsq"] = _lstsq_planner
    return found
