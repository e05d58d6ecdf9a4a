"""NumPy's names that hold no array data: dtypes, constants, dtype queries, ``ndarray``, and
the error for a NumPy name ndengine lacks, so that ``import ndengine as np`` scripts run.

The dtype names are NumPy's own scalar types (``ndengine.float32 is numpy.float32``), so
``x.dtype == np.float32`` and ``zeros(3, dtype=np.int8)`` mean what they mean in NumPy
(``meta`` adds NumPy's other spellings of them: ``intc``, ``longlong``, ...). NumPy's names of
dtypes ndengine cannot hold are left out (``longdouble``/``float128``, ``clongdouble``/
``complex256``, ``str_``, ``bytes_``, ``void``, ``object_``, ``character``, ``flexible``); such a
dtype given to an ndengine function is a TypeError naming it and the supported dtypes.

``ndengine.ndarray`` is the array package (``ndengine/ndarray/``), and it answers
``isinstance(x, ndengine.ndarray)`` and ``issubclass(cls, ndengine.ndarray)`` for NDArray, as
``numpy.ndarray`` does for NumPy's arrays. It is not the class itself: the name is the
package's, which code addresses as ``ndengine.ndarray.<name>``; ``ndengine.NDArray`` is the
class.
"""
import sys
import types
import warnings

import numpy as np

from ..core import NDArray
from ..ops import SUPPORTED_DTYPES

DTYPE_NAMES = ("bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
               "uint64", "float16", "float32", "float64", "complex64", "complex128")
# NumPy's other spellings of those dtypes, and its abstract scalar types (for issubdtype)
DTYPE_ALIASES = ("bool", "intp", "uintp", "int_", "half", "single", "double", "csingle",
                 "cdouble")
ABSTRACT_TYPES = ("generic", "number", "integer", "signedinteger", "unsignedinteger",
                  "inexact", "floating", "complexfloating")
CONSTANTS = {"pi": np.pi, "e": np.e, "inf": np.inf, "nan": np.nan,
             "euler_gamma": np.euler_gamma, "newaxis": None}
# dtype objects and queries: they take dtypes (or NumPy scalars), never array data
DTYPE_TOOLS = {"dtype": np.dtype, "finfo": np.finfo, "iinfo": np.iinfo,
               "issubdtype": np.issubdtype}

NAMES = {name: getattr(np, name) for name in DTYPE_NAMES + DTYPE_ALIASES + ABSTRACT_TYPES}
NAMES.update(CONSTANTS)
NAMES.update(DTYPE_TOOLS)

__all__ = ["NAMES", "missing_attribute"]


class _ArrayPackage(types.ModuleType):
    """The type of the ``ndengine.ndarray`` package: it is ``numpy.ndarray``'s name, so it
    answers isinstance and issubclass for NDArray, and ``ndarray(shape, dtype=float)`` makes
    an uninitialised array as NumPy's constructor does (``empty``). A ``buffer`` (NumPy's
    array over foreign memory) or ``strides`` is refused: an NDArray owns its memory and is
    C-ordered."""

    def __call__(self, shape, dtype=float, buffer=None, offset=0, strides=None, order=None):
        if buffer is not None or strides is not None or offset:
            raise TypeError("ndengine.ndarray(shape, dtype): an NDArray owns its memory; for "
                            "an array over a buffer use ndengine.frombuffer (a copy) or "
                            "numpy.ndarray")
        if order not in (None, "C"):
            raise NotImplementedError(f"ndengine makes C-ordered arrays only: order={order!r}")
        return self.empty(shape, dtype)

    def __instancecheck__(self, obj):
        return isinstance(obj, NDArray)

    def __subclasscheck__(self, cls):
        return isinstance(cls, type) and issubclass(cls, NDArray)


sys.modules[__package__].__class__ = _ArrayPackage


def _numpy_has(module, name):
    with warnings.catch_warnings():  # NumPy warns for some deprecated names
        warnings.simplefilter("ignore")
        try:
            return getattr(module, name)
        except AttributeError:
            return None


def missing_attribute(module_name, name, numpy_module=np):
    """The AttributeError for ``<module_name>.<name>``: where NumPy has that name (one of the
    families ndengine leaves out: README, "Left out"), it says so and shows how to use NumPy's
    on a NumPy copy."""
    found = None if name.startswith("_") else _numpy_has(numpy_module, name)
    where = numpy_module.__name__
    if found is None:
        message = f"module {module_name!r} has no attribute {name!r}"
    elif isinstance(found, type) and issubclass(found, np.generic):
        supported = ", ".join(str(d) for d in SUPPORTED_DTYPES)
        message = (f"ndengine does not have {where}.{name}: it has no such dtype "
                   f"(supported: {supported})")
    elif isinstance(found, types.ModuleType):
        message = (f"ndengine does not have {where}.{name}; use NumPy's on a NumPy copy: "
                   f"{where}.{name}.<function>(x.asnumpy())")
    elif callable(found):
        message = (f"ndengine does not have {where}.{name}; call NumPy's on a NumPy copy: "
                   f"{where}.{name}(x.asnumpy()) (ndengine.array(result) makes an NDArray "
                   f"of the result)")
    else:
        message = f"ndengine does not have {where}.{name}; use {where}.{name}"
    return AttributeError(message)
