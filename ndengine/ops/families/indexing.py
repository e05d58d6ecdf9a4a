"""take_index (x[key] as a copy) and assign_index (target[key] = value, in place).

``key`` is any NumPy index: ints, slices, None, Ellipsis, integer or boolean
arrays.  Inference indexes a zero-strided stand-in, so NumPy itself checks the
key and computes the shape without touching the data.

A key's index arrays make it unhashable, so such a call would miss the plan memo every time
(a minibatch ``X[idx]`` re-planned at every step).  ``memo_key`` (core/keys.py, compiled with
the per-op path) gives keys of ints, slices and integer index arrays a hashable form,
``MemoKey``: a tuple NumPy indexes with, which a plan's key compares by its spec (each index
array's dtype and shape, the other parts' values) -- all the plan depends on.  An int is
compared by its type only: in bounds, its value changes no output shape, so reading element
after element (``x[i]``, ``a[i, j]`` in a loop) is one plan, not one per index (each a miss,
~15 us).  A hit skips inference, so ``memo_key`` checks the bounds of the index arrays and
ints at every call (NumPy's IndexError at the call, never at the run); a key it does not
cover (boolean masks, None, Ellipsis, out-of-bounds indices) stays as it was, planned at
each call by inference as before.

Index arrays that are NDArrays are not read at the call (a blocking wait, which would also
flush the thread's bulking window): each integer one becomes an INPUT of the pushed op (after
the data: ``take_index(x, *indices)``, ``assign_index(target, value, *indices)``), a read
dependency on the engine as in MXNet's ``take`` and PyTorch's index ops, and the key holds an
``IndexInput`` naming its position among them. Planning sees the placeholder's dtype and shape
only (inference indexes with a zero-strided stand-in; the memo compares by that spec), and the
kernel puts the actual index arrays in their places when it runs (``resolve_key``). Their
values are known only then, so an out-of-bounds index in an NDArray is no error at the call:
the op fails with NumPy's IndexError, which surfaces (with the op's name and the user's line)
at the next wait on its output, as in MXNet and PyTorch on CUDA. NumPy index arrays keep
their call-time bounds check; boolean NDArray masks (whose values give the output's shape)
are still read at the call.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..dtypes import check_dtype, is_array_spec, result_type
from ..outputs import detach_overlapping, single_output, same_view
from ..plans import key_by_spec
from ..registry import OpReq, add_operator, numpy_backed
from ..runtime.deferred_loops import bind
from ..runtime.disk_cache import NUMBA_CACHE
from ..shapes import broadcast_shapes, shape_of


@njit(nogil=True, cache=NUMBA_CACHE)
def _outside_loop(index, size):
    """Whether a 1-D index array has a value outside [-size, size): one pass, stopping at
    the first (NumPy's min and max reductions take two calls, ~0.9 us each on a minibatch's
    index)."""
    for value in index:
        if value < -size or value >= size:
            return True
    return False


def _outside_numpy(index, size):
    return np.minimum.reduce(index, None) < -size or np.maximum.reduce(index, None) >= size


# index dtype -> the check's slot (deferred_loops.bind): NumPy's reductions stand in while the
# loop compiles on the compile thread; then the loop is kept, with no trial (it is faster
# at every size). One Numba type per dtype: the slot is called with 1-D C-contiguous
# writeable arrays only, so no call compiles in the caller.
_outside_slots = {}


def outside_bounds(index, size):
    """Whether the integer array ``index`` has a value outside [-size, size)."""
    if not index.size:
        return False
    if not index.flags.writeable:  # another Numba type
        return _outside_numpy(index, size)
    flat = index.ravel()  # a view of a contiguous index (the key's own copy is one)
    slot = _outside_slots.get(flat.dtype)
    if slot is None:
        slot = _outside_slots.setdefault(
            flat.dtype, bind(_outside_loop, _outside_numpy, (flat.dtype,), measure=False))
    return slot[0](flat, size)


class IndexInput:
    """In a key, the place of the op's index input number ``position`` (counted from the
    first index input), an integer array of ``dtype`` and ``shape``."""
    __slots__ = ("position", "dtype", "shape")

    def __init__(self, position: int, dtype, shape: tuple):
        self.position, self.dtype, self.shape = position, dtype, shape

    def spec(self):
        return IndexInput, self.position, self.dtype, self.shape

    def __hash__(self):
        return hash(self.spec())

    def __eq__(self, other):
        return type(other) is IndexInput and self.spec() == other.spec()

    def __reduce__(self):
        return IndexInput, (self.position, self.dtype, self.shape)

    def __repr__(self):
        return f"IndexInput({self.position}, {self.dtype}, {self.shape})"


def resolve_key(key, indices):
    """``key`` with each ``IndexInput`` replaced by ``indices[position]`` (what ``make``
    gives: a NumPy view for the kernel, a zero-strided stand-in for inference)."""
    if type(key) is IndexInput:
        return indices[key.position]
    if not isinstance(key, tuple):
        return key
    return tuple(indices[part.position] if type(part) is IndexInput else part
                 for part in key)


def has_index_inputs(key) -> bool:
    parts = key if isinstance(key, tuple) else (key,)
    return any(type(part) is IndexInput for part in parts)


def _stand_in_key(key):
    """The key planning indexes with: each placeholder a zero-strided array of its spec
    (index 0: in bounds wherever any index is)."""
    if not has_index_inputs(key):
        return key
    parts = key if isinstance(key, tuple) else (key,)
    stand_ins = {part.position: _zero_strided(part.shape, part.dtype)
                 for part in parts if type(part) is IndexInput}
    return resolve_key(key, stand_ins)


@key_by_spec
class MemoKey(tuple):
    """An index key (a tuple NumPy indexes with) equal, as a plan's key part, to every key of
    the same spec (see the module docstring): plans key it by ``spec``."""

    def __new__(cls, parts, spec):
        self = super().__new__(cls, parts)
        self.spec = spec
        return self

    def __hash__(self):
        return hash(self.spec)

    def __eq__(self, other):
        return type(other) is MemoKey and self.spec == other.spec

    def __ne__(self, other):
        return not self.__eq__(other)

    def __reduce__(self):
        return MemoKey, (tuple(self), self.spec)


def indexed_shape(shape: tuple, key) -> tuple:
    stand_in = np.broadcast_to(np.empty((), dtype=bool), shape)
    return tuple(stand_in[key].shape)


def mask_region(key, shape: tuple):
    """The shape ``x[key]`` selects when ``key`` is one boolean mask of ``x``'s leading axes
    (a ``MemoKey`` whose spec holds its count: core/keys.py's ``memo_key``): the count, then
    the axes after the mask's, NumPy's rule, computed without a pass over the mask; else
    None."""
    if type(key) is not MemoKey or len(key.spec) != 1:
        return None
    part = key.spec[0]
    if type(part) is not tuple or part[0] is not np.bool_:
        return None
    _, mask_shape, count = part
    return (count,) + tuple(shape[len(mask_shape):])


def infer_take(x, *indices, key):
    shape = shape_of(x)
    region = mask_region(key, shape)
    if region is None:
        region = indexed_shape(shape, _stand_in_key(key))
    return [(region, result_type(x))]


def take_kernel(inputs, outputs, req, *, key):
    out, req = single_output(outputs, req)
    if req is OpReq.NULL:
        return
    x = inputs[0]
    if type(x) is not np.ndarray:
        x = np.asarray(x)
    rows = None
    if len(inputs) > 1:
        key = resolve_key(key, [np.asarray(index) for index in inputs[1:]])
        rows = _rows_of(key)  # an index NDArray: its bounds are checked here, when it runs
        if rows is not None and x.ndim and outside_bounds(rows, x.shape[0]):
            rows = None  # x[key] raises NumPy's IndexError
    elif (type(key) is MemoKey and len(key) == 1 and type(key[0]) is np.ndarray
          and key[0].dtype.kind != "b"):
        rows = key[0]  # memo_key checked its bounds at the call (a mask: x[key] below)
    if rows is not None and req is not OpReq.ADD_TO:
        # rows by one index array (``X[idx]``), in bounds: gathered straight into out, not
        # into a temporary copied after (a second pass); 'wrap' (unbuffered) reads what
        # 'raise' would. The method, not np.take: its dispatch layer costs twice NumPy's
        # gather of a minibatch
        x.take(rows, 0, out, "wrap")
        return
    selected = x[key]  # a view for basic keys, a new array (or an element) for advanced ones
    if req is OpReq.ADD_TO:
        out += selected
    else:
        out[...] = selected  # x's dtype; NumPy copes with selected overlapping out


def _rows_of(key):
    """The index array of a key that picks rows by one integer array (``X[idx]``), else
    None."""
    if isinstance(key, tuple):
        if len(key) != 1:
            return None
        key = key[0]
    return key if type(key) is np.ndarray and key.dtype.kind in "iu" else None


def setitem_value_shape(value_shape: tuple, region: tuple) -> tuple:
    """NumPy's setitem broadcasting: the value may have extra leading dims of size 1,
    dropped before it is broadcast to the indexed region."""
    extra = len(value_shape) - len(region)
    if extra > 0 and all(n == 1 for n in value_shape[:extra]):
        return value_shape[extra:]
    return value_shape


def infer_assign(target, value, *indices, key, accumulate=False):
    region = mask_region(key, shape_of(target))
    key = _stand_in_key(key)
    if region is None:
        region = indexed_shape(shape_of(target), key)
    value_shape = setitem_value_shape(shape_of(value), region)
    if len(value_shape) > len(region) or broadcast_shapes(value_shape, region) != region:
        raise ValueError(f"could not broadcast input array from shape {shape_of(value)} "
                         f"into shape {region}")
    # NumPy's own assignment on zero-strided stand-ins raises what it raises at the call
    # (a 2-d value through a boolean mask, ...); it writes one element, over and over.
    stand_in = _zero_strided(shape_of(target), check_dtype(target.dtype), writeable=True)
    stand_in[key] = (_zero_strided(shape_of(value), check_dtype(value.dtype))
                     if is_array_spec(value) else value)
    return [(shape_of(target), check_dtype(target.dtype))]


def _zero_strided(shape, dtype, writeable=False):
    return np.lib.stride_tricks.as_strided(np.zeros(1, dtype), shape, (0,) * len(shape),
                                           writeable=writeable)


def assign_kernel(inputs, outputs, req, *, key, accumulate=False):
    """out[key] = value (``accumulate``: ``numpy.add.at(out, key, value)``, repeats adding up,
    the gradient of take_index); when out is not the target buffer, copy the target in
    first."""
    out, req = single_output(outputs, req)
    if req is OpReq.NULL:
        return
    if req is OpReq.ADD_TO:
        raise ValueError("assign_index writes in place; ADD_TO is not meaningful for it")
    target, value, *indices = inputs
    # an index input or the value may be the target's own memory: read them before writing
    value, *indices = detach_overlapping([value, *indices], [out], allow_same_view=False)
    if indices:
        key = resolve_key(key, [np.asarray(index) for index in indices])
    target = np.asarray(target)
    if not same_view(target, out):
        np.copyto(out, target)
    if accumulate:
        np.add.at(out, key, value)
    else:
        out[key] = value


def register_all() -> None:
    add_operator(numpy_backed("take_index", num_inputs=None, kind="other", infer=infer_take,
                              sized_by_outputs=True,  # reads as many elements as it writes
                              doc="x[key] as a new array (any NumPy index)")
                 .set_kernel("cpu", take_kernel))
    add_operator(numpy_backed("assign_index", num_inputs=None, kind="other", infer=infer_assign,
                          inplace=((0, 0),), write_mode=OpReq.WRITE_INPLACE,
                          doc="target[key] = value, written into the target's buffer")
                 .set_kernel("cpu", assign_kernel))
