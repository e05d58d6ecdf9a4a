"""Gradient rules of the element-wise ops (arithmetic, ufuncs, where, clip, copy):
``ELEMENTWISE`` (conventions: ops/gradients/rules.py). Complex operands follow PyTorch's
convention: a holomorphic op passes ``g`` times its conjugate derivative (multiply: ``g *
conj(y)``), conjugate passes ``conj(g)``, abs ``g * sgn(x)``."""
from __future__ import annotations

import math

from .common import _one, _unary, _is_array, _is_complex, _zero, _conj

__all__ = ["ELEMENTWISE"]


def _true_divide(f, g, x, y, out, **_):
    return [f("true_divide", g, _conj(f, y)) if _is_array(x) else None,
            f("negative", f("multiply", g, _conj(f, f("true_divide", out, y))))
            if _is_array(y) else None]


def _multiply(f, g, x, y, out, **_):
    return [f("multiply", g, _conj(f, y)) if _is_array(x) else None,
            f("multiply", g, _conj(f, x)) if _is_array(y) else None]


def _power(f, g, x, y, out, **_):
    dx = dy = None
    if _is_array(x):
        lower = f("subtract", y, 1) if _is_array(y) else y - 1  # y: a Python scalar
        dx = f("multiply", g, _conj(f, f("multiply", y, f("power", x, lower))))
    if _is_array(y):
        dy = f("multiply", g, _conj(f, f("multiply", out, f("log", x))))
    return [dx, dy]


def _select(condition):
    """maximum/minimum: the gradient goes to the chosen input (ties: the first)."""
    def rule(f, g, x, y, out, **_):
        first = f(condition, x, y)
        return [f("where", first, g, 0) if _is_array(x) else None,
                f("where", first, 0, g) if _is_array(y) else None]
    return rule


def _nan_select(condition):
    """fmax/fmin: as maximum/minimum, a NaN loses."""
    def rule(f, g, x, y, out, **_):
        first = f(condition, x, y)
        if _is_array(y):
            first = f("logical_or", first, f("isnan", y))
        return [f("where", first, g, 0) if _is_array(x) else None,
                f("where", first, 0, g) if _is_array(y) else None]
    return rule


def _binary(dx, dy):
    """A binary op's rule from ``g * dx(f, x, y, out)`` and ``g * dy(...)``."""
    def rule(f, g, x, y, out, **_):
        return [f("multiply", g, dx(f, x, y, out)) if _is_array(x) else None,
                f("multiply", g, dy(f, x, y, out)) if _is_array(y) else None]
    return _one(rule)


def _zeros_rule(f, grads, inputs, outputs, params):
    """A piecewise-constant op: zero almost everywhere."""
    return [_zero(f, grads[0], x) for x in inputs]


def _mod(quotient):
    """mod/fmod: x - y * quotient(x / y)."""
    def rule(f, g, x, y, out, **_):
        dy = None
        if _is_array(y):
            dy = f("negative", f("multiply", g, quotient(f, x, y)))
        return [g if _is_array(x) else None, dy]
    return _one(rule)


def _divmod(f, grads, inputs, outputs, params):
    (x, y), (_, g) = inputs, grads  # the quotient is piecewise constant
    return [g if _is_array(x) else None,
            f("negative", f("multiply", g, outputs[0])) if _is_array(y) else None]


def _heaviside(f, g, x, y, out, **_):
    return [_zero(f, g, x), f("where", f("equal", x, 0), g, 0) if _is_array(y) else None]


def _copysign(f, g, x, y, out, **_):
    return [f("multiply", g, f("multiply", f("sign", x), f("sign", out)))
            if _is_array(x) else None, _zero(f, g, y)]


def _where(f, g, condition, x, y, out, **_):
    return [None, f("where", condition, g, 0) if _is_array(x) else None,
            f("where", condition, 0, g) if _is_array(y) else None]


def _clip(f, g, x, out, a_min=None, a_max=None, **_):
    inside = f("equal", out, x)  # not clipped (a bound equal to x passes the gradient)
    return [f("where", inside, g, 0)]


def _clip_arrays(f, g, x, low, high, out, **_):
    """numpy's clip ufunc: minimum(maximum(x, low), high)."""
    above = f("maximum", x, low)
    passes = f("less_equal", above, high)  # maximum(x, low) is the result
    through = f("where", passes, g, 0)
    x_wins = f("greater_equal", x, low)
    return [f("where", x_wins, through, 0) if _is_array(x) else None,
            f("where", x_wins, 0, through) if _is_array(low) else None,
            f("where", passes, 0, g) if _is_array(high) else None]


def _nan_to_num(f, g, x, out, **_):
    return [f("where", f("isfinite", x), g, 0)]


def _abs(f, g, x, out, **_):
    """``g * sign(x)``; for a complex ``x`` PyTorch's ``g * sgn(x)``, ``x / |x|`` (0 at 0)."""
    if not _is_complex(x):
        return [f("multiply", g, f("sign", x))]
    return [f("multiply", g, f("true_divide", x, f("where", f("equal", out, 0), 1, out)))]


def _copy(f, g, x, out, dtype=None, **_):
    return [g if not _is_array(x) or g.dtype == x.dtype else f("copy", g, dtype=x.dtype)]


LN2, LN10 = math.log(2.0), math.log(10.0)

