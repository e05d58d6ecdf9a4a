"""Python operators, NDArray methods and module functions, generated from the op registry.

Each table row names a registered operator; nothing here computes anything itself. Module
functions get NumPy's parameter lists (``_SIGNATURES``): ``signatures.signed_function`` makes
real Python functions from that table (the plain case, NDArrays and no ``out=``/``dtype=``,
straight to ``invoke``), so ``inspect.signature(ndengine.exp)`` shows them and a wrong
keyword raises Python's own TypeError, as NumPy's do. ``out=`` is a pushed write into an
NDArray (``invoke(..., out=)``) and the function returns it, as NumPy does. NumPy's ufuncs
on NDArrays (``__array_ufunc__``) are ``ufuncs``, which calls these functions.
"""
import operator

import numpy as np

from .. import ops
from ..ops.shapes import c_strides
from ..ops.elementwise import operators as elementwise
from ..core import NDArray, as_operand as _as_operand, invoke
from . import operator_methods as methods
from .arguments import apply_casting, apply_op, context_of, output_array
from .signatures import signature_of, signed_function

__all__ = ["module_function", "add_family", "BINARY_OPERATORS", "UNARY_OPERATORS",
           "REDUCTIONS"]

# dunder stem -> registered binary op; each gets __x__, __rx__ and __ix__ (in place)
BINARY_OPERATORS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
    "floordiv": "floor_divide", "mod": "mod", "pow": "power", "matmul": "matmul",
    "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
    "lshift": "left_shift", "rshift": "right_shift",
}
COMPARISONS = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
               "gt": "greater", "ge": "greater_equal"}
UNARY_OPERATORS = {"neg": "negative", "pos": "positive", "abs": "abs", "invert": "invert"}
REDUCTIONS = ("sum", "mean", "max", "min", "prod", "argmax", "argmin", "std", "var")


def _clip_method(self, min=None, max=None, out=None, *, dtype=None):
    """NumPy's ``ndarray.clip(min=None, max=None, out=None, **kwargs)``."""
    return module_function("clip")(self, min, max, out, dtype=dtype)


def _install_methods():
    NDArray.__divmod__, NDArray.__rdivmod__ = methods.divmod_method, methods.rdivmod_method
    for stem, op_name in BINARY_OPERATORS.items():
        forward, reflected, in_place = methods.binary(op_name, stem)
        if stem == "pow":
            forward, in_place = methods.power(forward, in_place)
        setattr(NDArray, f"__{stem}__", forward)
        setattr(NDArray, f"__r{stem}__", reflected)
        setattr(NDArray, f"__i{stem}__", in_place)
    for stem, op_name in COMPARISONS.items():
        setattr(NDArray, f"__{stem}__", methods.binary(op_name, stem)[0])
    for stem, op_name in UNARY_OPERATORS.items():
        setattr(NDArray, f"__{stem}__", methods.unary(op_name))
    for op_name in REDUCTIONS:
        # the module function is the method: x.sum(axis, dtype, out, keepdims) binds
        # x to ``a``, and inspect shows NumPy's method signature
        setattr(NDArray, op_name, module_function(op_name))
    NDArray.dot = module_function("dot")
    NDArray.round = module_function("round")  # x.round(decimals=0, out=None)
    NDArray.clip = _clip_method


# ---------------------------------------------------------------- module functions
# family -> (NumPy's parameter list, the parameters that are arrays taken as they are on the
# plain path: no out, no dtype, NDArray arguments)
_SIGNATURES = {
    "ufunc1": ("x, /, out=None, *, casting='same_kind', dtype=None", ("x",)),
    "ufunc2": ("x1, x2, /, out=None, *, casting='same_kind', dtype=None", ("x1", "x2")),
    "sum": ("a, axis=None, dtype=None, out=None, keepdims=False", ("a",)),
    "max": ("a, axis=None, out=None, keepdims=False", ("a",)),
    "argmax": ("a, axis=None, out=None, *, keepdims=False", ("a",)),
    "std": ("a, axis=None, dtype=None, out=None, ddof=0, keepdims=False", ("a",)),
    "round": ("a, decimals=0, out=None", ()),
    "clip": ("a, a_min=_NoValue, a_max=_NoValue, out=None, *, min=_NoValue, max=_NoValue, "
             "dtype=None", ()),
    "where": ("condition, x, y, /", ("condition", "x", "y")),
    "dot": ("a, b, out=None", ()),
    "concatenate": ("arrays, /, axis=0, out=None", ()),
    "stack": ("arrays, axis=0, out=None", ()),
    "split": ("ary, indices_or_sections, axis=0", ()),
}
_FAMILY_OF = {"sum": "sum", "prod": "sum", "mean": "sum", "max": "max", "min": "max",
              "argmax": "argmax", "argmin": "argmax", "std": "std", "var": "std",
              "round": "round", "clip": "clip", "where": "where", "dot": "dot",
              "matmul": "ufunc2", "concatenate": "concatenate", "stack": "stack",
              "split": "split"}
