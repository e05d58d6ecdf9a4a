"""The contiguous 1-D Numba loops around a scalar function, each loop shape written once.

``unary_kernels(f)``, ``binary_kernels(f)`` and ``ternary_kernels(f)`` wrap a scalar
function of ``scalars`` or ``ufunc_scalars`` in its ``LoopKernels``: serial and ``prange``
loops over whole arrays and, for two operands, over an array and one element.  Each loop
returns the FP flags its elements raised (``runtime/fp_flags``: cleared at the start, read
at the end).  ``any_negative`` is integer power's check of its exponents.

Numba's disk cache (``cache=True``) of a closure made here lives in this file's cache index,
whichever module's scalar it wraps: entries are told apart by the closure's cells (``f``,
pickled by its module and name), and the index is thrown away when this file's text changes,
not when the text of the scalar it inlines does.  So every loop holds a cell of
``INLINED_SOURCE``, a digest of the modules the loops inline: an edit to any of them gives
new cache keys, so nothing stale is loaded (the generated fused kernels name their files
by a ``source_digest`` too: ``fusion/codegen``).
"""
from __future__ import annotations

import hashlib
from typing import NamedTuple

import numpy as np
from numba import njit, prange, uintp
from numba.extending import register_jitable

from . import scalars, ufunc_scalars
from ..runtime import fp_flags as _fp_flags
from ..runtime.disk_cache import NUMBA_CACHE
from ..runtime.fp_flags import fp_clear, fp_flags

__all__ = ["LoopKernels", "PARTS", "part_range", "combined_flags", "source_digest",
           "INLINED_SOURCE", "unary_kernels", "binary_kernels", "ternary_kernels",
           "any_negative"]

# error_model="numpy": integer x // 0 must give NumPy's 0 instead of raising; cache: on disk
# unless nothing can be written (runtime/disk_cache).
_JIT = dict(nogil=True, cache=NUMBA_CACHE, error_model="numpy")
_PARALLEL_JIT = dict(_JIT, parallel=True)


def source_digest(*modules) -> str:
    """A digest of the modules' source text (what compiled code that inlines them depends on)."""
    digest = hashlib.sha256()
    for module in modules:
        with open(module.__file__, "rb") as fh:
            digest.update(hashlib.sha256(fh.read()).digest())
    return digest.hexdigest()


# An int (a cell Numba keys its cache entries by, typed and dropped like any unused constant)
INLINED_SOURCE = int(source_digest(scalars, ufunc_scalars, _fp_flags)[:15], 16)


class LoopKernels(NamedTuple):
    """Contiguous 1-D loops for one scalar function; ``None`` where arity has none."""
    serial: object
    parallel: object
    serial_array_scalar: object = None    # binary: second operand is one element
    parallel_array_scalar: object = None
    serial_scalar_array: object = None    # binary: first operand is one element
    parallel_scalar_array: object = None
    # serial loops for a first operand that is the output's own memory (x -= y, x *= 0.9):
    # where it is (the same address), it is read from the output. LLVM vectorises a loop only
    # where its output cannot overlap an input, and given one buffer twice it runs the loop
    # scalar (x /= 256 on 2,560 float32: 2.3 us against 0.5 us). Called as the others; other
    # buffers (a plan's run reused on a fused window's blocks) take the plain loop.
    serial_in_place: object = None
    serial_array_scalar_in_place: object = None


# A parallel loop runs one contiguous part per thread (the flags are per thread), each part's
# flags kept in ``raised`` and combined at the end. A fixed count of parts, spread over
# Numba's threads by prange (Numba's thread count is read through a pointer: uncacheable).
# A part's index is unsigned: a signed one pays a negative-index check per element, which
# kept LLVM from vectorising (x + 1 on 1M float64 ran 4-9x slower); slices of the arrays
# instead would alias them, and an in-place loop then lost Numba's noalias (2x slower).
PARTS = 64


