"""Array creation: from data (``array``) and from shapes (``zeros``, ``arange``, ...).

Creation from a shape pushes a fill op: it returns at once, and the memory is taken from the
pool by the worker that fills it.
"""
import math
import operator

import numpy as np

from .. import ops
from ..engine import Context, current_context
from ..ops.creation import scalar_param
from ..ops.dtypes import check_scalar_fits
from ..ops.shapes import check_shape as _shape
from ..core import NDArray, from_numpy as _from_numpy, invoke, new_array as _new_array

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


_INTP_MAX = int(np.iinfo(np.intp).max)
_MAX_DIMS = 64
_PROBE_MAX = 1 << 16  # arange/linspace results this small are computed by NumPy at the call


def _sized_shape(shape, dtype):
    """A creation shape checked as NumPy checks it, at the call: the memory is taken only
    when the fill runs, so a shape no array can have must fail here, not at a wait."""
    dims = _shape(shape)
    if len(dims) > _MAX_DIMS:
        raise ValueError(f"maximum supported dimension for an ndarray is currently "
                         f"{_MAX_DIMS}, found {len(dims)}")
    size = 1
    for n in dims:
        if n > _INTP_MAX:
            raise ValueError("Maximum allowed dimension exceeded")
        size *= n
    if size * dtype.itemsize > _INTP_MAX:
        raise ValueError("array is too big; `arr.size * arr.dtype.itemsize` is larger than "
                         "the maximum possible size.")
    return dims


def full(shape, fill_value, dtype=None, ctx=None):
    fill_value = _frozen(fill_value)
    dtype = ops.check_dtype(np.asarray(fill_value).dtype if dtype is None else dtype)
    shape = _sized_shape(shape, dtype)  # NumPy makes the array, then fills it
    if 0 in shape and not np.ndim(fill_value) and type(fill_value) is not int:
        fill_value = 0  # NumPy converts nothing into an empty array (but checks an int)
    params = {"value": _fill_value(fill_value, dtype), "shape": shape, "dtype": dtype}
    return invoke(ops.get("fill"), [], params, ctx=_ctx(ctx))[0]


def zeros(shape, dtype=np.float64, ctx=None):
    return full(shape, 0, dtype if dtype is not None else np.float64, ctx)


def ones(shape, dtype=np.float64, ctx=None):
    return full(shape, 1, dtype if dtype is not None else np.float64, ctx)


def empty(shape, dtype=np.float64, ctx=None):
    """An array whose values are whatever its pooled memory held (as numpy.empty)."""
    dtype = ops.check_dtype(dtype if dtype is not None else np.float64)
    return _new_array(_sized_shape(shape, dtype), dtype, _ctx(ctx))


def _like(proto, dtype, ctx):
    """Shape, dtype and context of a ``*_like`` result. Like NumPy's, the prototype may be
    anything ``numpy.asarray`` takes (a list, a NumPy array, a scalar); then the result is
    on ``ctx`` or the current context."""
    if not isinstance(proto, NDArray):
        proto = np.asarray(proto)  # NumPy's errors for ragged lists
        return proto.shape, proto.dtype if dtype is None else dtype, ctx
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


def _arange_length(start, stop, step):
    """NumPy's length rule, ceil((stop - start) / step), or None where only NumPy knows."""
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    if not all(-_INTP_MAX - 1 <= v <= _INTP_MAX for v in (start, stop, step)
               if type(v) is int):
        return None  # NumPy converts these its own way (to float, or it refuses)
    try:
        if all(type(v) is int for v in (start, stop, step)):
            return len(range(start, stop, step)) if step else None
        span = (float(stop) - float(start)) / float(step)
        return max(0, math.ceil(span))
    except (TypeError, ValueError, OverflowError, ZeroDivisionError):
        return None


def _as_fill(values, ctx):
    """A NumPy result computed at the call, as a pushed fill (checked like every array)."""
    dtype = ops.check_dtype(values.dtype)
    params = {"value": values, "shape": _sized_shape(values.shape, dtype), "dtype": dtype}
    return invoke(ops.get("fill"), [], params, ctx=_ctx(ctx))[0]


def arange(start, stop=None, step=None, dtype=None, ctx=None):
    """numpy.arange. Small results (and arguments only NumPy can judge: huge bounds, arrays)
    are computed by NumPy at the call, so its errors, dtype and length are exact; larger ones
    are filled by the arange op, with the size checked here."""
    frozen = [_frozen(v) for v in (start, stop, step)]  # NumPy's probe takes these as given
    args = [scalar_param(v) if isinstance(v, np.ndarray) and not v.ndim else v for v in frozen]
    given = frozen if frozen[2] is not None else frozen[:1 if frozen[1] is None else 2]
    length = _arange_length(*args)
    if length is None or length <= _PROBE_MAX or length > _INTP_MAX:
        return _as_fill(np.arange(*given, dtype=dtype), ctx)
    params = {"start": args[0], "stop": args[1], "step": 1 if args[2] is None else args[2],
              "dtype": dtype}
    try:
        out_dtype = ops.get("arange").infer(**params)[0][1]
    except Exception:  # noqa: BLE001 - NumPy decides: its own error, or it checks size first
        return _as_fill(np.arange(*given, dtype=dtype), ctx)
    _sized_shape(length, out_dtype)
    return invoke(ops.get("arange"), [], params, ctx=_ctx(ctx))[0]


def linspace(start, stop, num=50, endpoint=True, dtype=None, ctx=None):
    """numpy.linspace. NumPy computes a few samples at the call (all of them when there are
    few), so its errors and its result dtype (float32 bounds give float32) hold."""
    start, stop = _frozen(start), _frozen(stop)
    count = operator.index(num)  # NumPy's TypeError for a float num
    if count <= _PROBE_MAX or count > _INTP_MAX:
        return _as_fill(np.linspace(start, stop, count, endpoint=endpoint, dtype=dtype), ctx)
    probe = np.linspace(start, stop, 3, endpoint=endpoint, dtype=dtype)
    params = {"start": start, "stop": stop, "num": count, "endpoint": endpoint,
              "dtype": ops.check_dtype(probe.dtype)}
    _sized_shape((count, *probe.shape[1:]), params["dtype"])
    return invoke(ops.get("linspace"), [], params, ctx=_ctx(ctx))[0]


def eye(N, M=None, k=0, dtype=np.float64, ctx=None):
    params = {"N": N, "M": M, "k": k, "dtype": dtype}
    return invoke(ops.get("eye"), [], params, ctx=_ctx(ctx))[0]
