"""NumPy interop of NDArray: NumPy's functions called with NDArrays (``__array_function__``)
and the NumPy array methods and attributes NDArray lacks (``fill``, ``itemsize``, ``flat``,
``flags``, ``view``, ``item(*index)``, ``__format__``, ``__round__``).

``numpy.concatenate(xs)``, ``numpy.mean(x, axis=0)``, ``numpy.dot(a, b)``... with NDArray
arguments call ndengine's function of the same name (``numpy.linalg.norm``: ``ndengine.linalg
.norm``) when there is one and it takes the arguments given: the result is an NDArray, pushed,
with no wait. Otherwise NumPy's function runs on NumPy copies of the NDArrays (``asnumpy``,
which waits) and its result is returned as NumPy gives it.

Why fall back rather than refuse (CuPy refuses: its arrays live on a GPU, and a hidden
device-to-host copy is a trap there): an NDArray's values are host memory a wait away, NumPy
converted NDArrays with ``__array__`` before this protocol existed, and a script that uses
one function ndengine lacks should still run. Three limits keep the fallback honest:
- a call that would write into an NDArray (``out=``, ``numpy.copyto(x, ...)``,
  ``numpy.put(x, ...)``...) is a TypeError: NumPy would write into a copy, and x would
  silently stay as it was;
- functions that only read the shape or dtype (``numpy.shape``, ``ndim``, ``size``,
  ``result_type``...) run NumPy's own code on the NDArray, without a wait;
- results are NumPy's (arrays and views of copies, not of the NDArrays).
"""
import inspect
import logging
import operator
import sys
import warnings

import numpy as np

from ..core import NDArray
from ..engine.config import env_bool
from ..ops.dtypes import ObjectDtypeError

__all__ = ["array_function", "ArrayFlags", "FlatIterator", "NumPyFallbackWarning", "install"]

_fallback_log = logging.getLogger("ndengine.fallback")

# NumPy functions that write into an array argument: (position, name) of that argument
_WRITES = {"copyto": (0, "dst"), "put": (0, "a"), "place": (0, "arr"),
           "putmask": (0, "a"), "fill_diagonal": (0, "a"), "put_along_axis": (0, "arr")}
# NumPy functions that read only shapes and dtypes: NumPy's own code runs on the NDArray
_METADATA = frozenset(("shape", "ndim", "size", "iscomplexobj", "isrealobj"))
_DTYPE_ONLY = frozenset(("result_type", "can_cast"))  # an array counts by its dtype alone
# ndengine names whose function is not NumPy's: NumPy's runs (ndengine.save writes .npz)
_NOT_NUMPYS = frozenset(("save",))

_signatures = {}


# where NumPy defines a public module's functions -> the public module's name
_PUBLIC_MODULES = {"numpy.lib.scimath": "numpy.emath"}


def _implementation(func):
    """ndengine's function for the NumPy function ``func``, or None."""
    name = getattr(func, "__name__", None)
    module = getattr(func, "__module__", None) or ""
    parts = _PUBLIC_MODULES.get(module, module).split(".")
    if parts[0] != "numpy" or name is None or name in _NOT_NUMPYS:
        return None
    namespace = sys.modules["ndengine"]
    for part in parts[1:]:  # numpy.linalg -> ndengine.linalg
        namespace = vars(namespace).get(part)
        if not isinstance(namespace, type(sys)):
            return None
    found = vars(namespace).get(name)
    if found is func or isinstance(found, type) or not callable(found):
        return None
    return found


def _takes(function, args, kwargs):
    """Whether ``function``'s parameters take these arguments (else NumPy's may)."""
    try:
        signature = _signatures.get(function)
        if signature is None:
            signature = _signatures[function] = inspect.signature(function)
    except (TypeError, ValueError):
        return True  # no signature to check: the call decides
    try:
        signature.bind(*args, **kwargs)
    except TypeError:
        return False
    return True


def _has_ndarray(value):
    if isinstance(value, NDArray):
        return True
    if isinstance(value, (list, tuple)):
        return any(_has_ndarray(v) for v in value)
    return False