@register_jitable
def part_range(p, parts, n):
    """The elements [lo, hi) of part ``p`` of ``parts`` over ``n``."""
    step = -(-n // parts)
    return p * step, min(n, (p + 1) * step)


@register_jitable
def combined_flags(raised):
    flags = 0
    for value in raised:
        flags |= value
    return flags


def unary_kernels(f) -> LoopKernels:
    source = INLINED_SOURCE

    @njit(**_JIT)
    def serial(x, out):
        source  # the cell that keys the disk cache (module docstring)
        fp_clear()
        for i in range(out.size):
            out[i] = f(x[i])
        return fp_flags()

    @njit(**_PARALLEL_JIT)
    def parallel(x, out):
        source
        parts = PARTS
        raised = np.zeros(parts, np.int32)
        for p in prange(parts):
            fp_clear()
            lo, hi = part_range(p, parts, out.size)
            for i in range(uintp(lo), uintp(hi)):
                out[i] = f(x[i])
            raised[p] = fp_flags()
        return combined_flags(raised)

    @njit(**_JIT)
    def serial_in_place(x, out):
        source
        fp_clear()
        if x.ctypes.data == out.ctypes.data:
            for i in range(out.size):
                out[i] = f(out[i])
        else:
            for i in range(out.size):
                out[i] = f(x[i])
        return fp_flags()

    return LoopKernels(serial, parallel, serial_in_place=serial_in_place)


def binary_kernels(f) -> LoopKernels:
    source = INLINED_SOURCE

    @njit(**_JIT)
    def serial(x, y, out):
        source  # the cell that keys the disk cache (module docstring)
        fp_clear()
        for i in range(out.size):
            out[i] = f(x[i], y[i])
        return fp_flags()

    @njit(**_PARALLEL_JIT)
    def parallel(x, y, out):
        source
        parts = PARTS
        raised = np.zeros(parts, np.int32)
        for p in prange(parts):
            fp_clear()
            lo, hi = part_range(p, parts, out.size)
            for i in range(uintp(lo), uintp(hi)):
                out[i] = f(x[i], y[i])
            raised[p] = fp_flags()
        return combined_flags(raised)

    # A scalar operand is passed as a 1-element array: one type per dtype,
    # and the loop reads it once instead of from a broadcast buffer.
    @njit(**_JIT)
    def serial_array_scalar(x, y, out):
        source
        fp_clear()
        b = y[0]
        for i in range(out.size):
            out[i] = f(x[i], b)
        return fp_flags()

    @njit(**_PARALLEL_JIT)
    def parallel_array_scalar(x, y, out):
        source
        b = y[0]
        parts = PARTS
        raised = np.zeros(parts, np.int32)
        for p in prange(parts):
            fp_clear()
            lo, hi = part_range(p, parts, out.size)
            for i in range(uintp(lo), uintp(hi)):
                out[i] = f(x[i], b)
            raised[p] = fp_flags()
        return combined_flags(raised)

    @njit(**_JIT)
    def serial_scalar_array(x, y, out):
        source
        fp_clear()
        a = x[0]
        for i in range(out.size):
            out[i] = f(a, y[i])
        return fp_flags()

    @njit(**_PARALLEL_JIT)
    def parallel_scalar_array(x, y, out):
        source
        a = x[0]
        parts = PARTS
        raised = np.zeros(parts, np.int32)
        for p in prange(parts):
            fp_clear()
            lo, hi = part_range(p, parts, out.size)
            for i in range(uintp(lo), uintp(hi)):
                out[i] = f(a, y[i])
            raised[p] = fp_flags()
        return combined_flags(raised)

    @njit(**_JIT)
    def serial_in_place(x, y, out):
        source
        fp_clear()
        if x.ctypes.data == out.ctypes.data:
            for i in range(out.size):
                out[i] = f(out[i], y[i])
        else:
            for i in range(out.size):
                out[i] = f(x[i], y[i])
        return fp_flags()

    @njit(**_JIT)
    def serial_array_scalar_in_place(x, y, out):
        source
        fp_clear()
        b = y[0]
        if x.ctypes.data == out.ctypes.data:
            for i in range(out.size):
                out[i] = f(out[i], b)
        else:
            for i in range(out.size):
                out[i] = f(x[i], b)
        return fp_flags()

    return LoopKernels(serial, parallel, serial_array_scalar, parallel_array_scalar,
                       serial_scalar_array, parallel_scalar_array, serial_in_place,
                       serial_array_scalar_in_place)


def ternary_kernels(f) -> LoopKernels:
    source = INLINED_SOURCE

    @njit(**_JIT)
    def serial(x, y, z, out):
        source  # the cell that keys the disk cache (module docstring)
        fp_clear()
        for i in range(out.size):
            out[i] = f(x[i], y[i], z[i])
        return fp_flags()

    @njit(**_PARALLEL_JIT)
    def parallel(x, y, z, out):
        source
        parts = PARTS
        raised = np.zeros(parts, np.int32)
        for p in prange(parts):
            fp_clear()
            lo, hi = part_range(p, parts, out.size)
            for i in range(uintp(lo), uintp(hi)):
                out[i] = f(x[i], y[i], z[i])
            raised[p] = fp_flags()
        return combined_flags(raised)

    return LoopKernels(serial, parallel)


@njit(**_JIT)
def any_negative(x):
    """Integer power guard: NumPy refuses negative integer exponents."""
    for i in range(x.size):
        if x[i] < 0:
            return True
    return False
