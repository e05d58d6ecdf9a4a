"""``ndengine.autograd``: MXNet's imperative autograd (``mx.autograd``) on the engine.

    x = nd.array([1.0, 2.0, 3.0]); x.attach_grad()
    with autograd.record():
        y = (x * x).sum()
    y.backward()           # pushes the gradient ops; x.grad is [2., 4., 6.] once they ran

``record()`` tapes, per thread, the ops whose inputs are tracked (variables made by
``attach_grad``, and what ops made from them); ``backward`` walks the tape in reverse and
pushes each op's gradient rule (``ndengine.ops.gradients.rules``) as ordinary ops, so
gradients are asynchronous like everything else (core/tape.py and core/backward.py have
the mechanics).
"""
from contextlib import contextmanager

from ..core import NDArray
from ..core import backward as _backward_pass
from ..core import tape as _tape

__all__ = ["record", "pause", "train_mode", "predict_mode", "is_recording", "is_training",
           "backward", "grad", "Function", "mark_variables"]

is_recording = _tape.is_recording
is_training = _tape.is_training


@contextmanager
def _scope(recording, training):
    previous = _tape.set_recording(recording, training)
    try:
        yield
    finally:
        _tape.set_recording(*previous)


def record(train_mode=True):
    """Record the ops of this thread for ``backward`` (and set training mode)."""
    return _scope(True, train_mode)


def pause(train_mode=False):
    """Stop recording inside a ``record()`` block."""
    return _scope(False, train_mode)


def train_mode():
    return _scope(_tape.is_recording(), True)


def predict_mode():
    return _scope(_tape.is_recording(), False)


def _as_list(value):
    return list(value) if isinstance(value, (list, tuple)) else [value]


def backward(heads, head_grads=None, retain_graph=False, train_mode=True):
    """Gradients of ``heads`` into every attached variable's ``grad`` (MXNet's
    ``autograd.backward``); ``head_grads``: the heads' gradients (default: ones)."""
    heads = _as_list(heads)
    seeds = [None] * len(heads) if head_grads is None else _as_list(head_grads)
    if len(seeds) != len(heads):
        raise ValueError(f"{len(heads)} heads, {len(seeds)} head gradients")
    _backward_pass.backward(heads, seeds, retain_graph=retain_graph)


def grad(heads, variables, head_grads=None, retain_graph=None, create_graph=False,
         train_mode=True):
    """The gradients of ``heads`` with respect to ``variables`` (returned, not written to
    their ``grad``); ``create_graph``: the gradient ops are recorded too (higher order)."""
    heads, single = _as_list(heads), not isinstance(variables, (list, tuple))
    seeds = [None] * len(heads) if head_grads is None else _as_list(head_grads)
    results = _backward_pass.backward(heads, seeds, _as_list(variables),
                             retain_graph=create_graph if retain_graph is None else retain_graph,
                             create_graph=create_graph)
    return results[0] if single else results


def mark_variables(variables, gradients, grad_reqs="write"):
    """Attach ``gradients`` (arrays) as the ``grad`` of ``variables``."""
    reqs = _as_list(grad_reqs) * (1 if isinstance(grad_reqs, (list, tuple)) else
                                  len(_as_list(variables)))
    for x, g, req in zip(_as_list(variables), _as_list(gradients), reqs):
        _backward_pass.attach_grad(x, req, g)


class Function:
    """A user-defined op: subclass with ``forward(*inputs)`` and ``backward(*output_grads)``
    (NDArrays in, NDArrays out); ``self.save_for_backward(*arrays)`` keeps what backward
    needs in ``self.saved_tensors``. Calling an instance runs forward (not recorded) and
    tapes the call as one op whose gradient is ``backward``."""

    def __init__(self):
        self.saved_tensors = ()

    def save_for_backward(self, *arrays):
        self.saved_tensors = arrays

    def forward(self, *inputs):
        raise NotImplementedError

    def backward(self, *output_grads):
        raise NotImplementedError

    def __call__(self, *inputs):
        with pause(_tape.is_training()):
            outputs = self.forward(*inputs)
        results = _as_list(outputs)

        def rule(grads):
            return _as_list(self.backward(*grads))
        _tape.record_custom(type(self).__name__, rule, inputs, results)
        return outputs


def _attach_grad(self, grad_req="write", stype=None):
    """Make this array a variable autograd computes a gradient for (MXNet's
    ``attach_grad``): ops recorded under ``autograd.record()`` that depend on it are taped, and
    ``backward`` writes the gradient into ``x.grad`` (``grad_req='write'``), adds it there
    (``'add'``) or leaves it (``'null'``). ``stype`` (sparse storage) is not supported."""
    _backward_pass.attach_grad(self, grad_req)


def _backward(self, out_grad=None, retain_graph=False, train_mode=True):
    """Compute the gradients of this array (recorded under ``autograd.record()``) with respect
    to every array that called ``attach_grad``, into their ``.grad`` (``autograd.backward``
    of this array alone). ``out_grad``: the head gradient (default ones); ``retain_graph``:
    keep the tape for another backward. The gradient ops are pushed: this returns at once."""
    backward([self], None if out_grad is None else [out_grad], retain_graph=retain_graph)


NDArray.attach_grad = _attach_grad
NDArray.grad = property(_tape.grad_of, doc="The gradient ``backward`` wrote for this array "
                        "(after ``attach_grad``), an NDArray; None before any.")
NDArray.backward = _backward
NDArray.detach = _tape.detach
