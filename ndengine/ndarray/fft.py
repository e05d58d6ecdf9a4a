"""ndengine.fft: numpy.fft's functions, each one pushed op (NumPy's own function runs inside
it, and NumPy releases the GIL while it transforms), with NumPy's parameter lists.

The transforms (fft, ifft, rfft, irfft, hfft, ihfft and their 2-d and n-d forms) give NumPy's
result shapes and dtypes (float32 -> complex64; float64, integers and bool -> complex128;
irfft and hfft real) and raise NumPy's errors for a bad ``n``, ``s``, ``axes`` or ``norm`` at
the call, before anything is pushed (``ops.families.fft`` infers them without a transform of the data).
``s`` without ``axes``, or with None entries, gives NumPy 2's DeprecationWarning and means what
it means there. ``out=`` (an NDArray) receives the result as NumPy documents it, cast with the
same_kind rule; NumPy 2.4's own ifft2, irfft2 and hfft ignore their ``out``.
fftfreq, rfftfreq, fftshift and ifftshift are pushed ops too.
"""
import warnings

import numpy as np

from .. import engine
from ..ops.families import fft as fft_ops
from . import arguments, signatures
from .pushed import PUSHED


def _frequencies(op_name):
    def frequencies(n, d=1.0, device=None):
        if device not in (None, "cpu"):
            raise ValueError(f'Device not understood. Only "cpu" is allowed, but received: '
                             f'{device}')
        return arguments.push(op_name, [], {"n": n, "d": arguments.read_values(d)},
                               ctx=engine.current_context())[0]
    return frequencies


def _shift(sign):
    def shift(x, axes=None):
        x = arguments.array_of(x)
        if axes is None:
            axes = tuple(range(x.ndim))
            shifts = [sign * (n // 2) for n in x.shape]
        elif isinstance(axes, (int, np.integer)):
            shifts = sign * (x.shape[axes] // 2)
        else:
            shifts = [sign * (x.shape[axis] // 2) for axis in axes]
        return PUSHED["roll"](x, shifts, axes)
    return shift


# NumPy 2's own deprecation messages
_AXES_NONE = ("`axes` should not be `None` if `s` is not `None` (Deprecated in NumPy 2.0). In "
              "a future version of NumPy, this will raise an error and `s[i]` will "
              "correspond to the size along the transformed axis specified by `axes[i]`. To "
              "retain current behaviour, pass a sequence [0, ..., k-1] to `axes` for an array "
              "of dimension k.")
_NONE_IN_S = ("Passing an array containing `None` values to `s` is deprecated in NumPy 2.0 and "
              "will raise an error in a future version of NumPy. To use the default behaviour "
              "of the corresponding 1-D transform, pass the value matching the default for "
              "its `n` parameter. To use the default behaviour for every axis, the `s` "
              "argument can be omitted.")


def _one_axis(name):
    def transform(a, n=None, axis=-1, norm=None, out=None):
        params = {"n": n, "axis": axis, "norm": norm}
        return arguments.push(f"fft.{name}", [arguments.array_of(a)], params, out=out,
                               name=name)[0]
    return transform


def _many_axes(name):
    def transform(a, s=None, axes=None, norm=None, out=None):
        a = arguments.array_of(a)
        if s is not None:  # NumPy 2's warnings, then the s and axes NumPy would use
            s = list(s)
            if axes is None:
                warnings.warn(_AXES_NONE, DeprecationWarning, stacklevel=3)
            if None in s:
                warnings.warn(_NONE_IN_S, DeprecationWarning, stacklevel=3)
            s, axes = fft_ops.explicit_s(name, a.shape, a.dtype, s, axes, norm)
        params = {"s": s, "axes": arguments.frozen(axes), "norm": norm}
        return arguments.push(f"fft.{name}", [a], params, out=out, name=name)[0]
    return transform


def _function(name, implementation, doc=None):
    return signatures.numpy_function(name, getattr(np.fft, name), implementation, doc,
                                     module="ndengine.fft")


_DOC = "Pushed as one op; NumPy's function runs inside it."

FUNCTIONS_FFT = {
    "fftfreq": _function("fftfreq", _frequencies("fftfreq")),
    "rfftfreq": _function("rfftfreq", _frequencies("rfftfreq")),
    "fftshift": _function("fftshift", _shift(1)),
    "ifftshift": _function("ifftshift", _shift(-1)),
    **{name: _function(name, _one_axis(name), _DOC) for name in fft_ops.ONE_AXIS},
    **{name: _function(name, _many_axes(name), _DOC) for name in fft_ops.MANY_AXES},
}

globals().update(FUNCTIONS_FFT)
__all__ = list(FUNCTIONS_FFT)
