"""Shape arithmetic for infer functions: broadcasting and axis handling."""
from __future__ import annotations

import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from .dtypes import is_array_spec


def shape_of(value) -> tuple:
    """Shape of an array spec; Python scalars are 0-d."""
    return tuple(int(n) for n in value.shape) if is_array_spec(value) else ()


def broadcast_shapes(*shapes) -> tuple:
    """NumPy broadcasting, with an error that names every shape involved."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        listed = ", ".join(str(tuple(s)) for s in shapes)
        raise ValueError(f"operands could not be broadcast together with shapes {listed}") from None


def check_shape(shape) -> tuple:
    """A shape argument as NumPy's creation functions take it (an int or a sequence of ints),
    as a tuple of Python ints; NumPy's TypeError or ValueError otherwise."""
    if type(shape) is int and shape >= 0:
        return (shape,)
    if type(shape) is tuple:
        for n in shape:
            if type(n) is not int or n < 0:
                break
        else:
            return shape
    if isinstance(shape, (bool, np.bool_)):
        raise TypeError(f"expected a sequence of integers or a single integer, got '{shape}'")
    if shape is None:
        raise TypeError("Use () not None as shape arguments")
    try:
        dims = (operator.index(shape),)
    except TypeError:
        if isinstance(shape, str) or not hasattr(shape, "__iter__"):
            if isinstance(shape, str):
                raise TypeError(f"'{type(shape).__name__}' object cannot be interpreted as an "
                                "integer") from None
            raise TypeError(f"expected a sequence of integers or a single integer, "
                            f"got '{shape}'") from None
        # NumPy's rules for the entries: bools are refused, bytes are a sequence of ints
        if any(isinstance(n, (bool, np.bool_)) for n in shape):
            raise TypeError("an integer is required") from None
        dims = tuple(operator.index(n) for n in shape)
    if any(n < 0 for n in dims):
        raise ValueError("negative dimensions are not allowed")
    return dims


def normalize_axes(axis, ndim: int) -> tuple:
    """None -> all axes; int or tuple -> sorted non-negative tuple (AxisError if bad)."""
    if axis is None:
        return tuple(range(ndim))
    # NumPy's reductions take an int or a tuple of ints: a bool, a list or an array is
    # its TypeError (normalize_axis_tuple alone would take them)
    for part in axis if type(axis) is tuple else (axis,):
        if isinstance(part, (bool, np.bool_)):
            raise TypeError("an integer is required")
        operator.index(part)
    return tuple(sorted(normalize_axis_tuple(axis, ndim)))


def reduced_shape(shape: tuple, axes: tuple, keepdims: bool) -> tuple:
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


__all__ = ["shape_of", "broadcast_shapes", "check_shape", "normalize_axes", "normalize_axis_index",
           "reduced_shape", "c_strides", "f_strides"]


_C_STRIDES_LIMIT = 4096
_c_strides = {}  # (shape, itemsize) -> c_strides: an array's ``strides`` and ``.T`` read it


def c_strides(shape, itemsize) -> tuple:
    """The byte strides of a C-contiguous array of ``shape`` (an empty axis counts as 1)."""
    key = (shape, itemsize) if type(shape) is tuple else None
    found = None if key is None else _c_strides.get(key)
    if found is None:
        strides, step = [], itemsize
        for n in reversed(shape):
            strides.append(step)
            step *= max(n, 1)
        found = tuple(reversed(strides))
        if key is not None:
            if len(_c_strides) >= _C_STRIDES_LIMIT:
                _c_strides.clear()
            _c_strides[key] = found
    return found


def f_strides(shape, itemsize) -> tuple:
    """The byte strides of a Fortran-contiguous array of ``shape``: its transpose's C strides,
    reversed."""
    return c_strides(shape[::-1], itemsize)[::-1]
