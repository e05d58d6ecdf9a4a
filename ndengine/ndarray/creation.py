"""Array creation: from data (``array``) and from shapes (``zeros``, ``arange``, ...).

Every function placing a new array takes the context as ``ctx`` (MXNet's keyword) or as
``device`` (NumPy 2's and the Array API standard's), where NumPy 2 has that keyword.

Creation from a shape pushes a fill op: it returns at once, and the memory is taken from the
pool by the worker that fills it.
"""
import math
import operator

import numpy as np

from .. import ops
from ..engine import Context, current_context
from ..ops.families.creation import scalar_param
from ..ops.dtypes import check_scalar_fits
from ..ops.shapes import check_shape as _shape
from ..core import COPY_REFUSED, NDArray, from_numpy as _from_numpy, invoke
from ..core import filled_now as _filled_now, new_array as _new_array
from ..core.array_methods import (as_fortran as _as_fortran, fortran_copy as _fortran_copy,
                                  is_fortran_ordered as _is_fortran_ordered,
                                  layout_of as _layout_of, needs_fortran as _needs_fortran)
from ..core import tape as _tape

__all__ = ["array", "asarray", "ascontiguousarray", "copy", "zeros", "ones", "full", "empty",
           "arange", "linspace", "eye", "identity", "zeros_like", "ones_like", "full_like",
           "empty_like"]


def _ctx(ctx):
    return current_context() if ctx is None else Context(ctx)


def _placement(ctx, device):
    """The context asked for by ``ctx`` (MXNet's keyword) or ``device`` (NumPy 2's and the
    Array API standard's: a Context or its name, e.g. "cpu"); given both, they must agree."""
    if device is None:
        return ctx
    if ctx is not None and Context(ctx) != Context(device):
        raise ValueError(f"ctx={ctx!r} and device={device!r} name different devices: "
                         f"pass one of them")
    return device


_FLOAT32_MAX = float(np.finfo(np.float32).max)
_SCALARS = (bool, int, float, complex)


def _frozen(value):
    """An op parameter as the op will read it when it runs: NumPy arrays and lists are copied
    now, so a caller who changes them after the call does not change the queued op. An
    NDArray autograd tracks is refused: read as a value here, its gradient would be lost."""
    if isinstance(value, NDArray):
        if _tape.is_tracked(value):
            raise TypeError("an NDArray recorded for autograd given as a creation parameter "
                            "(full's fill_value, arange's bounds) is read as a constant and "
                            "takes no gradient: pass value.detach() for a constant, or build "
                            "it from ops (value * nd.ones(shape), value + nd.arange(n))")
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


def _order(order, source=None, permitted="CFAK"):
    """NumPy's ``order=`` checks; the layout of the result: 'F' (Fortran, core/array_methods.py)
    or 'C', 'A' and 'K' keeping ``source``'s."""
    if isinstance(order, str) and order.upper() in ("C", "F", "A", "K") and \
            order.upper() not in permitted:
        raise ValueError("only 'C' or 'F' order is permitted")
    return _layout_of(order, source)


def _laid_out(result, layout, copy=None):
    """``result`` in ``layout`` ('C' or 'F'): itself where it is, else a copy in it (``copy``
    False: NumPy's ValueError instead)."""
    if layout == "F":
        fits = _is_fortran_ordered(result) or not _needs_fortran(result.shape) and \
            result.flags.c_contiguous
        make = _fortran_copy
    else:
        fits = result.flags.c_contiguous
        make = NDArray.copy
    if fits:
        return result
    if copy is False:
        raise ValueError(COPY_REFUSED)
    return make(result)


