"""Complex numbers' parts: ``real``, ``imag`` (views, as NumPy's ``.real``/``.imag`` are),
``angle``, ``conj``, and the complex predicates, as functions and as NDArray members.

A complex array's values are seen as pairs of floats along a new last axis (``view`` of the
component dtype after a length-1 axis is added, which keeps any layout viewable); its real
parts are ``pairs[..., 0]`` and its imaginary parts ``pairs[..., 1]``: views of the same
memory, so ``x.real[...] = v`` and ``x.imag = v`` write into ``x`` as in NumPy. For a real
array ``real`` is the array (a view) and ``imag`` zeros. ``angle`` is NumPy's
``arctan2(imag, real)`` (in degrees with ``deg=True``), pushed as element-wise ops.
"""
import numpy as np

from ..core import NDArray
from .creation import asarray, ones_like, zeros_like
from .functions import FUNCTIONS

__all__ = ["COMPLEX_FUNCTIONS", "install", "complex_parts"]


def complex_parts(x):
    """(real parts, imaginary parts) of a complex NDArray, as views of its memory."""
    pairs = x.reshape(x.shape + (1,)).view(np.dtype(x.dtype.char.lower()))
    return pairs[..., 0], pairs[..., 1]


def real(val):
    x = asarray(val)
    return complex_parts(x)[0] if x.dtype.kind == "c" else x[...]


def imag(val):
    x = asarray(val)
    return complex_parts(x)[1] if x.dtype.kind == "c" else zeros_like(x)


def angle(z, deg=False):
    x = asarray(z)
    re, im = complex_parts(x) if x.dtype.kind == "c" else (x, 0)  # weak 0, as NumPy
    result = FUNCTIONS["arctan2"](im, re)
    return result * (180 / np.pi) if deg else result


def iscomplexobj(x):
    dtype = getattr(x, "dtype", None)
    return np.dtype(dtype if dtype is not None else np.asarray(x).dtype).kind == "c"


def isrealobj(x):
    return not iscomplexobj(x)


def iscomplex(x):
    x = asarray(x)
    return imag(x) != 0 if x.dtype.kind == "c" else zeros_like(x, dtype=bool)


def isreal(x):
    x = asarray(x)
    return imag(x) == 0 if x.dtype.kind == "c" else ones_like(x, dtype=bool)


COMPLEX_FUNCTIONS = {"real": real, "imag": imag, "angle": angle, "iscomplex": iscomplex,
                     "isreal": isreal, "iscomplexobj": iscomplexobj, "isrealobj": isrealobj}
for _name, _function in COMPLEX_FUNCTIONS.items():
    _function.__doc__ = f"As ``numpy.{_name}``: pushed (see ndengine.ndarray.complex_parts)."


def _set_real(self, value):
    real(self)[...] = value


def _set_imag(self, value):
    if self.dtype.kind != "c":
        raise TypeError("array does not have imaginary part to set")
    complex_parts(self)[1][...] = value


def _complex(self):
    if self.shape:  # NumPy 2.4: size 1 is not enough
        raise TypeError("only 0-dimensional arrays can be converted to Python scalars")
    return complex(self.item())


def install():
    """``x.real``, ``x.imag`` (settable), ``x.conj()``, ``x.conjugate()``, ``complex(x)`` on
    NDArrays."""
    NDArray.__complex__ = _complex
    NDArray.real = property(real, _set_real)
    NDArray.imag = property(imag, _set_imag)
    NDArray.conj = NDArray.conjugate = _conj


def _conj(self):
    """The complex conjugate; a real array itself (NumPy's method, unlike its ufunc, keeps
    bool and the other real dtypes as they are)."""
    return FUNCTIONS["conjugate"](self) if self.dtype.kind == "c" else self
