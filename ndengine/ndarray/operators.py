"""Python operators, NDArray methods and module functions, generated from the op registry.

Each table row names a registered operator; nothing here computes anything itself.
"""
import numpy as np

from .. import ops
from ..engine import current_context
from .ndarray import NDArray, _as_operand, invoke

__all__ = ["module_function", "BINARY_OPERATORS", "UNARY_OPERATORS", "REDUCTIONS"]

# dunder stem -> registered binary op; each gets __x__, __rx__ and __ix__ (in place)
BINARY_OPERATORS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
    "floordiv": "floor_divide", "mod": "mod", "pow": "power", "matmul": "matmul",
    "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
}
COMPARISONS = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
               "gt": "greater", "ge": "greater_equal"}
UNARY_OPERATORS = {"neg": "negative", "pos": "positive", "abs": "abs", "invert": "invert"}
REDUCTIONS = ("sum", "mean", "max", "min", "prod", "argmax", "argmin", "std", "var")


_OPERANDS = (bool, int, float, NDArray)  # taken as they are; anything else is converted


def _binary(op_name):
    # Looked up per call (a user may replace an op), and every line here is paid per tiny op.
    def forward(self, other):
        if type(other) not in _OPERANDS:
            other = _as_operand(other, self.context)
        return invoke(ops.get(op_name), [self, other])[0]

    def reflected(self, other):
        if type(other) not in _OPERANDS:
            other = _as_operand(other, self.context)
        return invoke(ops.get(op_name), [other, self])[0]

    def in_place(self, other):
        if type(other) not in _OPERANDS:
            other = _as_operand(other, self.context)
        invoke(ops.get(op_name), [self, other], out=self)
        return self

    return forward, reflected, in_place


def _unary(op_name):
    def method(self):
        return invoke(ops.get(op_name), [self])[0]
    return method


def _reduction(op_name):
    def method(self, axis=None, keepdims=False, **kwargs):
        # numpy.sum(x), numpy.mean(x), ... call x.sum(axis=, dtype=None, out=None)
        if kwargs.pop("out", None) is not None:
            raise TypeError(f"{op_name}(out=...) is not supported for NDArrays; "
                            "use the result (or an in-place operator) instead")
        dtype = kwargs.pop("dtype", None)
        x = self if dtype is None else self.astype(dtype, copy=False)
        params = {"axis": axis, "keepdims": keepdims}
        params.update(kwargs)  # ddof for std and var
        return invoke(ops.get(op_name), [x], params)[0]
    method.__name__ = op_name
    method.__doc__ = f"{op_name} over ``axis`` (None: all), like numpy.ndarray.{op_name}."
    return method


_BOOL = np.dtype(bool)


def _power(forward):
    def __pow__(self, other):
        # NumPy evaluates ``array ** 2`` as square(array): the same values as power, but a
        # bool array gives int8 where power gives int64.
        if type(other) is int and other == 2 and self.dtype == _BOOL:
            return invoke(ops.get("square"), [self])[0]
        return forward(self, other)
    return __pow__


def _install_methods():
    for stem, op_name in BINARY_OPERATORS.items():
        forward, reflected, in_place = _binary(op_name)
        if stem == "pow":
            forward = _power(forward)
        setattr(NDArray, f"__{stem}__", forward)
        setattr(NDArray, f"__r{stem}__", reflected)
        setattr(NDArray, f"__i{stem}__", in_place)
    for stem, op_name in COMPARISONS.items():
        setattr(NDArray, f"__{stem}__", _binary(op_name)[0])
    for stem, op_name in UNARY_OPERATORS.items():
        setattr(NDArray, f"__{stem}__", _unary(op_name))
    for op_name in REDUCTIONS:
        setattr(NDArray, op_name, _reduction(op_name))
    NDArray.dot = lambda self, other: module_function("dot")(self, other)
    NDArray.clip = lambda self, a_min=None, a_max=None: \
        module_function("clip")(self, a_min, a_max)
    NDArray.__array_ufunc__ = _array_ufunc


# NumPy ufunc names that differ from ours
_UFUNC_ALIASES = {"divide": "true_divide", "remainder": "mod", "absolute": "abs",
                  "fmod": None, "conjugate": None}


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """NumPy ufuncs on NDArrays run on the engine when ndengine has the op (``np.exp(x)``,
    ``numpy_array + x``); otherwise the NDArrays are converted with a wait, and NumPy computes
    a NumPy result."""
    name = _UFUNC_ALIASES.get(ufunc.__name__, ufunc.__name__)
    if method == "__call__" and not kwargs and name in ops.names():
        return module_function(name)(*inputs)
    converted = [x.asnumpy() if isinstance(x, NDArray) else x for x in inputs]
    if "out" in kwargs:
        raise TypeError(f"numpy.{ufunc.__name__}(..., out=NDArray) is not supported; "
                        "use the ndengine function or an in-place operator")
    return getattr(ufunc, method)(*converted, **kwargs)


# one-array functions whose parameters NumPy also takes by position
_POSITIONAL_PARAMS = {"clip": ("a_min", "a_max"), "split": ("indices_or_sections", "axis"),
                      "round": ("decimals",)}


def module_function(op_name):
    """``ndengine.<op_name>(*arrays, **params)`` for a registered op (built-in or a user's)."""
    op = ops.get(op_name)
    # One NDArray per input and nothing else (nd.exp(x), nd.maximum(x, y)): straight to invoke.
    plain_arity = (op.num_inputs if op.kind != "reduce" and op.name not in _POSITIONAL_PARAMS
                   and op.num_outputs == 1 else None)

    def function(*args, **params):
        if len(args) == plain_arity and not params:
            for a in args:
                if type(a) is not NDArray:
                    break
            else:
                return invoke(op, list(args))[0]
        if op.kind == "reduce":
            array_args, extra = args[:1], args[1:]
            for key, value in zip(("axis", "keepdims"), extra):
                params[key] = value
        elif op.name in _POSITIONAL_PARAMS:  # numpy.clip(x, lo, hi), numpy.split(x, 3, 1)
            array_args = args[:1]
            for key, value in zip(_POSITIONAL_PARAMS[op.name], args[1:]):
                params[key] = value
        elif op.num_inputs is None:  # concatenate, stack: a sequence of arrays
            array_args = tuple(args[0]) if args else ()
            for key, value in zip(("axis",), args[1:]):
                params[key] = value
        else:
            array_args, extra = args[:op.num_inputs], args[op.num_inputs:]
            if extra:
                raise TypeError(f"{op_name} takes {op.num_inputs} array arguments; pass "
                                "parameters by keyword")
        ctx = next((a.context for a in array_args if isinstance(a, NDArray)),
                   current_context())
        operands = [_as_operand(a, ctx) for a in array_args]
        if op.kind in ("unary", "reduce") or op.num_inputs is None:
            operands = [a if isinstance(a, NDArray) else _as_operand(np.asarray(a), ctx)
                        for a in operands]
        outputs = invoke(op, operands, params, ctx=ctx)
        return outputs[0] if len(outputs) == 1 and op.name != "split" else outputs

    function.__name__ = op_name
    function.__doc__ = op.doc
    return function


_install_methods()