_FAMILY_OF_KIND = {"unary": "ufunc1", "binary": "ufunc2"}


def _family(op):
    family = _FAMILY_OF.get(op.name)
    if family is None and op.kind in _FAMILY_OF_KIND:
        try:  # the element-wise ops' own ufunc parameters; a user's op keeps its own
            spec = elementwise.spec(op.name)
        except KeyError:
            return None
        family = _FAMILY_OF_KIND[op.kind] if spec.arity == op.num_inputs else None
    return family


def _call_ufunc(op, args):
    out, dtype, casting = args.pop("out"), args.pop("dtype"), args.pop("casting")
    params = {} if dtype is None else {"dtype": ops.check_dtype(dtype)}
    if casting != "same_kind":
        return apply_casting(op, _numpy_ufunc(op), list(args.values()), params, out, casting)
    return apply_op(op, list(args.values()), params, out, as_arrays=op.kind == "unary",
                    broadcast_out=True)


def _numpy_ufunc(op):
    """NumPy's ufunc that the op of a ufunc family computes."""
    try:
        return elementwise.spec(op.name).ufunc
    except KeyError:
        return getattr(np, op.name)  # matmul


def _call_reduction(op, args):
    a, out, dtype = args.pop("a"), args.pop("out"), args.pop("dtype", None)
    if type(out) is tuple:  # NumPy's reductions take an array only (ufuncs take a tuple)
        raise TypeError("return arrays must be of ArrayType")
    params = dict(args)  # axis, keepdims (, ddof)
    if dtype is not None:
        params["dtype"] = ops.check_dtype(dtype)
    out = output_array(out, op.name)
    if out is not None:
        if isinstance(a, NDArray):
            [(shape, _)] = op.infer(a, **params)  # NumPy checks out's shape before its dtype
            if shape != out.shape:
                raise ValueError(f"output array does not match result of np.{op.name}."
                                 if op.name in ("argmax", "argmin") else
                                 f"{op.name}: output of shape {out.shape}, the reduction "
                                 f"gives {shape}")
        params["out_dtype"] = out.dtype  # NumPy writes (and may accumulate) in out's dtype
    return apply_op(op, [a], params, out, as_arrays=True)


def _call_round(op, args):
    decimals = args["decimals"]
    params = {"decimals": decimals} if decimals != 0 else {}
    return apply_op(op, [args["a"]], params, args["out"], as_arrays=True)


def _call_where(op, args):
    return apply_op(op, list(args.values()), {}, None)


_BLAS_DTYPES = frozenset(np.dtype(code) for code in "fdFD")


def _call_dot(op, args):
    # numpy.dot makes arrays of its operands first: a Python scalar is a strong operand
    a, b, out = args["a"], args["b"], output_array(args["out"], "dot")
    if out is None:
        return apply_op(op, [a, b], {}, None, as_arrays=True)
    ctx = context_of((a, b), out)
    a, b = (v if isinstance(v, NDArray) else _as_operand(np.asarray(v), ctx) for v in (a, b))
    [(shape, dtype)] = op.infer(a, b)
    if (not a.ndim or not b.ndim) and not (dtype in _BLAS_DTYPES and a.ndim <= 2
                                           and b.ndim <= 2):
        # NumPy's dot of a 0-d operand, outside its BLAS path, is multiply(a, b, out): out
        # is cast to and broadcast into as a ufunc's out is
        return registered_function("multiply")(a, b, out=out)
    # NumPy's dot also refuses an out of the other spelling of the same dtype (int64: 'l'
    # or 'q'); ndengine accepts it: an NDArray's spelling may be an earlier call's, whose
    # plan served this one (plans are keyed by equal dtypes)
    if (out.dtype != dtype or out.shape != shape
            or out.strides != c_strides(out.shape, out.dtype.itemsize)):
        raise ValueError("output array is not acceptable (must have the right datatype, "
                         "number of dimensions, and be a C-Array)")
    return apply_op(op, [a, b], {}, out)