def array(obj, dtype=None, *, copy=True, order="K", ndmin=0, ctx=None):
    """An NDArray holding ``obj`` (nested lists, scalars, NumPy arrays, NDArrays); dtypes as
    NumPy infers them (Python floats give float64). NumPy's argument order:
    ``array(obj, np.float32)``; the context is a keyword. A copy unless ``copy`` is None
    or False and ``obj`` is an NDArray of that dtype on that context (False: a copy needed
    is NumPy's ValueError); other objects are always copied (the engine owns the memory)."""
    if isinstance(obj, NDArray):
        layout = _order(order, obj)
        if copy:
            result = obj.as_in_context(_ctx(ctx))
            if layout == "F" and _needs_fortran(obj.shape):
                return _with_ndmin(_fortran_copy(result, dtype), ndmin)
            if result is obj:
                result = obj.copy()
            result = result if dtype is None else result.astype(dtype, copy=False)
        else:
            target = obj.context if ctx is None else Context(ctx)
            dtype = obj.dtype if dtype is None else ops.check_dtype(dtype)
            if copy is not None and (target != obj.context or dtype != obj.dtype):
                raise ValueError(COPY_REFUSED)
            result = obj.as_in_context(target).astype(dtype, copy=False)
            if order is not None and order not in ("K", "k", "A", "a"):
                result = _laid_out(result, layout, copy)  # order='C'/'F': that layout
    else:
        if copy is False:
            raise ValueError(COPY_REFUSED)  # ndengine's memory is its own: a copy, always
        dtype = None if dtype is None else ops.check_dtype(dtype)
        values = np.asarray(obj, dtype=dtype)
        if _order(order, values) == "F" and _needs_fortran(values.shape):
            transposed = _from_numpy(np.ascontiguousarray(values.T), _ctx(ctx))
            return _with_ndmin(_as_fortran(transposed, values.shape), ndmin)
        result = _from_numpy(values, _ctx(ctx))
    return _with_ndmin(result, ndmin)


def _with_ndmin(result, ndmin):
    extra = operator.index(ndmin) - result.ndim
    return result.reshape((1,) * extra + result.shape) if extra > 0 else result


def asarray(a, dtype=None, order=None, *, copy=None, device=None, ctx=None):
    """numpy.asarray: ``a`` itself when it is an NDArray of that dtype (and context)."""
    ctx = _placement(ctx, device)
    return array(a, dtype, copy=copy, order=order, ctx=ctx)


def ascontiguousarray(a, dtype=None, *, ctx=None):
    """numpy.ascontiguousarray: ``a`` itself when it is a C-contiguous NDArray of that
    dtype, else a C-contiguous copy; at least one axis, as NumPy's."""
    return _laid_out(array(a, dtype, copy=None, ndmin=1, ctx=ctx), "C")


def copy(a, order="K", subok=False, *, ctx=None):
    """numpy.copy: a new array holding the values of ``a`` (in Fortran layout for
    ``order='F'``, and for 'K' or 'A' of a Fortran-ordered ``a``)."""
    if isinstance(a, NDArray):
        layout = _order(order, a)
        if ctx is not None:
            a = a.copyto(Context(ctx))
            return _laid_out(a, layout)
        return a.copy(order=layout)
    return array(a, order=order, ctx=ctx)


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


def full(shape, fill_value, dtype=None, order="C", *, device=None, ctx=None):
    """A new array of ``shape`` filled with ``fill_value`` (as numpy.full; ``dtype`` from the
    value when None), by a pushed fill. ``ctx=`` (``nd.gpu(0)``) or the Array API's
    ``device=`` places it (default: the current context); ``order="F"``: Fortran layout."""
    ctx = _placement(ctx, device)
    fill_value = _frozen(fill_value)
    dtype = ops.check_dtype(np.asarray(fill_value).dtype if dtype is None else dtype)
    shape = _sized_shape(shape, dtype)  # NumPy makes the array, then fills it
    fortran = order != "C" and _order(order, None, "CF") == "F" and _needs_fortran(shape)
    scalar = type(fill_value) in _SCALARS or not np.ndim(fill_value)
    if 0 in shape and scalar and type(fill_value) is not int:
        fill_value = 0  # NumPy converts nothing into an empty array (but checks an int)
    if fortran and not scalar:  # an array fill value broadcasts over C order
        filled = full(shape, fill_value, dtype, ctx=ctx)
        return _fortran_copy(filled)
    made = shape[::-1] if fortran else shape  # a uniform fill: its transpose is the same
    value, ctx = _fill_value(fill_value, dtype), _ctx(ctx)
    result = _filled_now(made, dtype, ctx, value) if type(value) in _SCALARS else None
    if result is None:
        params = {"value": value, "shape": made, "dtype": dtype}
        result = invoke(ops.get("fill"), [], params, ctx=ctx)[0]
    return _as_fortran(result, shape) if fortran else result


def zeros(shape, dtype=np.float64, order="C", *, device=None, ctx=None):
    """A new array of ``shape`` filled with zeros (as numpy.zeros), by a pushed fill.
    ``ctx=`` (``nd.gpu(0)``) or the Array API's ``device=`` places it (default: the current
    context); ``order="F"``: Fortran layout."""
    ctx = _placement(ctx, device)
    return full(shape, 0, dtype if dtype is not None else np.float64, order, ctx=ctx)


