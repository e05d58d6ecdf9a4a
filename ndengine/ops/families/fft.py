"""numpy.fft's transforms as ops ("fft.fft", "fft.rfftn", ...), each run by NumPy's function.

Inference does no work proportional to the data. The shapes follow NumPy's own steps: every
transform is a chain of 1-d transforms along one axis each, of three kinds,

* ``c2c`` (fft, ifft): ``n`` points in, ``n`` out (``n`` defaults to the axis' length);
* ``r2c`` (rfft, ihfft): ``n`` real points in, ``n // 2 + 1`` out;
* ``c2r`` (irfft, hfft): ``n // 2 + 1`` points in, ``n`` real out (``n`` defaults to
  ``2 * (length - 1)``),

and the n-d transforms run them in NumPy's order (``fftn``: c2c from the last axis to the
first; ``rfftn``: r2c on the last axis, then c2c; ``irfftn``: c2c on all but the last axis,
then c2r on it), with ``s``/``axes`` read as NumPy 2's ``_cook_nd_args`` reads them (``-1``:
the axis' length; ``None``: that step's default). Each step checks what NumPy's does, in its
order: the axis' length (IndexError), ``n < 1`` (ValueError), ``norm`` (ValueError), the axis
(AxisError). The dtypes are NumPy's, from the transform of a tiny array of the input's dtype
(one dimension per step, at most two: float16 through two steps of irfftn is float32, through
one it stays float16), which also raises NumPy's TypeError for a complex input of rfft.
"""
from __future__ import annotations

import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ..dtypes import check_dtype
from .numpy_operators import numpy_operator
from ..shapes import shape_of

__all__ = ["ONE_AXIS", "MANY_AXES", "explicit_s", "register_all"]

# name: the kind of its 1-d transform, or of the n-d transform's chain
ONE_AXIS = {"fft": "c2c", "ifft": "c2c", "rfft": "r2c", "irfft": "c2r", "hfft": "c2r",
            "ihfft": "r2c"}
MANY_AXES = {"fft2": "c2c", "ifft2": "c2c", "fftn": "c2c", "ifftn": "c2c", "rfft2": "r2c",
             "rfftn": "r2c", "irfft2": "c2r", "irfftn": "c2r"}
NORMS = (None, "backward", "ortho", "forward")


def check_norm(norm):
    if norm not in NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or '
                         '"forward".')


def axis_step(shape, n, axis, kind, norm):
    """(the shape after one 1-d transform of ``kind`` along ``axis``, its ``n``)."""
    if n is None:
        length = shape[axis]  # NumPy reads it before checking the axis: IndexError
        n = (length - 1) * 2 if kind == "c2r" else length
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    check_norm(norm)
    axis = normalize_axis_index(axis, len(shape))
    n = operator.index(n)  # NumPy's TypeError for n=4.0, when it makes the output
    return shape[:axis] + (n // 2 + 1 if kind == "r2c" else n,) + shape[axis + 1:], n


def cook_s_axes(shape, s, axes, kind):
    """NumPy 2's ``_cook_nd_args`` without its deprecation warnings (the API layer gives
    them): ``(s, axes)`` as lists, an entry of ``s`` None where that step's default applies."""
    shapeless = s is None
    if shapeless:
        s = list(shape) if axes is None else [int(n) for n in np.take(shape, axes)]
    s = list(s)
    axes = list(range(-len(s), 0)) if axes is None else list(axes)
    if len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    if kind == "c2r" and shapeless:
        s[-1] = (shape[axes[-1]] - 1) * 2
    return [shape[axis] if n == -1 else n for n, axis in zip(s, axes)], axes


def chain(kind, count):
    """(step kind, index into s/axes) of an n-d transform's 1-d steps, in NumPy's order;
    ``r2c``/``c2r`` with no axes index -1, NumPy's IndexError."""
    if kind == "c2c":
        return [("c2c", i) for i in reversed(range(count))]
    if kind == "r2c":
        return [("r2c", count - 1)] + [("c2c", i) for i in range(count - 2, -1, -1)]
    return [("c2c", i) for i in range(count - 1)] + [("c2r", count - 1)]


def _refuse_complex(dtype):
    """NumPy's own TypeError for complex input to a real-input transform."""
    with np.errstate(all="ignore"):
        np.fft.rfft(np.zeros(1, check_dtype(dtype)), n=1)


def run_chain(name, shape, dtype, s, axes, norm):
    """(result shape, the ``n`` of each entry of ``s``, axes list): NumPy's checks in order."""
    kind = MANY_AXES[name]
    s, axes = cook_s_axes(shape, s, axes, kind)
    used = list(s)
    for step, (step_kind, i) in enumerate(chain(kind, len(axes))):
        shape, used[i] = axis_step(shape, s[i], axes[i], step_kind, norm)
        if step == 0 and step_kind == "r2c":
            _refuse_complex(dtype)
    return shape, used, axes


def explicit_s(name, shape, dtype, s, axes, norm):
    """``(s, axes)`` with every entry of ``s`` an int and ``axes`` given: what NumPy computes
    from the call's, without its warnings (the op then runs NumPy's function on them)."""
    _, used, axes = run_chain(name, shape, dtype, s, axes, norm)
    return tuple(used), tuple(axes)


def _one_axis_shapes(name):
    def shapes(a, *, n=None, axis=-1, norm=None):
        shape, _ = axis_step(shape_of(a), n, axis, ONE_AXIS[name], norm)
        if ONE_AXIS[name] == "r2c":
            _refuse_complex(a.dtype)
        return [shape]
    return shapes


def _many_axes_shapes(name, default_axes):
    def shapes(a, *, s=None, axes=default_axes, norm=None):
        return [run_chain(name, shape_of(a), a.dtype, s, axes, norm)[0]]
    return shapes


def _probe(function, dtype, steps, norm):
    """NumPy's result dtype for ``steps`` 1-d steps (two and more behave alike)."""
    dtype = check_dtype(dtype)
    with np.errstate(all="ignore"):
        if function.__name__ in ONE_AXIS:
            result = function(np.zeros(2, dtype), n=2, norm=norm)
        else:
            steps = min(steps, 2)
            result = function(np.zeros((2,) * steps, dtype), s=(2,) * steps,
                              axes=tuple(range(steps)), norm=norm)
    return [check_dtype(result.dtype)]


def _one_axis_dtypes(function):
    def dtypes(a, *, n=None, axis=-1, norm=None):
        return _probe(function, a.dtype, 1, norm)
    return dtypes


def _many_axes_dtypes(function, default_axes):
    def dtypes(a, *, s=None, axes=default_axes, norm=None):
        count = len(shape_of(a)) if s is None and axes is None else \
            len(axes if axes is not None else s)
        return _probe(function, a.dtype, count, norm)
    return dtypes


def register_all() -> None:
    for name in ONE_AXIS:
        function = getattr(np.fft, name)
        numpy_operator(f"fft.{name}", function, _one_axis_shapes(name),
                       dtypes=_one_axis_dtypes(function), num_inputs=1,
                       doc=f"numpy.fft.{name}, run by NumPy inside the pushed op")
    for name in MANY_AXES:
        function = getattr(np.fft, name)
        default_axes = (-2, -1) if name.endswith("2") else None
        numpy_operator(f"fft.{name}", function, _many_axes_shapes(name, default_axes),
                       dtypes=_many_axes_dtypes(function, default_axes), num_inputs=1,
                       doc=f"numpy.fft.{name}, run by NumPy inside the pushed op")
