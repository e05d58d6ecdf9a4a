"""Plans: each op is decided once per call signature, and the decision is carried to the run.

The pattern is CuPy's ufunc call (``cupy/_core/_kernel.pyx``): a memo keyed by the call's
signature.  ``Operator.plan`` looks the signature up; on a miss the op's general inference
runs once and records a ``Plan``:

* ``outputs``: the (shape, dtype) of every output;
* ``check(inputs, params)``: the value checks that stay per call, or None (a weak Python int
  against the array dtype it meets raises NumPy's OverflowError on every call, hit or miss);
* ``run(inputs, outputs, req, params)``: the exact kernel to run, loops and operand
  conversions chosen (the worker runs it and decides nothing);
* ``elements``: the element count of the largest array the call reads or writes (callers
  place the op by its size without measuring every array per call); of the largest it
  writes, for an op whose work is the size of its outputs (``Operator.sized_by_outputs``:
  a gather).

The signature (``signature``) is a flat tuple.  Each input adds its key parts:

* an array spec: ``dtype, shape, layout``; layout is None for C-contiguous data, else the
  byte strides (NumPy arrays: None when ``flags.c_contiguous``; other array types may pass
  their strides whenever they have them: equal strides and shape mean equal contiguity);
* a Python scalar or a NumPy scalar: its type, when the op keys scalars by type
  (``Operator.scalars_by_type``: the element-wise ops, whose checks cover the values), else
  ``(type, value)``;

then the params' key (``param_key``: per param its name and value; a value of a type
registered with ``key_by_spec`` keys by its ``spec`` attribute, a plain tuple hashed and
compared in C: an index key holding index arrays keys by their dtypes and shapes) and the
write target's key (``target_key``: None for fresh C-contiguous outputs written with
WRITE_TO / WRITE_INPLACE).  Callers with array types
of their own (the NDArray layer) build the same tuple from their own attributes.  A key
that cannot be hashed (an index array in the params) gets a plan built the same way but not
kept.

The memo (``PlanMemo``, one per operator and device) keeps at most ``PLAN_MEMO_LIMIT`` plans
in two plain dicts, ``recent`` and ``older``, of at most half the limit each: every plan is
stored in ``recent``; a full ``recent`` becomes ``older`` (the previous ``older`` is
dropped); a plan found in ``older`` is stored in ``recent`` again.  So a program that meets
ever new shapes keeps a bounded memo, and the signatures it keeps calling stay planned
through the turnover, as in an LRU, while a hit stays one dict lookup, with no bookkeeping
(the NDArray layer reads ``recent`` directly).  CPython's dict get and set are atomic, so
no path takes a lock: two threads missing at once both build equal plans, and a turnover
racing another store at worst drops a plan, rebuilt at its next call.
"""
from __future__ import annotations

import enum

import numpy as np

from .dtypes import SUPPORTED_DTYPES, is_array_spec

__all__ = ["OpReq", "Plan", "PlanMemo", "KernelRun", "PLAN_MEMO_LIMIT", "signature", "param_key",
           "target_key", "key_by_spec", "input_key", "is_c_contiguous", "numpy_aliases",
           "SCALAR_TYPES", "NUMPY_SCALAR_TYPES"]



class OpReq(enum.Enum):
    """How a kernel writes one output (MXNet's OpReqType)."""
    NULL = 0           # write nothing
    WRITE_TO = 1       # overwrite the output buffer
    WRITE_INPLACE = 2  # overwrite; the buffer is shared with an input
    ADD_TO = 3         # out += result


PLAN_MEMO_LIMIT = 4096  # plans kept per operator and device (``PlanMemo``)

SCALAR_TYPES = frozenset((bool, int, float, complex))
# NumPy scalars of the supported dtypes: strong 0-d operands, keyed by their type
NUMPY_SCALAR_TYPES = frozenset(d.type for d in SUPPORTED_DTYPES)
_KEY_BY_TYPE = SCALAR_TYPES | NUMPY_SCALAR_TYPES | {type(None)}
_PLAIN_REQS = (OpReq.WRITE_TO, OpReq.WRITE_INPLACE)

try:  # the C function behind np.may_share_memory, without its dispatch layer: half the cost
    from numpy._core._multiarray_umath import may_share_memory as _may_share_memory
except ImportError:  # pragma: no cover - another NumPy layout
    _may_share_memory = np.may_share_memory

# alias codes, per input, of a given write target
NO_ALIAS, SAME_VIEW, OVERLAP = 0, 1, 2


class Plan:
    """One call signature of one op, decided: outputs, per-call checks, the run."""

    __slots__ = ("outputs", "check", "run", "elements")

    def __init__(self, outputs, run, check=None):
        self.outputs = tuple(outputs)  # ((shape, dtype), ...)
        self.run = run                 # run(inputs, outputs, req, params)
        self.check = check             # check(inputs, params) or None
        self.elements = None           # set by Operator.build_plan (see the module docstring)

    def __repr__(self):
        return f"<Plan outputs={list(self.outputs)} check={self.check is not None}>"


class KernelRun:
    """A plan's run for a kernel registered as ``kernel(inputs, outputs, req, **params)``
    (a class, not a closure: compiled, the call is the type's own, no Python frame)."""

    __slots__ = ("kernel",)

    def __init__(self, kernel):
        self.kernel = kernel

    def __call__(self, inputs, outputs, req, params):
        if params:
            self.kernel(inputs, outputs, req, **params)
        else:
            self.kernel(inputs, outputs, req)


