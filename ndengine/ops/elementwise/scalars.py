"""Numba scalar functions of the arithmetic core: one element in, one element out.

Every element-wise op is a scalar function of Numba scalars; ``loops`` wraps it in
contiguous 1-D loops (serial and ``prange``).  The driver (``runs``) casts inputs to the
computation dtype first, so there is one compiled specialisation per (op, dtype, loop
variant).

Scalar functions whose right answer depends on the dtype (integer division by zero,
unsigned negation, NaN-propagating max) pick an implementation from the Numba type via
``@overload``, mirroring NumPy's C loops.  The generated fused kernels call these same
functions (``fusion/codegen``), so a fused op computes what the unfused op's loop does.
"""
from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype

from ..runtime.fp_flags import fp_raise_divide, fp_raise_overflow

# error_model="numpy": integer x // 0 must give NumPy's 0 instead of raising.
SCALAR_JIT = dict(error_model="numpy")


def typed_constants(numba_type, *values):
    """Python numbers as NumPy scalars of ``numba_type``, so arithmetic stays in that type."""
    scalar_type = as_dtype(numba_type).type
    return tuple(scalar_type(v) for v in values)


def _is_signed_int(t):
    return isinstance(t, types.Integer) and t.signed


def _is_unsigned_int(t):
    return isinstance(t, types.Integer) and not t.signed


# ---------------------------------------------------------------- unary scalars

def negative(x):
    raise NotImplementedError  # body is chosen by type in the overload below


@overload(negative, jit_options=SCALAR_JIT)
def _negative(x):
    if isinstance(x, types.Integer):
        (zero,) = typed_constants(x, 0)
        return lambda x: zero - x  # unsigned wraps like NumPy
    return lambda x: -x


def absolute(x):
    raise NotImplementedError


@overload(absolute, jit_options=SCALAR_JIT)
def _absolute(x):
    if isinstance(x, types.Boolean) or _is_unsigned_int(x):
        return lambda x: x
    return lambda x: abs(x)


def _integers_unchanged(float_impl):
    """floor/ceil/rint of an integer is the integer (NumPy 2 keeps the int dtype)."""
    def typer(x):
        if isinstance(x, (types.Integer, types.Boolean)):
            return lambda x: x
        return float_impl
    return typer


def floor(x):
    raise NotImplementedError


def ceil(x):
    raise NotImplementedError


def rint(x):
    raise NotImplementedError


overload(floor, jit_options=SCALAR_JIT)(_integers_unchanged(lambda x: np.floor(x)))
overload(ceil, jit_options=SCALAR_JIT)(_integers_unchanged(lambda x: np.ceil(x)))
# np.rint rounds half to even, like np.round(decimals=0).
overload(rint, jit_options=SCALAR_JIT)(_integers_unchanged(lambda x: np.rint(x)))


def sign(x):
    raise NotImplementedError


@overload(sign, jit_options=SCALAR_JIT)
def _sign(x):
    if isinstance(x, types.Float):
        zero, one = typed_constants(x, 0, 1)

        def float_sign(x):
            if x > zero:
                return one
            if x < zero:
                return -one
            if x == zero:
                return zero  # +0.0 for -0.0 too, as np.sign gives
            return x  # NaN
        return float_sign
    zero, one = typed_constants(x, 0, 1)
    if _is_unsigned_int(x):
        return lambda x: one if x > zero else zero
    return lambda x: (one if x > zero else zero) - (one if x < zero else zero)


def invert(x):
    raise NotImplementedError


@overload(invert, jit_options=SCALAR_JIT)
def _invert(x):
    if isinstance(x, types.Boolean):
        return lambda x: not x  # Python's ~True is -2; NumPy's is False
    if isinstance(x, types.Integer):
        return lambda x: ~x
    return None  # floats: no implementation, as in NumPy


def sigmoid(x):
    raise NotImplementedError


@overload(sigmoid, jit_options=SCALAR_JIT)
def _sigmoid(x):
    (one,) = typed_constants(x, 1)
    return lambda x: one / (one + np.exp(-x))


def relu(x):
    raise NotImplementedError


@overload(relu, jit_options=SCALAR_JIT)
def _relu(x):
    (zero,) = typed_constants(x, 0)
    return lambda x: maximum(x, zero)


# --------------------------------------------------------------- binary scalars

def maximum(x, y):
    raise NotImplementedError


# NumPy's float maximum/minimum loops (scalar and SIMD alike): x if it is NaN or strictly
# beyond y, else y. So a tie of signed zeros gives y (maximum(0.0, -0.0) is -0.0), and of two
# NaNs, x's (its payload and sign bit).
@overload(maximum, jit_options=SCALAR_JIT)
def _maximum(x, y):
    if isinstance(x, types.Float):
        return lambda x, y: x if (x > y or np.isnan(x)) else y
    return lambda x, y: x if x >= y else y


def minimum(x, y):
    raise NotImplementedError


@overload(minimum, jit_options=SCALAR_JIT)
def _minimum(x, y):
    if isinstance(x, types.Float):
        return lambda x, y: x if (x < y or np.isnan(x)) else y
    return lambda x, y: x if x <= y else y


def floor_divide(x, y):
    raise NotImplementedError


