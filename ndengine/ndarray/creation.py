"""Array creation: from data (``array``) and from shapes (``zeros``, ``arange``, ...).

Creation from a shape pushes a fill op: it returns at once, and the memory is taken from the
pool by the worker that fills it.
"""
import numpy as np

from .. import ops
from ..engine import Context, current_context
from ..ops.creation import scalar_param
from ..ops.dtypes import check_scalar_fits
from ..ops.shapes import check_shape as _shape
from .ndarray import NDArray, _from_numpy, _new_array, invoke

__all__ = ["array", "zeros", "ones", "full", "empty", "arange", "linspace", "eye",
           "zeros_like", "ones_like", "full_like"]


def _ctx(ctx):
    return current_context() if ctx is None else Context(ctx)


_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _frozen(value):
    """An op parameter as the op will read it when it runs: NumPy arrays and lists are copied
    now, so a caller who changes them after the call does not change the queued op."""
    if isinstance(value, NDArray):
        return value.asnumpy()
    if isinstance(value, (np.ndarray, list, tuple)):
        return np.array(value)
    return value


def _fill_value(value, dtype):
    """``value`` ready to fill an array of ``dtype``, with NumPy's errors and warnings at the
    call (300 into uint8: OverflowError; NaN into int: RuntimeWarning, as numpy.full)."""
    kind = type(value)
    if kind is bool:
        return value
    if kind is int:
        if dtype.kind in "iu":
            check_scalar_fits(value, dtype)
            return value
        if -(1 << 53) <= value <= (1 << 53):
            return value
    elif kind is float:
        if dtype.kind == "b" or dtype.kind == "f" and (
                dtype.itemsize == 8 or value != value or -_FLOAT32_MAX <= value <= _FLOAT32_MAX):
            return value  # into bool or float: NumPy converts these quietly
    cast = np.empty(np.shape(value), dtype)
    np.copyto(cast, value, casting="unsafe")  # what numpy.full does, at the call
    return cast


def array(obj, dtype=None, *, ctx=None):
    """An NDArray holding a copy of ``obj`` (nested lists, scalars, NumPy arrays, NDArrays);
    dtypes as NumPy infers them (Python floats give float64). NumPy's argument order:
    ``array(obj, np.float32)``; the context is a keyword."""
    ctx = _ctx(ctx)
    if isinstance(obj, NDArray):
        result = obj.as_in_context(ctx)
        if result is obj:
            result = obj.copy()
        return result if dtype is None else result.astype(dtype, copy=False)
    dtype = None if dtype is None else ops.check_dtype(dtype)
    return _from_numpy(np.asarray(obj, dtype=dtype), ctx)


def full(shape, fill_value, dtype=None, ctx=None):
    fill_value = _frozen(fill_value)
    dtype = ops.check_dtype(np.asarray(fill_value).dtype if dtype is None else dtype)
    params = {"value": _fill_value(fill_value, dtype), "shape": _shape(shape), "dtype": dtype}
    return invoke(ops.get("fill"), [], params, ctx=_ctx(ctx))[0]


def zeros(shape, dtype=np.float64, ctx=None):
    return full(shape, 0, dtype if dtype is not None else np.float64, ctx)


def ones(shape, dtype=np.float64, ctx=None):
    return full(shape, 1, dtype if dtype is not None else np.float64, ctx)


def empty(shape, dtype=np.float64, ctx=None):
    """An array whose values are whatever its pooled memory held (as numpy.empty)."""
    dtype = ops.check_dtype(dtype if dtype is not None else np.float64)
    return _new_array(_shape(shape), dtype, _ctx(ctx))


def _like(proto, dtype, ctx):
    return (proto.shape, proto.dtype if dtype is None else dtype,
            proto.context if ctx is None else ctx)


def zeros_like(a, dtype=None, ctx=None):
    shape, dtype, ctx = _like(a, dtype, ctx)
    return full(shape, 0, dtype, ctx)


def ones_like(a, dtype=None, ctx=None):
    shape, dtype, ctx = _like(a, dtype, ctx)
    return full(shape, 1, dtype, ctx)


def full_like(a, fill_value, dtype=None, ctx=None):
    shape, dtype, ctx = _like(a, dtype, ctx)
    return full(shape, fill_value, dtype, ctx)


def arange(start, stop=None, step=1, dtype=None, ctx=None):
    params = {"start": scalar_param(start), "stop": scalar_param(stop),
              "step": scalar_param(step), "dtype": dtype}
    return invoke(ops.get("arange"), [], params, ctx=_ctx(ctx))[0]


def linspace(start, stop, num=50, endpoint=True, dtype=None, ctx=None):
    params = {"start": _frozen(start), "stop": _frozen(stop), "num": num,
              "endpoint": endpoint, "dtype": dtype}
    return invoke(ops.get("linspace"), [], params, ctx=_ctx(ctx))[0]


def eye(N, M=None, k=0, dtype=np.float64, ctx=None):
    params = {"N": N, "M": M, "k": k, "dtype": dtype}
    return invoke(ops.get("eye"), [], params, ctx=_ctx(ctx))[0]
