"""gpu kernels of the element-wise ops, generated from their specs (``ops.elementwise.tables``).

Each registered element-wise op has an ``ElementwiseSpec`` whose NumPy ufunc gives its dtype
rules; ``spec.resolve(inputs, params)`` gives the call's computation dtypes (one per input)
and output dtype, the same the CPU plan used.  The gpu run

1. converts each input to its computation dtype: an array with ``astype(copy=False)``, a
   Python or NumPy scalar to a NumPy scalar of that dtype (a CuPy kernel argument: no
   transfer; wrapped C-style for ``where``, whose CPU loop wraps too);
2. copies an input that overlaps the output (not the very same view) first;
3. calls ``getattr(xp, spec.ufunc.__name__)`` (CuPy has NumPy's ufunc names) with
   ``out=`` the output (or a temporary for ADD_TO), so the result lands in the planned output
   dtype, float16 and complex included, in a view of any strides; the outputs of frexp and
   modf go positionally (CuPy's ufuncs take no ``out=`` for two).

The ops that are no NumPy ufunc, or whose CPU run adds a rule, get an xp expression in
``EXPRESSIONS``: relu, sigmoid, round, clip, clip_arrays, where, divmod (two outputs);
``power`` checks an integer exponent array for negatives (NumPy's ValueError), and the
comparisons answer a Python int beyond an integer array's range with NumPy's constant
(``ComparisonSpec``).  NumPy's non-ufunc functions nan_to_num, isclose, allclose and
array_equal call xp's function of that name.
"""
from __future__ import annotations

import functools

import numpy as np

from ..dtypes import int_bounds, is_array_spec
from ..elementwise.operators import ComparisonSpec, spec as spec_of
from ..elementwise.power_clip import _NEGATIVE_POWER, PowerSpec, _clip_bound
from .kernels import module_of, quiet, write_value
from ..outputs import detach_overlapping
from ..plans import OpReq
from ..registry import names

__all__ = ["planners", "EXPRESSIONS"]

_NULL, _ADD_TO = OpReq.NULL, OpReq.ADD_TO


def _is_array(value) -> bool:
    return is_array_spec(value) and not isinstance(value, np.generic)


def operand(xp, value, dtype, wrap=False):
    """One input in its computation dtype (see the module docstring)."""
    if _is_array(value):
        return value.astype(dtype, copy=False)
    if wrap:
        return np.asarray(value).astype(dtype)[()]  # C-style wrap, as np.where does
    return np.asarray(value, dtype=dtype)[()]  # the plan's check refused what NumPy refuses


def operands_of(xp, inputs, computation, wrap=False):
    operands = [operand(xp, v, dt, wrap) for v, dt in zip(inputs, computation)]
    if xp is not np and not any(isinstance(v, xp.ndarray) for v in operands):
        operands[0] = xp.asarray(operands[0])  # a CuPy ufunc wants one array at least
    return operands


# ----------------------------------------------------------------- expressions
# name -> compute(xp, operands, targets, params): write the op of the cast operands into
# ``targets`` (one array per output, of the planned dtypes; maybe views)

def _ufunc(name):
    def compute(xp, operands, targets, params):
        if len(targets) == 1:
            getattr(xp, name)(*operands, out=targets[0])
        else:  # frexp, modf: CuPy's ufuncs take several outputs only positionally
            getattr(xp, name)(*operands, *targets)
    return compute


def _relu(xp, operands, targets, params):
    (x,) = operands
    xp.maximum(x, x.dtype.type(0), out=targets[0])


def _sigmoid(xp, operands, targets, params):
    """1 / (1 + exp(-x)) in x's dtype, the CPU loop's steps in its order."""
    (x,), (out,) = operands, targets
    one = x.dtype.type(1)
    work = out if out.dtype == x.dtype else xp.empty(out.shape, x.dtype)
    xp.negative(x, out=work)
    xp.exp(work, out=work)
    xp.add(one, work, out=work)
    xp.divide(one, work, out=work)
    if work is not out:
        xp.copyto(out, work, casting="unsafe")


def _round(xp, operands, targets, params):
    (x,), (out,) = operands, targets
    decimals = params.get("decimals", 0)
    if x.dtype.kind in "biu" and decimals >= 0:
        xp.copyto(out, x, casting="unsafe")  # an integer rounds to itself
    else:
        xp.copyto(out, xp.round(x, decimals), casting="unsafe")


_CLIP_CALLS = {(True, True): "clip", (True, False): "maximum", (False, True): "minimum"}


def _clip(xp, operands, targets, params):
    """NumPy's clip with None bounds: clip, maximum or minimum, bounds in x's dtype."""
    (x,), (out,) = operands, targets
    bounds = [_clip_bound(params[k], x.dtype)[()] for k in ("a_min", "a_max")
              if params.get(k) is not None]
    call = _CLIP_CALLS.get((params.get("a_min") is not None, params.get("a_max") is not None))
    if call is None:
        xp.copyto(out, x, casting="unsafe")
    else:
        getattr(xp, call)(x, *bounds, out=out)


