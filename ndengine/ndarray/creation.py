"""Array creation: from data (``array``) and from shapes (``zeros``, ``arange``, ...).

Creation from a shape pushes a fill op: it returns at once, and the memory is taken from the
pool by the worker that fills it.
"""
import numpy as np

from .. import ops
from ..engine import Context, current_context
from .ndarray import NDArray, _from_numpy, _new_array, invoke

__all__ = ["array", "zeros", "ones", "full", "empty", "arange", "linspace", "eye",
           "zeros_like", "ones_like", "full_like"]


def _ctx(ctx):
    return current_context() if ctx is None else Context(ctx)


def _shape(shape):
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(n) for n in shape)


def array(obj, ctx=None, dtype=None):
    """An NDArray holding a copy of ``obj`` (nested lists, scalars, NumPy arrays, NDArrays);
    dtypes as NumPy infers them (Python floats give float64)."""
    ctx = _ctx(ctx)
    if isinstance(obj, NDArray):
        result = obj.as_in_context(ctx)
        if result is obj:
            result = obj.copy()
        return result if dtype is None else result.astype(dtype, copy=False)
    dtype = None if dtype is None else ops.check_dtype(dtype)
    return _from_numpy(np.asarray(obj, dtype=dtype), ctx)


def full(shape, fill_value, dtype=None, ctx=None):
    if isinstance(fill_value, NDArray):
        fill_value = fill_value.item()
    if dtype is None:
        dtype = np.asarray(fill_value).dtype
    params = {"value": fill_value, "shape": _shape(shape), "dtype": ops.check_dtype(dtype)}
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
    params = {"start": start, "stop": stop, "step": step, "dtype": dtype}
    return invoke(ops.get("arange"), [], params, ctx=_ctx(ctx))[0]


def linspace(start, stop, num=50, endpoint=True, dtype=None, ctx=None):
    params = {"start": start, "stop": stop, "num": num, "endpoint": endpoint, "dtype": dtype}
    return invoke(ops.get("linspace"), [], params, ctx=_ctx(ctx))[0]


def eye(N, M=None, k=0, dtype=np.float64, ctx=None):
    params = {"N": N, "M": M, "k": k, "dtype": dtype}
    return invoke(ops.get("eye"), [], params, ctx=_ctx(ctx))[0]
