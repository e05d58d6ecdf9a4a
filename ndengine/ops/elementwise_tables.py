"""The element-wise ops' tables (name, Numba scalar function, NumPy ufunc giving the dtype
rules), their gradients, and their registration."""
from __future__ import annotations

import operator

import numpy as np
from numpy._core import umath as _umath  # the clip ufunc behind np.clip

from . import elementwise_functions
from . import elementwise_kernels as ek
from . import elementwise_ufunc_kernels as uk
from .dtypes import is_array_spec
from .elementwise import (ComparisonSpec, ElementwiseSpec, ReluSpec, RoundSpec, UnaryLikeSpec,
                          WhereSpec)
from .elementwise_power_clip import ClipSpec, PowerSpec
from .elementwise_ufunc_specs import DivmodSpec, LogicalSpec, SignbitSpec
from .shapes import shape_of

__all__ = ["UNARY_TABLE", "BINARY_TABLE", "LOGICAL_TABLE", "COMPARISONS", "register_all",
           "unbroadcast"]


# --------------------------------------------------------------------- gradients
# gradient(out_grad, inputs, output, **params) -> one gradient per input
# (None for Python scalars and for inputs the op is not differentiable in).

def unbroadcast(grad: np.ndarray, value):
    """Sum ``grad`` down to ``value``'s shape (undoing broadcasting)."""
    if not is_array_spec(value):
        return None
    shape = shape_of(value)
    grad = np.asarray(grad)
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, n in enumerate(shape):
        if n == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad


def _unary_gradient(rule):
    def gradient(out_grad, inputs, output, **params):
        (x,) = inputs
        return [unbroadcast(rule(np.asarray(out_grad), np.asarray(x), np.asarray(output)), x)]
    return gradient


def _binary_gradient(rule):
    def gradient(out_grad, inputs, output, **params):
        x, y = inputs
        gx, gy = rule(np.asarray(out_grad), np.asarray(x), np.asarray(y), np.asarray(output))
        return [unbroadcast(gx, x), unbroadcast(gy, y)]
    return gradient


def _zero_gradient(g, x, out):
    return np.zeros_like(g)


UNARY_GRADIENTS = {
    "negative": lambda g, x, out: -g,
    "positive": lambda g, x, out: g,
    "abs": lambda g, x, out: g * np.sign(x),
    "exp": lambda g, x, out: g * out,
    "log": lambda g, x, out: g / x,
    "log1p": lambda g, x, out: g / (1 + x),
    "expm1": lambda g, x, out: g * (out + 1),
    "sqrt": lambda g, x, out: g / (2 * out),
    "square": lambda g, x, out: 2 * x * g,
    "sin": lambda g, x, out: g * np.cos(x),
    "cos": lambda g, x, out: -g * np.sin(x),
    "tan": lambda g, x, out: g * (1 + out * out),
    "tanh": lambda g, x, out: g * (1 - out * out),
    "arcsin": lambda g, x, out: g / np.sqrt(1 - x * x),
    "arccos": lambda g, x, out: -g / np.sqrt(1 - x * x),
    "arctan": lambda g, x, out: g / (1 + x * x),
    "sigmoid": lambda g, x, out: g * out * (1 - out),
    "relu": lambda g, x, out: g * (x > 0),
    "sign": _zero_gradient, "floor": _zero_gradient, "ceil": _zero_gradient,
    "round": _zero_gradient, "trunc": _zero_gradient, "fix": _zero_gradient,
    "rint": _zero_gradient,
    "fabs": lambda g, x, out: g * np.sign(x),
    "conjugate": lambda g, x, out: g,
    "reciprocal": lambda g, x, out: -g * out * out,
    "log2": lambda g, x, out: g / (x * np.log(2.0)),
    "log10": lambda g, x, out: g / (x * np.log(10.0)),
    "exp2": lambda g, x, out: g * out * np.log(2.0),
    "cbrt": lambda g, x, out: g / (3 * out * out),
    "sinh": lambda g, x, out: g * np.cosh(x),
    "cosh": lambda g, x, out: g * np.sinh(x),
    "arcsinh": lambda g, x, out: g / np.sqrt(x * x + 1),
    "arccosh": lambda g, x, out: g / np.sqrt(x * x - 1),
    "arctanh": lambda g, x, out: g / (1 - x * x),
    **{name: lambda g, x, out: g * (np.pi / 180) for name in ("deg2rad", "radians")},
    **{name: lambda g, x, out: g * (180 / np.pi) for name in ("rad2deg", "degrees")},
}

