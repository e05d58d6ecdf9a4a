"""NumPy's polynomial functions on NDArrays (``POLYNOMIALS``, NumPy's parameter lists through
``signatures.numpy_function``) and ``poly1d``.

Pushed (they return at once; ``ops.families.polynomials``): poly of real zeros, polyadd,
polysub, polyder, polyint, polyval, and polyfit without ``full``. Computed at the call
(they wait for their inputs, then run NumPy's function): what NumPy sizes or types by the
values, which an asynchronous op cannot know when it is pushed: polymul and polydiv (NumPy
trims the leading zeros of their results), roots (its length and its real or complex dtype),
poly of complex zeros or of a matrix (real when the roots pair up as conjugates), polyfit
with ``full=True`` (the residuals are empty when the fit is rank-deficient). Their array
results are NDArrays on the inputs' context.

``poly1d`` is NumPy's class, its coefficients NumPy's (read at construction: NumPy trims
their leading zeros, and its order is a Python int); it takes NDArrays wherever NumPy's takes
arrays, its arithmetic gives ndengine's poly1d, and ``p(x)`` of an NDArray ``x`` is a pushed
polyval. Any polynomial function given a poly1d returns a poly1d, as NumPy's do.

``numpy.polynomial`` (the package of Polynomial, Chebyshev, ... classes) is not mirrored:
its objects hold NumPy coefficient arrays and NumPy's package works on them as it is.
"""
import functools

import numpy as np

from ...core import NDArray
from ..arguments import array_of, first_context, frozen, push, read_values
from ..signatures import numpy_function

__all__ = ["POLYNOMIALS", "poly1d"]


def _to_ndengine(value, ctx):
    """NumPy's result as ndengine gives it: arrays as NDArrays on ``ctx``, poly1d as ours."""
    if isinstance(value, np.poly1d):
        return poly1d(value)
    if isinstance(value, np.ndarray):
        return array_of(value, ctx)
    if isinstance(value, tuple):
        return tuple(_to_ndengine(part, ctx) for part in value)
    return value


def _at_call(numpy_fn, *args, **kwargs):
    """NumPy's function on the values of the arguments (a wait for each NDArray among them)."""
    ctx = first_context(*args, *kwargs.values())
    result = numpy_fn(*(read_values(a) for a in args),
                      **{k: read_values(v) for k, v in kwargs.items()})
    return _to_ndengine(result, ctx)


def _scalar(value):
    """A scalar argument as an op param: an NDArray is read (its value decides the plan)."""
    value = read_values(value)
    return value.item() if isinstance(value, np.ndarray) and value.ndim == 0 else frozen(value)


def _any_poly1d(*values):
    return any(isinstance(value, np.poly1d) for value in values)


def _poly(seq_of_zeros):
    zeros = array_of(seq_of_zeros)
    if zeros.ndim != 1 or zeros.dtype.kind == "c":
        return _at_call(np.poly, zeros)
    return push("poly", [zeros], {})[0]


def _sum_or_difference(name):
    def implementation(a1, a2):
        if _any_poly1d(a1, a2):
            return _at_call(getattr(np, name), a1, a2)
        ctx = first_context(a1, a2)
        return push(name, [array_of(a1, ctx), array_of(a2, ctx)], {}, ctx=ctx)[0]
    return implementation


def _polyder(p, m=1):
    if _any_poly1d(p):
        return _at_call(np.polyder, p, m)
    return push("polyder", [array_of(p)], {"m": _scalar(m)})[0]


def _polyint(p, m=1, k=None):
    if _any_poly1d(p):
        return _at_call(np.polyint, p, m, k)
    params = {"m": _scalar(m)}
    if k is not None:
        params["k"] = frozen(read_values(k))
    return push("polyint", [array_of(p)], params)[0]


def _polyval(p, x):
    if isinstance(x, np.poly1d):
        return _at_call(np.polyval, p, x)
    if isinstance(p, np.poly1d):
        p = p.coeffs
    ctx = first_context(p, x)
    return push("polyval", [array_of(p, ctx), array_of(x, ctx)], {}, ctx=ctx)[0]


def _polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    if full:
        return _at_call(np.polyfit, x, y, deg, rcond, full, w, cov)
    ctx = first_context(x, y, w)
    inputs = [array_of(x, ctx), array_of(y, ctx)]
    params = {"deg": _scalar(deg), "rcond": _scalar(rcond), "cov": _scalar(cov)}
    if w is not None:
        inputs.append(array_of(w, ctx))
        params["arrays"] = ("w",)
    outputs = push("polyfit", inputs, params, ctx=ctx)
    return tuple(outputs) if len(outputs) > 1 else outputs[0]


def _polymul(a1, a2):
    return _at_call(np.polymul, a1, a2)


def _polydiv(u, v):
    return _at_call(np.polydiv, u, v)


def _roots(p):
    return _at_call(np.roots, p)


class poly1d(np.poly1d):  # noqa: N801 - NumPy's name
    """NumPy's ``poly1d``, taking NDArrays (see the module docstring): ``p(x)`` of an NDArray
    is a pushed polyval; arithmetic and ``deriv``/``integ`` give ndengine's poly1d."""

    def __init__(self, c_or_r, r=False, variable=None):
        super().__init__(read_values(c_or_r), read_values(r), variable)

    def __call__(self, val):
        if isinstance(val, NDArray):
            return _polyval(array_of(self.coeffs, val.context), val)
        return _to_ndengine(super().__call__(read_values(val)), first_context(val))


def _ours(method):
    """NumPy's poly1d method on the values of NDArray arguments, a poly1d result as ours."""
    @functools.wraps(method)
    def wrapped(self, *args, **kwargs):
        result = method(self, *(read_values(a) for a in args),
                        **{k: read_values(v) for k, v in kwargs.items()})
        return _to_ndengine(result, first_context(*args, *kwargs.values()))
    return wrapped


for _name in ("__neg__", "__pos__", "__add__", "__radd__", "__sub__", "__rsub__", "__mul__",
              "__rmul__", "__pow__", "__truediv__", "__rtruediv__", "__div__", "__rdiv__",
              "deriv", "integ"):
    if hasattr(np.poly1d, _name):
        setattr(poly1d, _name, _ours(getattr(np.poly1d, _name)))
poly1d.__module__ = "ndengine"

_PUSHED = "One pushed op (NumPy's function runs inside it)."
_AT_CALL = ("Waits for its inputs and runs NumPy's function at the call: {}; the arrays it "
            "returns are NDArrays.")
_ROWS = {
    "poly": (_poly, _PUSHED + " Complex zeros or a matrix: computed at the call (NumPy makes the "
                              "result real when the roots pair up as conjugates)."),
    "polyadd": (_sum_or_difference("polyadd"), _PUSHED),
    "polysub": (_sum_or_difference("polysub"), _PUSHED),
    "polyder": (_polyder, _PUSHED),
    "polyint": (_polyint, _PUSHED),
    "polyval": (_polyval, _PUSHED),
    "polyfit": (_polyfit, _PUSHED + " With full=True: at the call (the residuals' length "
                                    "depends on the rank of the fit)."),
    "polymul": (_polymul, _AT_CALL.format("NumPy trims the product's leading zeros")),
    "polydiv": (_polydiv, _AT_CALL.format("NumPy trims the remainder's leading zeros")),
    "roots": (_roots, _AT_CALL.format("how many roots, and whether they are complex, "
                                      "depends on the values")),
}

POLYNOMIALS = {name: numpy_function(name, getattr(np, name), implementation, doc)
               for name, (implementation, doc) in _ROWS.items()}
POLYNOMIALS["poly1d"] = poly1d
