"""The arguments of module functions, read as NumPy reads them: ``out=`` (an NDArray, or a
tuple of one), the context a call runs on, operands (Python scalars kept weak where NumPy keeps
them so), values read at the call, op params frozen for the plan memo, and the push of an op on
them (``apply_op`` for the ufunc-like functions, ``push`` for the others).

Nothing here has state; every module function of ``ndengine.ndarray`` reads its arguments with
these helpers.
"""
import numpy as np

from .. import ops
from ..core import NDArray, as_operand, invoke
from ..engine import current_context
from ..ops.dtypes import output_casting_error
from ..ops.families.numpy_operators import FrozenArray
from ..ops.shapes import broadcast_shapes

__all__ = ["defers_to", "output_array", "check_out", "ufunc_out_operands", "context_of",
           "apply_op", "first_context", "operand_of", "array_of", "read_values", "frozen",
           "push", "apply_casting"]


def defers_to(value):
    """Whether ``value`` is another library's array taking part in NumPy's protocols (a dask
    array, say), which NDArrays cannot take as operands: NDArray's operators and ufuncs then
    return NotImplemented, so its own implementation runs (NEP 13), as for NumPy's arrays."""
    kind = type(value)
    return hasattr(kind, "__array_ufunc__") and not issubclass(kind, (NDArray, np.ndarray))


def output_array(out, name):
    """``out=`` as NumPy takes it (an array, or a tuple of one) -> an NDArray or None."""
    if type(out) is tuple:
        if len(out) != 1:
            raise ValueError(f"{name}: the 'out' tuple must have exactly one entry per "
                             f"output (1), got {len(out)}")
        (out,) = out
    if out is None or isinstance(out, NDArray):
        return out
    raise TypeError(f"{name}: out={type(out).__name__} is not supported: ndengine writes "
                    "only into NDArrays")


def check_out(out, ctx, name):
    if out.context != ctx:
        raise ValueError(f"{name}: out is on {out.context}, the inputs on {ctx}; move one "
                         "with .copyto(ctx) or .as_in_context(ctx) first")


def ufunc_out_operands(op, operands, params, out):
    """Operands whose result has ``out``'s shape: NumPy broadcasts a ufunc's inputs to its
    output's shape (never the result into a smaller out)."""
    plan = op.plan(tuple(operands), params)  # op.infer, its checks of values put off
    [(shape, dtype)] = plan.outputs
    if dtype != out.dtype and not np.can_cast(dtype, out.dtype, "same_kind"):
        # NumPy checks the cast before the values (power's negative int exponent) and the
        # shapes (invoke raises the same error)
        raise output_casting_error(op.name, dtype, out.dtype)
    if plan.check is not None:
        plan.check(operands, params)
    if shape == out.shape:
        return operands
    try:
        full = broadcast_shapes(shape, out.shape)
    except ValueError:
        full = None
    if full != out.shape:
        raise ValueError(f"non-broadcastable output operand with shape {out.shape} doesn't "
                         f"match the broadcast shape {full or shape}")
    operands = list(operands)
    first = next((i for i, a in enumerate(operands) if isinstance(a, NDArray)), None)
    if first is None:
        # Every operand a scalar: an array made of one would be a strong operand (its int64
        # refused by ``dtype='uint8'``, say), where NumPy keeps Python scalars weak. The caller
        # broadcasts the 0-d result into out instead: the same values, cast as NumPy casts.
        return None
    operands[first] = invoke(ops.get("copy"), [operands[first]], {"shape": out.shape})[0]
    return operands


def context_of(values, out=None):
    """The context of the first NDArray in ``values`` (else out's, else the current one)."""
    for value in values:
        if isinstance(value, NDArray):
            return value.context
    return out.context if out is not None else current_context()