def ones(shape, dtype=np.float64, order="C", *, device=None, ctx=None):
    """A new array of ``shape`` filled with ones (as numpy.ones), by a pushed fill.
    ``ctx=`` (``nd.gpu(0)``) or the Array API's ``device=`` places it (default: the current
    context); ``order="F"``: Fortran layout."""
    ctx = _placement(ctx, device)
    return full(shape, 1, dtype if dtype is not None else np.float64, order, ctx=ctx)


def empty(shape, dtype=np.float64, order="C", *, device=None, ctx=None):
    """An array whose values are whatever its pooled memory held (as numpy.empty)."""
    ctx = _placement(ctx, device)
    dtype = ops.check_dtype(dtype if dtype is not None else np.float64)
    shape = _sized_shape(shape, dtype)
    if _order(order, None, "CF") == "F" and _needs_fortran(shape):
        return _as_fortran(_new_array(shape[::-1], dtype, _ctx(ctx)), shape)
    return _new_array(shape, dtype, _ctx(ctx))


def _like(proto, dtype, order, shape, ctx):
    """Shape, dtype, context and layout ('C' or 'F') of a ``*_like`` result. Like NumPy's,
    the prototype may be anything ``numpy.asarray`` takes (a list, a NumPy array, a scalar);
    then the result is on ``ctx`` or the current context. ``shape`` overrides the
    prototype's ('K' and 'A' keep the prototype's layout only for as many axes)."""
    if not isinstance(proto, NDArray):
        proto = np.asarray(proto)  # NumPy's errors for ragged lists
    elif ctx is None:
        ctx = proto.context
    shape = proto.shape if shape is None else _shape(shape)
    layout = _order(order, proto if len(shape) == proto.ndim else None)
    return shape, proto.dtype if dtype is None else dtype, ctx, layout


def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None, ctx=None):
    """Zeros of ``a``'s shape and dtype (as numpy.zeros_like), on ``a``'s context when it is
    an NDArray; a pushed fill."""
    ctx = _placement(ctx, device)
    shape, dtype, ctx, layout = _like(a, dtype, order, shape, ctx)
    return full(shape, 0, dtype, layout, ctx=ctx)


def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None, ctx=None):
    """Ones of ``a``'s shape and dtype (as numpy.ones_like), on ``a``'s context when it is an
    NDArray; a pushed fill."""
    ctx = _placement(ctx, device)
    shape, dtype, ctx, layout = _like(a, dtype, order, shape, ctx)
    return full(shape, 1, dtype, layout, ctx=ctx)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None,
              ctx=None):
    """``fill_value`` in ``a``'s shape and dtype (as numpy.full_like), on ``a``'s context
    when it is an NDArray; a pushed fill. An NDArray ``fill_value`` is read at the call."""
    ctx = _placement(ctx, device)
    shape, dtype, ctx, layout = _like(a, dtype, order, shape, ctx)
    return full(shape, fill_value, dtype, layout, ctx=ctx)


def empty_like(prototype, dtype=None, order="K", subok=True, shape=None, *, device=None,
               ctx=None):
    """numpy.empty_like: the values are whatever the pooled memory held."""
    ctx = _placement(ctx, device)
    shape, dtype, ctx, layout = _like(prototype, dtype, order, shape, ctx)
    return empty(shape, dtype, layout, ctx=ctx)


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
    """A NumPy result computed at the call, as a new array holding it (its dtype checked):
    ready, no op pushed (a fill with the values as its param was planned anew at each
    call, ~15 us for ``arange(256)``)."""
    return _from_numpy(values, _ctx(ctx))