ELEMENTWISE = {
    "add": _one(lambda f, g, x, y, out, **_: [g if _is_array(x) else None,
                                               g if _is_array(y) else None]),
    "subtract": _one(lambda f, g, x, y, out, **_: [g if _is_array(x) else None,
                                                    f("negative", g) if _is_array(y) else None]),
    "multiply": _one(_multiply),
    "true_divide": _one(_true_divide),
    "negative": _one(lambda f, g, x, out, **_: [f("negative", g)]),
    "positive": _one(lambda f, g, x, out, **_: [g]),
    "conjugate": _one(lambda f, g, x, out, **_: [_conj(f, g)]),
    "exp": _unary(lambda f, x, out: out),
    "exp2": _unary(lambda f, x, out: f("multiply", out, LN2)),
    "expm1": _unary(lambda f, x, out: f("add", out, 1)),
    "log": _unary(lambda f, x, out: f("reciprocal", x)),
    "log2": _unary(lambda f, x, out: f("reciprocal", f("multiply", x, LN2))),
    "log10": _unary(lambda f, x, out: f("reciprocal", f("multiply", x, LN10))),
    "log1p": _unary(lambda f, x, out: f("reciprocal", f("add", x, 1))),
    "sqrt": _unary(lambda f, x, out: f("true_divide", 0.5, out)),
    "cbrt": _unary(lambda f, x, out: f("true_divide", 1 / 3, f("square", out))),
    "square": _unary(lambda f, x, out: f("multiply", x, 2)),
    "reciprocal": _unary(lambda f, x, out: f("negative", f("square", out))),
    "sin": _unary(lambda f, x, out: f("cos", x)),
    "cos": _unary(lambda f, x, out: f("negative", f("sin", x))),
    "tan": _unary(lambda f, x, out: f("add", f("square", out), 1)),
    "arcsin": _unary(lambda f, x, out: f("reciprocal", f("sqrt", f("subtract", 1,
                                                                   f("square", x))))),
    "arccos": _unary(lambda f, x, out: f("true_divide", -1, f("sqrt", f("subtract", 1,
                                                                        f("square", x))))),
    "arctan": _unary(lambda f, x, out: f("reciprocal", f("add", f("square", x), 1))),
    "sinh": _unary(lambda f, x, out: f("cosh", x)),
    "cosh": _unary(lambda f, x, out: f("sinh", x)),
    "tanh": _unary(lambda f, x, out: f("subtract", 1, f("square", out))),
    "arcsinh": _unary(lambda f, x, out: f("reciprocal", f("sqrt", f("add", f("square", x),
                                                                    1)))),
    "arccosh": _unary(lambda f, x, out: f("reciprocal", f("sqrt", f("subtract",
                                                                    f("square", x), 1)))),
    "arctanh": _unary(lambda f, x, out: f("reciprocal", f("subtract", 1, f("square", x)))),
    "deg2rad": _unary(lambda f, x, out: math.pi / 180),
    "radians": _unary(lambda f, x, out: math.pi / 180),
    "rad2deg": _unary(lambda f, x, out: 180 / math.pi),
    "degrees": _unary(lambda f, x, out: 180 / math.pi),
    "sigmoid": _unary(lambda f, x, out: f("multiply", out, f("subtract", 1, out))),
    "relu": _unary(lambda f, x, out: f("greater", x, 0)),
    "abs": _one(_abs),
    "fabs": _unary(lambda f, x, out: f("sign", x)),
    **{name: _zeros_rule for name in ("sign", "floor", "ceil", "trunc", "fix", "rint",
                                      "round", "floor_divide")},
    "nan_to_num": _one(_nan_to_num),
    "power": _one(_power),
    "float_power": _one(_power),
    "maximum": _one(_select("greater_equal")),
    "minimum": _one(_select("less_equal")),
    "fmax": _one(_nan_select("greater_equal")),
    "fmin": _one(_nan_select("less_equal")),
    "hypot": _binary(lambda f, x, y, out: f("true_divide", x, out),
                     lambda f, x, y, out: f("true_divide", y, out)),
    "arctan2": _binary(  # arctan2(x1, x2) = atan(x1 / x2)
        lambda f, x, y, out: f("true_divide", y, f("add", f("square", x), f("square", y))),
        lambda f, x, y, out: f("true_divide", f("negative", x),
                               f("add", f("square", x), f("square", y)))),
    "logaddexp": _binary(lambda f, x, y, out: f("exp", f("subtract", x, out)),
                         lambda f, x, y, out: f("exp", f("subtract", y, out))),
    "logaddexp2": _binary(lambda f, x, y, out: f("exp2", f("subtract", x, out)),
                          lambda f, x, y, out: f("exp2", f("subtract", y, out))),
    "mod": _mod(lambda f, x, y: f("floor_divide", x, y)),
    "fmod": _mod(lambda f, x, y: f("trunc", f("true_divide", x, y))),
    "divmod": _divmod,
    "nextafter": _one(lambda f, g, x, y, out, **_: [g if _is_array(x) else None,
                                                     _zero(f, g, y)]),
    "heaviside": _one(_heaviside),
    "copysign": _one(_copysign),
    "where": _one(_where),
    "clip": _one(_clip),
    "clip_arrays": _one(_clip_arrays),
    "copy": _one(_copy),
}
