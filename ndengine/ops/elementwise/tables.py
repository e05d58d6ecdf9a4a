"""The element-wise ops' tables (name, Numba scalar function, NumPy ufunc giving the dtype
rules) and their registration (their gradients: ops/gradients/elementwise.py)."""
from __future__ import annotations

import operator

import numpy as np
from numpy._core import umath as _umath  # the clip ufunc behind np.clip

from . import functions as elementwise_functions
from . import kernels as ek
from . import ufunc_kernels as uk
from .operators import (
    ComparisonSpec, ElementwiseSpec, ReluSpec, RoundSpec, UnaryLikeSpec, WhereSpec)
from .power_clip import ClipSpec, PowerSpec
from .ufunc_specs import DivmodSpec, LogicalSpec, SignbitSpec

__all__ = ["UNARY_TABLE", "BINARY_TABLE", "LOGICAL_TABLE", "COMPARISONS", "register_all"]


# ------------------------------------------------------------------------ tables
# name, Numba scalar function, NumPy ufunc giving the dtype rules

UNARY_TABLE = [
    ("negative", ek.negative, np.negative),
    ("positive", ek.positive, np.positive),
    ("abs", ek.absolute, np.absolute),
    ("exp", ek.exp, np.exp),
    ("log", ek.log, np.log),
    ("log1p", ek.log1p, np.log1p),
    ("expm1", ek.expm1, np.expm1),
    ("sqrt", ek.sqrt, np.sqrt),
    ("square", ek.square, np.square),
    ("sin", ek.sin, np.sin),
    ("cos", ek.cos, np.cos),
    ("tan", ek.tan, np.tan),
    ("tanh", ek.tanh, np.tanh),
    ("arcsin", ek.arcsin, np.arcsin),
    ("arccos", ek.arccos, np.arccos),
    ("arctan", ek.arctan, np.arctan),
    ("sign", ek.sign, np.sign),
    ("floor", ek.floor, np.floor),
    ("ceil", ek.ceil, np.ceil),
    ("invert", ek.invert, np.invert),
    ("logical_not", ek.logical_not, np.logical_not),
    ("conjugate", ek.positive, np.conjugate),  # real dtypes: the value itself
    ("rint", ek.rint, np.rint),
    ("trunc", uk.trunc, np.trunc),
    ("fix", uk.trunc, np.trunc),  # numpy.fix (not a ufunc): trunc's values and dtypes
    ("fabs", uk.fabs, np.fabs),
    ("reciprocal", uk.reciprocal, np.reciprocal),
    ("isnan", uk.isnan, np.isnan),
    ("isinf", uk.isinf, np.isinf),
    ("isfinite", uk.isfinite, np.isfinite),
    ("deg2rad", uk.deg2rad, np.deg2rad),
    ("radians", uk.deg2rad, np.radians),
    ("rad2deg", uk.rad2deg, np.rad2deg),
    ("degrees", uk.rad2deg, np.degrees),
    # no Numba scalar: NumPy's loop (elementwise_run.NUMPY_UNARY)
    *((name, None, getattr(np, name)) for name in (
        "log2", "log10", "exp2", "cbrt", "sinh", "cosh", "arcsinh", "arccosh", "arctanh")),
]

BINARY_TABLE = [
    ("add", ek.add, np.add),
    ("subtract", ek.subtract, np.subtract),
    ("multiply", ek.multiply, np.multiply),
    ("true_divide", ek.true_divide, np.true_divide),
    ("floor_divide", ek.floor_divide, np.floor_divide),
    ("mod", ek.remainder, np.remainder),
    ("maximum", ek.maximum, np.maximum),
    ("minimum", ek.minimum, np.minimum),
    ("equal", ek.equal, np.equal),
    ("not_equal", ek.not_equal, np.not_equal),
    ("less", ek.less, np.less),
    ("less_equal", ek.less_equal, np.less_equal),
    ("greater", ek.greater, np.greater),
    ("greater_equal", ek.greater_equal, np.greater_equal),
    ("bitwise_and", ek.bitwise_and, np.bitwise_and),
    ("bitwise_or", ek.bitwise_or, np.bitwise_or),
    ("bitwise_xor", ek.bitwise_xor, np.bitwise_xor),
    ("left_shift", uk.left_shift, np.left_shift),
    ("right_shift", uk.right_shift, np.right_shift),
    ("fmod", uk.fmod, np.fmod),
    ("fmax", uk.fmax, np.fmax),
    ("fmin", uk.fmin, np.fmin),
    ("hypot", uk.hypot, np.hypot),
    ("copysign", uk.copysign, np.copysign),
    ("heaviside", uk.heaviside, np.heaviside),
    # no Numba scalar: NumPy's loop (elementwise_run.NUMPY_BINARY)
    *((name, None, getattr(np, name)) for name in (
        "arctan2", "logaddexp", "logaddexp2", "nextafter", "float_power")),
]

