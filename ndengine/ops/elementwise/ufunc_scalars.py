"""Numba scalar functions of the NumPy ufuncs beyond the arithmetic core.

Same rules as ``scalars``: each scalar sees inputs already cast to the computation dtype
NumPy's type resolution chose, and gives NumPy's value for it (ports of the C loops where
the dtype decides: integer fmod, shifts past the width, NaN handling of fmax/fmin/heaviside).
``loops`` wraps them as it wraps ``scalars``' functions.
"""
from __future__ import annotations

import math

import numpy as np
from numba import types
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype

from .scalars import SCALAR_JIT, typed_constants
from ..runtime.fp_flags import fp_raise_divide


# ---------------------------------------------------------------- unary scalars

def trunc(x):
    raise NotImplementedError  # body chosen by type below


@overload(trunc, jit_options=SCALAR_JIT)
def _trunc(x):
    if isinstance(x, (types.Integer, types.Boolean)):
        return lambda x: x  # NumPy 2 keeps integers (and bools) as they are
    return lambda x: np.trunc(x)


@register_jitable
def fabs(x):
    return abs(x)


@register_jitable
def signbit(x):
    return np.signbit(x)


@register_jitable
def isnan(x):
    return np.isnan(x)


@register_jitable
def isinf(x):
    return np.isinf(x)


@register_jitable
def isfinite(x):
    return np.isfinite(x)


@register_jitable
def reciprocal(x):
    return 1 / x  # floats only: integer reciprocals run NumPy's own loop


def deg2rad(x):
    raise NotImplementedError


@overload(deg2rad, jit_options=SCALAR_JIT)
def _deg2rad(x):
    (factor,) = typed_constants(x, math.pi / 180.0)  # NumPy's (type)(NPY_PI / 180.0)
    return lambda x: x * factor


def rad2deg(x):
    raise NotImplementedError


@overload(rad2deg, jit_options=SCALAR_JIT)
def _rad2deg(x):
    # NumPy's float loop divides in float (180.0f / NPY_PIf), its double loop in double
    scalar_type = as_dtype(x).type
    factor = scalar_type(180.0) / scalar_type(math.pi)
    return lambda x: x * factor


# --------------------------------------------------------------- binary scalars

@register_jitable
def hypot(x, y):
    return np.hypot(x, y)


@register_jitable
def copysign(x, y):
    return np.copysign(x, y)


def fmod(x, y):
    raise NotImplementedError


@overload(fmod, jit_options=SCALAR_JIT)
def _fmod(x, y):
    if isinstance(x, types.Float):
        def float_fmod(x, y):
            # NumPy's loop returns a NaN operand itself, x's first (its payload and sign bit);
            # Numba's fmod of two NaNs gives y's
            if np.isnan(x):
                return x
            if np.isnan(y):
                return y
            return np.fmod(x, y)
        return float_fmod
    (zero,) = typed_constants(x, 0)
    if isinstance(x, types.Integer) and x.signed:
        def signed_fmod(x, y):
            # C's remainder (the dividend's sign); 0 for y == 0 (reported as NumPy's loop
            # does) and for MIN % -1
            if y == zero:
                fp_raise_divide()
                return zero
            if y == -1:
                return zero
            r = x % y  # Numba follows Python: the divisor's sign
            if r != zero and (r < zero) != (x < zero):
                r = r - y
            return r
        return signed_fmod

    def unsigned_fmod(x, y):
        if y == zero:
            fp_raise_divide()
            return zero
        return x % y
    return unsigned_fmod


def fmax(x, y):
    raise NotImplementedError


# Float fmax/fmin run NumPy's own loop (runs.NUMPY_BINARY): which of 0.0 and
# -0.0, or of two NaNs, NumPy's loop gives depends on the element's position (its SIMD body
# and its scalar tail choose differently), so no scalar function gives NumPy's bits.
@overload(fmax, jit_options=SCALAR_JIT)
def _fmax(x, y):
    if isinstance(x, types.Float):
        return lambda x, y: x if (x >= y or np.isnan(y)) else y  # NaN only if both are
    return lambda x, y: x if x >= y else y


def fmin(x, y):
    raise NotImplementedError


@overload(fmin, jit_options=SCALAR_JIT)
def _fmin(x, y):
    if isinstance(x, types.Float):
        return lambda x, y: x if (x <= y or np.isnan(y)) else y
    return lambda x, y: x if x <= y else y


def heaviside(x, h0):
    raise NotImplementedError


@overload(heaviside, jit_options=SCALAR_JIT)
def _heaviside(x, h0):
    zero, one, nan = typed_constants(x, 0, 1, np.nan)

    def npy_heaviside(x, h0):
        if np.isnan(x):
            return nan
        if x == zero:
            return h0
        return one if x > zero else zero
    return npy_heaviside


# logical_and/or/xor: the inputs arrive cast to bool (x != 0, NaN true), as NumPy's loops
# test them
@register_jitable
def logical_and(x, y):
    return x and y


@register_jitable
def logical_or(x, y):
    return x or y


@register_jitable
def logical_xor(x, y):
    return x != y


def left_shift(x, y):
    raise NotImplementedError


@overload(left_shift, jit_options=SCALAR_JIT)
def _left_shift(x, y):
    (zero,) = typed_constants(x, 0)
    bits = x.bitwidth

    def npy_lshift(x, y):
        # NumPy's npy_lshift: a shift by the width or more (or a negative one) gives 0
        if y < zero or y >= bits:
            return zero
        return x << y
    return npy_lshift


def right_shift(x, y):
    raise NotImplementedError


@overload(right_shift, jit_options=SCALAR_JIT)
def _right_shift(x, y):
    zero, minus_one = typed_constants(x, 0, -1) if x.signed else typed_constants(x, 0, 0)
    bits = x.bitwidth

    def npy_rshift(x, y):
        # NumPy's npy_rshift: past the width only the sign is left
        if y < zero or y >= bits:
            return minus_one if x < zero else zero
        return x >> y
    return npy_rshift
