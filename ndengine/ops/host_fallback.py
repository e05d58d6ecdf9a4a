"""A device's run of an op on host copies of its values: the array module of a kernel's values
and the host fallback.

A device kernel is handed arrays of the device's array module (CuPy's for a real GPU, NumPy's
on the fake GPU); ``inputs_module``/``module_of`` name that module from the values, never by
importing CuPy. ``host_run`` runs an op's CPU plan on host copies of its inputs and copies
the results back into the device outputs: the registry uses it for a user's op that has a CPU
kernel only (``host_planner``), the gpu kernels for the calls CuPy cannot run
(``gpu.kernels.HOST_FALLBACK``).
"""
from __future__ import annotations

import logging
import sys

import numpy as np

from .outputs import array_module
from .plans import OpReq

__all__ = ["inputs_module", "module_of", "to_host", "host_run", "host_planner"]

_NULL = OpReq.NULL
_fallback_log = logging.getLogger("ndengine.fallback")


def inputs_module(values):
    """The array module of the first CuPy array among ``values``, else NumPy."""
    for value in values:
        if type(value).__module__.startswith("cupy"):
            return sys.modules["cupy"]
    return np


def module_of(inputs, outputs):
    """The array module of a kernel's call: its outputs' (always arrays), else its inputs'."""
    for value in outputs:
        return array_module(value)
    return inputs_module(inputs)


def to_host(value):
    """A CuPy array (also inside tuples, lists and dicts) as a NumPy array; others as they
    are."""
    if type(value).__module__.startswith("cupy"):
        return value.get()
    if type(value) in (tuple, list):
        return type(value)(to_host(v) for v in value)
    if type(value) is dict:
        return {k: to_host(v) for k, v in value.items()}
    return value


def host_run(xp, cpu_run, inputs, outputs, req, params):
    """Run ``cpu_run`` (the op's CPU plan's run) on host copies of the inputs and copy its
    results back into the outputs.  The outputs' contents go too where they are read
    (ADD_TO, WRITE_INPLACE): the CPU run then accumulates or updates them as usual."""
    if xp is np:
        cpu_run(inputs, outputs, req, params)
        return
    host_inputs = [to_host(v) for v in inputs]
    host_outputs = [out.get() if OpReq(r) in (OpReq.ADD_TO, OpReq.WRITE_INPLACE)
                    else np.empty(out.shape, out.dtype) for out, r in zip(outputs, req)]
    cpu_run(host_inputs, host_outputs, req, to_host(params))
    for out, r, result in zip(outputs, req, host_outputs):
        if OpReq(r) is not _NULL:
            xp.copyto(out, xp.asarray(result))


def host_planner(op, inputs, params, cpu_plan):
    """The planner of the calls ``HOST_FALLBACK`` names: the CPU plan's run, on the host."""
    cpu_run = cpu_plan.run
    _fallback_log.info("%s runs on the host, not the device (copies in and out): no device "
                       "kernel for these arguments", getattr(op, "name", op))

    def run(inputs, outputs, req, params):
        host_run(module_of(inputs, outputs), cpu_run, inputs, outputs, req, params)
    return run