def _as_numpy(value):
    if isinstance(value, NDArray):
        return value.asnumpy()
    if isinstance(value, (list, tuple)):
        return type(value)(_as_numpy(v) for v in value)
    if isinstance(value, dict):
        return {k: _as_numpy(v) for k, v in value.items()}
    return value


def _dtypes_of(value):
    return value.dtype if isinstance(value, NDArray) else value


def array_function(self, func, types, args, kwargs):
    """NDArray.__array_function__ (see the module docstring)."""
    if not all(issubclass(t, (NDArray, np.ndarray)) for t in types):
        return NotImplemented  # another library's arrays: let it (or NumPy) decide
    implementation = _implementation(func)
    if implementation is not None and _takes(implementation, args, kwargs):
        try:
            return implementation(*args, **kwargs)
        except ObjectDtypeError:
            pass  # an argument NumPy makes an object array of (None, say): NumPy's function
    name = func.__name__
    if name in _METADATA:
        return func._implementation(*args, **kwargs)
    if name in _DTYPE_ONLY:
        return func(*map(_dtypes_of, args), **{k: _dtypes_of(v) for k, v in kwargs.items()})
    written = _WRITES.get(name)
    if written is not None:
        position, keyword = written
        target = args[position] if len(args) > position else kwargs.get(keyword)
        if isinstance(target, NDArray):
            raise TypeError(f"numpy.{name} would write into a NumPy copy of the NDArray: "
                            f"ndengine has no {name} yet; assign with x[index] = values")
    if _has_ndarray(kwargs.get("out")):
        raise TypeError(f"numpy.{name}(..., out=NDArray): ndengine has no {name} yet, and "
                        f"NumPy would write into a copy; assign its result instead")
    _note_fallback(func)
    return func(*_as_numpy(args), **_as_numpy(kwargs))


class NumPyFallbackWarning(UserWarning):
    """A NumPy function ndengine lacks ran on NumPy copies of NDArrays (a wait for their
    values; NumPy's result, not an NDArray). Once per function and process; silence it with
    ``warnings.filterwarnings("ignore", category=ndengine.NumPyFallbackWarning)`` or
    ``NDENGINE_FALLBACK_WARNINGS=0``."""


_WARN_FALLBACKS = env_bool("NDENGINE_FALLBACK_WARNINGS", True)
_warned = set()  # functions warned about (once each)


def _note_fallback(func):
    """Say once per function that NumPy's runs on copies (dask warns in the same case), and
    log each call on ``ndengine.fallback``."""
    where = f"{getattr(func, '__module__', 'numpy')}.{func.__name__}"
    _fallback_log.debug("%s ran on NumPy copies of NDArrays", where)
    if _WARN_FALLBACKS and func not in _warned:
        _warned.add(func)
        warnings.warn(f"{where} is not ndengine's: NumPy's runs on NumPy copies of the "
                      "NDArrays (it waits for them) and returns NumPy's result",
                      NumPyFallbackWarning, stacklevel=3)


# ---------------------------------------------------------------- methods and attributes
def _fill(self, value):
    """ndarray.fill: every element set to the scalar ``value`` (pushed), converted as
    NumPy's fill converts it (its errors and warnings, at the call)."""
    if isinstance(value, NDArray):
        if value.shape:
            raise ValueError("setting an array element with a sequence.")
    else:
        element = np.empty((), self.dtype)
        element.fill(value)
        value = element[()]
    self[...] = value


def _itemsize(self):
    """The size of one element in bytes (``dtype.itemsize``); no wait."""
    return self.dtype.itemsize


