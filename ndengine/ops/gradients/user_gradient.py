"""``user_gradient``: a user's NumPy gradient run as one op, for autograd.

``ndengine.register_op(name, ..., gradient=g)`` (or ``op.set_gradient(g)``) gives an op a
gradient written with NumPy: ``g(out_grad, inputs, output, **params)`` returns one gradient
per input (None where an input takes none), from the output's gradient, the op's inputs and
its output (NumPy arrays; Python scalars stay scalars); an op with several outputs gets the
lists of their gradients and of its outputs. Autograd (ops/gradients/rules.py ``rule_of``)
pushes this op for it, so the gradient runs on the engine, ordered after what it reads, like
every other op: its inputs are the output gradients, the outputs and the op's inputs; its
outputs the gradients of the op's array inputs (``arrays`` marks them), shaped and typed as
those inputs (a gradient of the broadcast shape is summed down to its input's).
On a gpu context it runs on host copies (CuPy arrays are no NumPy arrays).
"""
from __future__ import annotations

import numpy as np

from ..outputs import write_with_req
from ..registry import add_operator, numpy_backed
from ..shapes import shape_of

__all__ = ["register_all"]


def _gradient_dtype(value):
    dtype = np.dtype(value.dtype)
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)


def _split(inputs, num_outputs):
    return (inputs[:num_outputs], inputs[num_outputs:2 * num_outputs],
            inputs[2 * num_outputs:])


def _count(*inputs_and_params):
    *_, params = inputs_and_params
    return sum(params["arrays"])


def infer(*inputs, gradient, params, num_outputs, arrays):
    op_inputs = _split(inputs, num_outputs)[2]
    return [(shape_of(x), _gradient_dtype(x)) for x, is_array in zip(op_inputs, arrays)
            if is_array]


def _fitted(result, shape):
    """``result`` as ``shape``: summed over the axes broadcasting added or stretched."""
    result = np.asarray(result)
    extra = result.ndim - len(shape)
    if extra > 0:
        result = result.sum(axis=tuple(range(extra)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and result.ndim == len(shape)
                      and result.shape[i] != 1)
    if stretched:
        result = result.sum(axis=stretched, keepdims=True)
    return np.broadcast_to(result, shape)


def kernel(inputs, outputs, req, *, gradient, params, num_outputs, arrays):
    out_grads, op_outputs, op_inputs = _split(list(inputs), num_outputs)
    if num_outputs == 1:
        results = gradient(out_grads[0], op_inputs, op_outputs[0], **params)
    else:
        results = gradient(out_grads, op_inputs, op_outputs, **params)
    results = list(results)
    if len(results) != len(op_inputs):
        raise ValueError(f"{getattr(gradient, '__name__', 'gradient')} returned "
                         f"{len(results)} gradients for {len(op_inputs)} inputs")
    written = iter(zip(outputs, req))
    for result, is_array in zip(results, arrays):
        if not is_array:
            continue
        out, r = next(written)
        value = 0 if result is None else _fitted(result, out.shape)
        write_with_req(out, r, lambda target, value=value: np.copyto(target, value,
                                                                     casting="unsafe"))


def register_all() -> None:
    op = numpy_backed("user_gradient", num_inputs=None, num_outputs=_count, kind="other",
                      infer=infer, doc="a user's NumPy gradient (Operator.gradient) as an "
                      "op: autograd's rule for ops registered with gradient=")
    add_operator(op.set_kernel("cpu", kernel))
    from ..host_fallback import host_planner
    op.set_device_planner("gpu", host_planner)
