"""The standard's element-wise functions, generated from name -> ndengine function tables.

Each pushes ndengine's function of NumPy's name (``acos`` is ``nd.arccos``, ``pow`` is
``nd.power``): the same kernels, dtype rules and errors as the main namespace, under the
standard's signatures. ``real``/``imag`` are views of a complex array's float pairs. A target
ndengine does not have leaves its name out; ``MISSING`` lists those names.
"""
from .. import ndarray

from ._generate import generate_all

__all__ = ["FUNCTIONS", "MISSING"]

# standard name: ndengine's name, where they differ
UNARY_RENAMES = {"acos": "arccos", "acosh": "arccosh", "asin": "arcsin", "asinh": "arcsinh",
                 "atan": "arctan", "atanh": "arctanh", "bitwise_invert": "invert"}
UNARY_SAME = ("abs", "ceil", "conj", "cos", "cosh", "exp", "expm1", "floor", "isfinite",
              "isinf", "isnan", "log", "log1p", "log2", "log10", "logical_not", "negative",
              "positive", "reciprocal", "round", "sign", "signbit", "sin", "sinh", "square", "sqrt",
              "tan", "tanh", "trunc")
BINARY_RENAMES = {"atan2": "arctan2", "bitwise_left_shift": "left_shift",
                  "bitwise_right_shift": "right_shift", "pow": "power"}
BINARY_SAME = ("add", "bitwise_and", "bitwise_or", "bitwise_xor", "copysign", "divide", "equal",
               "floor_divide", "greater", "greater_equal", "hypot", "less", "less_equal",
               "logaddexp", "logical_and", "logical_or", "logical_xor", "maximum", "minimum",
               "multiply", "nextafter", "not_equal", "remainder", "subtract")


def _target(name):
    return getattr(ndarray, name, None)


_UNARY = {**{name: name for name in UNARY_SAME}, **UNARY_RENAMES}
_BINARY = {**{name: name for name in BINARY_SAME}, **BINARY_RENAMES}
_ROWS = ([(name, "x, /", _target(target)) for name, target in _UNARY.items()]
         + [(name, "x1, x2, /", _target(target)) for name, target in _BINARY.items()])

FUNCTIONS = generate_all(_ROWS)


def clip(x, /, min=None, max=None):
    """Array API ``clip``: ndengine's ``clip`` (scalar or array bounds); with neither bound,
    a copy. The result keeps ``x``'s dtype, as the standard requires."""
    if min is None and max is None:
        return x.copy()
    bounds = {}
    if min is not None:
        bounds["min"] = min
    if max is not None:
        bounds["max"] = max
    clipped = ndarray.clip(x, **bounds)
    return clipped if clipped.dtype == x.dtype else clipped.astype(x.dtype, copy=False)


def real(x, /):
    """Array API ``real``: a view of a complex array's real parts (``ndengine.real``)."""
    return ndarray.real(x)


def imag(x, /):
    """Array API ``imag``: a view of a complex array's imaginary parts (``ndengine.imag``)."""
    return ndarray.imag(x)


FUNCTIONS.update(clip=clip, real=real, imag=imag)
MISSING = sorted(name for name in (*_UNARY, *_BINARY) if name not in FUNCTIONS)
