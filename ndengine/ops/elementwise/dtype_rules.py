"""NumPy's dtype rules for an element-wise call, and the checks of weak Python ints.

``resolve_like`` is a ufunc's own type resolution (NEP 50's weak Python scalars included,
``dtype=`` as the ufunc's argument), memoised by operand types.  A weak Python int must fit
the computation dtype it meets (NumPy's OverflowError): ``check_weak_scalar`` decides it for
one value, ``weak_int_check`` makes a plan's per-call check of a call's ints.
"""
from __future__ import annotations

import functools

import numpy as np

from ..dtypes import (
    EXTENDED_DTYPES, check_dtype, check_scalar_fits, int_bounds, is_array_spec, promotion_operand)

__all__ = ["resolve_like", "is_weak_int", "check_weak_scalar", "weak_int_range",
           "weak_int_check", "computes_in_extended"]

_FLOAT_SAFE_INTS = (-2 ** 1023, 2 ** 1023)  # Python ints that surely convert to a float


@functools.lru_cache(maxsize=4096)
def _resolve_with_ufunc(ufunc: np.ufunc, operands: tuple) -> tuple:
    resolved = ufunc.resolve_dtypes(operands + (None,) * ufunc.nout)
    if resolved[0] == object and all(operand is int for operand in operands):
        # NumPy compares Python ints alone in its object loop (ints of any size): ndengine,
        # without an object dtype, compares them as int64 (the same result; an int beyond
        # int64's range is refused, as an int64 operand's would be)
        resolved = ufunc.resolve_dtypes((np.dtype(int),) * len(operands) + (None,) * ufunc.nout)
    return resolved


@functools.lru_cache(maxsize=1024)
def _resolve_with_signature(ufunc: np.ufunc, operands: tuple, dtype: np.dtype) -> tuple:
    # ufunc(..., dtype=dtype): the output DType is fixed, the inputs cast to the loop
    # found for it (NumPy's same_kind check on the inputs, NumPy's error)
    return ufunc.resolve_dtypes(operands + (None,) * ufunc.nout,
                                signature=(None,) * ufunc.nin + (dtype,) * ufunc.nout,
                                casting="same_kind")


def resolve_like(ufunc: np.ufunc, name: str, inputs, dtype=None, *,
                 float16_as=None) -> tuple[list, np.dtype]:
    """(computation dtype per input, output dtype) exactly as ``ufunc`` would choose
    (``dtype``: as ``ufunc(..., dtype=dtype)`` would); ``float16_as``: the dtype that replaces
    a float16 computation dtype (for ops whose result it cannot change)."""
    operands = tuple(promotion_operand(v) for v in inputs)
    if dtype is not None:
        resolved = _resolve_with_signature(ufunc, operands, check_dtype(dtype))
    else:
        try:
            resolved = _resolve_with_ufunc(ufunc, operands)
        except TypeError:
            shown = ", ".join(getattr(o, "__name__", str(o)) for o in operands)
            raise TypeError(f"{name} is not supported for input types ({shown})") from None
    computation = resolved[:ufunc.nin]
    if float16_as is not None:
        computation = [float16_as if d == np.float16 else d for d in computation]
    return [check_dtype(d) for d in computation], check_dtype(resolved[-1])


def is_weak_int(value) -> bool:
    """Whether ``value`` is a Python int (not a bool): NEP 50's weak integer scalar."""
    return isinstance(value, int) and not isinstance(value, bool) and not is_array_spec(value)


def check_weak_scalar(value, dtype: np.dtype) -> None:
    """NumPy's error for a weak Python int that the computation dtype cannot hold:
    OverflowError for an int out of an integer dtype's range or too large for a float."""
    if is_weak_int(value):
        if dtype.kind in "iu":
            check_scalar_fits(value, dtype)
        elif dtype.kind == "f":
            float(value)  # OverflowError: int too large to convert to float


def weak_int_range(dtype: np.dtype) -> tuple:
    """(lowest, highest) Python int that surely fits ``dtype`` (a float: surely converts)."""
    return int_bounds(dtype) if dtype.kind in "iu" else _FLOAT_SAFE_INTS


def weak_int_check(bounds):
    """A plan's check from (input index, lowest, highest, dtype) per weak Python int (None
    for none): NumPy's error for a value outside its range (``check_weak_scalar``)."""
    if not bounds:
        return None
    if len(bounds) == 1:
        ((i, low, high, dtype),) = bounds

        def check(inputs, params):
            value = inputs[i]
            if not low <= value <= high:
                check_weak_scalar(value, dtype)
        return check

    def check_all(inputs, params):
        for i, low, high, dtype in bounds:
            value = inputs[i]
            if not low <= value <= high:
                check_weak_scalar(value, dtype)
    return check_all


def computes_in_extended(computation, out_dtype) -> bool:
    """Whether a call's dtypes include float16 or complex (NumPy's loops run it)."""
    return out_dtype in EXTENDED_DTYPES or any(c in EXTENDED_DTYPES for c in computation)