@overload(floor_divide, jit_options=SCALAR_JIT)
def _floor_divide(x, y):
    if isinstance(x, types.Float):
        return lambda x, y: float_divmod(x, y)[0]
    (zero,) = typed_constants(x, 0)
    if _is_signed_int(x):
        (smallest,) = typed_constants(x, np.iinfo(as_dtype(x)).min)

        def signed_floor_divide(x, y):
            if y == zero:
                fp_raise_divide()  # NumPy: x // 0 == 0, reported as a division by zero
                return zero
            if y == -1:
                if x == smallest:
                    fp_raise_overflow()  # MIN // -1: NumPy reports the wrap as an overflow
                return zero - x  # MIN // -1 wraps to MIN instead of trapping
            return x // y
        return signed_floor_divide

    def unsigned_floor_divide(x, y):
        if y == zero:
            fp_raise_divide()
            return zero
        return x // y
    return unsigned_floor_divide


def remainder(x, y):
    raise NotImplementedError


@overload(remainder, jit_options=SCALAR_JIT)
def _remainder(x, y):
    if isinstance(x, types.Float):
        return lambda x, y: float_divmod(x, y)[1]
    (zero,) = typed_constants(x, 0)
    if _is_signed_int(x):
        def signed_remainder(x, y):
            if y == zero:
                fp_raise_divide()  # NumPy: x % 0 == 0, reported as a division by zero
                return zero
            if y == -1:
                return zero  # MIN % -1 would trap in hardware
            return x % y  # Numba follows Python: result takes the divisor's sign
        return signed_remainder

    def unsigned_remainder(x, y):
        if y == zero:
            fp_raise_divide()
            return zero
        return x % y
    return unsigned_remainder


def float_divmod(a, b):
    raise NotImplementedError


@overload(float_divmod, jit_options=SCALAR_JIT)
def _float_divmod(a, b):
    zero, one, half = typed_constants(a, 0, 1, 0.5)

    def npy_divmod(a, b):
        # Port of NumPy's npy_divmod (npymath) so // and % match bit for bit.
        mod = np.fmod(a, b)
        if b == zero:
            return a / b, mod
        div = (a - mod) / b
        if mod != zero:
            if (b < zero) != (mod < zero):
                mod = mod + b
                div = div - one
        else:
            mod = np.copysign(zero, b)
        if div != zero:
            floordiv = np.floor(div)
            if div - floordiv > half:
                floordiv = floordiv + one
        else:
            floordiv = np.copysign(zero, a / b)
        return floordiv, mod
    return npy_divmod


def power(x, y):
    raise NotImplementedError


@overload(power, jit_options=SCALAR_JIT)
def _power(x, y):
    if isinstance(x, types.Float):
        return lambda x, y: x ** y
    (one,) = typed_constants(x, 1)

    def integer_power(x, y):
        # Square-and-multiply in the integer type, wrapping like NumPy's int loop.
        # Negative exponents are rejected by the driver before the loop runs.
        base, exponent = x, y
        result = one
        while exponent > 0:
            if exponent & 1:
                result = result * base
            base = base * base
            exponent = exponent >> 1
        return result
    return integer_power


@register_jitable
def where_select(condition, x, y):
    return x if condition else y


@register_jitable
def clip(x, low, high):
    # NumPy's clip loop for bound arrays: minimum(maximum(x, low), high) with
    # maximum/minimum's rules above (clip(-0.0, 0.0, 1.0) is 0.0; a NaN x, else a NaN
    # bound, is the result)
    return minimum(maximum(x, low), high)


@register_jitable
def clip_constant_bounds(x, low, high):
    # NumPy's clip loop where both bounds are constant (each one element, stride 0): a NaN
    # bound first (low's, else high's), then a NaN x, then x unless a bound is strictly
    # beyond it, so a tie of signed zeros keeps x (clip(-0.0, 0.0, 1.0) is -0.0). fusion's
    # numpy_clip is this rule with compares that raise no FP flag (a fused kernel reports
    # its flags; this loop's are not reported: NumPy's clip reports none)
    if low != low:
        return low
    if high != high:
        return high
    if x != x:
        return x
    if low > x:
        x = low
    if high < x:
        return high
    return x


# ------------------------------------------- scalars that need no type dispatch
# (inputs arrive already cast to the computation dtype, so plain operators
# give NumPy's result; narrow ints are widened by Numba and wrap on store.)

@register_jitable
def positive(x):
    return x

@register_jitable
def square(x):
    return x * x

@register_jitable
def logical_not(x):
    return not x

@register_jitable
def exp(x):
    return np.exp(x)

@register_jitable
def log(x):
    return np.log(x)

@register_jitable
def log1p(x):
    return np.log1p(x)

@register_jitable
def expm1(x):
    return np.expm1(x)

@register_jitable
def sqrt(x):
    return np.sqrt(x)

@register_jitable
def sin(x):
    return np.sin(x)

@register_jitable
def cos(x):
    return np.cos(x)

@register_jitable
def tan(x):
    return np.tan(x)

@register_jitable
def tanh(x):
    return np.tanh(x)

@register_jitable
def arcsin(x):
    return np.arcsin(x)

@register_jitable
def arccos(x):
    return np.arccos(x)

@register_jitable
def arctan(x):
    return np.arctan(x)

@register_jitable
def add(x, y):
    return x + y

@register_jitable
def subtract(x, y):
    return x - y

@register_jitable
def multiply(x, y):
    return x * y

@register_jitable
def true_divide(x, y):
    return x / y

@register_jitable
def equal(x, y):
    return x == y

@register_jitable
def not_equal(x, y):
    return x != y

@register_jitable
def less(x, y):
    return x < y

@register_jitable
def less_equal(x, y):
    return x <= y

@register_jitable
def greater(x, y):
    return x > y

@register_jitable
def greater_equal(x, y):
    return x >= y

@register_jitable
def bitwise_and(x, y):
    return x & y

@register_jitable
def bitwise_or(x, y):
    return x | y

@register_jitable
def bitwise_xor(x, y):
    return x ^ y
