"""Index keys as NDArray's ``__getitem__``/``__setitem__`` (array_methods.py) read them: basic
or not, one element or not, and frozen (copied) so that a queued op selects what the call
named. Integer NDArray index arrays are not read (no wait): they stay in the key, and
``index_inputs`` makes them inputs of the pushed op (ops/families/indexing.py), whose engine
read dependency freezes them; boolean and 0-d NDArray indices are read at the call (their
values decide the result's shape, or make the key basic)."""
import numpy as np
try:  # the C function, without the dispatch layer (half the cost on a small mask)
    from numpy._core._multiarray_umath import count_nonzero as _count_nonzero
except ImportError:  # pragma: no cover - another NumPy layout
    from numpy import count_nonzero as _count_nonzero

from ..ops.families.indexing import IndexInput, MemoKey, outside_bounds as _outside
from .array import NDArray

__all__ = ["normalize_key", "index_inputs", "is_basic_key", "is_element_key",
           "is_whole_element_key", "drop_leading_ones", "memo_key"]

def is_element_key(key):
    """No slice, None or Ellipsis: of a basic key, an int for each axis it names."""
    if type(key) is not tuple:
        return not (type(key) is slice or key is None or key is Ellipsis)
    for part in key:  # a loop: this runs on every basic index
        if type(part) is slice or part is None or part is Ellipsis:
            return False
    return True


def is_whole_element_key(key, ndim):
    """A basic key with an int for every axis (``()`` for a 0-d array): NumPy's scalar."""
    if type(key) is tuple:
        return len(key) == ndim and is_element_key(key)
    return ndim == 1 and is_element_key(key)


def drop_leading_ones(value, ndim):
    """NumPy's setitem broadcasting: a value may have extra leading dims of size 1."""
    extra = len(value.shape) - ndim
    if all(n == 1 for n in value.shape[:extra]):
        return value.reshape(value.shape[extra:])
    return value  # the copy's infer raises NumPy's broadcast error


_BASIC_PART_TYPES = frozenset((int, slice, type(None), type(Ellipsis)))


def normalize_key(key):
    """The key as the op will use it when it runs: boolean and 0-d NDArray indices become
    NumPy arrays (that waits for them), integer ones stay, and NumPy arrays and lists are
    copied, so that a caller who reuses or
    changes them after the call does not change what the queued op selects."""
    kind = type(key)
    if kind is int or kind is slice:
        return key
    if kind is tuple:
        for part in key:
            if type(part) not in _BASIC_PART_TYPES:
                return tuple([_frozen_index(part) for part in key])
        return key
    if kind is list:
        return _list_index(key)  # NumPy treats a list key as one index array
    return _frozen_index(key)


def _list_index(part):
    index = np.array(part)
    if index.size == 0 and index.dtype == np.float64:
        return index.astype(np.intp)  # an empty list is an empty integer index (NumPy)
    return index


def index_inputs(key, ctx):
    """An advanced (normalized) key's integer NDArray parts as op inputs: the key with an
    ``IndexInput`` in place of each, and the arrays, on ``ctx`` (moved by a pushed copy when
    they are elsewhere); ``(key, ())`` when it has none."""
    single = type(key) is NDArray
    if not single and type(key) is not tuple:
        return key, ()
    parts, arrays = [], []
    for part in (key,) if single else key:
        if type(part) is NDArray:
            parts.append(IndexInput(len(arrays), part.dtype, part.shape))
            arrays.append(part.as_in_context(ctx))
        else:
            parts.append(part)
    if not arrays:
        return key, ()
    return (parts[0] if single else tuple(parts)), arrays


def _frozen_index(part):
    if isinstance(part, NDArray):
        if part.shape and part.dtype.kind in "iu":
            return part  # an op input (index_inputs): the engine orders later writes after
        part = part.asnumpy()  # a fresh copy
    elif isinstance(part, np.ndarray):
        part = part.copy()
    else:
        return _list_index(part) if isinstance(part, list) else part
    if not part.ndim and part.dtype.kind in "iu":
        return int(part)  # a 0-d integer array indexes as an integer (NumPy)
    return part


def is_basic_key(key):
    parts = key if type(key) is tuple else (key,)
    for part in parts:
        kind = type(part)
        if kind is int or kind is slice or part is None or part is Ellipsis:
            continue  # the common parts first: this runs on every index
        if isinstance(part, (int, np.integer, slice)) and not isinstance(part, (bool, np.bool_)):
            continue
        return False
    return True


def memo_key(key, shape):
    """``key`` (normalized: index arrays are NumPy arrays or ``IndexInput`` places) as a
    ``MemoKey`` (ops/families/indexing.py) when it is made of ints, slices and integer index
    arrays (an int or an array at least; NumPy's arrays and ints in bounds), one per axis of
    ``shape`` from the first; else ``key`` itself."""
    parts = key if type(key) is tuple else (key,)
    if len(parts) > len(shape):
        return key  # inference raises NumPy's "too many indices"
    if len(parts) == 1 and type(parts[0]) is np.ndarray and parts[0].dtype.kind == "b":
        return _mask_key(key, parts[0], shape)
    spec = []
    memo = False
    for axis in range(len(parts)):
        part = parts[axis]
        size = shape[axis]
        kind = type(part)
        if kind is int or (kind is not np.bool_ and isinstance(part, np.integer)):
            if not -size <= part < size:
                return key  # inference raises NumPy's IndexError
            spec.append(kind)  # (its value changes no shape)
            memo = True
        elif kind is slice:
            spec.append((slice, type(part.start), part.start, type(part.stop), part.stop,
                         type(part.step), part.step))
        elif kind is np.ndarray:
            if part.dtype.kind not in "iu" or _outside(part, size):  # (a mask among others)
                return key  # a mask (its values give the shape), or inference's IndexError
            spec.append((part.dtype, part.shape))
            memo = True
        elif kind is IndexInput:
            spec.append(part.spec())  # bounds: checked by the kernel when it runs
            memo = True
        else:
            return key
    return MemoKey(parts, tuple(spec)) if memo else key


def _mask_key(key, mask, shape):
    """A key of one boolean mask of the array's leading axes (``x[x > 0]``, ``x[m] = 0``) as
    a ``MemoKey`` whose spec holds the mask's shape and its count (all the result's shape
    depends on: indexing.mask_region); a mask of another shape stays as it is (NumPy's
    IndexError from inference)."""
    ndim = mask.ndim
    if ndim == 0 or mask.shape != tuple(shape[:ndim]):
        return key
    return MemoKey((mask,), ((np.bool_, mask.shape, int(_count_nonzero(mask))),))
