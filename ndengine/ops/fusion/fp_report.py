"""A generated fused kernel's FP flags, reported as NumPy's loops of the window's ops would.

The kernel (``codegen``) computes every op of an element in registers and returns the
processor's FP flags of the whole run: which op raised a flag is not known. The ops NumPy
never reports for raise none there (quiet compares, flags put back), so every flag comes from
an op NumPy reports for. Each error raised is reported once, as raised by the first op of
the program that reports for its ufunc and whose NumPy loop can raise that error
(`ERRORS_OF`): ``(a / b) * 2.0`` names divide for a division by zero, and an overflow there
names divide too, its first op that can overflow. NumPy would name the op that overflowed;
the kernel cannot tell, so an error two ops of a window can raise is named after the first.
An error no op of the program can raise is not reported.
"""
from __future__ import annotations

from ..runtime import fp_status as _status
from ..elementwise.operators import spec as _spec
from .program import OpNode

__all__ = ["ufunc_name", "ERRORS_OF", "culprits", "report_kernel_flags"]

_DIVIDE, _OVER, _UNDER, _INVALID = (flag for _, _, flag in _status.CATEGORIES)
_ALL = _DIVIDE | _OVER | _UNDER | _INVALID

# NumPy's errors (its flag bits) that its float loop of each ufunc can report; a ufunc not
# listed: any. Integer and bool loops report only what ``_INTEGER_ERRORS`` lists (the loops
# raise those flags themselves: x // 0, MIN // -1).
ERRORS_OF = {"add": _OVER | _INVALID, "subtract": _OVER | _INVALID,
             "multiply": _OVER | _UNDER | _INVALID, "square": _OVER | _UNDER | _INVALID,
             "sqrt": _INVALID, "exp": _OVER | _UNDER, "expm1": _OVER | _UNDER,
             "log": _DIVIDE | _INVALID, "log1p": _DIVIDE | _INVALID,
             "sin": _UNDER | _INVALID, "cos": _UNDER | _INVALID, "tan": _UNDER | _INVALID,
             "tanh": _UNDER, "arcsin": _UNDER | _INVALID, "arccos": _UNDER | _INVALID,
             "arctan": _UNDER, "cast": _OVER | _UNDER | _INVALID}
_INTEGER_ERRORS = {"floor_divide": _DIVIDE | _OVER, "remainder": _DIVIDE}


def _reported_name(op_name):
    """The ufunc name NumPy's reports of op ``op_name`` carry, or None where NumPy's loop
    reports nothing."""
    if op_name == "copy":  # astype: NumPy reports its casts' errors as "cast"
        return "cast"
    try:
        return _spec(op_name).fp_name
    except KeyError:
        return op_name if _status.reports_fp_errors(op_name) else None


def ufunc_name(op_name):
    """The ufunc name NumPy's reports of op ``op_name`` carry (its own name where NumPy
    reports nothing for it)."""
    return _reported_name(op_name) or op_name


def _errors_of(node):
    name = _reported_name(node.name)
    if name is None:
        return name, 0
    if node.computation[0].kind == "f":
        return name, ERRORS_OF.get(name, _ALL)
    return name, _INTEGER_ERRORS.get(name, 0)


def culprits(program):
    """[(ufunc name, NumPy's errors it can report)] per op of ``program`` that reports, in
    program order (what `report_kernel_flags` takes; made once per kernel)."""
    found = []
    for node in program.nodes:
        if isinstance(node, OpNode):
            name, errors = _errors_of(node)
            if errors:
                found.append((name, errors))
    return tuple(found)


def report_kernel_flags(flags, culprits_of_program):
    """A fused kernel returned the processor's FP ``flags`` (set): report each error under
    the first of ``culprits_of_program`` that can raise it, under this thread's NumPy error
    state (``fp_status.report_numpy``)."""
    raised = _status.numpy_flags(flags)
    by_name = {}
    for _, _, flag in _status.CATEGORIES:
        if raised & flag:
            for name, errors in culprits_of_program:
                if errors & flag:
                    by_name[name] = by_name.get(name, 0) | flag
                    break
    for name, errors in by_name.items():
        _status.report_numpy(errors, name)
