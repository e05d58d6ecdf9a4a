"""Module functions (``ndengine.exp``, ``ndengine.dot``, ...), generated from the registry.

The ufuncs are ``_NAMES`` (NumPy's name for each, ``_ALIASES`` for NumPy's other names);
the few functions whose parameters are their own are families (``add_family``) with a
caller each, below.  ``allclose`` and ``array_equal`` return a Python bool, as NumPy's do:
they push their op and wait for its one-element result.
"""
import operator

import numpy as np

from .. import ops
from ..core import NDArray, as_operand as _as_operand, invoke
from ..ops.dtypes import output_casting_error
from ..ops.shapes import broadcast_shapes
from .operators import add_family, module_function
from .arguments import apply_op, check_out, context_of

__all__ = ["FUNCTIONS", "broadcast_to", "call_output_pair"]

_UNARY_UFUNCS = (
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "cbrt", "square",
    "reciprocal", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
    "arcsinh", "arccosh", "arctanh", "deg2rad", "rad2deg", "degrees", "radians", "sign",
    "floor", "ceil", "trunc", "rint", "fabs", "abs", "negative", "positive", "conjugate",
    "signbit", "isnan", "isinf", "isfinite", "invert", "logical_not")
_BINARY_UFUNCS = (
    "add", "subtract", "multiply", "true_divide", "floor_divide", "mod", "fmod", "divmod",
    "power", "float_power", "maximum", "minimum", "fmax", "fmin", "hypot", "arctan2",
    "copysign", "nextafter", "logaddexp", "logaddexp2", "heaviside", "equal", "not_equal",
    "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
    "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift")
_NAMES = _UNARY_UFUNCS + _BINARY_UFUNCS + (
    "sigmoid", "relu", "round", "fix", "clip", "where", "dot", "matmul", "concatenate",
    "stack", "split", "sum", "mean", "max", "min", "prod", "argmax", "argmin", "std", "var",
    "nan_to_num", "isclose", "allclose", "array_equal")

# NumPy's other names for the same functions (NumPy 2's array-API names included)
_ALIASES = {
    "divide": "true_divide", "absolute": "abs", "remainder": "mod", "conj": "conjugate",
    "bitwise_not": "invert", "bitwise_invert": "invert", "pow": "power",
    "bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift",
    "acos": "arccos", "asin": "arcsin", "atan": "arctan", "atan2": "arctan2",
    "acosh": "arccosh", "asinh": "arcsinh", "atanh": "arctanh",
}


# ------------------------------------------------------------------------ callers

def _output_pair(out, name):
    """A two-output ufunc's ``out=``: None or a tuple of two (each an NDArray or None)."""
    if out is None or (type(out) is tuple and all(o is None for o in out)):
        return None
    if type(out) is not tuple:  # NumPy's errors: a TypeError, then a ValueError
        raise TypeError(f"{name}: 'out' must be a tuple of 2 arrays (one per output)")
    if len(out) != 2:
        raise ValueError(f"{name}: 'out' must be a tuple of 2 arrays (one per output)")
    for o in out:
        if o is not None and not isinstance(o, NDArray):
            raise TypeError(f"{name}: out={type(o).__name__} is not supported: ndengine "
                            "writes only into NDArrays")
    return out


def call_output_pair(op, args):
    """The caller of a two-output ufunc (divmod, frexp, modf): its inputs, then out=, dtype=."""
    name = op.name
    outs = _output_pair(args.pop("out"), name)
    dtype = args.pop("dtype")
    params = {} if dtype is None else {"dtype": ops.check_dtype(dtype)}
    inputs = tuple(args.values())
    given = [o for o in outs or () if o is not None]
    ctx = context_of(inputs, given[0] if given else None)
    operands = [_as_operand(a, ctx, numpy_scalars=True) for a in inputs]
    if outs is None:
        return tuple(invoke(op, operands, params, ctx=ctx))
    # NumPy's checks first (each out: cast, then shape: the inputs and every out broadcast
    # to one shape, each out's own), then the op into fresh arrays, each copied into its out
    # (both results come from the inputs as they were, as NumPy's do)
    specs = op.infer(*operands, **params)
    for index, (out, (shape, dtype)) in enumerate(zip(outs, specs)):
        if out is not None:
            check_out(out, ctx, name)
            if not np.can_cast(dtype, out.dtype, "same_kind"):
                raise output_casting_error(name, dtype, out.dtype, len(outs),
                                           len(inputs) + index)
    shape = specs[0][0]
    try:
        full = broadcast_shapes(shape, *(out.shape for out in given))
    except ValueError:
        full = None
    for out in given:
        if out.shape != full:
            raise ValueError(f"non-broadcastable output operand with shape {out.shape} "
                             f"doesn't match the broadcast shape {full or shape}")
    results = invoke(op, operands, params, ctx=ctx)
    copy = ops.get("copy")
    final = []
    for out, result in zip(outs, results):
        if out is not None:
            invoke(copy, [result], {"shape": full}, out=out, ctx=ctx)
        elif full != shape:
            out = invoke(copy, [result], {"shape": full}, ctx=ctx)[0]
        final.append(result if out is None else out)
    return tuple(final)


def _call_fix(op, args):
    return apply_op(op, [args["x"]], {}, args["out"], as_arrays=True, broadcast_out=True)


