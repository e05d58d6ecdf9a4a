"""What the gradient rules share (ops/gradients/rules.py has the table and its
conventions): ``_one`` and ``_unary`` (rule shapes), ``_const``, ``_eye``, ``_arange`` (ops
without inputs, through ``f.outputs``), complex helpers (``_conj``, ``_real``), and the shape and index helpers of
reductions, scatters and writes."""
from __future__ import annotations

import math

import numpy as np

from ..shapes import c_strides


def _one(rule):
    """A rule of an op with one output: ``rule(f, g, *inputs, out=, **params)``."""
    def full(f, grads, inputs, outputs, params):
        return rule(f, grads[0], *inputs, out=outputs[0], **params)
    return full


def _unary(derivative, holomorphic=True):
    """``g * derivative(f, x, out)``; for a complex ``x``, PyTorch's convention: ``g`` times
    the conjugate derivative (``holomorphic``), or as given (abs: ``g * sgn(x)``)."""
    def rule(f, g, x, out, **_):
        d = derivative(f, x, out)
        return [f("multiply", g, _conj(f, d) if holomorphic else d)]
    return _one(rule)


def _is_complex(x):
    return _is_array(x) and np.dtype(x.dtype).kind == "c"


def _conj(f, a):
    """``a``'s complex conjugate (``a`` itself unless complex; a Python or NumPy scalar too)."""
    if isinstance(a, (complex, np.complexfloating)):
        return a.conjugate()
    return f("conjugate", a) if _is_complex(a) else a


def _real(f, a):
    """``a``'s real part (``a`` itself unless complex): a view of its memory, as NumPy's
    ``.real``; while the tape records (``create_graph``), where the tape has no rule for a
    view of another dtype, an op with a rule: the 1-point inverse real FFT of each element
    (``irfft(z, n=1)`` is ``Re(z)``)."""
    if not _is_complex(a):
        return a
    column = f.reshape(a, tuple(a.shape) + (1,))
    if f.recording():
        return f("fft.irfft", column, n=1, axis=-1)[..., 0]
    return column.view(np.dtype(a.dtype.char.lower()))[..., 0]


def _is_array(x):
    return (hasattr(x, "shape") and hasattr(x, "dtype")
            and not isinstance(x, (int, float, complex, bool, np.generic)))


def _zero(f, g, x):
    """A zero gradient for ``x`` (None for a Python scalar)."""
    return f.zeros(x.shape, g.dtype, g) if _is_array(x) else None


def _const(f, name, like, **params):
    """An op without inputs (eye, arange), on ``like``'s context."""
    return f.outputs(name, [], params, ctx=like.context)[0]


def _eye(f, n, dtype, like):
    return _const(f, "eye", like, N=int(n), dtype=np.dtype(dtype))


def _arange(f, n, like):
    return _const(f, "arange", like, start=0, stop=int(n), step=1, dtype=np.dtype(np.intp))


def _broadcast(f, a, shape):
    """``a`` broadcast to ``shape`` (a copy)."""
    shape = tuple(shape)
    return a if a.shape == shape else f("copy", a, shape=shape)


def _axes(axis, ndim):
    """``axis`` (None, an int or a sequence) as sorted non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if not ndim:
        return ()
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    return tuple(sorted({int(a) % ndim for a in axes}))


def _kept(f, r, shape, axes, keepdims):
    """A reduction's result (or gradient) ``r`` with the reduced axes kept, of length 1."""
    if keepdims:
        return r
    return f.reshape(r, tuple(1 if i in axes else n for i, n in enumerate(shape)))


def _spread(f, g, x, axis, keepdims, scale=None):
    """A reduction's gradient: ``g`` (of the reduced shape) broadcast back over ``x``."""
    g = _kept(f, g, x.shape, _axes(axis, len(x.shape)), keepdims)
    if scale is not None:
        g = f("multiply", g, scale)
    return _broadcast(f, g, x.shape)


def _count(shape, axes):
    return math.prod(shape[a] for a in axes)


def _inverse(perm):
    return tuple(int(i) for i in np.argsort(perm))


def _swap(f, a):
    """The last two axes exchanged (a view)."""
    ndim = len(a.shape)
    return f.transpose(a, tuple(range(ndim - 2)) + (ndim - 1, ndim - 2))


def _flip(axis):
    return (slice(None),) * axis + (slice(None, None, -1),)


class _Shape:
    """Something with a shape (what ``f.scatter_add`` reads of its ``like``)."""

    def __init__(self, shape):
        self.shape = tuple(shape)


def _scatter(f, shape, index, values):
    """Zeros of ``shape``, ``values`` added at ``index`` (a NumPy index: metadata)."""
    return f.scatter_add(_Shape(shape), index, values)


def _scatter_along(f, g, index, shape, axis):
    """Zeros of ``shape`` with ``g`` added along ``axis`` at ``index`` (an NDArray of
    non-negative positions broadcasting against ``g``, whose other axes are ``shape``'s
    or 1 where ``shape`` has 1): take_along_axis's transpose, as one bincount."""
    strides = c_strides(shape, 1)
    position = f("multiply", index, strides[axis])
    for d, n in enumerate(shape):
        if d != axis and n > 1:
            steps = f("multiply", _arange(f, n, g), strides[d])
            position = f("add", position, f.reshape(
                steps, tuple(n if i == d else 1 for i in range(len(shape)))))
    size = math.prod(shape)
    position = f.reshape(_broadcast(f, position, g.shape), (-1,))
    flat = f("bincount", position, f.reshape(g, (-1,)), arrays=("weights",), minlength=size,
             length=size)
    return f.reshape(flat, shape)


def _wrapped(f, index, n, mode="raise"):
    """Positions as NumPy reads ``index`` along a length ``n`` (negative ones count from
    the end; mode "clip" clips, "wrap" wraps)."""
    if mode == "clip":
        return f("clip", index, a_min=0, a_max=max(n - 1, 0))
    return f("mod", index, max(n, 1))


def _value_gradient(f, region_grad, value):
    """The gradient of a value written (broadcast) into a region: summed to its shape
    (NumPy drops a value's extra leading ones before broadcasting it)."""
    if not _is_array(value):
        return None
    shape = tuple(value.shape)
    extra = len(shape) - len(region_grad.shape)
    stripped = shape[extra:] if extra > 0 else shape
    return f.reshape(f.sum_to(region_grad, stripped), shape)
