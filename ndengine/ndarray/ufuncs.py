"""NumPy ufuncs on NDArrays (``__array_ufunc__``; ``install()`` sets it on NDArray).

``np.exp(x)``, ``np.add(x, y, out=z)``, ``numpy_array + x``: run on the engine when ndengine
has the op, through the module function (``out=`` and ``dtype=`` included). Ufuncs ndengine
lacks (and calls with other ufunc arguments) convert the NDArrays with a wait and give
NumPy's result, unless an NDArray is to be written, which only a pushed op may do.

The ufunc methods (``np.add.reduce(x)``, ``accumulate``, ``reduceat``, ``outer``,
``np.add.at(x, index, values)``) are the pushed op ``ufunc_method``, whose kernel is
NumPy's method itself; index arrays are snapshots taken at the call.
"""
import numpy as np

from .. import ops
from ..ops.elementwise import operators as elementwise
from ..core import NDArray, as_operand, invoke
from .arguments import check_out, defers_to, output_array
from .operators import registered_function

__all__ = ["array_ufunc", "install"]

# NumPy ufunc names that differ from our op names
_UFUNC_ALIASES = {"divide": "true_divide", "remainder": "mod", "absolute": "abs"}

# ufunc method -> the keyword arguments of NumPy's that ndengine supports
_METHOD_KWARGS = {"reduce": {"axis", "dtype", "out", "keepdims", "initial"},
                  "accumulate": {"axis", "dtype", "out"},
                  "reduceat": {"axis", "dtype", "out"},
                  "outer": {"dtype", "out"},
                  "at": set()}


def _op_name(ufunc):
    return _UFUNC_ALIASES.get(ufunc.__name__, ufunc.__name__)


def _has_elementwise_op(ufunc):
    """ndengine has an element-wise op computing exactly ``ufunc``."""
    try:
        return elementwise.spec(_op_name(ufunc)).ufunc is ufunc
    except KeyError:
        return False


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """NDArray.__array_ufunc__ (see the module docstring)."""
    outs = kwargs.get("out")
    for x in inputs:  # (the type test first: this runs on every call)
        if type(x) is not NDArray and defers_to(x):
            return NotImplemented
    if outs is not None and any(map(defers_to, outs)):
        return NotImplemented
    if method != "__call__":
        return _ufunc_method(ufunc, method, inputs, kwargs)
    name = _op_name(ufunc)
    writes_ndarray = outs is not None and any(isinstance(o, NDArray) for o in outs)
    if not kwargs or kwargs.keys() <= {"out", "dtype"}:
        function = registered_function(name)
        if function is not None and (outs is None or (writes_ndarray and all(
                o is None or isinstance(o, NDArray) for o in outs))):
            return function(*inputs, **kwargs)
    if writes_ndarray:
        raise TypeError(f"numpy.{ufunc.__name__}(..., out=NDArray) with "
                        f"{sorted(k for k in kwargs if k != 'out')} is not supported; use the "
                        "ndengine function with out= and dtype= only")
    converted = [x.asnumpy() if isinstance(x, NDArray) else x for x in inputs]
    return ufunc(*converted, **kwargs)


def _snapshot(value):
    """An index or index array as it is now (NumPy copies index arrays at the call)."""
    if isinstance(value, NDArray):
        return value.asnumpy()
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, tuple):
        return tuple(_snapshot(v) for v in value)
    if isinstance(value, list):
        return np.array(value)
    return value


def _ufunc_method(ufunc, method, inputs, kwargs):
    if method not in _METHOD_KWARGS:
        raise TypeError(f"numpy.{ufunc.__name__}.{method} is not supported on NDArrays")
    if not _has_elementwise_op(ufunc):
        raise TypeError(f"numpy.{ufunc.__name__}.{method} on NDArrays is not supported: "
                        f"ndengine has no kernel for numpy.{ufunc.__name__}")
    unsupported = sorted(set(kwargs) - _METHOD_KWARGS[method])
    if unsupported:
        raise TypeError(f"numpy.{ufunc.__name__}.{method} on NDArrays does not support "
                        f"the argument(s) {', '.join(unsupported)}")
    op = ops.get("ufunc_method")
    if method == "at":
        return _ufunc_at(op, ufunc, *inputs)
    arrays = list(inputs)
    params = {"ufunc": ufunc, "method": method}
    if method == "reduceat":
        params["indices"] = np.asarray(_snapshot(arrays.pop(1)))
    out = output_array(kwargs.pop("out", None), f"{ufunc.__name__}.{method}")
    if kwargs.get("dtype") is not None:
        kwargs["dtype"] = ops.check_dtype(kwargs["dtype"])
    params.update(kwargs)
    ctx = next((a.context for a in arrays if isinstance(a, NDArray)), None)
    operands = [as_operand(a, ctx) for a in arrays]
    if method != "outer":  # reduce & co. take an array (outer keeps Python scalars weak)
        operands = [a if isinstance(a, NDArray) else as_operand(np.asarray(a), ctx)
                    for a in operands]
    if out is None:
        return invoke(op, operands, params, ctx=ctx)[0]
    check_out(out, ctx or out.context, f"{ufunc.__name__}.{method}")
    params["out_dtype"] = out.dtype
    invoke(op, operands, params, out=out, ctx=ctx)
    return out


def _ufunc_at(op, ufunc, target, index, *values):
    """``ufunc.at(target, index, *values)``: writes ``target`` in place, returns None."""
    index = _snapshot(index)
    if not isinstance(target, NDArray):  # a NumPy target with NDArray values: NumPy's call
        ufunc.at(target, index, *[v.asnumpy() if isinstance(v, NDArray) else v
                                  for v in values])
        return None
    ctx = target.context
    operands = [as_operand(v, ctx) for v in values]
    invoke(op, [target, *operands], {"ufunc": ufunc, "method": "at", "index": index},
           out=target)
    return None


def install():
    """NumPy's ufuncs on NDArrays: sets ``NDArray.__array_ufunc__``."""
    NDArray.__array_ufunc__ = array_ufunc
