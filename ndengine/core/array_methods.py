"""NDArray's methods that push ops: copies (``copy``, ``astype``, ``copyto``,
``as_in_context``, ``copy.copy``/``copy.deepcopy``, pickling) and indexing (``x[key]``,
``x[key] = v``, with keys.py's reading of the key); and the Fortran layout of copies.

Fortran layout. An array of two or more axes longer than 1 made in Fortran order
(``order='F'``, ``asfortranarray``, a copy or ``astype`` of a Fortran-ordered array with
NumPy's default order 'K') is a new C-contiguous array holding its transpose, seen through
Fortran strides: an owner (``base`` None) with NumPy's flags (``F_CONTIGUOUS``); `fortran_copy`
makes one in one pushed copy. Ops on such arrays read them through their strides; their
results are C-ordered (NumPy keeps the inputs' layout: the values are the same).

They call the pipeline's ``invoke``, so they are defined here, above it, and `install` sets
them on the type (array.py, which imports nothing above it); the package's ``__init__`` runs
it once, as the API layer sets its operators. A basic key gives a view (array.py's
views.py's ``basic_view``); an advanced key, or an int for every axis, a pushed ``take_index``
(with its key in the plan memo's form: keys.py's ``memo_key``). Integer
NDArray index arrays are the op's inputs after the data (keys.py's ``index_inputs``). A
write by index is a pushed ``copy`` into the view, or ``assign_index`` into the array;
while recording, autograd tapes it (tape.record_write). No state.
"""
import numpy as np

from .. import ops
from ..engine import Context
from ..ops.dtypes import check_scalar_into
from ..ops.shapes import f_strides as _f_strides
from . import tape as _tape
from .array import NDArray, array_on as _array_on, new_array as _new_array
from .keys import (drop_leading_ones as _drop_leading_ones, index_inputs as _index_inputs,
                   is_basic_key as _is_basic_key,
                   is_element_key as _is_element_key,
                   is_whole_element_key as _is_whole_element_key, memo_key as _memo_key,
                   normalize_key as _normalize_key)
from .pipeline import (as_operand as _as_operand, copy_between as _copy_between,
                       from_numpy as _from_numpy, invoke)
from .tape import RECORDING as _RECORDING
from .views import basic_view as _basic_view_of, view_geometry as _view_geometry

__all__ = ["install", "fortran_copy", "as_fortran", "is_fortran_ordered", "layout_of",
           "needs_fortran"]

_SCALARS = (bool, int, float)


def install():
    """Set the methods on NDArray (once, from the package's ``__init__``)."""
    # copy.copy and copy.deepcopy: a pushed copy with storage of its own, on the same device
    # (as for a NumPy array)
    NDArray.copy = NDArray.__copy__ = _copy
    NDArray.__deepcopy__ = _deepcopy
    NDArray.__reduce__ = _reduce
    NDArray.astype = _astype
    NDArray.copyto = _copyto
    NDArray.as_in_context = _as_in_context
    NDArray.__getitem__ = _getitem
    NDArray.__setitem__ = _setitem


def _copy(self, order="C"):
    """A copy with storage of its own (``ndarray.copy``; also ``copy.copy(x)``), pushed:
    returns at once. ``order``: NumPy's ('C' by default; 'F', or 'A'/'K' of a Fortran-ordered
    array, give the Fortran layout: see the module docstring)."""
    if layout_of(order, self) == "F":
        return fortran_copy(self)
    return invoke(ops.get("copy"), [self])[0]


# ------------------------------------------------------------------ Fortran layout
def layout_of(order, source=None):
    """'F' where NumPy's ``order`` gives a result in Fortran layout (``source``: the array the
    result is made from, whose layout 'A' and 'K' keep), else 'C'. Refuses what NumPy does."""
    if order is None:
        order = "K"
    if not isinstance(order, str):
        raise TypeError(f"order must be str, not {type(order).__name__}")
    code = order.upper()
    if code not in ("C", "F", "A", "K"):
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    if code == "F" or code != "C" and source is not None and is_fortran_ordered(source):
        return "F"
    return "C"


def needs_fortran(shape):
    """Whether ``shape``'s Fortran layout differs from its C layout (two axes longer than 1)."""
    longer = 0
    for n in shape:
        longer += n > 1
    return longer > 1


