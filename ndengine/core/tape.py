"""Autograd's tape: what a recording thread's ops did (MXNet's imperative autograd records
the same way). The backward pass over it, which pushes ops, is backward.py's, above the
pipeline; this module pushes an op only through the ``invoke`` its caller passes.

While a thread records (``autograd.record()``), ``invoke`` (pipeline.py) hands each op to
``invoke_recorded`` (its one line at the top), which runs it as usual and appends an `_Entry`
when one of its inputs is tracked (a variable, or an output of an earlier entry); a view of a
tracked array (``x[1:]``, ``x.T``, ``x.reshape(...)``) is an entry too (``note_view``, called
by array.py's ``_view_of``). An entry's rule: ``ops.gradients.rules.rule_of(op)`` (a
registered op's NumPy ``gradient``, else ``RULES``); backward.py calls it with the output's
gradient.

State, field by field:
    RECORDING   [number of threads recording now]: invoke's and _view_of's one check, read
                without a lock.
    _state      per thread: ``recording`` and ``training`` (record's flags), ``entries`` (the
                tape, in push order), ``tracked`` (id -> array of every array the tape
                reaches: variables and entries' outputs; holding them keeps ids unique).
    _variables  id(NDArray) -> `_Variable` (a weak reference to the array, its ``grad`` array
                and ``grad_req``), set by ``add_variable`` (backward.attach_grad); the array's
                death removes it (NDArrays are unhashable, as NumPy's arrays).
Invariant: an entry's inputs and outputs stay alive while it is on the tape (a backward that
does not retain the graph takes the tape, ``take_entries``, and lets each entry, and its
outputs' gradients, go once the entry's gradient ran); an in-place
write (``out=``) into a tracked array while recording raises (the value a backward needs
would be gone), as MXNet's does. ``x[key] = v`` is the exception (``record_write``): taped as
``assign_index`` into ``x`` whatever the key, so later reads of ``x`` reach ``v``; when ``x``
is tracked, the entries that read its earlier value read a copy of it from then on.
An array is tracked by identity (``id`` in ``tracked`` or ``_variables``, which hold every
tracked array alive or forget it at its death), so no other object can pass for one.
"""
import threading
import weakref

from .. import ops
from ..ops.gradients.rules import RULES, rule_of

__all__ = ["RECORDING", "set_recording", "is_recording", "is_training", "invoke_recorded",
           "note_view", "record_write", "is_tracked", "is_on_tape", "add_variable",
           "variables", "take_entries", "grad_of", "detach", "record_custom"]

RECORDING = [0]
_count_lock = threading.Lock()
_variables = {}


class _State(threading.local):
    def __init__(self):
        self.recording = False
        self.training = False
        self.entries = []
        self.tracked = {}


_state = _State()


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


def is_on_tape(x):
    """Whether ``x`` is a variable or what this thread's taped ops made (recording or not)."""
    return id(x) in _state.tracked or id(x) in _variables


def is_tracked(x):
    """Whether this thread records and ``x`` is on its tape (a variable, or what ops made
    from one): what reads ``x`` should be an op, or the gradient is lost."""
    return _state.recording and is_on_tape(x)


def invoke_recorded(invoke, op, inputs, params, out, ctx, ctx_check, extra_writes, overwrites):
    """pipeline's ``invoke`` (passed as ``invoke``) while this thread records: run the op
    (recording paused inside), then append it to the tape if it reads a tracked array."""
    state = _state
    if out is not None and is_on_tape(out):
        raise RuntimeError(f"{op.name}: an in-place write into an array recorded for "
                           "backward (its value may be needed); write into a new array, "
                           "or pause recording (autograd.pause())")
    state.recording = False
    try:
        outputs = invoke(op, inputs, params, out, ctx, ctx_check, extra_writes, overwrites)
    finally:
        state.recording = True
    if any(is_on_tape(x) for x in inputs):
        _append(op.name, rule_of(op), list(inputs), list(outputs), params or {})
    return outputs


def note_view(base, view):
    """A view of a tracked array, made while recording, is an entry of the tape."""
    if _state.recording and is_on_tape(base):
        rule = _view_rule if view.dtype == base.dtype else None
        _append("view", rule, [base], [view], {})


def record_write(invoke, target, key, value, indices=()):
    """``target[key] = value`` (array_methods.py's ``__setitem__``, any key) while
    recording: False when neither is tracked (the caller writes as usual); otherwise the
    write is pushed here (through ``invoke``) as ``assign_index`` into ``target`` and taped,
    so what later reads ``target`` reaches ``value``'s gradient. A tracked ``target`` (what
    ops made while recording) keeps its earlier value for the entries that read it: that
    moves to a copy, which those entries read from now, and the overwritten region takes no
    gradient. A variable, or an array other tracked arrays view, cannot be written (as MXNet:
    the value a backward needs would be gone). ``indices``: the key's index inputs
    (array_methods.py), read by the op after the value."""
    state = _state
    if not state.recording or not (is_on_tape(target) or is_on_tape(value)):
        return False
    source = _moved_aside(invoke, target) if is_on_tape(target) else target
    inputs, params = [source, value, *indices], {"key": key}
    state.recording = False  # the op's own views are not entries
    try:
        outputs = invoke(ops.get("assign_index"), inputs, params, target)
    finally:
        state.recording = True
    _append("assign_index", RULES["assign_index"], inputs, list(outputs), params)
    return True


def _moved_aside(invoke, x):
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
        old = invoke(ops.get("copy"), [x])[0]
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
    if _state.recording and any(is_on_tape(x) for x in inputs):
        _append(name, _custom_rule, list(inputs), list(outputs), {"rule": rule})


def _custom_rule(f, grads, inputs, outputs, params):
    return params["rule"](grads)


def _append(name, rule, inputs, outputs, params):
    state = _state
    state.entries.append(_Entry(name, rule, inputs, outputs, params))
    for x in outputs:
        state.tracked[id(x)] = x


def add_variable(x, grad, grad_req):
    """Make ``x`` a variable whose gradient goes to ``grad`` (backward.attach_grad)."""
    _variables[id(x)] = _Variable(x, grad, grad_req)


def variables():
    """id -> `_Variable` of every variable (backward.py reads it)."""
    return _variables


def take_entries(retain):
    """This thread's tape, for a backward pass: a copy when ``retain``, else the tape itself,
    which this thread then forgets (its entries go as the pass lets them)."""
    state = _state
    if retain:
        return list(state.entries)
    entries = state.entries
    state.entries, state.tracked = [], {}
    return entries


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


def _view_rule(f, grads, inputs, outputs, params):
    """A view's gradient: zeros shaped as its base's whole chunk, the view's gradient
    written through the same geometry, read back through the base's."""
    (base,), (view,), (g,) = inputs, outputs, grads
    chunk_elements = base._chunk.nbytes // base.dtype.itemsize
    whole = f.zeros((chunk_elements,), base.dtype, base)
    target = whole._view_of(view.shape, view._offset, view._strides, view.dtype, False)
    target[...] = g
    return [whole._view_of(base.shape, base._offset, base._strides, base.dtype, False)]