BINARY_GRADIENTS = {
    "add": lambda g, x, y, out: (g, g),
    "subtract": lambda g, x, y, out: (g, -g),
    "multiply": lambda g, x, y, out: (g * y, g * x),
    "true_divide": lambda g, x, y, out: (g / y, -g * x / (y * y)),
    "power": lambda g, x, y, out: (g * y * np.power(x, y - 1.0),
                                   g * out * np.log(np.where(x > 0, x, 1.0))),
    "maximum": lambda g, x, y, out: (g * (x >= y), g * (x < y)),
    "minimum": lambda g, x, y, out: (g * (x <= y), g * (x > y)),
    "float_power": lambda g, x, y, out: (g * y * np.power(x, y - 1.0),
                                         g * out * np.log(np.where(x > 0, x, 1.0))),
    "hypot": lambda g, x, y, out: (g * x / out, g * y / out),
    "arctan2": lambda g, x, y, out: (g * y / (x * x + y * y), -g * x / (x * x + y * y)),
    "logaddexp": lambda g, x, y, out: (g * np.exp(x - out), g * np.exp(y - out)),
    "logaddexp2": lambda g, x, y, out: (g * np.exp2(x - out), g * np.exp2(y - out)),
    # the NaN-ignoring max/min: the gradient goes to the input chosen
    "fmax": lambda g, x, y, out: (g * ((x >= y) | np.isnan(y)), g * ~((x >= y) | np.isnan(y))),
    "fmin": lambda g, x, y, out: (g * ((x <= y) | np.isnan(y)), g * ~((x <= y) | np.isnan(y))),
}


def _clip_gradient(out_grad, inputs, output, a_min=None, a_max=None):
    x = np.asarray(inputs[0])
    inside = np.ones(x.shape, bool)
    if a_min is not None:
        inside &= x >= a_min
    if a_max is not None:
        inside &= x <= a_max
    return [np.asarray(out_grad) * inside]


def _where_gradient(out_grad, inputs, output, **params):
    cond, x, y = inputs
    g = np.asarray(out_grad)
    c = np.asarray(cond, dtype=bool)
    return [None, unbroadcast(np.where(c, g, 0), x), unbroadcast(np.where(c, 0, g), y)]


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


def _gradient_for(name, table, wrap):
    rule = table.get(name)
    return wrap(rule) if rule is not None else None


def _doc(name, ufunc):
    if name == "fix":
        return ("Round to the nearest integer towards zero, as numpy.fix: numpy.trunc's "
                "values and dtypes.")
    return f"Element-wise {name}; dtypes and results follow numpy.{ufunc.__name__}."


def register_all() -> None:
    for name, scalar, ufunc in UNARY_TABLE:
        ElementwiseSpec(name, scalar, ufunc, _gradient_for(name, UNARY_GRADIENTS, _unary_gradient),
                        _doc(name, ufunc)).register("unary")
    for name, scalar, ufunc in BINARY_TABLE:
        compare = COMPARISONS.get(name)
        spec = (ElementwiseSpec if compare is None else ComparisonSpec)(
            name, scalar, ufunc, _gradient_for(name, BINARY_GRADIENTS, _binary_gradient),
            _doc(name, ufunc))
        if compare is not None:
            spec.python_compare = compare
        spec.register("binary")
    for name, scalar, ufunc in LOGICAL_TABLE:
        LogicalSpec(name, scalar, ufunc, None, _doc(name, ufunc)).register("binary")
    SignbitSpec("signbit", uk.signbit, np.signbit, None,
                _doc("signbit", np.signbit)).register("unary")
    DivmodSpec("divmod", None, np.divmod, None,
               "divmod(x1, x2) -> (x1 // x2, x1 % x2), numpy.divmod's two outputs."
               ).register("binary")
    elementwise_functions.register_all()
    PowerSpec("power", ek.power, np.power, _binary_gradient(BINARY_GRADIENTS["power"]),
              _doc("power", np.power)).register("binary")
    UnaryLikeSpec("sigmoid", ek.sigmoid, np.exp, _unary_gradient(UNARY_GRADIENTS["sigmoid"]),
                  "Element-wise 1/(1+exp(-x)); dtypes follow numpy.exp.").register("unary")
    ReluSpec("relu", ek.relu, np.maximum, _unary_gradient(UNARY_GRADIENTS["relu"]),
             "Element-wise maximum(x, 0).").register("unary")
    RoundSpec("round", ek.rint, np.rint, _unary_gradient(UNARY_GRADIENTS["round"]),
              "np.round(x, decimals): half to even; ints keep their dtype.").register("unary")
    ClipSpec("clip", ek.clip, np.maximum, _clip_gradient,
             "clip(x, a_min, a_max); either bound may be None.").register("binary")
    ElementwiseSpec("clip_arrays", ek.clip, _umath.clip, None,
                    "clip(x, a_min, a_max) with array bounds: numpy's clip ufunc (three "
                    "broadcast inputs, NumPy's dtype rules)").register("other")
    WhereSpec("where", ek.where_select, np.maximum, _where_gradient,
              "where(cond, x, y) with broadcasting.").register("other")