def _call_sequence(op, args):  # concatenate, stack
    arrays = args.get("arrays")
    if type(args["out"]) is tuple:
        raise TypeError("'out' must be an array")
    if op.name == "concatenate" and isinstance(args["axis"], (bool, np.bool_)):
        raise TypeError("an integer is required for the axis")
    return apply_op(op, tuple(arrays), {"axis": args["axis"]}, args["out"], as_arrays=True)


def _call_split(op, args):
    ary = args["ary"]
    ctx = context_of((ary,))
    ary = ary if isinstance(ary, NDArray) else _as_operand(np.asarray(ary), ctx)
    cuts = args["indices_or_sections"]
    if isinstance(cuts, NDArray):
        cuts = cuts.asnumpy()  # read at the call
    if not hasattr(cuts, "__len__"):  # numpy.split: N % sections, then int(sections)
        if cuts == 0:
            raise ZeroDivisionError("integer modulo by zero")
        if not isinstance(cuts, (int, np.integer)):
            try:
                count = ary.shape[operator.index(args["axis"])]
            except (TypeError, IndexError):
                count = None  # a bad axis: the op's infer raises NumPy's error below
            if count is not None:
                if count % cuts:
                    raise ValueError("array split does not result in an equal division")
                cuts = int(cuts)
    else:  # indices: slice bounds, so NumPy's TypeError for strings and floats
        cuts = tuple(operator.index(i) for i in cuts)
    op.infer(ary, indices_or_sections=cuts, axis=args["axis"])  # NumPy's errors, at the call
    # The pieces are views of ary, as NumPy's are: writes to one show in the other.
    axis = args["axis"] % ary.ndim
    lead = (slice(None),) * axis
    return [ary[lead + (slice(start, stop),)] for start, stop in
            ops.families.movement.split_bounds(ary.shape[axis], cuts)]


_NO_VALUE = np._NoValue  # NumPy's "not given" default (shown as <no value>)


def _call_clip(op, args):
    a_min, a_max, low, high = args["a_min"], args["a_max"], args["min"], args["max"]
    # numpy.clip's own rules for a_min/a_max and their NumPy >= 2.1 aliases min/max
    if a_min is _NO_VALUE and a_max is _NO_VALUE:
        a_min = None if low is _NO_VALUE else low
        a_max = None if high is _NO_VALUE else high
    elif a_min is _NO_VALUE:
        raise TypeError("clip() missing 1 required positional argument: 'a_min'")
    elif a_max is _NO_VALUE:
        raise TypeError("clip() missing 1 required positional argument: 'a_max'")
    elif low is not _NO_VALUE or high is not _NO_VALUE:
        raise ValueError("Passing `min` or `max` keyword argument when `a_min` and `a_max` "
                         "are provided is forbidden.")
    a, out, dtype = args["a"], args["out"], args["dtype"]
    if (dtype is None and _scalar_bound(a_min) and _scalar_bound(a_max)
            and not _no_bound(a, a_min, a_max)):
        return apply_op(op, [a], {"a_min": a_min, "a_max": a_max}, out, as_arrays=True,
                        broadcast_out=True)
    # Array bounds (or dtype=): numpy/_core/_methods.py::_clip, on our ops
    ctx = context_of((a, a_min, a_max), output_array(out, "clip"))
    a = _as_operand(a if isinstance(a, NDArray) else np.asarray(a), ctx)
    if a.dtype.kind in "iu":  # Python ints beyond the dtype's range are no bound at all
        info = np.iinfo(a.dtype)
        if type(a_min) is int and a_min <= info.min:
            a_min = None
        if type(a_max) is int and a_max >= info.max:
            a_max = None
    if a_min is None and a_max is None:
        name, arrays = "positive", [a]
    elif a_min is None:
        name, arrays = "minimum", [a, a_max]
    elif a_max is None:
        name, arrays = "maximum", [a, a_min]
    else:
        name, arrays = "clip_arrays", [a, a_min, a_max]
    params = {} if dtype is None else {"dtype": ops.check_dtype(dtype)}
    return apply_op(ops.get(name), arrays, params, out, broadcast_out=True)


