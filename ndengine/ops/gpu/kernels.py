"""The gpu kernels: every registered operator's kernel written once against an array module.

Design
------
A gpu kernel never imports CuPy.  It takes the array module ``xp`` from the arrays it is
handed (``array_module``): ``cupy`` for CuPy arrays (a real GPU), ``numpy`` otherwise.  The
fake GPU device, on which CI tests the GPU path on a CPU-only machine, hands the kernels
plain NumPy arrays, so the very same code runs there with ``xp = numpy``.

The kernels are not written op by op: each module of ``ops/gpu/`` turns one family of the CPU
tables into planners, ``planner(op, inputs, params, cpu_plan) -> run``:

* ``elementwise``: the element-wise specs (``ops.elementwise.tables``: the NumPy ufunc
  whose name CuPy shares, the plan's computation and output dtypes) and an expression per
  op that is no ufunc (relu, sigmoid, where, clip, round, divmod, comparisons beyond an
  integer's range, power's checks, nan_to_num, isclose, allclose, array_equal);
* ``reductions``: ``reductions.REDUCTIONS`` (sum, mean, std, argmax, ...);
* ``numpy_functions``: the ``NumpyFunction`` ops (statistics, sorting, searching):
  the row's NumPy function mapped to xp's function of the same dotted name;
* ``numpy_operators``: the ``numpy_operator`` rows (linalg, fft, products, shaping,
  selection) the same way, and dot, matmul, lstsq;
* ``movement``: copy/astype, concatenate, stack, split, indexing (index arrays moved to
  xp), put, creation (fill, arange, linspace, eye), ufunc methods;
* ``random``: the random ops, on the device's own generator.

``registration.register_all`` (called by ``ops/__init__.py`` once the CPU ops exist) installs each with
``Operator.set_device_planner("gpu", planner)``: the plan on the gpu device is the CPU's
plan (outputs, dtypes, the checks and errors at the call) with the gpu run, and a user's
``op.set_kernel("gpu", fn)`` still overrides it.

Host fallback
-------------
``HOST_FALLBACK`` names the ops CuPy cannot run (the function is missing, or lacks a
parameter the op always passes), or the calls of an op it cannot run (``when``: pad's
'median' mode): their gpu run copies the inputs to the host, runs the op's CPU plan there
and copies the results back into the outputs (``host_run``).  Besides that table, a
NumPy-function op (``numpy_functions``, ``numpy_operators``, ufunc methods) takes the same
path for a call whose xp function is missing, lacks a keyword the call passes (``accepts``:
``indices(sparse=True)``, ``argsort(stable=True)``, ``unique(sorted=True)``), or raises
NotImplementedError for a value.  On the fake device the host is where the arrays already
are: the fallback is just the CPU run.

Every kernel honours OpReq (ADD_TO accumulates through a temporary, NULL writes nothing),
writes into outputs that may be non-contiguous views, and copies an input that overlaps an
output first unless it is the very same view (``outputs.detach_overlapping`` with ``xp``).

CuPy differences handled (checked on an H100 with CuPy 14, NumPy 2)
-------------------------------------------------------------------
* CuPy functions refuse NumPy arrays: NumPy-array params (index keys, ``q``, ``bins``,
  snapshots) are moved with ``xp.asarray`` (``device_value``), scalar inputs of NumPy
  functions become 0-d device arrays; Python/NumPy scalar operands of ufuncs are passed as
  NumPy scalars of the computation dtype (kernel arguments, no transfer), and as a 0-d
  device array when no operand is an array.  Nothing calls ``np.asarray`` on a CuPy array
  (CuPy refuses the implicit copy): ``to_host`` uses ``.get()``.
* No ``casting=`` on CuPy ufunc calls; ``xp.copyto(dst, src, casting="unsafe")`` (CuPy has
  it) does every cast into an output; CuPy's loop tables are narrower than NumPy's, so the
  operands are cast to NumPy's computation dtypes first and the output dtype is NumPy's.
* ``out=``: CuPy's reductions and NumPy-function ports mishandle some (a 0-d ``out`` of a
  bool ``min`` in CUB, ``cumsum(axis=None)`` into a flat ``out``): on CuPy their results are
  copied into the output (``dtype=`` the output's where NumPy would accumulate in it).
* Missing in CuPy: ``nanquantile``, ``nanpercentile``, ``histogram_bin_edges``, pad's
  'median' mode, ``where=``/``initial=``/``mean=``/``correction=`` on reductions,
  ``lexsort``'s ``axis`` (all in ``HOST_FALLBACK``); ``linalg.multi_dot``,
  ``linalg.svdvals`` (twins: a chain of ``dot``, ``svd(compute_uv=False)``); keywords such
  as ``indices(sparse=)``, ``argsort(stable=)``, ``unique(sorted=)`` (host, per call);
  ``np.errstate`` (``quiet`` is NumPy's only).
* ``cupy.put`` defaults to ``mode="wrap"`` and ``cupy.take``/``take_along_axis`` do not
  check bounds (they wrap): the kernels pass ``mode="raise"`` and check the indices
  themselves (NumPy's IndexError; one device sync); ``cupy.choose`` takes its choices as one
  array, not a list; CuPy's ``argmax`` refuses axis 0 of a 0-d array (NumPy's legacy rule).
* ``cupy.linalg.eig``/``eigvals`` are always complex: a real output takes the real part
  when every imaginary part is zero (NumPy's own rule), else the CPU's TypeError.
* ``cupy.repeat``/``tile``/``roll``/``pad`` take their sizes as host values: those params
  stay on the host (``HOST_PARAMS``).
* ``cupy.random.Generator`` has no ``normal``/``choice``/``permutation``/``shuffle``: see
  ``random``.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import sys
from typing import Callable, NamedTuple

import numpy as np

from ..outputs import array_module, write_with_req
from ..plans import OpReq
from ..registry import get, names
from ..host_fallback import host_planner, host_run, inputs_module, module_of, to_host

__all__ = ["array_module", "inputs_module", "module_of", "xp_function", "accepts",
           "device_value", "to_host", "quiet", "write_value", "host_run", "host_planner",
           "HOST_FALLBACK", "HostFallback"]

_NULL = OpReq.NULL


# ------------------------------------------------------------------ array modules

_FUNCTIONS: dict = {}


def xp_function(xp, function):
    """``function`` (a NumPy function, ``numpy.linalg.svd``) as xp's function of the same
    dotted name (``cupy.linalg.svd``), or None where xp has none."""
    if xp is np:
        return function
    key = (xp.__name__, function)
    found = _FUNCTIONS.get(key, _FUNCTIONS)
    if found is _FUNCTIONS:
        found = xp
        module = getattr(function, "__module__", None) or "numpy"
        parts = [part for part in module.split(".")[1:] if not part.startswith("_")] \
            if module.split(".")[0] == "numpy" else None  # (numpy._core.x: numpy's name)
        if parts is None:
            found = None
        else:
            for part in parts + [function.__name__]:
                found = getattr(found, part, None)
                if found is None:
                    break
        _FUNCTIONS[key] = found
    return found


@functools.lru_cache(maxsize=512)
def _parameters(function):
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return None  # no signature to read (a Cython function): assume it takes them
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    return frozenset(p.name for p in parameters)


def accepts(function, keywords) -> bool:
    """Whether ``function`` takes every one of ``keywords``."""
    known = _parameters(function)
    return known is None or all(k in known for k in keywords)


def device_value(xp, value):
    """``value`` with every NumPy array in it (in tuples and lists too) moved to xp."""
    if xp is np:
        return value
    if isinstance(value, np.ndarray):
        return xp.asarray(value)
    if type(value) in (tuple, list):
        return type(value)(device_value(xp, v) for v in value)
    return value


def quiet(xp):
    """NumPy's floating-point warnings off (the CPU kernels ignore them too); CuPy has none."""
    return np.errstate(all="ignore") if xp is np else contextlib.nullcontext()