def arange(start, stop=None, step=None, dtype=None, *, device=None, ctx=None):
    """numpy.arange. Small results (and arguments only NumPy can judge: huge bounds, arrays)
    are computed by NumPy at the call, so its errors, dtype and length are exact; larger ones
    are filled by the arange op, with the size checked here."""
    ctx = _placement(ctx, device)
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


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             device=None, ctx=None):
    """numpy.linspace. NumPy computes a few samples at the call (all of them when there are
    few), so its errors and its result dtype (float32 bounds give float32) hold; NDArray
    bounds are read at the call (it waits for them). Bounds
    autograd tracks (under ``autograd.record()``) give a result computed by ops, which the
    tape records."""
    ctx = _placement(ctx, device)
    if _tape.is_tracked(start) or _tape.is_tracked(stop):
        return _linspace_recorded(start, stop, operator.index(num), endpoint, retstep, dtype,
                                  axis)
    start, stop = _frozen(start), _frozen(stop)
    count = operator.index(num)  # NumPy's TypeError for a float num
    if count <= _PROBE_MAX or count > _INTP_MAX:
        values = np.linspace(start, stop, count, endpoint=endpoint, retstep=retstep,
                             dtype=dtype, axis=axis)
        if retstep:
            return _as_fill(values[0], ctx), values[1]
        return _as_fill(values, ctx)
    probe = np.linspace(start, stop, 3, endpoint=endpoint, dtype=dtype, axis=axis)
    params = {"start": start, "stop": stop, "num": count, "endpoint": endpoint,
              "dtype": ops.check_dtype(probe.dtype)}
    samples = np.moveaxis(probe, axis, 0).shape[1:]
    _sized_shape((count, *samples), params["dtype"])
    result = invoke(ops.get("linspace"), [], params, ctx=_ctx(ctx))[0]
    if probe.ndim > 1 and axis not in (0, -probe.ndim):  # samples along ``axis``: a view
        order = list(range(1, probe.ndim))
        order.insert(axis % probe.ndim, 0)
        result = result.transpose(*order)
    if not retstep:
        return result
    # numpy.linspace's own step, computed the way it computes it
    delta = np.subtract(stop, start, dtype=np.result_type(start, stop, float(count)))
    return result, delta / (count - 1 if endpoint else count)


def _linspace_recorded(start, stop, count, endpoint, retstep, dtype, axis):
    """numpy.linspace's formula (start + k * step, the last sample stop when ``endpoint``)
    as ops, for bounds autograd tracks: the gradient reaches them."""
    values = [v.asnumpy() if isinstance(v, NDArray) else v for v in (start, stop)]
    probe = np.linspace(*values, min(count, 3), endpoint=endpoint, dtype=dtype, axis=axis)
    inexact = np.result_type(*values, float(count))  # what NumPy computes in
    ctx = next(v.context for v in (start, stop) if isinstance(v, NDArray))
    lo, hi = (v if isinstance(v, NDArray) else array(v, dtype=inexact, ctx=ctx)
              for v in (start, stop))
    div = count - 1 if endpoint else count
    delta = hi - lo
    steps = arange(count, dtype=inexact, ctx=ctx).reshape(
        (-1,) + (1,) * delta.ndim)
    step = delta / div if div > 0 else delta * math.nan
    y = (steps * step if div > 0 else steps * delta) + lo
    if endpoint and count > 1:
        y = invoke(ops.get("where"), [steps == count - 1, hi, y])[0]
    if probe.ndim > 1 and axis not in (0, -probe.ndim):  # samples along ``axis``
        order = list(range(1, probe.ndim))
        order.insert(axis % probe.ndim, 0)
        y = y.transpose(*order)
    if probe.dtype.kind in "iu":
        y = invoke(ops.get("floor"), [y])[0]
    if y.dtype != probe.dtype:
        y = y.astype(probe.dtype)
    return (y, step) if retstep else y


def eye(N, M=None, k=0, dtype=np.float64, order="C", *, device=None, ctx=None):
    """Ones on the ``k``-th diagonal of an ``N`` x ``M`` array, zeros elsewhere (as
    numpy.eye), made by a pushed op. ``ctx=`` (``nd.gpu(0)``) or the Array API's ``device=``
    places it (default: the current context)."""
    ctx = _placement(ctx, device)
    if _order(order, None, "CF") == "F":  # eye(N, M, k) is the transpose of eye(M, N, -k)
        columns = N if M is None else M
        if _needs_fortran((N, columns)):
            transposed = eye(columns, N, -k, dtype, ctx=ctx)
            return _as_fortran(transposed, (operator.index(N), operator.index(columns)))
    params = {"N": N, "M": M, "k": k, "dtype": dtype}
    return invoke(ops.get("eye"), [], params, ctx=_ctx(ctx))[0]


def identity(n, dtype=None, *, ctx=None):
    """numpy.identity: the n x n identity (float64 unless ``dtype``)."""
    return eye(n, dtype=np.float64 if dtype is None else dtype, ctx=ctx)
