"""NumPy's names that hold no array data, beyond ``namespace``'s (``META``): the other
spellings of the supported dtypes, the type tables, the dtype queries, printing, the
floating-point error state, and NumPy's modules of exceptions, dtype classes, typing and
testing.

Most are NumPy's own objects (``ndengine.errstate is numpy.errstate``), because they mean
the same for NDArrays:
- dtype spellings (``intc``, ``longlong``, ``True_`` ...) are NumPy's scalar types, as
  ``namespace`` re-exports ``float32`` & co.; NumPy's names of dtypes ndengine has no storage
  for (``longdouble``, ``str_``, ``void`` ...) are left out, and such a dtype given to an
  ndengine function is a TypeError naming it and the supported dtypes;
- ``result_type``, ``can_cast``, ``ndim``, ``shape``, ``size`` take NDArrays through NumPy's
  ``__array_function__`` protocol (``interop``), which reads their dtype and shape, never their
  values (NumPy 2's ``result_type`` takes no values of arrays either);
- printing: NDArray prints through NumPy (``str``/``repr`` of its values), so NumPy's print
  options apply to it, and ``array2string(x)`` & co. print an NDArray's values (a wait);
- the error state: every op reads NumPy's state when it is pushed (core/fp_errors.py), so
  ``with ndengine.errstate(divide="raise")`` and ``ndengine.seterr`` act on ndengine's ops as
  NumPy's on NumPy's; ``setbufsize``/``getbufsize`` are NumPy's ufunc buffer, which the NumPy
  kernels that ndengine runs use;
- ``testing`` is ``numpy.testing``: its assertions convert an NDArray with ``__array__``
  (which waits for its values), so ``testing.assert_allclose(x, expected)`` works as is.

Four are ndengine's own, so that an NDArray counts by its dtype or shape without a wait
(NumPy's would read its values): ``common_type``, ``mintypecode``, ``min_scalar_type`` (a 0-d
NDArray is read: NumPy's answer depends on its value) and ``einsum_path`` (shapes only).
``flatiter`` is the type of ``x.flat``.
"""
import numpy as np

from ...core import NDArray
from ..interop import FlatIterator
from ..signatures import numpy_function

__all__ = ["META"]

# NumPy's other spellings of supported dtypes, its booleans, and its tables of types
DTYPE_SPELLINGS = ("byte", "short", "intc", "long", "longlong", "ubyte", "ushort", "uintc",
                   "uint", "ulong", "ulonglong", "False_", "True_")
TYPE_TABLES = ("ScalarType", "sctypeDict", "typecodes", "little_endian")
# queries NumPy answers from dtypes, shapes or Python types (NDArrays through interop)
NUMPY_QUERIES = ("promote_types", "isdtype", "isscalar", "iterable", "typename",
                 "result_type", "can_cast", "ndim", "shape", "size", "info")
PRINTING = ("printoptions", "set_printoptions", "get_printoptions", "array2string",
            "array_repr", "array_str", "format_float_positional", "format_float_scientific",
            "base_repr", "binary_repr")
ERROR_STATE = ("errstate", "seterr", "geterr", "seterrcall", "geterrcall", "getbufsize",
               "setbufsize")
MODULES = ("exceptions", "dtypes", "typing", "testing")


def _dtype_stand_in(value):
    """A zero-size NumPy array of an NDArray's dtype (what NumPy's dtype queries look at),
    anything else as it is."""
    return np.empty(0, value.dtype) if isinstance(value, NDArray) else value


def _common_type(*arrays):
    return np.common_type(*map(_dtype_stand_in, arrays))


def _mintypecode(typechars, typeset="GDFgdf", default="d"):
    typechars = [t.dtype.char if isinstance(t, NDArray) else t for t in typechars]
    return np.mintypecode(typechars, typeset=typeset, default=default)


def _min_scalar_type(a, /):
    if isinstance(a, NDArray):  # an array's own dtype, unless 0-d: then its value counts
        a = a.asnumpy() if a.ndim == 0 else np.empty(0, a.dtype)
    return np.min_scalar_type(a)


def _shape_stand_in(value):
    """A NumPy array of an NDArray's shape and dtype holding one element (no memory read)."""
    if not isinstance(value, NDArray):
        return value
    return np.broadcast_to(np.zeros((), value.dtype), value.shape)


def _einsum_path(*operands, optimize="greedy", einsum_call=False):
    return np.einsum_path(*map(_shape_stand_in, operands), optimize=optimize,
                          einsum_call=einsum_call)


_OWN = {"common_type": _common_type, "mintypecode": _mintypecode,
        "min_scalar_type": _min_scalar_type, "einsum_path": _einsum_path}

META = {name: getattr(np, name)
        for name in DTYPE_SPELLINGS + TYPE_TABLES + NUMPY_QUERIES + PRINTING + ERROR_STATE
        + MODULES}
META.update({name: numpy_function(name, getattr(np, name), implementation)
             for name, implementation in _OWN.items()})
META["flatiter"] = FlatIterator
