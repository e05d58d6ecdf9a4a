"""Numba scalar functions for fused kernels where the registered op runs NumPy's own loop.

``clip`` is NumPy's clip ufunc (two bounds), ``np.maximum`` (lower bound only) or
``np.minimum`` (upper bound only); these copy those loops' choices bit for bit, including
which operand wins a tie of signed zeros and NaN propagation:

* ``np.maximum(a, b)`` / ``np.minimum(a, b)``: ``a`` if it is NaN or strictly beyond ``b``,
  else ``b`` (so ``maximum(-0.0, 0.0)`` is ``0.0``, ``maximum(0.0, -0.0)`` is ``-0.0``);
* the clip ufunc keeps ``x`` unless a bound is NaN or strictly beyond it (so
  ``clip(-0.0, 0.0, 1.0)`` is ``-0.0``).

``scalar_power`` is float power with a scalar exponent as the registered op computes it:
NumPy's loop replaces pow by the exact unary operation for an exponent of 2, 0.5, -1, 1
or 0 (``elementwise_power_clip``); other exponents call libm's pow (within an ulp or two
of NumPy's SIMD pow).

``x != x`` is the NaN test: it also compiles (always False) for integer types.
``to_bool`` is NumPy's cast to bool (NaN is True).
"""
import numpy as np
from numba import types
from numba.extending import overload, register_jitable

# exponents NumPy's float power loop computes without pow (a scalar exponent only)
EXACT_POWER_EXPONENTS = (2.0, 0.5, -1.0, 1.0, 0.0)


@register_jitable
def numpy_maximum(a, b):
    return a if (a > b or a != a) else b


@register_jitable
def numpy_minimum(a, b):
    return a if (a < b or a != a) else b


@register_jitable
def numpy_clip(x, low, high):
    if x != x:
        return x
    if low != low or low > x:
        x = low
    if x != x:
        return x
    if high != high or high < x:
        x = high
    return x


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
