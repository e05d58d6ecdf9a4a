"""NumPy's remaining construction, layout, memory and NumPy 2 array-API names on NDArrays
(``CREATION``, NumPy's parameter lists through ``signatures.numpy_function``): diagflat,
fromfunction, fromiter, frombuffer, fromstring, fromfile, asanyarray, asarray_chkfinite,
asfortranarray, require, isfortran, array_equiv, shares_memory, may_share_memory,
broadcast_shapes, astype, unstack, matrix_transpose, permute_dims, vecdot, matvec, vecmat.

Pushed: diagflat (a diag of the raveled input), fromfunction (the function gets the pushed
``indices``' arrays), vecdot, matvec and vecmat (one op each running NumPy's own ufunc:
NumPy's summation order and dtypes; ``axis``/``axes`` move the core dimensions last as
views first); unstack and matrix_transpose are views. The readers (fromiter, frombuffer,
fromstring, fromfile) run NumPy's and copy its result into a new NDArray: frombuffer's
result does not share the buffer. What NumPy answers with a Python object reads values:
asarray_chkfinite (whether all are finite) and array_equiv (whether all are equal).

Layout: asfortranarray returns ``a`` itself where it is Fortran-contiguous, else a copy in
Fortran layout (core/array_methods.py), as require's ``'F'`` does; isfortran answers NumPy's
``flags.fnc`` for the view's real geometry (a transposed C array is Fortran-ordered).

Memory: NDArrays share memory only as views of one chunk; shares_memory and
may_share_memory hand NumPy the views' byte geometry within that chunk (never their
data), so the exact answer and ``max_work`` are NumPy's.
"""
import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from ...core import NDArray
from ..arguments import array_of, first_context, frozen, push
from ..creation import array, ascontiguousarray, asarray
from ..functions import FUNCTIONS
from ..pushed import PUSHED
from ..shaping import SHAPING
from ..signatures import numpy_function, signed_function
from ..statistics import FUNCTIONS as _STATISTICS

__all__ = ["CREATION"]

_moveaxis = SHAPING["moveaxis"]


def _diagflat(v, k=0):
    return PUSHED["diag"](SHAPING["ravel"](array_of(v)), k)


def _fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    grids = PUSHED["indices"](shape, dtype=dtype)
    return function(*(grids[i] for i in range(len(grids))), **kwargs)


def _reader(name):
    """A NumPy reader whose result is copied into a new NDArray."""
    numpy_reader = getattr(np, name)

    def read(*args, **kwargs):
        kwargs.pop("like", None)
        return array(numpy_reader(*args, **kwargs))
    return read


def _context(device):
    return None if device is None or device == "cpu" else device


def _asanyarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    return asarray(a, dtype, order, copy=copy, ctx=_context(device))


def _asarray_chkfinite(a, dtype=None, order=None):
    a = asarray(a, dtype, order)
    if a.dtype.char in np.typecodes["AllFloat"] and not bool(
            _STATISTICS["all"](FUNCTIONS["isfinite"](a)).item()):
        raise ValueError("array must not contain infs or NaNs")
    return a


def _asfortranarray(a, dtype=None, *, like=None):
    """``a`` itself where it is Fortran-contiguous already (a transpose of a C array, a 1-d
    array), else a copy in Fortran layout (core/array_methods.py)."""
    return array(a, dtype, copy=None, order="F", ndmin=1)


# numpy.require's names of flags
_FLAGS = {"C": "C", "C_CONTIGUOUS": "C", "CONTIGUOUS": "C", "F": "F", "F_CONTIGUOUS": "F",
          "FORTRAN": "F", "A": "A", "ALIGNED": "A", "W": "W", "WRITEABLE": "W", "O": "O",
          "OWNDATA": "O", "E": "E", "ENSUREARRAY": "E"}


def _require(a, dtype=None, requirements=None, *, like=None):
    if not requirements:
        return asarray(a, dtype)
    wanted = {_FLAGS[flag.upper()] for flag in requirements}
    if wanted >= {"C", "F"}:
        raise ValueError('Cannot specify both "C" and "F" order')
    if "F" in wanted:
        result = array(a, dtype, copy=None, order="F")
    else:
        result = ascontiguousarray(a, dtype) if "C" in wanted else asarray(a, dtype)
    if "O" in wanted and result is a:  # an NDArray given may be a view: its own copy
        result = result.copy()
    return result


