"""Module functions (``ndengine.exp``, ``ndengine.dot``, ...), generated from the registry."""
from .. import ops
from ..core import NDArray, as_operand as _as_operand, invoke
from .operators import module_function

__all__ = ["FUNCTIONS", "broadcast_to"]

_NAMES = ("exp", "log", "log1p", "expm1", "sqrt", "square", "sin", "cos", "tan", "tanh",
          "arcsin", "arccos", "arctan", "sigmoid", "relu", "sign", "floor", "ceil", "round",
          "abs", "negative", "clip", "maximum", "minimum", "where", "dot", "matmul",
          "concatenate", "stack", "split", "sum", "mean", "max", "min", "prod", "argmax",
          "argmin", "std", "var", "add", "subtract", "multiply", "true_divide",
          "floor_divide", "mod", "power", "equal", "not_equal", "less", "less_equal",
          "greater", "greater_equal", "bitwise_and", "bitwise_or", "bitwise_xor", "invert",
          "logical_not")

FUNCTIONS = {name: module_function(name) for name in _NAMES}
FUNCTIONS["divide"] = FUNCTIONS["true_divide"]


def broadcast_to(x, shape):
    """A new array holding ``x`` broadcast to ``shape`` (a copy, unlike numpy's read-only
    view, so writes to it never alias)."""
    x = _as_operand(x, None) if not isinstance(x, NDArray) else x
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return invoke(ops.get("copy"), [x], {"shape": shape})[0]
