"""Autograd's tape: what a recording thread's ops did, and the backward pass over it (MXNet's
imperative autograd). Gradients are ordinary pushed ops: asynchronous, fused where the
pipeline fuses, on the arrays' device.

While a thread records (``autograd.record()``), ``invoke`` hands each op to
``invoke_recorded`` (its one line at the top), which runs it as usual and appends an `_Entry`
when one of its inputs is tracked (a variable, or an output of an earlier entry); a view of a
tracked array (``x[1:]``, ``x.T``, ``x.reshape(...)``) is an entry too (``note_view``).
``backward`` walks the entries in reverse, calls each op's rule (``ops.gradients.rules``)
with the output's gradient, reduces each input's gradient to its shape (broadcasting), sums
the gradients an array receives, and writes the variables' ``grad`` (``grad_req`` "write"
or "add"; a "write" variable the heads reach only through results without a gradient, such
as comparisons, gets zeros, as in MXNet). It pushes with recording paused, unless
``create_graph`` (higher order). An op's rule: ``ops.gradients.rules.rule_of(op)`` (a
registered op's NumPy ``gradient``, else ``RULES``).

State, field by field:
    RECORDING   [number of threads recording now]: invoke's one check, read without a lock.
    _state      per thread: ``recording`` and ``training`` (record's flags), ``entries`` (the
                tape, in push order), ``tracked`` (id -> array of every array the tape
                reaches: variables and entries' outputs; holding them keeps ids unique).
    _variables  id(NDArray) -> `_Variable` (a weak reference to the array, its ``grad`` array
                and ``grad_req``), set by ``attach_grad``; the array's death removes it
                (NDArrays are unhashable, as NumPy's arrays).
Invariant: an entry's inputs and outputs stay alive while it is on the tape (a backward that
does not retain the graph takes the tape and lets each entry, and its outputs' gradients, go
once the entry's gradient ran); an in-place
write (``out=``) into a tracked array while recording raises (the value a backward needs
would be gone), as MXNet's does. ``x[key] = v`` is the exception (``record_write``): taped as
``assign_index`` into ``x`` whatever the key, so later reads of ``x`` reach ``v``; when ``x``
is tracked, the entries that read its earlier value read a copy of it from then on.
"""
import threading
import weakref

import numpy as np

from .. import ops
from ..ops.gradients.rules import RULES, rule_of
from . import array as _array
from .array import NDArray
from .chunk import RECORDING, array_on

__all__ = ["RECORDING", "set_recording", "is_recording", "is_training", "invoke_recorded",
           "note_view", "record_write", "is_tracked", "attach_grad", "grad_of", "backward",
           "detach", "record_custom"]

_count_lock = threading.Lock()
_variables = {}
INVOKE = [None]  # pipeline.invoke, set by pipeline (which imports this module)


class _State(threading.local):
    def __init__(self):
        self.recording = False
        self.training = False
        self.entries = []
        self.tracked = {}


_state = _State()
_array.VIEW_HOOK[0] = lambda base, view: note_view(base, view)
_array.WRITE_HOOK[0] = lambda target, key, value: record_write(target, key, value)


class _Variable:
    __slots__ = ("ref", "grad", "req")

    def __init__(self, x, grad, req):
        key = id(x)
        self.ref = weakref.ref(x, lambda _, key=key: _variables.pop(key, None))
        self.grad, self.req = grad, req


class _Entry:
    """One recorded op: ``rule(f, grads, inputs, outputs, params)`` gives its inputs'
    gradients (``name``: the op's, for errors)."""
    __slots__ = ("name", "rule", "inputs", "outputs", "params")

    def __init__(self, name, rule, inputs, outputs, params):
        self.name, self.rule, self.inputs = name, rule, inputs
        self.outputs, self.params = outputs, params


def set_recording(recording, training):
    """Set this thread's flags; returns the previous (recording, training)."""
    state = _state
    previous = (state.recording, state.training)
    if recording != state.recording:
        with _count_lock:
            RECORDING[0] += 1 if recording else -1
    state.recording, state.training = recording, training
    return previous


def is_recording():
    return _state.recording


def is_training():
    return _state.training


def _tracked(x):
    return type(x) is NDArray and (id(x) in _state.tracked or id(x) in _variables)


def is_tracked(x):
    """Whether this thread records and ``x`` is on its tape (a variable, or what ops made
    from one): what reads ``x`` should be an op, or the gradient is lost."""
    return _state.recording and _tracked(x)


