"""NumPy's convolve, correlate, interp, cov, corrcoef, gradient, unravel_index and ravel_multi_index
on NDArrays (``NUMPY_RUN``, NumPy's parameter lists through ``signatures.numpy_function``).

Each is one pushed op whose kernel is NumPy's own function (``ops.families.math_extra``):
it returns at once, with NumPy's shapes and dtypes, and NumPy's errors for bad arguments
raised at the call by the op's inference. Arguments that shape the result (``shape``,
``dims``) are read at the call where they are NDArrays; scalar arguments (``left``,
``right``, ``period``, ``ddof``) become op params; arrays (cov's ``y``, ``fweights``,
``aweights``) become inputs named by the op's ``arrays`` param. unravel_index gives a tuple
of one array per dimension, as NumPy's; ravel_multi_index takes one input per dimension.
"""
import numpy as np

from ..arguments import array_of, first_context, frozen, push, read_values
from ..signatures import numpy_function

__all__ = ["NUMPY_RUN"]


def _scalar(value):
    """A scalar argument as an op param: an NDArray is read (its value decides the plan)."""
    value = read_values(value)
    return value.item() if isinstance(value, np.ndarray) and value.ndim == 0 else frozen(value)


def _signals(name, a, v, mode):
    """Push convolve or correlate on the two sequences."""
    ctx = first_context(a, v)
    return push(name, [array_of(a, ctx), array_of(v, ctx)], {"mode": mode}, ctx=ctx)[0]


def _convolve(a, v, mode="full"):
    return _signals("convolve", a, v, mode)


def _correlate(a, v, mode="valid"):
    return _signals("correlate", a, v, mode)


def _interp(x, xp, fp, left=None, right=None, period=None):
    ctx = first_context(x, xp, fp)
    params = {name: _scalar(value) for name, value in
              (("left", left), ("right", right), ("period", period)) if value is not None}
    inputs = [array_of(value, ctx) for value in (x, xp, fp)]
    return push("interp", inputs, params, ctx=ctx)[0]


def _covariance(name, m, arrays, params):
    """Push cov or corrcoef: the arrays given (not None) as named inputs after ``m``."""
    given = {key: value for key, value in arrays.items() if value is not None}
    ctx = first_context(m, *given.values())
    inputs = [array_of(m, ctx)] + [array_of(value, ctx) for value in given.values()]
    params = {key: _scalar(value) for key, value in params.items() if value is not None}
    if given:
        params["arrays"] = tuple(given)
    return push(name, inputs, params, ctx=ctx)[0]


def _cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
         dtype=None):
    return _covariance("cov", m, {"y": y, "fweights": fweights, "aweights": aweights},
                       {"rowvar": rowvar, "bias": bias, "ddof": ddof, "dtype": dtype})


def _corrcoef(x, y=None, rowvar=True, *, dtype=None):
    return _covariance("corrcoef", x, {"y": y}, {"rowvar": rowvar, "dtype": dtype})


def _gradient(f, *varargs, axis=None, edge_order=1):
    ctx = first_context(f, *varargs)
    inputs = [array_of(f, ctx)] + [array_of(spacing, ctx) for spacing in varargs]
    outputs = push("gradient", inputs, {"axis": frozen(axis), "edge_order": edge_order},
                   ctx=ctx)
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def _dimensions(value):
    """``shape``/``dims`` as an op param: NumPy's int or tuple (an NDArray read at the call)."""
    value = read_values(value)
    if isinstance(value, np.ndarray):
        return value.item() if value.ndim == 0 else tuple(value.tolist())
    return tuple(value) if isinstance(value, list) else value


def _unravel_index(indices, shape, order="C"):
    outputs = push("unravel_index", [array_of(indices)],
                   {"shape": _dimensions(shape), "order": order})
    return tuple(outputs)


def _ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    ctx = first_context(multi_index)
    inputs = [array_of(index, ctx) for index in multi_index]
    if not inputs:
        raise ValueError("ravel_multi_index takes one index array per dimension; got none")
    return push("ravel_multi_index", inputs,
                {"dims": _dimensions(dims), "mode": frozen(mode), "order": order}, ctx=ctx)[0]


_ONE_OP = "One pushed op (NumPy's function runs inside it)."
_ROWS = {
    "convolve": (_convolve, _ONE_OP),
    "correlate": (_correlate, _ONE_OP),
    "interp": (_interp, _ONE_OP + " An NDArray ``left``/``right``/``period`` is read at "
                                  "the call."),
    "cov": (_cov, _ONE_OP + " Value errors (a negative weight) raise when it runs."),
    "corrcoef": (_corrcoef, _ONE_OP),
    "gradient": (_gradient, _ONE_OP + " One array per axis (a tuple for several)."),
    "unravel_index": (_unravel_index, _ONE_OP + " A tuple, one array per dimension; an "
                                                "index out of bounds raises when it runs."),
    "ravel_multi_index": (_ravel_multi_index, _ONE_OP + " An index out of bounds (mode "
                                                        "'raise') raises when it runs."),
}

NUMPY_RUN = {name: numpy_function(name, getattr(np, name), implementation, doc)
             for name, (implementation, doc) in _ROWS.items()}
