"""Gradient rules of the ``fft.*`` transforms: ``FFT`` (conventions: ops/gradients/rules.py).

Every transform is linear, so its gradient is the adjoint transform, with PyTorch's
convention for complex values: for a real loss L, the gradient of a complex ``z`` is
``dL/dRe(z) + i dL/dIm(z)``, which makes the gradient of ``y = A z`` the conjugate
transpose ``A^H g``, and that of a real input the real part of it.

* c2c (fft, ifft, fft2, ifft2, fftn, ifftn): the inverse transform in the dual norm (the
  adjoint of ``norm="backward"`` is the inverse with ``norm="forward"``: no 1/n; "ortho" is
  its own);
* r2c (rfft, rfft2, rfftn; ihfft through a conjugate): only half the spectrum is kept, so
  the adjoint fills the other half with zeros and takes the real part; that is ``irfft`` of
  ``g`` with the bins that have a mirror image halved (irfft counts each of those twice);
* c2r (irfft, irfft2, irfftn; hfft through a conjugate): irfft reads the half spectrum as a
  Hermitian one, so each bin with a mirror image counts twice: the adjoint is ``rfft`` of
  ``g`` with those bins doubled (PyTorch's ``fft_c2r_backward``); the imaginary parts of
  the bins without one (0, and n/2 for an even n), which irfft ignores, take zero.

``n``/``s`` crop or zero-pad the input along an axis before it is transformed: the gradient
is zero-padded or cropped back to the input's length. ``hfft(a) = irfft(conj(a))`` and
``ihfft(x) = conj(rfft(x))`` (NumPy's own definitions, norms swapped): conjugation passes
``conj(g)``. Repeated axes in ``axes`` raise NotImplementedError.
"""
from __future__ import annotations

from ..families import fft as _fft
from .common import _is_complex, _conj, _real

__all__ = ["FFT"]

_DUAL = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def _fit(f, a, axis, length):
    """``a`` cropped or zero-padded to ``length`` along ``axis``."""
    have = a.shape[axis]
    if have > length:
        return a[(slice(None),) * axis + (slice(0, length),)]
    if have < length:
        widths = tuple((0, length - have) if i == axis else (0, 0) for i in range(len(a.shape)))
        return f("pad", a, pad_width=widths, mode="constant")
    return a


def _scale_mirrored(f, g, axis, n, factor):
    """``g`` (a half spectrum of an ``n``-point transform along ``axis``) with the bins
    that have a mirror image (1 to (n - 1) // 2) scaled by ``factor``."""
    stop = (n - 1) // 2 + 1
    if stop <= 1:
        return g
    head = (slice(None),) * axis
    pieces = [g[head + (slice(0, 1),)], f("multiply", g[head + (slice(1, stop),)], factor)]
    if g.shape[axis] > stop:
        pieces.append(g[head + (slice(stop, None),)])
    return f("concatenate", *pieces, axis=axis)


def _like_input(f, grad, x):
    """The real part for a real input."""
    return grad if _is_complex(x) else _real(f, grad)


def _one_axis(kind, conjugated=False):
    """fft/ifft (c2c), rfft (r2c), irfft (c2r); ihfft (r2c) and hfft (c2r), ``conjugated``
    (NumPy's definitions: the norm swapped, which the adjoint's dual undoes)."""
    def rule(f, grads, inputs, outputs, params):
        (x,), g = inputs, grads[0]
        axis = params.get("axis", -1) % len(x.shape)
        norm, n = params.get("norm"), params.get("n")
        length = x.shape[axis]
        dual = norm if conjugated else _DUAL[norm]
        if kind in ("fft", "ifft"):
            inverse = "fft.ifft" if kind == "fft" else "fft.fft"
            grad = _fit(f, f(inverse, g, axis=axis, norm=dual), axis, length)
            return [_like_input(f, grad, x)]
        if kind == "r2c":
            n = length if n is None else n
            if conjugated:
                g = _conj(f, g)
            grad = f("fft.irfft", _scale_mirrored(f, g, axis, n, 0.5), n=n, axis=axis,
                     norm=dual)
            return [_fit(f, grad, axis, length)]
        n = 2 * (length - 1) if n is None else n  # c2r
        grad = _scale_mirrored(f, f("fft.rfft", g, axis=axis, norm=dual), axis, n, 2.0)
        grad = _fit(f, grad, axis, length)
        if conjugated:
            grad = _conj(f, grad)
        return [_like_input(f, grad, x)]
    return rule


def _many_axes(name):
    """fft2/fftn/ifft2/ifftn (c2c), rfft2/rfftn (r2c), irfft2/irfftn (c2r)."""
    kind = _fft.MANY_AXES[name]

    def rule(f, grads, inputs, outputs, params):
        (x,), g = inputs, grads[0]
        ndim = len(x.shape)
        default = (-2, -1) if name.endswith("2") else None
        s, axes = _fft.explicit_s(name, tuple(x.shape), x.dtype, params.get("s"),
                                  params.get("axes", default), params.get("norm"))
        axes = tuple(a % ndim for a in axes)
        if len(set(axes)) != len(axes):
            raise NotImplementedError(f"the gradient of fft.{name} with a repeated axis "
                                      f"(axes={axes}) is not built")
        dual = _DUAL[params.get("norm")]
        if kind == "c2c":
            inverse = "fft.ifftn" if name.startswith("fft") else "fft.fftn"
            grad = f(inverse, g, axes=axes, norm=dual)
        elif kind == "r2c":
            grad = f("fft.irfftn", _scale_mirrored(f, g, axes[-1], s[-1], 0.5), s=s,
                     axes=axes, norm=dual)
        else:
            grad = _scale_mirrored(f, f("fft.rfftn", g, axes=axes, norm=dual), axes[-1],
                                   s[-1], 2.0)
        for axis in axes:
            grad = _fit(f, grad, axis, x.shape[axis])
        return [_like_input(f, grad, x)]
    return rule


FFT = {
    "fft.fft": _one_axis("fft"),
    "fft.ifft": _one_axis("ifft"),
    "fft.rfft": _one_axis("r2c"),
    "fft.irfft": _one_axis("c2r"),
    "fft.ihfft": _one_axis("r2c", conjugated=True),
    "fft.hfft": _one_axis("c2r", conjugated=True),
    **{f"fft.{name}": _many_axes(name) for name in _fft.MANY_AXES},
}
