"""Numba scalar functions for fused kernels where the registered op runs NumPy's own loop.

``clip`` is NumPy's clip ufunc (two bounds), ``np.maximum`` (lower bound only) or
``np.minimum`` (upper bound only); these copy those loops' choices bit for bit, including
which operand wins a tie of signed zeros and NaN propagation:

* ``np.maximum(a, b)`` / ``np.minimum(a, b)``: ``a`` if it is NaN or strictly beyond ``b``,
  else ``b`` (so ``maximum(-0.0, 0.0)`` is ``0.0``, ``maximum(0.0, -0.0)`` is ``-0.0``);
* the clip ufunc keeps ``x`` unless a bound is NaN or strictly beyond it (so
  ``clip(-0.0, 0.0, 1.0)`` is ``-0.0``).

``x != x`` is the NaN test: it also compiles (always False) for integer types.
``to_bool`` is NumPy's cast to bool (NaN is True).
"""
from numba.extending import register_jitable


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