def write_value(xp, out, req, value):
    """``value`` (an xp array, a NumPy array or a scalar) into ``out`` as ``req`` asks,
    cast unsafely as NumPy's copyto into a planned output."""
    if req is _NULL:
        return
    if xp is not np and isinstance(value, np.ndarray):
        value = xp.asarray(value)
    write_with_req(out, req, lambda target: xp.copyto(target, value, casting="unsafe"), xp=xp)


# ------------------------------------------------------------------ host fallback

class HostFallback(NamedTuple):
    """Why CuPy cannot run an op, and for which calls: ``when(params)`` (None: always)."""
    reason: str
    when: Callable | None = None


# op -> HostFallback: the ops (or calls) whose gpu run is the CPU's, on host copies
HOST_FALLBACK = {
    "nanquantile": HostFallback("CuPy has no nanquantile"),
    "nanpercentile": HostFallback("CuPy has no nanpercentile"),
    "histogram_bin_count": HostFallback("CuPy has no histogram_bin_edges (the bins rules "
                                        "'auto', 'fd', ...)"),
    **{f"{name}_where": HostFallback(f"CuPy's {name} takes no where=, initial=, mean= or "
                                     "correction=")
       for name in ("sum", "prod", "mean", "max", "min", "std", "var")},
    "lexsort": HostFallback("CuPy's lexsort takes one 2-d array of keys and no axis"),
    "user_gradient": HostFallback("a user's gradient is NumPy code, which takes no CuPy "
                                  "arrays"),
    "pad": HostFallback("CuPy's pad has no mode 'median' and no callable mode",
                        lambda params: params.get("mode") == "median"
                        or callable(params.get("mode"))),
}
