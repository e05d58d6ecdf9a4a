"""NDArray's Python operators (``x + y``, ``x += y``, ``-x``, ``x ** 2``, ``divmod``): the
methods operators.py installs on the class, made here per registered op by one factory per
arity. Every tiny op on an array starts here, so this module is part of the compiled core
(ndengine/engine/compiled.py): its lines are the first of the per-op path, and compiled they
push no frame. Which op each operator runs is operators.py's table; nothing here computes.
"""
import operator

import numpy as np

from .. import ops
from ..ops.families.numpy_operators import stand_in
from ..ops.plans import NUMPY_SCALAR_TYPES
from ..ops.registry import OPERATORS as _OPERATORS
from ..core import NDArray
from ..core.pipeline import as_operand as _as_operand, from_numpy, invoke
from .arguments import defers_to

__all__ = ["binary", "unary", "power", "divmod_method", "rdivmod_method"]

# taken as they are (NumPy scalars of supported dtypes: strong 0-d operands, as in NumPy);
# anything else is converted
_OPERANDS = frozenset((bool, int, float, NDArray)) | NUMPY_SCALAR_TYPES


def _operator(name):
    """The op named ``name`` now (a user may replace an op): one dict lookup; ops.get raises
    the helpful KeyError."""
    op = _OPERATORS.get(name)
    return op if op is not None else ops.get(name)


def binary(op_name, stem):
    # Looked up per call (a user may replace an op), and every line here is paid per tiny op.
    python_operator = getattr(operator, stem if stem not in ("and", "or") else stem + "_")

    def forward(self, other):
        if type(other) not in _OPERANDS:
            if defers_to(other):  # a dask array, say: its reflected operator runs
                return NotImplemented
            if other is None:
                return _with_none(python_operator, self, None)
            other = _as_operand(other, self.context)
        return invoke(_operator(op_name), [self, other])[0]

    def reflected(self, other):
        if type(other) not in _OPERANDS:
            if defers_to(other):
                return NotImplemented
            if other is None:
                return _with_none(python_operator, None, self)
            other = _as_operand(other, self.context)
        return invoke(_operator(op_name), [other, self])[0]

    def in_place(self, other):
        if type(other) not in _OPERANDS:
            if other is None:
                return _with_none(getattr(operator, f"i{stem}"), self, None)
            other = _as_operand(other, self.context)
        invoke(_operator(op_name), [self, other], None, self)  # out=self, as a C call
        return self

    return forward, reflected, in_place


def _with_none(python_operator, left, right):
    """``python_operator(left, right)``, one of them None and the other an NDArray, as NumPy
    computes it (its object loop): == and != compare each element with None (False and
    True); the other operators raise NumPy's error, which NumPy gives here for a stand-in
    of the array's shape and dtype (no memory, no data: the error comes from its first
    element, or its dtype). An empty array's object result is refused (ndengine has no
    object dtype)."""
    array = left if right is None else right
    if python_operator in (operator.eq, operator.ne):
        return from_numpy(np.full(array.shape, python_operator is operator.ne), array.context)
    probe = stand_in(array, writeable=True)  # writeable: x += None raises NumPy's cast error
    result = python_operator(probe, None) if right is None else python_operator(None, probe)
    return from_numpy(result, array.context)


def unary(op_name):
    def method(self):
        return invoke(_operator(op_name), [self])[0]
    return method


_BOOL = np.dtype(bool)


def _fast_power(array, exponent):
    """The op NumPy's ``**`` runs instead of power for this exponent, or None (number.c,
    fast_scalar_power; see ``_power``)."""
    kind = type(exponent)
    if kind is int or kind is float:
        fast = _FAST_POWERS.get((kind, exponent))
        if fast is not None and (array.dtype.kind == "c" or (
                fast == "square" and array.dtype == _BOOL)):
            return fast
    return None


def power(forward, in_place):
    def __pow__(self, other):
        # NumPy evaluates ``array ** 2`` as square(array) (number.c, fast_scalar_power): the
        # same values as power, but a bool array gives int8 where power gives int64.  (The
        # other exponents it special-cases give power's own values: the power op's loops
        # take the same shortcuts for a scalar exponent.)  For complex arrays the shortcuts
        # (int 2, int -1, float 0.5) differ from power's values at the edges of the range:
        # ``complex64(1.8e19) ** 2`` is finite, ``np.power`` of it inf.
        fast = _fast_power(self, other)
        if fast is not None:
            return invoke(ops.get(fast), [self])[0]
        return forward(self, other)

    def __ipow__(self, other):  # NumPy's ``x **= 0.5`` of a complex x is sqrt in place too
        fast = _fast_power(self, other)
        if fast is None:
            return in_place(self, other)
        invoke(ops.get(fast), [self], None, self)  # out=self, as a C call
        return self
    return __pow__, __ipow__


_FAST_POWERS = {(int, 2): "square", (int, -1): "reciprocal", (float, 0.5): "sqrt"}


def divmod_method(self, other):
    if type(other) not in _OPERANDS:
        if defers_to(other):
            return NotImplemented
        if other is None:
            return _with_none(divmod, self, None)
        other = _as_operand(other, self.context)
    return tuple(invoke(ops.get("divmod"), [self, other]))


def rdivmod_method(self, other):
    if type(other) not in _OPERANDS:
        if other is None:
            return _with_none(divmod, None, self)
        other = _as_operand(other, self.context)
    return tuple(invoke(ops.get("divmod"), [other, self]))