def _call_nan_to_num(op, args):
    x, copy = args["x"], args["copy"]
    params = {"nan": args["nan"], "posinf": args["posinf"], "neginf": args["neginf"]}
    in_place = isinstance(x, NDArray) and not copy  # NumPy: copy=None copies only if it must
    if not isinstance(x, NDArray):
        if copy is False:
            np.array(x, copy=False)  # NumPy's ValueError for what is not an array yet
        if not copy and isinstance(x, np.ndarray):
            raise TypeError("nan_to_num(x, copy=False) writes into x: ndengine writes only "
                            "into NDArrays")
        x = _as_operand(np.asarray(x), context_of(()))
    if x.dtype.kind not in "fc":  # NumPy leaves integers and bools as they are
        return x if in_place else x.copy()
    if in_place:
        invoke(op, [x], params, out=x)
        return x
    return invoke(op, [x], params)[0]


def _tolerance_operands(args):
    values = (args["a"], args["b"], args["rtol"], args["atol"])
    ctx = context_of(values)
    return [_as_operand(v, ctx, numpy_scalars=True) for v in values], ctx


def _call_isclose(op, args):
    operands, ctx = _tolerance_operands(args)
    return invoke(op, operands, {"equal_nan": args["equal_nan"]}, ctx=ctx)[0]


def _call_allclose(op, args):
    """Waits: the answer is a Python bool."""
    operands, ctx = _tolerance_operands(args)
    return bool(invoke(op, operands, {"equal_nan": args["equal_nan"]}, ctx=ctx)[0].item())


def _call_array_equal(op, args):
    """Waits: the answer is a Python bool (False at once for different shapes)."""
    ctx = context_of((args["a1"], args["a2"]))
    try:
        a1, a2 = (a if isinstance(a, NDArray) else _as_operand(np.asarray(a), ctx)
                  for a in (args["a1"], args["a2"]))
    except Exception:  # noqa: BLE001 - NumPy: what cannot be an array is not equal
        return False
    if a1.shape != a2.shape:
        return False
    return bool(invoke(op, [a1, a2], {"equal_nan": args["equal_nan"]}, ctx=ctx)[0].item())


add_family("divmod", "x1, x2, /, out=(None, None), *, dtype=None", (), call_output_pair,
           ("divmod",))
add_family("fix", "x, out=None", ("x",), _call_fix, ("fix",))
add_family("nan_to_num", "x, copy=True, nan=0.0, posinf=None, neginf=None", (),
           _call_nan_to_num, ("nan_to_num",))
add_family("isclose", "a, b, rtol=1e-05, atol=1e-08, equal_nan=False", (), _call_isclose,
           ("isclose",))
add_family("allclose", "a, b, rtol=1e-05, atol=1e-08, equal_nan=False", (), _call_allclose,
           ("allclose",))
add_family("array_equal", "a1, a2, equal_nan=False", (), _call_array_equal, ("array_equal",))

FUNCTIONS = {name: module_function(name) for name in _NAMES}
FUNCTIONS.update({alias: FUNCTIONS[name] for alias, name in _ALIASES.items()})

_DOCS = {
    "allclose": "numpy.allclose: whether every element of a is close to b (see isclose). "
                "Returns a Python bool, as NumPy does, so it waits for the pushed op.",
    "array_equal": "numpy.array_equal: same shape and elements (NaNs equal with equal_nan). "
                   "Returns a Python bool, as NumPy does, so it waits for the pushed op "
                   "(False at once for different shapes).",
    "isclose": "numpy.isclose: |a - b| <= atol + rtol * |b| element-wise, a bool array.",
    "nan_to_num": "numpy.nan_to_num: NaN, +inf and -inf of a float array replaced by nan, "
                  "posinf and neginf (scalars; None: the dtype's largest finite values). "
                  "copy=False (or None) writes into x, an NDArray; ints and bools are "
                  "returned as they are (copied if copy).",
    "divmod": "numpy.divmod: (x1 // x2, x1 % x2) in one op, NumPy's values and dtypes; "
              "out=(q, r), either may be None.",
}
for _name, _doc in _DOCS.items():
    FUNCTIONS[_name].__doc__ = _doc


def _signed_infinity(name, positive):
    def function(x, out=None):
        # NumPy's own composition (numpy/lib/_ufunclike_impl.py), on pushed ops
        signbit = FUNCTIONS["signbit"](x)
        wanted = FUNCTIONS["logical_not"](signbit) if positive else signbit
        return FUNCTIONS["logical_and"](FUNCTIONS["isinf"](x), wanted, out=out)
    function.__name__ = name
    function.__doc__ = (f"numpy.{name}: whether each element is {'+' if positive else '-'}inf "
                        "(a bool array; out= an NDArray).")
    function.__module__ = "ndengine"
    return function


FUNCTIONS["isposinf"] = _signed_infinity("isposinf", True)
FUNCTIONS["isneginf"] = _signed_infinity("isneginf", False)


def broadcast_to(x, shape):
    """A new array holding ``x`` broadcast to ``shape`` (a copy, unlike numpy's read-only
    view, so writes to it never alias)."""
    x = _as_operand(x, None) if not isinstance(x, NDArray) else x
    return invoke(ops.get("copy"), [x], {"shape": _broadcast_shape(shape)})[0]


def _broadcast_shape(shape):
    """numpy.broadcast_to's reading of ``shape`` (its iterator's), with its errors: entries
    that are integers (a float, even of an integral value, or a bool is a TypeError)."""
    shape = tuple(shape) if np.iterable(shape) else (shape,)
    if any(isinstance(n, (bool, np.bool_)) for n in shape):
        raise TypeError("an integer is required")
    shape = tuple(operator.index(n) for n in shape)
    if any(n < 0 for n in shape):
        raise ValueError("all elements of broadcast shape must be non-negative")
    return shape
