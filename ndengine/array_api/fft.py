"""The standard's ``fft`` extension onto ``ndengine.fft``: the frequency and shift helpers
always; the transforms only once ndengine has complex dtypes (until then its transforms
raise NotImplementedError, so the names are left out, listed in ``MISSING``)."""
from .. import ndarray

from ._dtypes import DTYPES, supported_dtype
from ._generate import generate_all

__all__ = ["FUNCTIONS", "MISSING"]

_MODULE = "ndengine.array_api.fft"
_ONE_AXIS = "x, /, *, n=None, axis=-1, norm='backward'"
_AXES = "x, /, *, s=None, axes=None, norm='backward'"
_TRANSFORMS = [("fft", _ONE_AXIS), ("ifft", _ONE_AXIS), ("fftn", _AXES), ("ifftn", _AXES),
               ("rfft", _ONE_AXIS), ("irfft", _ONE_AXIS), ("rfftn", _AXES), ("irfftn", _AXES),
               ("hfft", _ONE_AXIS), ("ihfft", _ONE_AXIS)]
_HAS_COMPLEX = "complex128" in DTYPES
_ROWS = [("fftshift", "x, /, *, axes=None", ndarray.fft.fftshift),
         ("ifftshift", "x, /, *, axes=None", ndarray.fft.ifftshift)]
if _HAS_COMPLEX:
    _ROWS += [(name, parameters, getattr(ndarray.fft, name)) for name, parameters in _TRANSFORMS]


def _frequencies(numpy_name):
    target = getattr(ndarray.fft, numpy_name)

    def frequencies(n, /, *, d=1.0, dtype=None, device=None):
        result = target(n, d=d, device=device)
        return result if dtype is None else result.astype(supported_dtype(dtype), copy=False)

    frequencies.__name__ = frequencies.__qualname__ = numpy_name
    frequencies.__module__ = _MODULE
    frequencies.__doc__ = f"Array API ``fft.{numpy_name}``: ndengine's, in ``dtype``."
    return frequencies


FUNCTIONS = generate_all(_ROWS, module=_MODULE)
FUNCTIONS.update(fftfreq=_frequencies("fftfreq"), rfftfreq=_frequencies("rfftfreq"))
MISSING = [] if _HAS_COMPLEX else [name for name, _ in _TRANSFORMS]
globals().update(FUNCTIONS)
__all__ += sorted(FUNCTIONS)
