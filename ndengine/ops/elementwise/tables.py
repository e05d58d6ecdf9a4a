"""The element-wise ops' tables (name, Numba scalar function, NumPy ufunc giving the dtype
rules) and their registration (their gradients: ops/gradients/elementwise.py)."""
from __future__ import annotations

import operator

import numpy as np
from numpy._core import umath as _umath  # the clip ufunc behind np.clip

from . import functions as elementwise_functions
from . import scalars, ufunc_scalars
from .operators import (
    ComparisonSpec, ElementwiseSpec, ReluSpec, RoundSpec, UnaryLikeSpec, WhereSpec)
from .power_clip import ClipArraysSpec, ClipSpec, PowerSpec
from .ufunc_specs import LogicalSpec, SignbitSpec, UfuncLoopSpec

__all__ = ["UNARY_TABLE", "BINARY_TABLE", "LOGICAL_TABLE", "UFUNC_LOOP_TABLE", "COMPARISONS", "register_all"]


# ------------------------------------------------------------------------ tables
# name, Numba scalar function, NumPy ufunc giving the dtype rules

UNARY_TABLE = [
    ("negative", scalars.negative, np.negative),
    ("positive", scalars.positive, np.positive),
    ("abs", scalars.absolute, np.absolute),
    ("exp", scalars.exp, np.exp),
    ("log", scalars.log, np.log),
    ("log1p", scalars.log1p, np.log1p),
    ("expm1", scalars.expm1, np.expm1),
    ("sqrt", scalars.sqrt, np.sqrt),
    ("square", scalars.square, np.square),
    ("sin", scalars.sin, np.sin),
    ("cos", scalars.cos, np.cos),
    ("tan", scalars.tan, np.tan),
    ("tanh", scalars.tanh, np.tanh),
    ("arcsin", scalars.arcsin, np.arcsin),
    ("arccos", scalars.arccos, np.arccos),
    ("arctan", scalars.arctan, np.arctan),
    ("sign", scalars.sign, np.sign),
    ("floor", scalars.floor, np.floor),
    ("ceil", scalars.ceil, np.ceil),
    ("invert", scalars.invert, np.invert),
    ("logical_not", scalars.logical_not, np.logical_not),
    ("conjugate", scalars.positive, np.conjugate),  # real dtypes: the value itself
    ("rint", scalars.rint, np.rint),
    ("trunc", ufunc_scalars.trunc, np.trunc),
    ("fix", ufunc_scalars.trunc, np.trunc),  # numpy.fix (not a ufunc): trunc's values and dtypes
    ("fabs", ufunc_scalars.fabs, np.fabs),
    ("reciprocal", ufunc_scalars.reciprocal, np.reciprocal),
    ("isnan", ufunc_scalars.isnan, np.isnan),
    ("isinf", ufunc_scalars.isinf, np.isinf),
    ("isfinite", ufunc_scalars.isfinite, np.isfinite),
    ("deg2rad", ufunc_scalars.deg2rad, np.deg2rad),
    ("radians", ufunc_scalars.deg2rad, np.radians),
    ("rad2deg", ufunc_scalars.rad2deg, np.rad2deg),
    ("degrees", ufunc_scalars.rad2deg, np.degrees),
    # no Numba scalar: NumPy's loop (runs.NUMPY_UNARY)
    *((name, None, getattr(np, name)) for name in (
        "log2", "log10", "exp2", "cbrt", "sinh", "cosh", "arcsinh", "arccosh", "arctanh")),
]

BINARY_TABLE = [
    ("add", scalars.add, np.add),
    ("subtract", scalars.subtract, np.subtract),
    ("multiply", scalars.multiply, np.multiply),
    ("true_divide", scalars.true_divide, np.true_divide),
    ("floor_divide", scalars.floor_divide, np.floor_divide),
    ("mod", scalars.remainder, np.remainder),
    ("maximum", scalars.maximum, np.maximum),
    ("minimum", scalars.minimum, np.minimum),
    ("equal", scalars.equal, np.equal),
    ("not_equal", scalars.not_equal, np.not_equal),
    ("less", scalars.less, np.less),
    ("less_equal", scalars.less_equal, np.less_equal),
    ("greater", scalars.greater, np.greater),
    ("greater_equal", scalars.greater_equal, np.greater_equal),
    ("bitwise_and", scalars.bitwise_and, np.bitwise_and),
    ("bitwise_or", scalars.bitwise_or, np.bitwise_or),
    ("bitwise_xor", scalars.bitwise_xor, np.bitwise_xor),
    ("left_shift", ufunc_scalars.left_shift, np.left_shift),
    ("right_shift", ufunc_scalars.right_shift, np.right_shift),
    ("fmod", ufunc_scalars.fmod, np.fmod),
    ("fmax", ufunc_scalars.fmax, np.fmax),
    ("fmin", ufunc_scalars.fmin, np.fmin),
    ("hypot", ufunc_scalars.hypot, np.hypot),
    ("copysign", ufunc_scalars.copysign, np.copysign),
    ("heaviside", ufunc_scalars.heaviside, np.heaviside),
    # no Numba scalar: NumPy's loop (runs.NUMPY_BINARY)
    *((name, None, getattr(np, name)) for name in (
        "arctan2", "logaddexp", "logaddexp2", "nextafter", "float_power")),
]

LOGICAL_TABLE = [
    ("logical_and", ufunc_scalars.logical_and, np.logical_and),
    ("logical_or", ufunc_scalars.logical_or, np.logical_or),
    ("logical_xor", ufunc_scalars.logical_xor, np.logical_xor),
]


# NumPy's ufunc itself runs in the op (ufunc_specs.UfuncLoopSpec): name, registry kind
UFUNC_LOOP_TABLE = [
    ("gcd", "binary"), ("lcm", "binary"), ("ldexp", "binary"), ("spacing", "unary"),
    ("bitwise_count", "unary"), ("frexp", "unary"), ("modf", "unary"),
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
    SignbitSpec("signbit", ufunc_scalars.signbit, np.signbit,
                _doc("signbit", np.signbit)).register("unary")
    UfuncLoopSpec("divmod", None, np.divmod,
                  "divmod(x1, x2) -> (x1 // x2, x1 % x2), numpy.divmod's two outputs."
                  ).register("binary")
    for name, kind in UFUNC_LOOP_TABLE:
        ufunc = getattr(np, name)
        UfuncLoopSpec(name, None, ufunc, _doc(name, ufunc)).register(kind)
    elementwise_functions.register_all()
    PowerSpec("power", scalars.power, np.power, _doc("power", np.power) + _POWER_VALUE_CHECK
              ).register("binary")
    UnaryLikeSpec("sigmoid", scalars.sigmoid, np.exp,
                  "Element-wise 1/(1+exp(-x)); dtypes follow numpy.exp.").register("unary")
    ReluSpec("relu", scalars.relu, np.maximum, "Element-wise maximum(x, 0).").register("unary")
    RoundSpec("round", scalars.rint, np.rint,
              "np.round(x, decimals): half to even; ints keep their dtype.").register("unary")
    ClipSpec("clip", scalars.clip, np.maximum,
             "clip(x, a_min, a_max); either bound may be None.").register("binary")
    ClipArraysSpec(
        "clip_arrays", scalars.clip, _umath.clip,
        "clip(x, a_min, a_max) with array bounds: numpy's clip ufunc (three broadcast inputs, "
        "NumPy's dtype rules)").register("other")
    WhereSpec("where", scalars.where_select, np.maximum,
              "where(cond, x, y) with broadcasting.").register("other")