def apply_op(op, arrays, params, out, *, as_arrays=False, broadcast_out=False):
    """Push ``op`` on ``arrays`` (converted to operands); into ``out`` when one is given."""
    out = output_array(out, op.name)
    ctx = context_of(arrays, out)
    operands = [as_operand(a, ctx, numpy_scalars=True) for a in arrays]
    if as_arrays:  # ops that need array inputs: Python scalars become 0-d arrays
        operands = [a if isinstance(a, NDArray) else as_operand(np.asarray(a), ctx)
                    for a in operands]
    if out is None:
        return invoke(op, operands, params, ctx=ctx)[0]
    check_out(out, ctx, op.name)
    if broadcast_out:
        broadcast = ufunc_out_operands(op, operands, params, out)
        if broadcast is None:  # scalars only: their 0-d result, broadcast and cast into out
            result = invoke(op, operands, params, ctx=ctx)[0]
            invoke(ops.get("copy"), [result], {"shape": out.shape, "dtype": out.dtype},
                   out=out)
            return out
        operands = broadcast
    invoke(op, operands, params, out=out, ctx=ctx)
    return out


def apply_casting(op, ufunc, arrays, params, out, casting):
    """A ufunc call with ``casting=`` other than NumPy's default 'same_kind': NumPy's own
    call on empty stand-ins of the operands (their dtypes; Python scalars themselves, weak)
    raises NumPy's error for a cast the rule refuses, at the call; then the rules stricter
    than 'same_kind' run the op as it is, and 'unsafe' casts what 'same_kind' would refuse:
    inputs to ``dtype=`` before the op, the result into ``out`` after it (a second op)."""
    dtype = params.get("dtype")
    target = output_array(out, op.name)
    as_arrays = op.kind == "unary"
    ufunc(*map(_stand_in, arrays), out=None if target is None else _stand_in(target),
          dtype=dtype, casting=casting)
    if casting != "unsafe":
        return apply_op(op, arrays, params, out, as_arrays=as_arrays,
                        broadcast_out=True)
    if dtype is not None:
        arrays = [_cast_unsafely(a, dtype) for a in arrays]
    if target is None:
        return apply_op(op, arrays, params, None, as_arrays=as_arrays)
    [(_, result_dtype)] = op.plan(tuple(as_operand(a, target.context, numpy_scalars=True)
                                        for a in arrays), params).outputs
    if np.can_cast(result_dtype, target.dtype, "same_kind"):
        return apply_op(op, arrays, params, target, as_arrays=as_arrays,
                        broadcast_out=True)
    result = apply_op(op, arrays, params, None, as_arrays=as_arrays)
    check_out(target, result.context, op.name)
    invoke(ops.get("copy"), [result], {"shape": target.shape, "dtype": target.dtype},
           out=target)  # broadcast and cast into out, as NumPy's unsafe output cast
    return target


def _stand_in(value):
    """An empty array of ``value``'s dtype (Python scalars as they are: NumPy keeps them weak)."""
    if type(value) in (bool, int, float, complex):
        return value
    if isinstance(value, (NDArray, np.ndarray, np.generic)):
        return np.empty(0, value.dtype)
    return np.asarray(value).reshape(-1)[:0]


def _cast_unsafely(value, dtype):
    """``value`` cast to ``dtype`` where 'same_kind' would refuse it (casting='unsafe' with
    ``dtype=``: NumPy casts the inputs to the loop's dtype)."""
    if isinstance(value, NDArray):
        return value if np.can_cast(value.dtype, dtype, "same_kind") else value.astype(dtype)
    array = np.asarray(value)
    if np.can_cast(array.dtype, dtype, "same_kind"):
        return value
    return array.astype(dtype)[()] if array.ndim == 0 else array.astype(dtype)


def first_context(*values):
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
        ctx = first_context(*inputs)
    out = output_array(out, name or op_name)
    if out is None:
        return invoke(op, inputs, params, ctx=ctx)
    check_out(out, ctx, name or op_name)
    invoke(op, inputs, params, out=out, ctx=ctx)
    return [out]