class _Geometry:
    """A view's byte geometry as NumPy's array interface, at ``base`` + its byte offset in
    its chunk: NumPy builds an array of it without touching memory, and computes overlaps
    from the geometry alone (the flags of a view: ``x.flags``, interop.py)."""

    def __init__(self, view, base):
        self.__array_interface__ = {
            "shape": view.shape, "typestr": view.dtype.str, "strides": view.strides,
            "data": (base + view._offset, True), "version": 3}


_BASE = 1 << 32  # a chunk's first byte, as the geometry reads it (never dereferenced)


def _geometry(view):
    return np.asarray(_Geometry(view, _BASE))


def _isfortran(a):
    return a.flags.fnc if isinstance(a, NDArray) else np.isfortran(a)


def _overlap(numpy_test, a, b, max_work):
    if not isinstance(a, NDArray) and not isinstance(b, NDArray):
        return numpy_test(a, b, max_work=max_work)
    if not (isinstance(a, NDArray) and isinstance(b, NDArray)) or a._chunk is not b._chunk:
        return False  # an NDArray shares memory only with views of its own chunk
    return numpy_test(_geometry(a), _geometry(b), max_work=max_work)


def _shares_memory(a, b, /, max_work=-1):
    return _overlap(np.shares_memory, a, b, max_work)


def _may_share_memory(a, b, /, max_work=0):
    return _overlap(np.may_share_memory, a, b, max_work)


def _array_equiv(a1, a2):
    try:
        ctx = first_context(a1, a2)
        a1, a2 = array_of(a1, ctx), array_of(a2, ctx)
        np.broadcast_shapes(a1.shape, a2.shape)
    except Exception:  # noqa: BLE001 - NumPy's: anything not comparable is not equivalent
        return False
    return bool(_STATISTICS["all"](FUNCTIONS["equal"](a1, a2)).item())


def _astype(x, dtype, /, *, copy=True, device=None):
    if not isinstance(x, NDArray):
        raise TypeError(f"Input should be an NDArray. It is a {type(x)} instead.")
    converted = x.astype(dtype, copy=copy)
    ctx = _context(device)
    return converted if ctx is None or ctx == converted.context else converted.copyto(ctx)


def _unstack(x, /, *, axis=0):
    x = array_of(x)
    if x.ndim == 0:
        raise ValueError("Input array must be at least 1-d.")
    moved = _moveaxis(x, axis, 0)
    return tuple(moved[i] for i in range(len(moved)))


def _matrix_transpose(x, /):
    x = array_of(x)
    if x.ndim < 2:
        raise ValueError(f"Input array must be at least 2-dimensional, but it is {x.ndim}")
    return SHAPING["swapaxes"](x, -1, -2)


# the core dimensions of NumPy's gufuncs: per input, then the output's
_CORE = {"vecdot": (1, 1, 0), "matvec": (2, 1, 1), "vecmat": (1, 2, 1)}


def _core_last(array, axes):
    """``array`` with the core axes ``axes`` moved last (in order), a view."""
    axes = normalize_axis_tuple(axes, array.ndim)
    return _moveaxis(array, axes, tuple(range(-len(axes), 0)))


def _product(name, x1, x2, out, axes, axis, keepdims, params):
    ctx = first_context(x1, x2)
    x1, x2 = array_of(x1, ctx), array_of(x2, ctx)
    cores = _CORE[name]
    if axis is not None:
        if axes is not None:
            raise TypeError("cannot specify both 'axis' and 'axes'")
        axes = [(axis,)] * 2 + ([(axis,)] if keepdims else [()])
    if axes is not None:
        if len(axes) not in (2, 3):
            raise ValueError(f"axes should be a list with an entry for all 3 inputs and "
                             f"outputs; entries for outputs can only be omitted if none of "
                             f"them has core axes, got {axes!r}")
        x1 = _core_last(x1, axes[0] if np.ndim(axes[0]) else (axes[0],))
        x2 = _core_last(x2, axes[1] if np.ndim(axes[1]) else (axes[1],))
    params = {key: frozen(value) for key, value in params.items() if value is not None}
    if out is not None:
        params["out_dtype"] = np.dtype(out.dtype)
    result = push(name, [x1, x2], params, ctx=ctx)[0]
    if keepdims and cores[2] == 0:
        result = SHAPING["expand_dims"](result, -1)
    if axes is not None and len(axes) == 3 and np.ndim(axes[2]) and len(axes[2]):
        result = _moveaxis(result, tuple(range(-len(axes[2]), 0)), tuple(axes[2]))
    if out is None:
        return result
    out[...] = result
    return out


