"""Numba scalar functions for fused kernels: NumPy's own loops' results, and no FP flag
raised where NumPy's loop reports nothing.

A fused kernel returns the processor's FP flags of the whole window (``codegen``), so
the code of an op NumPy never reports for must raise none: the vector compares LLVM emits
for ``<``, ``<=``, ``>``, ``>=`` (and x86's max/min instructions) raise 'invalid' on a
quiet NaN, where ``==`` and ``!=`` do not. So the ``quiet_*`` compares, ``numpy_maximum``,
``numpy_minimum`` and ``numpy_clip`` compare NaN-free stand-ins (`number_or_zero`: a NaN as
0, by `is_number`, a test of the bits), which raise nothing and cost what the plain compare
does; NaN's rule comes after: a bits test for the compares, ``x != x`` for max/min. LLVM
rewrites these idioms freely (a float NaN test guarding a compare of stand-ins, or a bits
test choosing max's result, is merged back into a compare of the operands, which raises):
tests/core/test_fp_errors_fused.py checks every such op's kernel on NaN, infinities and zeros.
Integers and bools compare as they are.

``clip`` is NumPy's clip ufunc (two bounds), ``np.maximum`` (lower bound only) or
``np.minimum`` (upper bound only); these copy those loops' choices bit for bit, including
which operand wins a tie of signed zeros and NaN propagation:

* ``np.maximum(a, b)`` / ``np.minimum(a, b)``: ``a`` if it is NaN or strictly beyond ``b``,
  else ``b`` (so ``maximum(-0.0, 0.0)`` is ``0.0``, ``maximum(0.0, -0.0)`` is ``-0.0``);
* the clip ufunc with constant bounds gives a NaN bound (the lower's first), else a NaN x,
  else keeps ``x`` unless a bound is strictly beyond it (so ``clip(-0.0, 0.0, 1.0)`` is
  ``-0.0``); with bound arrays its loop is maximum's then minimum's (the bound wins a tie),
  which codegen spells as those two (``elementwise/scalars`` has both rules for the
  unfused loops, where FP flags are not reported).

``scalar_power`` is float power with a scalar exponent as the registered op computes it:
NumPy's loop replaces pow by the exact unary operation for an exponent of 2, 0.5, -1, 1
or 0 (``elementwise/power_clip``); other exponents call libm's pow (within an ulp or two
of NumPy's SIMD pow).

``x != x`` is the NaN test: it also compiles (always False) for integer types.
``to_bool`` is NumPy's cast to bool (NaN is True).
"""
import numpy as np
from numba import types
from numba.extending import intrinsic, overload, register_jitable

from ..elementwise import scalars as _elementwise_scalars

# exponents NumPy's float power loop computes without pow (a scalar exponent only)
EXACT_POWER_EXPONENTS = (2.0, 0.5, -1.0, 1.0, 0.0)


@intrinsic
def _float_bits(typingctx, x):
    """The bits of a float as a signed integer of its width."""
    if not isinstance(x, types.Float) or x.bitwidth not in (32, 64):
        return None
    int_type = types.int64 if x.bitwidth == 64 else types.int32

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], context.get_value_type(int_type))
    return int_type(x), codegen


def is_number(x):
    raise NotImplementedError  # the body is chosen by type in the overload below


@overload(is_number, jit_options=dict(error_model="numpy"))
def _is_number(x):
    """Whether ``x`` is not NaN, tested on its bits (no float compare)."""
    if not isinstance(x, types.Float):
        return lambda x: True
    magnitude, infinity = ((np.int64(0x7fffffffffffffff), np.int64(0x7ff0000000000000))
                           if x.bitwidth == 64 else
                           (np.int32(0x7fffffff), np.int32(0x7f800000)))
    return lambda x: (_float_bits(x) & magnitude) <= infinity


def number_or_zero(x):
    raise NotImplementedError  # the body is chosen by type in the overload below


@overload(number_or_zero, jit_options=dict(error_model="numpy"))
def _number_or_zero(x):
    """A NaN float as 0 of its type: what an ordered compare may see without raising."""
    if not isinstance(x, types.Float):
        return lambda x: x
    zero = np.dtype(str(x)).type(0)
    return lambda x: x if is_number(x) else zero


@register_jitable
def _both_numbers(a, b):
    return is_number(a) & is_number(b)


@register_jitable
def quiet_less(a, b):
    return (number_or_zero(a) < number_or_zero(b)) & _both_numbers(a, b)


@register_jitable
def quiet_less_equal(a, b):
    return (number_or_zero(a) <= number_or_zero(b)) & _both_numbers(a, b)


@register_jitable
def quiet_greater(a, b):
    return (number_or_zero(a) > number_or_zero(b)) & _both_numbers(a, b)


@register_jitable
def quiet_greater_equal(a, b):
    return (number_or_zero(a) >= number_or_zero(b)) & _both_numbers(a, b)


@register_jitable
def numpy_maximum(a, b):
    a_number, b_number = number_or_zero(a), number_or_zero(b)
    larger = a_number if a_number > b_number else b_number
    return a if a != a else (b if b != b else larger)


@register_jitable
def numpy_minimum(a, b):
    a_number, b_number = number_or_zero(a), number_or_zero(b)
    smaller = a_number if a_number < b_number else b_number
    return a if a != a else (b if b != b else smaller)


@register_jitable
def numpy_clip(x, low, high):
    if low != low:
        return low
    if high != high:
        return high
    if x != x:
        return x
    if quiet_greater(low, x):
        x = low
    if quiet_less(high, x):
        x = high
    return x


def quiet_sign(x):
    raise NotImplementedError  # the body is chosen by type in the overload below


@overload(quiet_sign, jit_options=dict(error_model="numpy"))
def _quiet_sign(x):
    if not isinstance(x, types.Float):
        return lambda x: _elementwise_scalars.sign(x)
    zero, one = np.dtype(str(x)).type(0), np.dtype(str(x)).type(1)

    def sign(x):  # np.sign: NaN stays, +0.0 for both zeros
        if x != x:
            return x
        if x == zero:
            return zero
        return -one if _float_bits(x) < 0 else one
    return sign


def quiet_relu(x):
    raise NotImplementedError  # the body is chosen by type in the overload below


@overload(quiet_relu, jit_options=dict(error_model="numpy"))
def _quiet_relu(x):
    zero = np.dtype(str(x)).type(0) if isinstance(x, types.Number) else False
    return lambda x: numpy_maximum(x, zero)


@register_jitable
def to_bool(x):
    return x != 0


def scalar_power(x, y):
    raise NotImplementedError  # the body is chosen by type in the overload below


@overload(scalar_power, jit_options=dict(error_model="numpy"))
def _scalar_power(x, y):
    if not isinstance(x, types.Float):
        return None
    one = np.dtype(str(x)).type(1)

    def power(x, y):
        if y == 2.0:
            return x * x
        if y == 0.5:
            return np.sqrt(x)
        if y == -1.0:
            return one / x
        if y == 1.0:
            return x
        if y == 0.0:
            return one
        return x ** y
    return power