class ArrayFlags:
    """``x.flags``: NumPy's flags of an NDArray's geometry, read without a wait (a snapshot,
    as NumPy's object is not: reshaping x in place later does not change it).

    ``owndata`` is ``x.base is None``; ``aligned`` holds for every array ndengine makes
    (its buffers are aligned, offsets and strides are multiples of the item's alignment) and
    is computed all the same; ``writeable`` is always True: ndengine has no read-only
    arrays, and setting it False raises ValueError rather than promise a protection no op
    would honour. ``writebackifcopy`` is always False."""

    __slots__ = ("c_contiguous", "f_contiguous", "owndata", "aligned")
    _KEYS = {"C_CONTIGUOUS": "c_contiguous", "C": "c_contiguous", "CONTIGUOUS": "c_contiguous",
             "F_CONTIGUOUS": "f_contiguous", "F": "f_contiguous", "FORTRAN": "f_contiguous",
             "OWNDATA": "owndata", "O": "owndata", "WRITEABLE": "writeable", "W": "writeable",
             "ALIGNED": "aligned", "A": "aligned", "WRITEBACKIFCOPY": "writebackifcopy",
             "X": "writebackifcopy", "FNC": "fnc", "FORC": "forc", "BEHAVED": "behaved",
             "B": "behaved", "CARRAY": "carray", "CA": "carray", "FARRAY": "farray",
             "FA": "farray"}
    writeable = True
    writebackifcopy = False

    def __init__(self, array):
        fake = array._fake()[0]  # NumPy's contiguity of the same geometry
        object.__setattr__(self, "c_contiguous", bool(fake.flags.c_contiguous))
        object.__setattr__(self, "f_contiguous", bool(fake.flags.f_contiguous))
        object.__setattr__(self, "owndata", array.base is None)
        alignment = array.dtype.alignment
        object.__setattr__(self, "aligned", array._offset % alignment == 0 and all(
            stride % alignment == 0 for stride in array.strides))

    @property
    def contiguous(self):
        return self.c_contiguous

    @property
    def fnc(self):
        return self.f_contiguous and not self.c_contiguous

    @property
    def forc(self):
        return self.f_contiguous or self.c_contiguous

    @property
    def behaved(self):
        return self.aligned and self.writeable

    @property
    def carray(self):
        return self.behaved and self.c_contiguous

    @property
    def farray(self):
        # NumPy's own test: any of aligned, writeable, F-contiguous, and not C-contiguous
        return (self.aligned or self.writeable or self.f_contiguous) and not self.c_contiguous

    def __getitem__(self, key):
        try:
            return getattr(self, self._KEYS[key.upper() if isinstance(key, str) else key])
        except (KeyError, TypeError, AttributeError):
            raise KeyError("Unknown flag") from None

    def __setattr__(self, name, value):
        if name == "writeable" and value:
            return  # already writeable
        if name == "writeable":
            raise ValueError("ndengine arrays cannot be made read-only (no op would honour "
                             "it); keep a copy, or use NumPy's array for a read-only view")
        if name in ("c_contiguous", "f_contiguous", "owndata", "aligned",
                    "writebackifcopy") or name in self._KEYS.values():
            raise ValueError(f"cannot set the {name.upper()} flag of an ndengine array")
        raise AttributeError(f"'flagsobj' has no attribute {name!r}")

    def __setitem__(self, key, value):
        setattr(self, self._KEYS.get(key.upper() if isinstance(key, str) else key, key), value)

    def __eq__(self, other):
        names = ("c_contiguous", "f_contiguous", "owndata", "writeable", "aligned",
                 "writebackifcopy")
        return all(getattr(self, n) == getattr(other, n, None) for n in names)

    __hash__ = None

    def __repr__(self):
        return "".join(f"  {name} : {getattr(self, self._KEYS[name])}\n" for name in (
            "C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA", "WRITEABLE", "ALIGNED",
            "WRITEBACKIFCOPY"))


def _flags(self):
    """NumPy's memory-layout flags of this array (``C_CONTIGUOUS``, ``OWNDATA``, ``WRITEABLE``,
    ...), read from its geometry without a wait."""
    return ArrayFlags(self)


def _item(self, *args):
    """ndarray.item: the element as a Python scalar; ``item(i)`` takes a flat index,
    ``item(i, j, ...)`` or ``item((i, j))`` one index per axis (waits)."""
    if not args:
        return _core_item(self)
    index = args[0] if len(args) == 1 and isinstance(args[0], tuple) else args
    if len(index) == 1:
        flat = _flat_index(index[0], self.size)
        index = np.unravel_index(flat, self.shape) if self.shape else ()
    elif len(index) != self.ndim:
        raise ValueError("incorrect number of indices for array")
    return _core_item(self[tuple(int(i) for i in index)])