class PlanMemo:
    """The plans of one operator on one device, at most ``PLAN_MEMO_LIMIT`` (see the module
    docstring): ``recent`` is looked up first, ``older`` on a miss there."""

    __slots__ = ("recent", "older")

    def __init__(self):
        self.recent = {}
        self.older = {}

    def __len__(self):
        """The number of distinct signatures planned."""
        return len(self.recent.keys() | self.older.keys())

    def find(self, key):
        """The plan of ``key``, or None; one found in ``older`` is kept in ``recent`` again."""
        plan = self.recent.get(key)
        if plan is None:
            plan = self.older.get(key)
            if plan is not None:
                self.keep(key, plan)
        return plan

    def keep(self, key, plan) -> None:
        recent = self.recent
        if len(recent) >= PLAN_MEMO_LIMIT // 2:  # turnover: recent becomes older
            self.older, self.recent = recent, {}
            recent = self.recent
        recent[key] = plan


def input_key(value, scalars_by_type: bool) -> tuple:
    """The key parts of one input (see the module docstring)."""
    kind = type(value)
    if kind in _KEY_BY_TYPE:
        return (kind,) if scalars_by_type else ((kind, value),)
    if kind is np.ndarray:
        return value.dtype, value.shape, None if value.flags.c_contiguous else value.strides
    if is_array_spec(value):
        shape = value.shape
        if type(shape) is not tuple:
            shape = tuple(shape)  # unhashable entries make the key unhashable: no memo
        return value.dtype, shape, getattr(value, "strides", None)
    return ((kind, value),)  # subclasses of the Python scalars, and anything else


def param_key(params, value_params=(), unkeyed=()):
    """The params' key: (name, type, value) per param, (name, type) for ``value_params``
    that are scalars (their values are checked or used per call), nothing for ``unkeyed``."""
    if not params:
        return None
    parts = []
    for name, value in params.items():
        if name in unkeyed:
            continue
        kind = type(value)
        if name in value_params and kind in _KEY_BY_TYPE:
            parts.append((name, kind))
        else:
            parts.append((name, _exact(value)))
    return tuple(parts)


_SPEC_KEYED = set()  # param value types keyed by their ``spec`` (``key_by_spec``)


def key_by_spec(kind):
    """Params of type ``kind`` key plans by their ``spec`` attribute (all a plan depends on),
    not by themselves; returns ``kind`` (a class decorator)."""
    _SPEC_KEYED.add(kind)
    return kind


def _exact(value):
    """A key part that tells apart the values NumPy treats differently though they compare
    equal: 2, 2.0 and True; -0.0 and 0.0; (2, 3) and (2, 3.0)."""
    kind = type(value)
    if kind is tuple or kind is list:
        return kind, tuple(_exact(part) for part in value)
    if kind is float:
        return kind, repr(value)
    if kind in _SPEC_KEYED:
        return kind, value.spec
    return kind, value


def target_key(target, aliases, req):
    """The write target's key: None for fresh C-contiguous outputs written plainly."""
    code = None if req is None or req in _PLAIN_REQS else OpReq(req)
    if target is None:
        return None if code is None else (code,)
    if type(target) is np.ndarray:
        shape, layout = target.shape, None if target.flags.c_contiguous else target.strides
    else:
        shape, layout = tuple(target.shape), getattr(target, "strides", None)
    return target.dtype, shape, layout, tuple(aliases) if aliases else None, code


def signature(op, inputs, params, target=None, aliases=None, req=None) -> tuple:
    """``op``'s memo key for this call (see the module docstring)."""
    parts = []
    by_type = op.scalars_by_type
    for value in inputs:
        kind = type(value)
        if kind is np.ndarray:  # input_key's commonest cases, inline
            parts.append(value.dtype)
            parts.append(value.shape)
            parts.append(None if value.flags.c_contiguous else value.strides)
        elif kind in _KEY_BY_TYPE:
            parts.append(kind if by_type else (kind, value))
        else:
            parts.extend(input_key(value, by_type))
    parts.append(param_key(params, op.value_params, op.unkeyed_params) if params else None)
    parts.append(None if target is None and req is None else target_key(target, aliases, req))
    return tuple(parts)


def is_c_contiguous(spec) -> bool:
    """Whether an array spec's data is C-contiguous (NumPy's rule: dims of length 1 do not
    count, an empty array is contiguous); specs without strides are taken as C-contiguous."""
    if type(spec) is np.ndarray:
        return spec.flags.c_contiguous
    strides = getattr(spec, "strides", None)
    if strides is None or isinstance(spec, np.generic):
        return True
    shape = tuple(spec.shape)
    if 0 in shape:
        return True
    step = np.dtype(spec.dtype).itemsize
    for n, stride in zip(reversed(shape), reversed(tuple(strides))):
        if n != 1:
            if stride != step:
                return False
            step *= n
    return True


def numpy_aliases(inputs, out) -> tuple | None:
    """Alias codes of NumPy inputs against the NumPy ``out`` (None: no input aliases it)."""
    codes = []
    for value in inputs:
        if value is out:
            codes.append(SAME_VIEW)
        elif type(value) is not np.ndarray or not _may_share_memory(value, out):
            codes.append(NO_ALIAS)
        elif (value.__array_interface__["data"][0] == out.__array_interface__["data"][0]
              and value.shape == out.shape and value.strides == out.strides
              and value.dtype == out.dtype):
            codes.append(SAME_VIEW)
        else:
            codes.append(OVERLAP)
    return tuple(codes) if any(codes) else None
