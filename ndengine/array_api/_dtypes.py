"""The standard's dtypes and data type functions.

The dtype objects are NumPy's scalar types, as in the main namespace (``float32 is
numpy.float32``), and only those ndengine supports when this module is imported
(``ndengine.ops.dtypes.SUPPORTED_DTYPES``: complex64/complex128 appear once ndengine has
them). The queries (``isdtype``, ``can_cast``, ``result_type``, ``finfo``, ``iinfo``) read
dtypes only, never array data: they take an array's dtype and ask NumPy, whose promotion
rules ndengine's ops follow. ``astype`` pushes ndengine's copy.
"""
from collections import namedtuple

import numpy as np

from ..ndarray import NDArray
from ..ops.dtypes import SUPPORTED_DTYPES

__all__ = ["DTYPES", "FUNCTIONS", "supported_dtype"]

STANDARD_DTYPE_NAMES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                        "uint64", "float32", "float64", "complex64", "complex128")
_SUPPORTED = {np.dtype(dtype) for dtype in SUPPORTED_DTYPES}
DTYPES = {name: getattr(np, name) for name in STANDARD_DTYPE_NAMES
          if np.dtype(name) in _SUPPORTED}


def supported_dtype(dtype):
    """``dtype`` as a NumPy dtype, or a TypeError where ndengine does not support it."""
    resolved = np.dtype(dtype)
    if resolved not in _SUPPORTED:
        raise TypeError(f"ndengine does not support dtype {resolved}")
    return resolved


def _dtype_of(value):
    """The dtype of an array, or the dtype itself; Python scalars pass through (result_type
    treats them as NumPy does: weakly)."""
    return value.dtype if isinstance(value, NDArray) else value


def astype(x, dtype, /, *, copy=True, device=None):
    """Array API ``astype``: ndengine's ``x.astype`` (a pushed copy unless ``copy=False``
    and the dtype is already ``dtype``), moved to ``device`` when one is given."""
    converted = x.astype(supported_dtype(dtype), copy=copy)
    if device is not None and device != converted.context:
        return converted.copyto(device)
    return converted


def can_cast(from_, to, /):
    """Array API ``can_cast``: whether the standard's casting rules allow ``from_`` (a dtype
    or an array) to ``to``."""
    return bool(np.can_cast(_dtype_of(from_), to))


def result_type(*arrays_and_dtypes):
    """Array API ``result_type``: the promoted dtype of arrays, dtypes and Python scalars."""
    if not arrays_and_dtypes:
        raise ValueError("at least one array or dtype is required")
    return np.result_type(*(_dtype_of(value) for value in arrays_and_dtypes))


def isdtype(dtype, kind):
    """Array API ``isdtype``: whether ``dtype`` is of ``kind`` (a dtype, a kind name such as
    'real floating', or a tuple of them)."""
    return bool(np.isdtype(dtype, kind))


# the standard's info objects hold Python numbers (NumPy's finfo holds NumPy scalars)
FinfoObject = namedtuple("finfo_object", ["bits", "eps", "max", "min", "smallest_normal",
                                          "dtype"])
IinfoObject = namedtuple("iinfo_object", ["bits", "max", "min", "dtype"])


def finfo(type, /):  # noqa: A002 - the standard's parameter name
    """Array API ``finfo``: machine limits of a floating dtype (or of an array's dtype); for
    a complex dtype, those of its real parts."""
    info = np.finfo(_dtype_of(type))
    return FinfoObject(int(info.bits), float(info.eps), float(info.max), float(info.min),
                       float(info.smallest_normal), info.dtype)


def iinfo(type, /):  # noqa: A002
    """Array API ``iinfo``: machine limits of an integer dtype (or of an array's dtype)."""
    info = np.iinfo(_dtype_of(type))
    return IinfoObject(int(info.bits), int(info.max), int(info.min), info.dtype)


FUNCTIONS = {"astype": astype, "can_cast": can_cast, "result_type": result_type,
             "isdtype": isdtype, "finfo": finfo, "iinfo": iinfo}