def _clip_arrays(xp, operands, targets, params):
    x, low, high = operands
    xp.clip(x, low, high, out=targets[0])


def _where(xp, operands, targets, params):
    condition, x, y = operands  # (two copies would read x after writing its own view)
    xp.copyto(targets[0], xp.where(condition, x, y), casting="unsafe")


def _divmod(xp, operands, targets, params):
    """NumPy's divmod is (floor_divide, remainder) of the cast operands."""
    xp.floor_divide(*operands, out=targets[0])
    xp.remainder(*operands, out=targets[1])


EXPRESSIONS = {"relu": _relu, "sigmoid": _sigmoid, "round": _round, "clip": _clip,
               "clip_arrays": _clip_arrays, "where": _where, "divmod": _divmod}
# expressions that read an input after writing an output: the very same view is copied too
_TWO_PASS = frozenset(("divmod",))


# ----------------------------------------------------------------- the runs

def elementwise_planner(spec, op, inputs, params, cpu_plan):
    """The gpu run of an element-wise op for this signature."""
    computation, _ = spec.resolve(inputs, params)
    compute = EXPRESSIONS.get(spec.name) or _ufunc(spec.ufunc.__name__)
    wrap = spec.wrap_scalars
    checks = []
    if isinstance(spec, PowerSpec) and spec.input_check(
            inputs, computation, cpu_plan.outputs[0][0]) is not None:
        checks.append(_check_exponents)
    if isinstance(spec, ComparisonSpec):
        for index in (0, 1):
            dtype = spec._int_partner(inputs, index)
            if dtype is not None:
                return spec._beyond_range_run(_run(compute, computation, wrap, checks, True),
                                              index, *int_bounds(dtype))
    return _run(compute, computation, wrap, checks, spec.name not in _TWO_PASS)


def _check_exponents(xp, operands):
    if bool((operands[1] < 0).any()):  # one device sync, as NumPy's check reads the data
        raise ValueError(_NEGATIVE_POWER)


def _run(compute, computation, wrap, checks, same_view_ok):
    def run(inputs, outputs, req, params):
        if all(OpReq(r) is _NULL for r in req):
            return
        xp = module_of(inputs, outputs)
        operands = operands_of(xp, inputs, computation, wrap)
        for check in checks:
            check(xp, operands)
        if all(OpReq(r) is not _ADD_TO for r in req):
            operands = detach_overlapping(operands, outputs, allow_same_view=same_view_ok,
                                          xp=xp)
            with quiet(xp):
                if len(outputs) == 1:
                    compute(xp, operands, outputs, params)
                    return
                temporaries = [out if OpReq(r) is not _NULL else xp.empty(out.shape, out.dtype)
                               for out, r in zip(outputs, req)]
                compute(xp, operands, temporaries, params)
            return
        results = [xp.empty(out.shape, out.dtype) for out in outputs]
        with quiet(xp):
            compute(xp, operands, results, params)
        for out, r, result in zip(outputs, req, results):  # (the results are complete)
            r = OpReq(r)
            if r is _ADD_TO:
                xp.add(out, result, out=out)
            elif r is not _NULL:
                xp.copyto(out, result)
    return run


# ------------------------------------------------- NumPy's element-wise functions

def _nan_to_num(xp, inputs, out, nan=0.0, posinf=None, neginf=None):
    x = inputs[0]
    if not isinstance(x, xp.ndarray):
        x = xp.asarray(np.asarray(x, out.dtype))
    return xp.nan_to_num(x, copy=True, nan=nan, posinf=posinf, neginf=neginf)


def _array_values(xp, inputs):
    return [v if isinstance(v, xp.ndarray) or not _is_array(v) else xp.asarray(v)
            for v in inputs]


def _isclose(xp, inputs, out, equal_nan=False):
    a, b, rtol, atol = _array_values(xp, inputs)
    return xp.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def _allclose(xp, inputs, out, equal_nan=False):
    return xp.all(_isclose(xp, inputs, out, equal_nan))


def _array_equal(xp, inputs, out, equal_nan=False):
    a1, a2 = _array_values(xp, inputs)
    return xp.array_equal(a1, a2, equal_nan=equal_nan)


FUNCTIONS = {"nan_to_num": _nan_to_num, "isclose": _isclose, "allclose": _allclose,
             "array_equal": _array_equal}


def function_planner(function, op, inputs, params, cpu_plan):
    def run(inputs, outputs, req, params):
        out, r = outputs[0], OpReq(req[0])
        if r is _NULL:
            return
        xp = module_of(inputs, outputs)
        with quiet(xp):
            result = function(xp, inputs, out, **params)
        write_value(xp, out, r, result)
    return run


def planners() -> dict:
    found = {}
    for name in names():
        try:
            spec = spec_of(name)
        except KeyError:
            continue
        found[name] = functools.partial(elementwise_planner, spec)
    for name, function in FUNCTIONS.items():
        found[name] = functools.partial(function_planner, function)
    return found

