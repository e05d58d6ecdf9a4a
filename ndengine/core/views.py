"""Basic views: ``x[key]`` for a key of ints, slices, None and Ellipsis that is not an int for
every axis (NumPy answers it with a view, never a scalar read from memory), as
array_methods.py's ``x[key]`` and ``x[key] = v`` make and compare them.

The geometry (shape, byte offset, byte strides) is NumPy's: computed from the strides for keys
of ints and int slices (`_direct_geometry`, NumPy's rule), else asked of the array's stand-in
(array.py's ``_fake``); kept per (the array's geometry, the key) in ``_slicings``: a loop's
``u[1:-1]`` costs one dict lookup. A CPU array's view also carries NumPy's own view of its
memory for the key (``data[key]``) when the array's exists, which the view's ``_data`` would
otherwise make later through the ndarray constructor, at about ten times the cost.
"""
from ..ops.shapes import c_strides as _c_strides
from .array import _FAKES_LIMIT, _new_view
from .chunk import Chunk, SmallChunk
from .tape import RECORDING as _RECORDING, note_view as _note_view

__all__ = ["basic_view", "view_geometry"]

_slicings = {}  # _slicing_key -> (shape, offset from the parent's or None: 0, strides)


def basic_view(array, key, taped=True):
    """The view NumPy gives for ``array[key]``, a basic key that is not an int for every axis
    (NumPy answers it with a view, never a scalar read from memory): its geometry from
    `view_geometry`, and, for a CPU array whose NumPy view exists, NumPy's own view of the
    key (what ``_data`` would make later, at a tenth of the cost). On autograd's tape while
    recording, unless ``taped`` is False (a view for our own use)."""
    shape, offset, strides = view_geometry(array, key)
    chunk = array._chunk
    data = array._view_cache  # (a pool chunk's: made by a run or a read, its memory taken)
    if data is not None and (type(chunk) is SmallChunk or type(chunk) is Chunk
                             and chunk.ctx.device_type == "cpu"):
        data = data[key]
    else:
        data = None
    base = array._base
    view = _new_view(chunk, shape, array.dtype, offset, strides, array if base is None else base,
                     data)
    if taped and _RECORDING[0]:
        _note_view(array, view)
    return view


def view_geometry(array, key):
    """(shape, byte offset, byte strides) of ``array[key]``, a basic key that is not an int
    for every axis, as NumPy computes it: from the strides for ints and slices
    (`_direct_geometry`), else on the stand-in (``_fake``); kept per (the array's geometry,
    key) (``_slicings``): a loop's ``u[1:-1]`` costs one dict lookup."""
    slicing = _slicing_key(array, key)
    memo = _slicings
    found = None if slicing is None else memo.get(slicing)
    if found is None:
        found = _direct_geometry(array, key)
        if found is None:
            found = _asked_of_numpy(array, key)
        if slicing is not None:
            if len(memo) >= _FAKES_LIMIT:
                memo.clear()
            memo[slicing] = found
    shape, delta, strides = found
    return shape, 0 if delta is None else array._offset + delta, strides


def _direct_geometry(array, key):
    """The geometry of a key of in-bounds ints and slices of ints for the leading axes (an
    Ellipsis may end it: ``x[i, j] = v`` writes the element's 0-d view ``x[i, j, ...]``),
    computed as NumPy computes it (a slice's bounds by Python's ``slice.indices``, NumPy's
    own rule; an int drops its axis), or None: the memo and NumPy's stand-in answer. In a
    loop the keys are new each time (``x[i]``, ``x[i:i + k]``): the memo would miss and ask
    NumPy each time."""
    parts = key if type(key) is tuple else (key,)
    count = len(parts)
    if count and parts[count - 1] is Ellipsis:
        count -= 1
    shape = array.shape
    if count == 0 or count > len(shape):
        return None
    strides = array._strides
    if strides is None:
        strides = _c_strides(shape, array.dtype.itemsize)
    delta = 0
    new_shape, new_strides = [], []
    for axis in range(count):
        part = parts[axis]
        size = shape[axis]
        kind = type(part)
        if kind is int:
            index = part
            if index < 0:
                index += size
            if not 0 <= index < size:
                return None  # NumPy's IndexError, from the stand-in
            delta += index * strides[axis]
        elif kind is slice and _slice_bounds(part) is not None and part.step != 0:
            first, stop, step = part.indices(size)
            length = len(range(first, stop, step))
            if not length:
                return None  # (NumPy gives an empty view strides of its own)
            delta += first * strides[axis]
            new_shape.append(length)
            new_strides.append(strides[axis] * step)
        else:
            return None
    rest = shape[count:]
    for size in rest:
        if size == 0:
            return None
    new_shape.extend(rest)
    new_strides.extend(strides[count:])
    return tuple(new_shape), delta, tuple(new_strides)  # (offset from the array's)


def _asked_of_numpy(array, key):
    """(shape, byte offset from the array's or None: 0, byte strides) of ``array[key]``, as
    NumPy's view of the stand-in gives them."""
    fake, base = array._fake()
    fake_view = fake[key]
    # an empty view's offset may point past the end of the (empty) buffer: None, offset 0
    delta = None if fake_view.size == 0 else fake_view.__array_interface__["data"][0] - base
    return fake_view.shape, delta, fake_view.strides


def _slicing_key(array, key):
    """A hashable stand-in for (``array``'s geometry, basic ``key``) when the key holds only
    ints, slices of ints and None, None and Ellipsis (a slice is unhashable before Python
    3.12); else None (the view is computed by NumPy each time)."""
    if type(key) is slice:  # the most common key first
        bounds = _slice_bounds(key)
        return None if bounds is None else (array.shape, array._strides, array.dtype, bounds)
    found = [array.shape, array._strides, array.dtype]
    for part in key if type(key) is tuple else (key,):
        kind = type(part)
        if kind is slice:
            bounds = _slice_bounds(part)
            if bounds is None:
                return None
            found.append(bounds)
        elif kind is int or part is None or part is Ellipsis:
            found.append(part)
        else:
            return None
    return tuple(found)


def _slice_bounds(part):
    """A slice's (start, stop, step) when each is an int or None, else None."""
    start, stop, step = part.start, part.stop, part.step
    if ((start is None or type(start) is int) and (stop is None or type(stop) is int)
            and (step is None or type(step) is int)):
        return (start, stop, step)
    return None
