"""NumPy's signal, interpolation, covariance, gradient and index-conversion functions as ops,
run by NumPy's own functions (see ``numpy_functions``): convolve, correlate, interp, cov,
corrcoef, gradient, unravel_index and ravel_multi_index.

Each op's output shapes come from its shape rule on the real shapes; its dtypes and NumPy's
errors for bad arguments (an unknown mode, a 2-d ``a``, a float index, mismatched lengths)
from NumPy's call on stand-ins at the call. What only the values decide (an index out of
bounds, a negative frequency weight) raises when the op runs, from NumPy's own check.
gradient's stand-ins are its own (``GradientFunction``): NumPy needs ``edge_order + 1``
(at most 3) points per axis, so each length is cut to 3 at most, and a coordinate array
keeps whether its length matches its axis. Array-valued keyword arguments (cov's ``y``, ``fweights``, ``aweights``) travel as inputs
named by the ``arrays`` param.
"""
from __future__ import annotations

import math

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from ..dtypes import check_dtype, is_array_spec
from ..shapes import shape_of
from .numpy_functions import NumpyFunction, quiet

__all__ = ["register_all"]


def _length(shape):
    return math.prod(shape)  # NumPy's convolve takes a scalar as a length-1 array


def _convolve_shapes(default_mode):
    """full: n + m - 1; same: max(n, m); valid: max - min + 1 (NumPy's modes 2, 1, 0)."""
    def rule(shapes, params):
        n, m = _length(shapes["a"]), _length(shapes["v"])
        mode = params.get("mode", default_mode)
        mode = {0: "valid", 1: "same", 2: "full"}.get(mode, mode)
        if mode[0] == "f":
            return [(n + m - 1,)]
        if mode[0] == "s":
            return [(max(n, m),)]
        return [(max(n, m) - min(n, m) + 1,)]
    return rule


def _interp_shapes(shapes, params):
    return [shapes["x"]]


def _variables(shape, rowvar, is_m):
    """How many variables (rows of NumPy's ``atleast_2d`` after its transpose) an array holds.
    NumPy transposes ``m`` for ``rowvar=False`` unless it is 1-d, and ``y`` unless it has one
    row."""
    rows = shape if len(shape) == 2 else (1, _length(shape))
    transposed = not rowvar and (len(shape) != 1 if is_m else rows[0] != 1)
    return rows[1] if transposed else rows[0]


def _covariance_shapes(shapes, params):
    """NumPy's result is a (variables, variables) matrix, squeezed (one variable: 0-d); no
    variable in ``m``: an empty (0, 0)."""
    rowvar = params.get("rowvar", True)
    count = _variables(shapes["m"], rowvar, True)
    if count == 0:
        return [(0, 0)]
    if "y" in shapes:
        count += _variables(shapes["y"], rowvar, False)
    return [() if count == 1 else (count, count)]


def _unravel_shapes(shapes, params):
    dims = params["shape"]
    return [shapes["indices"]] * (1 if isinstance(dims, (int, np.integer)) else len(dims))


def _ravel_multi_index(*multi_index, dims, mode="raise", order="C"):
    """NumPy's ravel_multi_index over the op's inputs (one per dimension)."""
    return np.ravel_multi_index(multi_index, dims, mode=mode, order=order)


def _ravel_shapes(shapes, params):
    return [np.broadcast_shapes(*shapes.values())]


class GradientFunction(NumpyFunction):
    """numpy.gradient(f, *varargs, axis, edge_order): one output (f's shape) per axis; the
    spacings (scalars or coordinate arrays) are the inputs after ``f``."""

    def __init__(self):
        super().__init__("gradient", np.gradient, None, positional=("f",) + _SPACING_NAMES,
                         num_outputs=lambda *inputs_and_params: len(_gradient_axes(
                             shape_of(inputs_and_params[0]), inputs_and_params[-1])),
                         doc="numpy.gradient(f, *varargs, axis, edge_order): one output "
                             "per axis")

    def infer(self, f, *spacing, axis=None, edge_order=1):
        shape = shape_of(f)
        short = tuple(min(n, 3) for n in shape)  # enough points for any edge_order
        try:
            axes = _gradient_axes(shape, {"axis": axis})
        except (ValueError, TypeError):
            axes = ()  # NumPy's call below raises NumPy's error for that axis
        stand_ins = [np.ones(short, check_dtype(f.dtype))]
        for i, distances in enumerate(spacing):
            if not is_array_spec(distances):  # a Python scalar spacing
                stand_ins.append(distances)
                continue
            lengths = shape_of(distances)
            if len(lengths) == 1 and i < len(axes):  # coordinates: a match stays a match
                along = short[axes[i]]
                lengths = (along if lengths[0] == shape[axes[i]] else along + 1,)
            stand_ins.append(np.arange(math.prod(lengths), dtype=check_dtype(
                distances.dtype)).reshape(lengths))
        with quiet():
            result = np.gradient(*stand_ins, axis=axis, edge_order=edge_order)
        results = result if isinstance(result, tuple) else (result,)
        return [(shape, np.asarray(r).dtype) for r in results]


def _gradient_axes(shape, params):
    axis = params.get("axis")
    return tuple(range(len(shape))) if axis is None else normalize_axis_tuple(axis, len(shape))


_SPACING_NAMES = tuple(f"spacing{i}" for i in range(64))
_INDEX_NAMES = tuple(f"index{i}" for i in range(64))  # NumPy's limit on dimensions


def _functions():
    return [
        NumpyFunction("convolve", np.convolve, _convolve_shapes("full"), positional=("a", "v"),
                      doc="numpy.convolve(a, v, mode)"),
        NumpyFunction("correlate", np.correlate, _convolve_shapes("valid"),
                      positional=("a", "v"), doc="numpy.correlate(a, v, mode)"),
        NumpyFunction("interp", np.interp, _interp_shapes, positional=("x", "xp", "fp"),
                      doc="numpy.interp(x, xp, fp, left, right, period)"),
        NumpyFunction("cov", np.cov, _covariance_shapes, positional=("m",),
                      doc="numpy.cov(m, y, rowvar, bias, ddof, fweights, aweights, dtype)"),
        NumpyFunction("corrcoef", np.corrcoef, _covariance_shapes, positional=("m",),
                      doc="numpy.corrcoef(x, y, rowvar, dtype)"),
        GradientFunction(),
        NumpyFunction("unravel_index", np.unravel_index, _unravel_shapes,
                      positional=("indices",), fills={"indices": 0},
                      num_outputs=lambda *inputs_and_params: len(_unravel_shapes(
                          {"indices": ()}, inputs_and_params[-1])),
                      doc="numpy.unravel_index(indices, shape, order): one output per "
                          "dimension"),
        NumpyFunction("ravel_multi_index", _ravel_multi_index, _ravel_shapes,
                      positional=_INDEX_NAMES, fills=dict.fromkeys(_INDEX_NAMES, 0),
                      doc="numpy.ravel_multi_index(multi_index, dims, mode, order): one "
                          "input per dimension"),
    ]


def register_all() -> None:
    for function in _functions():
        function.register()
