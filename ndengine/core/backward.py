"""The backward pass over autograd's tape (tape.py; MXNet's imperative ``Backward``).
Gradients are ordinary pushed ops: asynchronous, fused where the pipeline fuses, on the
arrays' device.

``backward`` walks the entries in reverse, calls each op's rule (``ops.gradients.rules``)
with the output's gradient, reduces each input's gradient to its shape (broadcasting), sums
the gradients an array receives, and writes the variables' ``grad`` (``grad_req`` "write"
or "add"; a "write" variable the heads reach only through results without a gradient, such
as comparisons, gets zeros, as in MXNet). It pushes with recording paused, unless
``create_graph`` (higher order). ``F`` is what the rules call to push ops. No state of its
own: the tape and the variables are tape.py's.
"""
import numpy as np

from .. import ops
from . import tape as _tape
from .array import NDArray
from .pipeline import invoke

__all__ = ["attach_grad", "backward", "F"]


def attach_grad(x, grad_req="write", grad=None):
    """Make ``x`` a variable: its gradient goes to ``grad`` (zeros by default)."""
    if grad_req not in ("write", "add", "null"):
        raise ValueError(f"grad_req must be 'write', 'add' or 'null', got {grad_req!r}")
    if grad is None:
        grad = F.zeros(x.shape, x.dtype, x)
    _tape.add_variable(x, grad, grad_req)


class _Functions:
    """What gradient rules call: ``f(name, *inputs, **params)`` pushes the op ``name``."""

    def __call__(self, name, *inputs, **params):
        return invoke(ops.get(name), list(inputs), params or None)[0]

    @staticmethod
    def reshape(x, shape):
        return x.reshape(shape)

    @staticmethod
    def transpose(x, axes=None):
        return x.transpose(axes) if axes is not None else x.T

    @staticmethod
    def outputs(name, inputs, params=None, ctx=None):
        """Every output of the op ``name`` (``f(name, ...)`` gives the first)."""
        return invoke(ops.get(name), list(inputs), params or None, ctx=ctx)

    @staticmethod
    def recording():
        """Whether the tape records the ops rules push (``create_graph``)."""
        return _tape.is_recording()

    def zeros(self, shape, dtype, like):
        return invoke(ops.get("fill"), [], {"shape": tuple(shape), "dtype": dtype,
                                               "value": 0}, ctx=like.context)[0]

    def scatter_add(self, like, index, values):
        """Zeros shaped as ``like``, ``values`` added at ``index`` (repeats accumulate)."""
        target = self.zeros(like.shape, values.dtype, values)
        invoke(ops.get("ufunc_method"), [target, values],
                  {"ufunc": np.add, "method": "at", "index": index}, out=target)
        return target

    def sum_to(self, g, shape):
        """``g`` summed over the axes broadcasting added or stretched, to ``shape``."""
        if g.shape == tuple(shape):
            return g
        extra = g.ndim - len(shape)
        axes = tuple(range(extra)) + tuple(extra + i for i, n in enumerate(shape)
                                           if n == 1 and g.shape[extra + i] != 1)
        summed = self("sum", g, axis=axes, keepdims=False) if axes else g
        return summed.reshape(shape)


F = _Functions()


def backward(heads, head_grads, variables=None, retain_graph=False, create_graph=False):
    """Gradients of ``heads`` (seeded with ``head_grads``, ones where None) with respect to
    ``variables`` (returned), or to every attached variable (written to their ``grad``)."""
    grads = {}
    for head, seed in zip(heads, head_grads):
        if not _tape.is_on_tape(head):
            raise ValueError("cannot differentiate an array that was not recorded: compute it "
                             "inside autograd.record() from arrays with attach_grad()")
        if seed is None:
            seed = F("add", F.zeros(head.shape, head.dtype, head), 1)
        _accumulate(grads, head, seed)
    was = _tape.set_recording(create_graph, _tape.is_training())
    try:
        attached = _tape.variables()
        wanted = set(attached) if variables is None else {id(x) for x in variables}
        reached = set()  # variables an entry the heads depend on reads (MXNet's graph)
        # without retain_graph, each entry is let go once its gradient ran (memory)
        entries = _tape.take_entries(retain_graph)
        while entries:
            entry = entries.pop()
            out_grads = [grads.get(id(x)) for x in entry.outputs]
            if not retain_graph:  # no later entry reads these: drop them as we go
                for x in entry.outputs:
                    if id(x) not in wanted:
                        grads.pop(id(x), None)
            if all(g is None for g in out_grads):
                continue
            if entry.rule is None:
                raise TypeError(f"{entry.name} has no gradient rule (ndengine.ops."
                                "gradients.rules; an op of your own takes a NumPy gradient: "
                                "register_op(..., gradient=g) or op.set_gradient(g)): "
                                "backward cannot pass through it")
            out_grads = [g if g is not None else F.zeros(x.shape, x.dtype, x)
                         for g, x in zip(out_grads, entry.outputs)]
            in_grads = entry.rule(F, out_grads, entry.inputs, entry.outputs, entry.params)
            for x, g in zip(entry.inputs, in_grads):
                if g is not None and type(x) is NDArray:
                    _accumulate(grads, x, F.sum_to(g, x.shape))
                elif type(x) is NDArray and id(x) in attached:
                    reached.add(id(x))
        results = None
        if variables is None:
            for key, variable in list(attached.items()):
                g = grads.get(key)
                if g is None and key in reached and variable.req == "write":
                    variable.grad[...] = 0  # reached only through constants: a zero gradient
                if g is None or variable.req == "null":
                    continue
                if variable.req == "add":
                    variable.grad += g
                else:
                    variable.grad[...] = g
        else:
            results = [grads.get(id(x)) if grads.get(id(x)) is not None
                       else F.zeros(x.shape, x.dtype, x) for x in variables]
    finally:
        _tape.set_recording(*was)
    return results


def _accumulate(grads, x, g):
    if np.dtype(g.dtype) != np.dtype(x.dtype):
        g = g.astype(x.dtype)
    previous = grads.get(id(x))
    grads[id(x)] = g if previous is None else F("add", previous, g)