_PRODUCT_PARAMETERS = ("x1, x2, /, out=None, *, axes=None, axis=None, keepdims=False, "
                       "casting='same_kind', order='K', dtype=None")


def _product_function(name):
    def product(x1, x2, /, out=None, *, axes=None, axis=None, keepdims=False,
                casting="same_kind", order="K", dtype=None):
        if axis is not None and name != "vecdot":
            raise TypeError(f"{name}: 'axis' can only be used with a single core dimension "
                            "per operand; use 'axes'")
        return _product(name, x1, x2, out, axes, axis, keepdims,
                        {"casting": casting, "order": order, "dtype": dtype})
    return signed_function(name, _PRODUCT_PARAMETERS, product,
                           doc=f"As ``numpy.{name}``. One pushed op (NumPy's {name} inside "
                               "it); ``axis``/``axes`` move the core dimensions as views; "
                               "``out=`` is written by a pushed copy.")


_READ = "NumPy's reader; its result copied into a new NDArray."
_ROWS = {
    "diagflat": (np.diagflat, _diagflat, "A pushed diag of the raveled input."),
    "fromfunction": (np.fromfunction, _fromfunction, "The function gets the pushed "
                                                     "``indices``' arrays."),
    "fromiter": (np.fromiter, _reader("fromiter"), _READ),
    "frombuffer": (np.frombuffer, _reader("frombuffer"), _READ + " It does not share the "
                                                                 "buffer."),
    "fromstring": ("string, dtype=float, count=-1, *, sep, like=None",
                   _reader("fromstring"), _READ),
    "fromfile": (np.fromfile, _reader("fromfile"), _READ),
    "asanyarray": (np.asanyarray, _asanyarray, "``asarray`` (NDArray has no subclasses); "
                                               "``device`` is a context."),
    "asarray_chkfinite": (np.asarray_chkfinite, _asarray_chkfinite,
                          "Reads whether all values are finite (a wait)."),
    "asfortranarray": (np.asfortranarray, _asfortranarray,
                       "``a`` itself where it is Fortran-contiguous, else a pushed copy in "
                       "Fortran layout."),
    "require": (np.require, _require, "'F': a pushed copy in Fortran layout where ``a`` is "
                                      "not Fortran-contiguous."),
    "isfortran": (np.isfortran, _isfortran, "NumPy's ``flags.fnc`` of the view's geometry."),
    "array_equiv": (np.array_equiv, _array_equiv, "Reads whether all are equal (a wait)."),
    "shares_memory": (np.shares_memory, _shares_memory,
                      "NumPy's answer on the views' geometry within their chunk."),
    "may_share_memory": (np.may_share_memory, _may_share_memory,
                         "NumPy's answer on the views' geometry within their chunk."),
    "astype": (np.astype, _astype, "``x.astype``; ``device`` is a context."),
    "unstack": (np.unstack, _unstack, "Views along ``axis``."),
    "matrix_transpose": (np.matrix_transpose, _matrix_transpose, "A view."),
}


def _function(name, parameters, implementation, doc):
    if isinstance(parameters, str):
        return signed_function(name, parameters, implementation,
                               doc=f"As ``numpy.{name}``. {doc}")
    return numpy_function(name, parameters, implementation, doc)


CREATION = {name: _function(name, *row) for name, row in _ROWS.items()}
CREATION.update({name: _product_function(name) for name in _CORE})
CREATION["permute_dims"] = SHAPING["transpose"]  # NumPy's permute_dims is its transpose
CREATION["broadcast_shapes"] = np.broadcast_shapes  # shapes only: NumPy's own
