"""Module functions with NumPy's own parameter lists, made from tables.

``numpy_function(name, numpy_fn, implementation)`` is ``name`` with ``inspect.signature`` of
NumPy's function: a call binds its arguments as NumPy's would (a wrong keyword or a missing
argument is Python's own TypeError, naming it), fills in NumPy's defaults and hands the
arguments, by name, to the implementation. ``method`` makes an NDArray method of such a
function. The argument helpers convert array-likes and read parameters as NumPy does.
"""
import inspect

import numpy as np

from ..core import NDArray, as_operand, invoke
from ..engine import current_context
from .. import ops
from ..ops.families.numpy_operators import FrozenArray
from .ufuncs import check_out, output_array

__all__ = ["numpy_function", "numpy_signature", "method", "array_of", "operand_of", "context_of", "frozen", "read_values",
           "push"]


def numpy_function(name, numpy_fn, implementation, doc=None, module="ndengine",
                   by_name=False):
    """``name(<numpy_fn's parameters>)``: the arguments bound as NumPy binds them, NumPy's
    defaults filled in, then ``implementation(*args, **kwargs)`` (an implementation with
    NumPy's parameter list), or with ``by_name`` ``implementation(arguments)``, a dict of every
    argument by name (``**kwargs`` keywords among them)."""
    signature = numpy_signature(name, numpy_fn)
    bind = signature.bind
    var_keyword = next((p.name for p in signature.parameters.values()
                        if p.kind is p.VAR_KEYWORD), None)

    def function(*args, **kwargs):
        bound = bind(*args, **kwargs)
        bound.apply_defaults()
        if not by_name:
            return implementation(*bound.args, **bound.kwargs)
        arguments = dict(bound.arguments)
        if var_keyword is not None:
            arguments.update(arguments.pop(var_keyword))
        return implementation(arguments)

    function.__signature__ = signature
    function.__name__ = function.__qualname__ = name
    function.__module__ = module
    numpy_name = module.replace("ndengine", "numpy") + "." + name
    function.__doc__ = f"As ``{numpy_name}``." + (f" {doc}" if doc else "")
    return function


# NumPy's C functions without a text signature in older NumPy 2 releases: their NumPy 2.4
# parameter lists
_C_SIGNATURES = {
    "concatenate": "arrays, /, axis=0, out=None, *, dtype=None, casting='same_kind'",
    "inner": "a, b, /", "vdot": "a, b, /"}


def numpy_signature(name, numpy_fn):
    try:
        return inspect.signature(numpy_fn)
    except ValueError:
        if name not in _C_SIGNATURES:
            raise
        return inspect.signature(eval(f"lambda {_C_SIGNATURES[name]}: None"))  # noqa: S307


def method(function, array_param, renames=None):
    """An NDArray method from a module function: the array is ``self`` (NumPy's method
    signature: the function's, without the array; ``renames``: method name -> function
    name of parameters NumPy's method calls differently)."""
    renames = renames or {}
    back = {v: k for k, v in renames.items()}
    signature = inspect.signature(function)
    params = [p.replace(name=back.get(p.name, p.name))
              for p in signature.parameters.values() if p.name != array_param]
    self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
    method_signature = signature.replace(parameters=[self_param, *params])

    def bound_method(self, *args, **kwargs):
        arguments = method_signature.bind(self, *args, **kwargs).arguments
        del arguments["self"]
        return function(**{renames.get(k, k): v for k, v in arguments.items()},
                        **{array_param: self})

    bound_method.__signature__ = method_signature
    bound_method.__name__ = bound_method.__qualname__ = function.__name__
    bound_method.__doc__ = function.__doc__
    return bound_method


def context_of(*values):
    """The context of the first NDArray among ``values`` (sequences searched one level)."""
    for value in values:
        if isinstance(value, NDArray):
            return value.context
        if isinstance(value, (list, tuple)):
            for part in value:
                if isinstance(part, NDArray):
                    return part.context
    return current_context()


def operand_of(value, ctx=None):
    """Python bool/int/float stay scalars (weak, as NumPy's ufunc-like functions take them);
    anything else as ``array_of``."""
    if type(value) in (bool, int, float):
        return value
    return array_of(value, ctx)


def array_of(value, ctx=None):
    """An NDArray: NDArrays as they are, anything else converted as numpy.asarray would."""
    if isinstance(value, NDArray):
        return value
    return as_operand(np.asarray(value), ctx if ctx is not None else current_context())


def read_values(value):
    """A parameter that decides the output's shape (repeats, reps, pad_width, ...): an NDArray
    there is read at the call (a wait: the shape depends on its values)."""
    if isinstance(value, NDArray):
        return value.asnumpy()
    if isinstance(value, (list, tuple)) and any(isinstance(v, NDArray) for v in value):
        return type(value)(read_values(v) for v in value)
    return value


def frozen(value):
    """An op param as a key of the plan memo: lists as tuples, NumPy arrays as FrozenArrays
    (their dtype kept: NumPy's function then converts the array as it converts it)."""
    if isinstance(value, np.ndarray):
        return FrozenArray(value)
    if isinstance(value, (list, tuple)):
        return tuple(frozen(v) for v in value)
    return value


def push(op_name, inputs, params, out=None, name=None, ctx=None):
    """Push the op on ``inputs`` (NDArrays or Python scalars): its outputs, or ``out``."""
    op = ops.get(op_name)
    if ctx is None:
        ctx = context_of(*inputs)
    out = output_array(out, name or op_name)
    if out is None:
        return invoke(op, inputs, params, ctx=ctx)
    check_out(out, ctx, name or op_name)
    invoke(op, inputs, params, out=out, ctx=ctx)
    return [out]