LOGICAL_TABLE = [
    ("logical_and", uk.logical_and, np.logical_and),
    ("logical_or", uk.logical_or, np.logical_or),
    ("logical_xor", uk.logical_xor, np.logical_xor),
]


COMPARISONS = {"equal": operator.eq, "not_equal": operator.ne, "less": operator.lt,
               "less_equal": operator.le, "greater": operator.gt,
               "greater_equal": operator.ge}


def _doc(name, ufunc):
    if name == "fix":
        return ("Round to the nearest integer towards zero, as numpy.fix: numpy.trunc's "
                "values and dtypes.")
    return f"Element-wise {name}; dtypes and results follow numpy.{ufunc.__name__}."


_POWER_VALUE_CHECK = (
    " Integers to negative integer powers raise NumPy's ValueError: at the call for a scalar "
    "exponent; for an exponent array the check needs its values, so on the threaded engines "
    "it raises at the wait on the result (on the NaiveEngine, at the call).")


def register_all() -> None:
    for name, scalar, ufunc in UNARY_TABLE:
        ElementwiseSpec(name, scalar, ufunc, _doc(name, ufunc)).register("unary")
    for name, scalar, ufunc in BINARY_TABLE:
        compare = COMPARISONS.get(name)
        spec = (ElementwiseSpec if compare is None else ComparisonSpec)(
            name, scalar, ufunc, _doc(name, ufunc))
        if compare is not None:
            spec.python_compare = compare
        spec.register("binary")
    for name, scalar, ufunc in LOGICAL_TABLE:
        LogicalSpec(name, scalar, ufunc, _doc(name, ufunc)).register("binary")
    SignbitSpec("signbit", uk.signbit, np.signbit, _doc("signbit", np.signbit)).register("unary")
    DivmodSpec("divmod", None, np.divmod,
               "divmod(x1, x2) -> (x1 // x2, x1 % x2), numpy.divmod's two outputs."
               ).register("binary")
    elementwise_functions.register_all()
    PowerSpec("power", ek.power, np.power, _doc("power", np.power) + _POWER_VALUE_CHECK
              ).register("binary")
    UnaryLikeSpec("sigmoid", ek.sigmoid, np.exp,
                  "Element-wise 1/(1+exp(-x)); dtypes follow numpy.exp.").register("unary")
    ReluSpec("relu", ek.relu, np.maximum, "Element-wise maximum(x, 0).").register("unary")
    RoundSpec("round", ek.rint, np.rint,
              "np.round(x, decimals): half to even; ints keep their dtype.").register("unary")
    ClipSpec("clip", ek.clip, np.maximum,
             "clip(x, a_min, a_max); either bound may be None.").register("binary")
    clip_arrays = ElementwiseSpec(
        "clip_arrays", ek.clip, _umath.clip,
        "clip(x, a_min, a_max) with array bounds: numpy's clip ufunc (three broadcast inputs, "
        "NumPy's dtype rules)")
    # the ufunc itself where a bound broadcasts: NumPy's loop for two constant bounds keeps x
    # on a tie of signed zeros, where its loop for bound arrays (and ek.clip) gives the bound
    clip_arrays.runs_ufunc = True
    clip_arrays.register("other")
    WhereSpec("where", ek.where_select, np.maximum,
              "where(cond, x, y) with broadcasting.").register("other")