def is_fortran_ordered(x):
    """Whether ``x`` (an NDArray, or anything with NumPy's flags) is Fortran-contiguous and
    not C-contiguous."""
    if type(x) is NDArray:
        strides = x._strides
        return strides is not None and needs_fortran(x.shape) and \
            tuple(strides) == _f_strides(x.shape, x.dtype.itemsize)
    flags = getattr(x, "flags", None)
    return flags is not None and bool(flags.f_contiguous) and not flags.c_contiguous


def as_fortran(transposed, shape):
    """The array of ``shape`` in Fortran layout over ``transposed``'s memory: a new
    C-contiguous NDArray of the reversed shape that holds its transpose (nothing else may
    write it)."""
    return _array_on(transposed._chunk, tuple(shape), transposed.dtype, transposed._offset,
                     _f_strides(shape, transposed.dtype.itemsize))


def fortran_copy(x, dtype=None):
    """A copy of NDArray ``x`` (cast to ``dtype``) in Fortran layout: one pushed copy of its
    transpose (a C copy where both layouts are one)."""
    dtype = x.dtype if dtype is None else ops.check_dtype(dtype)
    if not needs_fortran(x.shape):
        return invoke(ops.get("copy"), [x], {"dtype": dtype} if dtype != x.dtype else None)[0]
    transposed = invoke(ops.get("copy"), [x.transpose()], {"dtype": dtype})[0]
    return as_fortran(transposed, x.shape)


def _deepcopy(self, memo):
    return self.copy()


def _reduce(self):
    """Pickle the values (read in serial order, as asnumpy does); unpickling makes a
    fresh array on the cpu context, with storage of its own."""
    return _unpickle, (self.asnumpy(),)


def _astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
    """A copy of the array cast to ``dtype`` (as ``ndarray.astype``: NumPy's ``casting`` rule
    checked at the call, 'unsafe' by default), pushed: returns at once, the cast runs in the
    background. ``order`` as NumPy's ('K': a Fortran-ordered array's copy is Fortran-ordered
    too); ``copy=False`` returns the array itself when its dtype and layout already fit."""
    dtype = ops.check_dtype(dtype)
    if not np.can_cast(self.dtype, dtype, casting):
        raise TypeError(f"Cannot cast array data from {self.dtype!r} to {dtype!r} according "
                        f"to the rule {casting!r}")
    fortran = layout_of(order, self) == "F" and needs_fortran(self.shape)
    if dtype == self.dtype and not copy and (
            order in ("K", "k", "A", "a") or (is_fortran_ordered(self) if fortran
                                              else self._strides is None)):
        return self
    if fortran:
        return fortran_copy(self, dtype)
    return invoke(ops.get("copy"), [self], {"dtype": dtype})[0]


def _copyto(self, other):
    """Copy into ``other`` (an NDArray of the same shape, on any context: a pushed copy, cast
    to its dtype) or onto a new array on a Context (``x.copyto(nd.gpu(0))``); returns the
    target at once (MXNet's ``copyto``; NumPy has no such method)."""
    if isinstance(other, Context):
        target = _new_array(self.shape, self.dtype, other)
    elif isinstance(other, NDArray):
        if other.shape != self.shape:
            raise ValueError(f"copyto: shapes differ: {self.shape} into {other.shape}")
        target = other
    else:
        raise TypeError(f"copyto takes an NDArray or a Context, got {type(other).__name__}")
    _copy_between(self, target)
    return target


def _as_in_context(self, ctx):
    """The array on context ``ctx`` (``nd.cpu()``, ``nd.gpu(0)``): the array itself if it is
    there already, else a copy pushed there (``copyto(ctx)``), which returns at once."""
    return self if ctx == self.context else self.copyto(ctx)


def _getitem(self, key):
    key = _normalize_key(key)
    if _is_basic_key(key) and not _is_whole_element_key(key, len(self.shape)):
        return _basic_view_of(self, key, True)
    # advanced keys, and an int for every axis (NumPy's scalar): a copy, which a later
    # ``v += 1`` changes alone, and which autograd's tape sees as no view of self
    key, indices = _index_inputs(key, self.context)
    return invoke(ops.get("take_index"), [self, *indices],
                  {"key": _memo_key(key, self.shape)})[0]


def _view_key(key, ndim):
    """A basic key as the key of a view: an int for every axis (NumPy's scalar would read the
    element) gets an Ellipsis, with which NumPy gives the element's 0-d view instead, with
    the same errors."""
    if _is_whole_element_key(key, ndim):
        return (key if type(key) is tuple else (key,)) + (Ellipsis,)
    return key


