"""take_index (x[key] as a copy) and assign_index (target[key] = value, in place).

``key`` is any NumPy index: ints, slices, None, Ellipsis, integer or boolean
arrays.  Inference indexes a zero-strided stand-in, so NumPy itself checks the
key and computes the shape without touching the data.

A key's index arrays make it unhashable, so such a call would miss the plan memo every time
(a minibatch ``X[idx]`` re-planned at every step).  ``memo_key`` gives keys of ints, slices
and integer index arrays a hashable form, ``MemoKey``: a tuple NumPy indexes with, which a
plan's key compares by its spec (each index array's dtype and shape, the other parts' values)
-- all the plan depends on.  A hit skips inference, so ``memo_key`` checks the bounds of the
index arrays at every call (NumPy's IndexError at the call, never at the run); a key it does
not cover (boolean masks, None, Ellipsis, out-of-bounds indices) stays as it was, planned at
each call by inference as before.
"""
from __future__ import annotations

import numpy as np

from ..dtypes import check_dtype, is_array_spec, result_type
from ..outputs import detach_overlapping, single_output, same_view
from ..registry import OpReq, add_operator, numpy_backed
from ..shapes import broadcast_shapes, shape_of


_lowest, _highest = np.minimum.reduce, np.maximum.reduce  # without ndarray.min's wrapper


class MemoKey(tuple):
    """An index key (a tuple NumPy indexes with) equal, as a plan's key part, to every key of
    the same spec (see the module docstring)."""

    def __new__(cls, parts, spec):
        self = super().__new__(cls, parts)
        self.spec = spec
        self.spec_hash = hash(spec)
        return self

    def __hash__(self):
        return self.spec_hash

    def __eq__(self, other):
        return type(other) is MemoKey and self.spec == other.spec

    def __ne__(self, other):
        return not self.__eq__(other)

    def __reduce__(self):
        return MemoKey, (tuple(self), self.spec)


def memo_key(key, shape: tuple):
    """``key`` (normalized: index arrays are NumPy arrays) as a ``MemoKey`` when it is made of
    ints, slices and in-bounds integer index arrays (one at least), one per axis of ``shape``
    from the first; else ``key`` itself."""
    parts = key if type(key) is tuple else (key,)
    if len(parts) > len(shape):
        return key  # inference raises NumPy's "too many indices"
    spec, arrays = [], False
    for part, size in zip(parts, shape):
        kind = type(part)
        if kind is np.ndarray:
            arrays = True
            if part.dtype.kind not in "iu" or (
                    part.size and (_lowest(part, None) < -size or _highest(part, None) >= size)):
                return key  # a mask (its values give the shape), or inference's IndexError
            spec.append((part.dtype, part.shape))
        elif kind is slice:
            spec.append((slice, _value_spec(part.start), _value_spec(part.stop),
                         _value_spec(part.step)))
        elif kind is int or (isinstance(part, np.integer) and kind is not np.bool_):
            spec.append((kind, part))
        else:
            return key
    return MemoKey(parts, tuple(spec)) if arrays else key  # ints alone hash as they are


def _value_spec(value):
    return type(value), value


def indexed_shape(shape: tuple, key) -> tuple:
    stand_in = np.broadcast_to(np.empty((), dtype=bool), shape)
    return tuple(stand_in[key].shape)


def infer_take(x, *, key):
    return [(indexed_shape(shape_of(x), key), result_type(x))]


def take_kernel(inputs, outputs, req, *, key):
    out, req = single_output(outputs, req)
    if req is OpReq.NULL:
        return
    x = np.asarray(inputs[0])
    selected = x[key]  # a view for basic keys, a new array for advanced ones
    if req is OpReq.ADD_TO:
        out += selected
    else:
        np.copyto(out, selected)  # NumPy copes with selected overlapping out


def setitem_value_shape(value_shape: tuple, region: tuple) -> tuple:
    """NumPy's setitem broadcasting: the value may have extra leading dims of size 1,
    dropped before it is broadcast to the indexed region."""
    extra = len(value_shape) - len(region)
    if extra > 0 and all(n == 1 for n in value_shape[:extra]):
        return value_shape[extra:]
    return value_shape


def infer_assign(target, value, *, key):
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


def assign_kernel(inputs, outputs, req, *, key):
    """out[key] = value; when out is not the target buffer, copy the target in first."""
    out, req = single_output(outputs, req)
    if req is OpReq.NULL:
        return
    if req is OpReq.ADD_TO:
        raise ValueError("assign_index writes in place; ADD_TO is not meaningful for it")
    target, value = inputs
    value = detach_overlapping([value], [out], allow_same_view=False)[0]
    target = np.asarray(target)
    if not same_view(target, out):
        np.copyto(out, target)
    out[key] = value


def register_all() -> None:
    add_operator(numpy_backed("take_index", num_inputs=1, kind="other", infer=infer_take,
                          doc="x[key] as a new array (any NumPy index)")
                 .set_kernel("cpu", take_kernel))
    add_operator(numpy_backed("assign_index", num_inputs=2, kind="other", infer=infer_assign,
                          inplace=((0, 0),), write_mode=OpReq.WRITE_INPLACE,
                          doc="target[key] = value, written into the target's buffer")
                 .set_kernel("cpu", assign_kernel))
