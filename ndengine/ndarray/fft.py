"""ndengine.fft: the sample frequencies and shifts (fftfreq, rfftfreq, fftshift, ifftshift),
pushed as ops.

The transforms themselves (fft, ifft, rfft, irfft, fft2, ifft2, fftn, ifftn and the Hermitian
and real n-d ones) are not built yet: their results (or their usual inputs) are complex and
ndengine has no complex dtype yet. They raise NotImplementedError naming the NumPy call to
use on the values instead, e.g. ``numpy.fft.fft(x.asnumpy())``.
"""
import numpy as np

from ..engine import current_context
from .pushed import PUSHED
from .signatures import array_of, numpy_function, push, read_values

_TRANSFORMS = ("fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "fftn", "ifftn", "hfft",
               "ihfft", "rfft2", "irfft2", "rfftn", "irfftn")


def _frequencies(op_name):
    def frequencies(n, d=1.0, device=None):
        if device not in (None, "cpu"):
            raise ValueError(f'Device not understood. Only "cpu" is allowed, but received: '
                             f'{device}')
        return push(op_name, [], {"n": n, "d": read_values(d)}, ctx=current_context())[0]
    return frequencies


def _shift(sign):
    def shift(x, axes=None):
        x = array_of(x)
        if axes is None:
            axes = tuple(range(x.ndim))
            shifts = [sign * (n // 2) for n in x.shape]
        elif isinstance(axes, (int, np.integer)):
            shifts = sign * (x.shape[axes] // 2)
        else:
            shifts = [sign * (x.shape[axis] // 2) for axis in axes]
        return PUSHED["roll"](x, shifts, axes)
    return shift


def _not_built(name):
    def transform(*args, **kwargs):
        raise NotImplementedError(
            f"ndengine.fft.{name} is not built yet: ndengine has no complex dtype yet. "
            f"Compute it with NumPy on the values: numpy.fft.{name}(x.asnumpy())")
    return transform


FUNCTIONS_FFT = {
    "fftfreq": numpy_function("fftfreq", np.fft.fftfreq, _frequencies("fftfreq"),
                              module="ndengine.fft"),
    "rfftfreq": numpy_function("rfftfreq", np.fft.rfftfreq, _frequencies("rfftfreq"),
                               module="ndengine.fft"),
    "fftshift": numpy_function("fftshift", np.fft.fftshift, _shift(1), module="ndengine.fft"),
    "ifftshift": numpy_function("ifftshift", np.fft.ifftshift, _shift(-1),
                                module="ndengine.fft"),
}
FUNCTIONS_FFT.update({name: numpy_function(name, getattr(np.fft, name), _not_built(name),
                                           module="ndengine.fft",
                                           doc="Not built yet (no complex dtype): raises "
                                               "NotImplementedError.")
                      for name in _TRANSFORMS})

globals().update(FUNCTIONS_FFT)
__all__ = list(FUNCTIONS_FFT)
