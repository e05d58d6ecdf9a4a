"""NumPy's polynomial functions as ops: poly, polyadd, polysub, polyder, polyint, polyval and
polyfit, each one op whose kernel is NumPy's own function.

Two kinds of inference, both touching no real data:

* ``CoefficientFunction`` (poly, polyadd, polysub, polyder, polyint): the inputs are
  coefficient arrays, whose lengths are the whole story; NumPy's own call on arrays of ones
  of the real shapes gives the output's shape, its dtype and NumPy's errors. (The plan memo
  runs that call once per signature; coefficient arrays are short.) These functions trim
  nothing, so the result's shape never depends on the values.
* polyval's output shape is ``x``'s broadcast against the trailing shape of ``p``;
  ``PolyfitFunction`` probes NumPy's polyfit on well-posed stand-ins (distinct abscissas,
  lengths capped just above ``deg + 2`` so the checks of lengths against the order keep
  their answers) and takes the shapes from ``deg`` and ``y``.

What only the values decide is not here: polymul and polydiv trim leading zeros, roots and
the poly of complex zeros or of a matrix choose their length or dtype by the values; the
array layer computes those at the call (``ndarray/families/polynomials.py``).
"""
from __future__ import annotations

import operator

import numpy as np

from ..dtypes import check_dtype, is_array_spec
from ..shapes import shape_of
from .numpy_functions import NumpyFunction, quiet

__all__ = ["COEFFICIENT_FUNCTIONS", "register_all"]

COEFFICIENT_FUNCTIONS = {"poly": (np.poly, ("seq_of_zeros",)),
                         "polyadd": (np.polyadd, ("a1", "a2")),
                         "polysub": (np.polysub, ("a1", "a2")),
                         "polyder": (np.polyder, ("p",)),
                         "polyint": (np.polyint, ("p",))}
"""op name -> (NumPy's function, its positional array parameters)."""


def _ones_like_spec(value):
    if is_array_spec(value):
        return np.ones(shape_of(value), check_dtype(value.dtype))
    return value


class CoefficientFunction(NumpyFunction):
    """A function of coefficient arrays: NumPy's call on ones of the real shapes decides
    the output (see the module docstring)."""

    def __init__(self, name, function, positional):
        super().__init__(name, function, None, positional=positional,
                         doc=f"numpy.{name} on coefficient arrays")

    def infer(self, *inputs, arrays=(), out_dtype=None, **params):
        with quiet():
            result = np.asarray(self.function(*map(_ones_like_spec, inputs), **params))
        return [(result.shape, result.dtype)]


def _polyval_shapes(shapes, params):
    p, x = shapes["p"], shapes["x"]
    return [np.broadcast_shapes(x, p[1:]) if p and p[0] else x]


def _capped(lengths, cap):
    """Each length, those above ``cap`` made cap + their rank (unequal ones stay unequal)."""
    above = sorted({n for n in lengths if n > cap})
    return [n if n <= cap else cap + 1 + above.index(n) for n in lengths]


class PolyfitFunction(NumpyFunction):
    """numpy.polyfit(x, y, deg, rcond, w=, cov=) with ``full`` False: the coefficients,
    (deg + 1,) + y.shape[1:], and with ``cov`` their covariance matrices, one per column of a
    2-d ``y`` (``cov='unscaled'``: one, NumPy's ``(deg + 1, deg + 1, 1)``)."""

    def __init__(self):
        super().__init__("polyfit", np.polyfit, self.shapes_of, positional=("x", "y"),
                         num_outputs=lambda *inputs_and_params:
                         2 if inputs_and_params[-1].get("cov") else 1,
                         doc="numpy.polyfit(x, y, deg, rcond, w=, cov=): full=False")

    @staticmethod
    def shapes_of(shapes, params):
        order = int(params["deg"]) + 1
        rest = tuple(shapes["y"][1:])
        coefficients = [(order,) + rest]
        cov = params.get("cov")
        if not cov:
            return coefficients
        if cov == "unscaled" and rest:
            rest = (1,)  # NumPy's unscaled matrix is not scaled per column
        return coefficients + [(order, order) + rest]

    def infer(self, *inputs, arrays=(), out_dtype=None, **params):
        names = self.names(inputs, arrays)
        try:
            cap = max(operator.index(int(params.get("deg"))), 0) + 3
        except (TypeError, ValueError):
            cap = 3  # NumPy's call below raises its own error for that deg
        specs = [shape_of(v) if is_array_spec(v) else np.shape(v) for v in inputs]
        firsts = _capped([s[0] if s else 1 for s in specs], cap)
        stand_ins = []
        for name, value, shape, first in zip(names, inputs, specs, firsts):
            dtype = check_dtype(value.dtype) if is_array_spec(value) else np.asarray(value).dtype
            shape = (first,) + tuple(shape[1:]) if shape else ()
            distinct = name == "x" and len(shape) == 1  # abscissas: a well-posed fit
            filled = np.arange(1.0, first + 1) if distinct else np.ones(shape)
            stand_ins.append(filled.astype(dtype))
        args, keywords = self.call_arguments(stand_ins, arrays)
        with quiet():
            result = self.function(*args, **keywords, **params)
        results = result if isinstance(result, tuple) else (result,)
        shapes = self.shapes_of(dict(zip(names, specs)), params)
        return [(shape, np.asarray(r).dtype) for shape, r in zip(shapes, results)]


def _functions():
    made = [CoefficientFunction(name, function, positional)
            for name, (function, positional) in COEFFICIENT_FUNCTIONS.items()]
    made.append(NumpyFunction("polyval", np.polyval, _polyval_shapes, positional=("p", "x"),
                              doc="numpy.polyval(p, x)"))
    made.append(PolyfitFunction())
    return made


def register_all() -> None:
    for function in _functions():
        function.register()