def invoke_recorded(op, inputs, params, out, ctx, ctx_check, extra_writes, overwrites):
    """``invoke`` while this thread records: run the op (recording paused inside), then
    append it to the tape if it reads a tracked array."""
    state = _state
    if not state.recording:
        return INVOKE[0](op, inputs, params, out, ctx, ctx_check, extra_writes, overwrites)
    if out is not None and _tracked(out):
        raise RuntimeError(f"{op.name}: an in-place write into an array recorded for "
                           "backward (its value may be needed); write into a new array, "
                           "or pause recording (autograd.pause())")
    state.recording = False
    try:
        outputs = INVOKE[0](op, inputs, params, out, ctx, ctx_check, extra_writes, overwrites)
    finally:
        state.recording = True
    if any(_tracked(x) for x in inputs):
        _append(op.name, rule_of(op), list(inputs), list(outputs), params or {})
    return outputs


def note_view(base, view):
    """A view of a tracked array, made while recording, is an entry of the tape."""
    if _state.recording and _tracked(base):
        rule = _view_rule if view.dtype == base.dtype else None
        _append("view", rule, [base], [view], {})


def record_write(target, key, value):
    """``target[key] = value`` (core/array.py's ``__setitem__``, any key) while recording:
    False when neither is tracked (the caller writes as usual); otherwise the write is
    pushed here as ``assign_index`` into ``target`` and taped, so what later reads
    ``target`` reaches ``value``'s gradient. A tracked ``target`` (what ops made while
    recording) keeps its earlier value for the entries that read it: that moves to a copy,
    which those entries read from now, and the overwritten region takes no gradient. A
    variable, or an array other tracked arrays view, cannot be written (as MXNet: the
    value a backward needs would be gone)."""
    state = _state
    if not state.recording or not (_tracked(target) or _tracked(value)):
        return False
    source = _moved_aside(target) if _tracked(target) else target
    inputs, params = [source, value], {"key": key}
    state.recording = False  # the op's own views are not entries
    try:
        outputs = INVOKE[0](ops.get("assign_index"), inputs, params, target)
    finally:
        state.recording = True
    _append("assign_index", RULES["assign_index"], inputs, list(outputs), params)
    return True


def _moved_aside(x):
    """What the entries that read or made the tracked ``x`` read from now that ``x`` is to
    be overwritten: ``x`` itself when they are all writes by index (whose gradients read no
    values: a chain of ``x[i] = ...`` copies nothing), else a copy of ``x`` that takes its
    place on the tape."""
    state = _state
    if id(x) in _variables or any(other is not x and other._chunk is x._chunk
                                  for other in state.tracked.values()):
        raise RuntimeError("setitem: an in-place write into an array recorded for backward "
                           "that is a variable, or that views of it made while recording "
                           "share (the value a backward needs would be gone); write into a "
                           "copy (y = x.copy(); y[key] = v), or pause recording "
                           "(autograd.pause())")
    users = [entry for entry in state.entries
             if any(a is x for a in entry.inputs) or any(a is x for a in entry.outputs)]
    for entry in users:
        if entry.rule is _custom_rule:
            raise RuntimeError("setitem: an in-place write into an array an autograd."
                               f"Function ({entry.name}) read or made while recording (it "
                               "may have saved it for backward); write into a copy")
    if all(entry.name == "assign_index" for entry in users):
        return x
    state.recording = False
    try:
        old = F("copy", x)
    finally:
        state.recording = True
    for entry in users:
        entry.inputs = [old if a is x else a for a in entry.inputs]
        entry.outputs = [old if a is x else a for a in entry.outputs]
    del state.tracked[id(x)]
    state.tracked[id(old)] = old
    return old


def record_custom(name, rule, inputs, outputs):
    """An ``autograd.Function``'s call: ``rule(grads)`` gives its inputs' gradients."""
    if _state.recording and any(_tracked(x) for x in inputs):
        _append(name, _custom_rule, list(inputs), list(outputs), {"rule": rule})


def _custom_rule(f, grads, inputs, outputs, params):
    return params["rule"](grads)


def _append(name, rule, inputs, outputs, params):
    state = _state
    state.entries.append(_Entry(name, rule, inputs, outputs, params))
    for x in outputs:
        state.tracked[id(x)] = x


def attach_grad(x, grad_req="write", grad=None):
    """Make ``x`` a variable: its gradient goes to ``grad`` (zeros by default)."""
    if grad_req not in ("write", "add", "null"):
        raise ValueError(f"grad_req must be 'write', 'add' or 'null', got {grad_req!r}")
    if grad is None:
        grad = F.zeros(x.shape, x.dtype, x)
    _variables[id(x)] = _Variable(x, grad, grad_req)