def _no_bound(a, a_min, a_max):
    """Whether a Python int bound is beyond an int array's range (no bound at all, below)."""
    dtype = getattr(a, "dtype", None)
    if dtype is None or dtype.kind not in "iu":
        return False
    info = np.iinfo(dtype)
    return type(a_min) is int and a_min <= info.min or type(a_max) is int and a_max >= info.max


def _scalar_bound(bound):
    return bound is None or isinstance(bound, (bool, int, float, np.generic))


_CALLERS = {"ufunc1": _call_ufunc, "ufunc2": _call_ufunc, "sum": _call_reduction,
            "max": _call_reduction, "argmax": _call_reduction, "std": _call_reduction,
            "round": _call_round, "clip": _call_clip, "where": _call_where, "dot": _call_dot,
            "concatenate": _call_sequence, "stack": _call_sequence, "split": _call_split}


def add_family(family, parameters, plain_arrays, caller, op_names=()):
    """A family of module functions: NumPy's parameter list, the array parameters taken as
    they are on the plain path (no out, no dtype, NDArray arguments; () for none), the
    caller that gets the arguments as a dict, and the ops whose functions it makes."""
    _SIGNATURES[family] = (parameters, tuple(plain_arrays))
    _CALLERS[family] = caller
    for name in op_names:
        _FAMILY_OF[name] = family
        _made.pop(name, None)


def _generate(op, family):
    """``def name(<NumPy's parameters>)``: the plain case straight to invoke, the rest to
    the family's caller with the arguments as a dict."""
    parameters, plain_arrays = _SIGNATURES[family]
    shortcut = None
    if plain_arrays:
        names = list(signature_of(parameters).parameters)
        plain = [f"type({n}) is NDArray" for n in plain_arrays]
        plain += [f"{n} is None" for n in names if n in ("out", "dtype")]
        plain += [f"{n} == 'same_kind'" for n in names if n == "casting"]
        params = "None"
        if op.kind == "reduce":  # the op's own parameters, as a dict
            params = "{" + ", ".join(f"{n!r}: {n}" for n in names
                                     if n in ("axis", "keepdims", "ddof")) + "}"
        shortcut = (" and ".join(plain),
                    f"invoke(op, [{', '.join(plain_arrays)}], {params})[0]")
    return signed_function(op.name, parameters, _CALLERS[family], lead=(op,), by_name=True,
                           shortcut=shortcut, scope={"NDArray": NDArray, "invoke": invoke,
                                                     "op": op}, doc=op.doc)


def _generic(op):
    """A user's op: ``name(*arrays, **params)``, arrays first, parameters by keyword."""
    def function(*args, **params):
        if op.num_inputs is None:  # a sequence of arrays
            array_args = tuple(args[0]) if args else ()
            if len(args) > 1:
                raise TypeError(f"{op.name} takes one sequence of arrays; pass parameters "
                                "by keyword")
        else:
            array_args, extra = args[:op.num_inputs], args[op.num_inputs:]
            if extra:
                raise TypeError(f"{op.name} takes {op.num_inputs} array arguments; pass "
                                "parameters by keyword")
        ctx = context_of(array_args)
        outputs = invoke(op, [_as_operand(a, ctx) for a in array_args], params, ctx=ctx)
        return outputs[0] if len(outputs) == 1 else outputs
    function.__name__ = op.name
    function.__doc__ = op.doc
    return function


_made = {}  # op name -> (the op, its function): made once per registered op object


def registered_function(name):
    """The module function of the op ``name``, or None if there is no such op."""
    found = _made.get(name)
    if found is not None and found[0] is ops.get(name):
        return found[1]
    return module_function(name) if name in ops.names() else None


def module_function(op_name):
    """``ndengine.<op_name>(...)`` for a registered op (built-in or a user's)."""
    op = ops.get(op_name)
    found = _made.get(op_name)
    if found is not None and found[0] is op:
        return found[1]
    family = _family(op)
    function = _generic(op) if family is None else _generate(op, family)
    _made[op_name] = (op, function)
    return function


_install_methods()