def _basic_view(self, key, taped=True):
    """The view ``x[key]`` of a basic key; an int for every axis gives the element's 0-d
    view (what ``x[key] = v`` writes)."""
    return _basic_view_of(self, _view_key(key, len(self.shape)), taped)


def _is_the_view(self, key, value):
    """Whether ``value`` (an NDArray on self's chunk) is exactly the view ``self[key]`` of a
    basic key: the same geometry, computed without making the view."""
    shape, offset, strides = _view_geometry(self, _view_key(key, len(self.shape)))
    if value.shape != shape or value._offset != offset or value.dtype != self.dtype:
        return False
    found = value._strides
    return (value.strides if found is None else found) == strides


def _setitem(self, key, value):
    key = _normalize_key(key)
    basic = _is_basic_key(key)
    if (basic and type(value) is NDArray and value._chunk is self._chunk
            and not _RECORDING[0] and _is_the_view(self, key, value)):
        return  # the very view (``u[1:-1] += v`` ends so): its bytes are already there
    target = _basic_view(self, key, False) if basic else None  # NumPy checks the key first
    kind = type(value)
    if kind is NDArray:
        if value._chunk.ctx is not self._chunk.ctx:
            raise ValueError(
                f"setitem: arrays are on different contexts ({self.context} and "
                f"{value.context}); move one with .copyto(ctx) or .as_in_context(ctx) first")
    elif kind in _SCALARS:
        if self.dtype.kind == "b":
            value = bool(value)  # NumPy takes any scalar's truth, however big
        else:
            check_scalar_into(value, self.dtype)  # NumPy's errors: NaN into int, ...
    if basic and isinstance(value, np.generic):
        check_scalar_into(value, self.dtype)  # an advanced key casts NumPy scalars quietly
    elif kind is not NDArray and kind not in _SCALARS and not isinstance(
            value, (np.ndarray, np.generic)):
        value = _converted_value(self, key, value, target)
    value = _as_operand(value, self.context)
    if basic:
        if not isinstance(value, NDArray) and not isinstance(value, _SCALARS):
            raise TypeError(f"cannot assign {type(value).__name__} to an NDArray")
        if type(value) is NDArray and len(value.shape) > len(target.shape):
            if not target.shape and _is_element_key(key):
                # an int for every axis: NumPy sets one element, from a scalar only
                raise ValueError("setting an array element with a sequence.")
            value = _drop_leading_ones(value, len(target.shape))
        if _RECORDING[0] and _tape.record_write(invoke, self, key, value):
            return  # autograd recorded the write (as assign_index into self)
        chunk = self._chunk
        whole = (target.size * target.dtype.itemsize == chunk.nbytes
                 and (type(value) is not NDArray or value._chunk is not chunk))
        invoke(ops.get("copy"), [value], {"shape": target.shape, "dtype": target.dtype},
               target, None, True, (), (chunk.var,) if whole else ())  # out, overwrites
    else:
        mask = key if type(key) is np.ndarray else (
            np.asarray(key) if isinstance(key, (bool, np.bool_)) else None)
        if (mask is not None and mask.dtype == np.bool_ and mask.shape == self.shape
                and isinstance(value, NDArray) and len(value.shape) > 1):
            raise TypeError(f"NumPy boolean array indexing assignment requires a 0 or "
                            f"1-dimensional input, input has {len(value.shape)} dimensions")
        key, indices = _index_inputs(key, self.context)
        if _RECORDING[0] and _tape.record_write(invoke, self, key, value, indices):
            return  # autograd recorded the write
        invoke(ops.get("assign_index"), [self, value, *indices],
               {"key": _memo_key(key, self.shape)}, self)  # out=self


def _converted_value(self, key, value, target):
    """A list, tuple, string, None, ... value converted as NumPy converts it for ``x[key] =``:
    straight into x's dtype, so -2 into uint8 is OverflowError and NaN into int ValueError
    (not the wrapped values of an int64 array cast later)."""
    if target is None:  # an advanced key
        return np.asarray(value, dtype=self.dtype)
    # NumPy's own assignment into a target of the view's shape gives its exact errors (too
    # many dimensions, sequences into one element); zero strides: no memory is used
    shape = target.shape
    probe = np.lib.stride_tricks.as_strided(np.empty(1, self.dtype), shape, (0,) * len(shape))
    if shape or not _is_element_key(key):
        probe[...] = value
        return np.asarray(value, dtype=self.dtype)
    probe[()] = value  # one element: NumPy's scalar conversion (a bool takes [-2] as True)
    return probe.copy()


def _unpickle(values):
    return _from_numpy(values, Context("cpu", 0))