def _flat_index(value, size):
    position = operator.index(value)
    if not -size <= position < size:
        raise IndexError(f"index {position} is out of bounds for size {size}")
    return position % size


def _format(self, spec):
    """0-d arrays format as their element (``f"{loss:.4f}"``), others as NumPy's do."""
    if not self.shape:
        return format(self.asnumpy()[()], spec)
    if spec:
        raise TypeError("unsupported format string passed to NDArray.__format__")
    return str(self)


def _round(self, ndigits=None):
    """``round(x)``, ``round(x, n)`` for a 0-d array, as for a NumPy scalar: ``round(x)`` is
    a Python int (waits); ``round(x, n)`` the pushed ``ndengine.round(x, n)``."""
    if self.shape:  # NumPy's arrays have no __round__: only their scalars round
        raise TypeError(f"type NDArray of shape {self.shape} doesn't define __round__ "
                        f"method; use ndengine.round(x, decimals)")
    if ndigits is None:
        return round(self.asnumpy()[()])
    from .operators import module_function
    return module_function("round")(self, ndigits)


class FlatIterator:
    """``x.flat``: the elements of ``x`` in C order, read and written by flat index."""

    __slots__ = ("base",)

    def __init__(self, base):
        self.base = base

    def __len__(self):
        return self.base.size

    def __iter__(self):
        return iter(self.base.reshape(-1))

    def _positions(self, key):
        if isinstance(key, NDArray):
            key = key.asnumpy()  # which elements: read at the call
        return np.arange(self.base.size)[key]

    def __getitem__(self, key):
        positions = self._positions(key)
        if np.ndim(positions) == 0:
            return self.base[np.unravel_index(int(positions), self.base.shape)]
        return self.base[np.unravel_index(positions, self.base.shape)] if self.base.shape \
            else self.base.reshape(-1)[positions]

    def __setitem__(self, key, value):
        positions = np.ravel(self._positions(key))
        count = positions.size
        size = value.size if isinstance(value, NDArray) else np.size(value)
        if size not in (1, count):  # NumPy repeats (or cuts) the values to fit
            value = np.resize(np.asarray(value), count)
        elif isinstance(value, NDArray):
            value = value.reshape(-1) if size == count else value.reshape(())
        index = np.unravel_index(positions, self.base.shape) if self.base.shape else ...
        self.base[index] = value

    def copy(self):
        return self.base.flatten()

    def __array__(self, dtype=None, copy=None):
        return self.base.__array__(dtype, copy).reshape(-1)  # NDArray's protocol: a copy


def _get_flat(self):
    """The array indexed in flat C order: ``x.flat[i]`` is the element as a 0-d NDArray (a
    pushed copy, as ``x[i, j]`` is), ``x.flat[i] = v`` a pushed write; an NDArray index is
    read at the call (waits for it)."""
    return FlatIterator(self)


def _set_flat(self, value):
    FlatIterator(self)[...] = value


_core_item = NDArray.item


def _tofile(self, fid, sep="", format="%s"):
    """ndarray.tofile: the values written to a file (waits for them)."""
    self.asnumpy().tofile(fid, sep=sep, format=format)


def _tobytes(self, order="C"):
    """ndarray.tobytes: the values' bytes (waits for them)."""
    return self.asnumpy().tobytes(order=order)


def install():
    """Attach the protocol and the methods to NDArray (idempotent)."""
    NDArray.__array_function__ = array_function
    NDArray.fill = _fill
    NDArray.itemsize = property(_itemsize, doc=_itemsize.__doc__)
    NDArray.flat = property(_get_flat, _set_flat, doc=_get_flat.__doc__)
    NDArray.flags = property(_flags, doc=_flags.__doc__)
    NDArray.item = _item
    NDArray.tofile = _tofile
    NDArray.tobytes = _tobytes
    NDArray.__format__ = _format
    NDArray.__round__ = _round