def grad_of(x):
    variable = _variables.get(id(x))
    return None if variable is None else variable.grad


def detach(x):
    """A view of ``x`` that no tape tracks."""
    state = _state
    was, state.recording = state.recording, False
    try:
        return x._view_of(x.shape, x._offset, x.strides)
    finally:
        state.recording = was


class _Functions:
    """What gradient rules call: ``f(name, *inputs, **params)`` pushes the op ``name``."""

    def __call__(self, name, *inputs, **params):
        return INVOKE[0](ops.get(name), list(inputs), params or None)[0]

    @staticmethod
    def reshape(x, shape):
        return x.reshape(shape)

    @staticmethod
    def transpose(x, axes=None):
        return x.transpose(axes) if axes is not None else x.T

    @staticmethod
    def outputs(name, inputs, params=None, ctx=None):
        """Every output of the op ``name`` (``f(name, ...)`` gives the first)."""
        return INVOKE[0](ops.get(name), list(inputs), params or None, ctx=ctx)

    @staticmethod
    def recording():
        """Whether the tape records the ops rules push (``create_graph``)."""
        return is_recording()

    def zeros(self, shape, dtype, like):
        return INVOKE[0](ops.get("fill"), [], {"shape": tuple(shape), "dtype": dtype,
                                               "value": 0}, ctx=like.context)[0]

    def scatter_add(self, like, index, values):
        """Zeros shaped as ``like``, ``values`` added at ``index`` (repeats accumulate)."""
        target = self.zeros(like.shape, values.dtype, values)
        INVOKE[0](ops.get("ufunc_method"), [target, values],
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


def _view_rule(f, grads, inputs, outputs, params):
    """A view's gradient: zeros shaped as its base's whole chunk, the view's gradient
    written through the same geometry, read back through the base's."""
    (base,), (view,), (g,) = inputs, outputs, grads
    chunk_elements = base._chunk.nbytes // base.dtype.itemsize
    whole = f.zeros((chunk_elements,), base.dtype, base)
    target = array_on(whole._chunk, view.shape, view.dtype, view._offset, view._strides)
    target[...] = g
    return [array_on(whole._chunk, base.shape, base.dtype, base._offset, base._strides)]


def backward(heads, head_grads, variables=None, retain_graph=False, create_graph=False):
    """Gradients of ``heads`` (seeded with ``head_grads``, ones where None) with respect to
    ``variables`` (returned), or to every attached variable (written to their ``grad``)."""
    state = _state
    grads = {}
    for head, seed in zip(heads, head_grads):
        if id(head) not in state.tracked and id(head) not in _variables:
            raise ValueError("cannot differentiate an array that was not recorded: compute it "
                             "inside autograd.record() from arrays with attach_grad()")
        if seed is None:
            seed = F("add", F.zeros(head.shape, head.dtype, head), 1)
        _accumulate(grads, head, seed)
    was = set_recording(create_graph, state.training)
    try:
        wanted = set(_variables) if variables is None else {id(x) for x in variables}
        reached = set()  # variables an entry the heads depend on reads (MXNet's graph)
        entries = list(state.entries) if retain_graph else state.entries
        if not retain_graph:  # each entry is let go once its gradient ran (memory)
            state.entries, state.tracked = [], {}
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
                                "gradient_rules; an op of your own takes a NumPy gradient: "
                                "register_op(..., gradient=g) or op.set_gradient(g)): "
                                "backward cannot pass through it")
            out_grads = [g if g is not None else F.zeros(x.shape, x.dtype, x)
                         for g, x in zip(out_grads, entry.outputs)]
            in_grads = entry.rule(F, out_grads, entry.inputs, entry.outputs, entry.params)
            for x, g in zip(entry.inputs, in_grads):
                if g is not None and type(x) is NDArray:
                    _accumulate(grads, x, F.sum_to(g, x.shape))
                elif type(x) is NDArray and id(x) in _variables:
                    reached.add(id(x))
        results = None
        if variables is None:
            for key, variable in list(_variables.items()):
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
        set_recording(*was)
    return results


def _accumulate(grads, x, g):
    if np.dtype(g.dtype) != np.dtype(x.dtype):
        g = g.astype(x.dtype)
    previous = grads.get(id(x))
    grads[id(x)] = g if previous is None else F("add", previous, g)
