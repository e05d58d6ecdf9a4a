"""Row and column reductions: NumPy's results, without NumPy's per-row overhead.

``np.add.reduce(values, axis=1)`` on many short rows (a k-means distance reduces rows of 8)
spends most of its time starting its inner loop once per row, and so does a reduction over
axis 0 of few columns.  Fused kernels' tail reductions and the plain reductions
(``reductions.py``: sums over the last axis, sums, maxima and minima over axis 0) call these
loops, which compute what NumPy computes for each C-contiguous row:

* ``add_rows``: NumPy's ``pairwise_sum`` (``numpy/_core/src/umath/loops_utils.h.src``) of
  a row of at most 128 elements (``PW_BLOCKSIZE``; longer rows NumPy splits recursively,
  and the caller leaves them to NumPy): fewer than 8 added in order, else 8 accumulators
  combined as ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)) and the rest added in order.  The
  reduction starts from 0 (its identity): the result is ``0 + pairwise_sum(row)``.
  Integers wrap: any order;
* ``multiply_rows``: in order from 1;
* ``extreme_rows`` (maxima or minima): NaN if any element is NaN; of two equal values the
  later is kept, as NumPy's scalar loop keeps it (``maximum(0.0, -0.0)`` is -0.0). Which of
  two equal zeros is kept may still differ from NumPy's SIMD loop on longer rows: the
  plain reductions do not use these loops for floats.

and over axis 0 of (rows, columns >= 2) values, where NumPy reduces row after row into its
output: ``add_columns`` (from 0, its identity), ``extreme_columns`` (from the first row, the
rule above element by element): NumPy's bits, signed zeros included.

FP errors: ``add_rows`` and ``multiply_rows`` return the processor's FP flags, reported as
NumPy's reduce reports them (``overflow encountered in reduce``); NumPy's max/min reduce
reports nothing (their compares raise 'invalid' on NaN): those loops return none.

A loop's first compile for a dtype runs on the compile thread (``deferred_loops.bind``; the
kernel's own compile job warms it there first, ``warm``; a plain reduction runs NumPy's reduce
meanwhile, ``_numpy_stand_in``). ``_reducers``: (name, dtype, NumPy first) -> the reducer,
kept (bounded by the names and dtypes).
"""
import numpy as np
from numba import njit

from ..runtime.deferred_loops import bind
from ..runtime.disk_cache import NUMBA_CACHE
from ..runtime.fp_flags import fp_clear, fp_flags
from ..runtime.fp_status import report as _report_fp_flags

_JIT = dict(nogil=True, cache=NUMBA_CACHE, error_model="numpy")
MAX_ROW = 128  # NumPy's PW_BLOCKSIZE


@njit(**_JIT)
def _pairwise(row, n, zero):
    """NumPy's pairwise_sum of a row of n <= MAX_ROW elements (its non-recursive cases;
    also no recursion here: Numba's disk cache cannot hold a recursive function)."""
    if n < 8:
        total = zero
        for i in range(n):
            total += row[i]
        return total
    r0, r1, r2, r3 = row[0], row[1], row[2], row[3]
    r4, r5, r6, r7 = row[4], row[5], row[6], row[7]
    i = 8
    stop = n - n % 8
    while i < stop:
        r0 += row[i]
        r1 += row[i + 1]
        r2 += row[i + 2]
        r3 += row[i + 3]
        r4 += row[i + 4]
        r5 += row[i + 5]
        r6 += row[i + 6]
        r7 += row[i + 7]
        i += 8
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        total += row[i]
        i += 1
    return total


@njit(**_JIT)
def add_rows(values, out, zero):
    fp_clear()
    for r in range(values.shape[0]):
        out[r] = zero + _pairwise(values[r], values.shape[1], zero)
    return fp_flags()


@njit(**_JIT)
def multiply_rows(values, out, one):
    fp_clear()
    for r in range(values.shape[0]):
        total = one
        for v in values[r]:
            total = total * v
        out[r] = total
    return fp_flags()


@njit(**_JIT)
def extreme_rows(values, out, larger):
    """Each row's maximum (``larger`` nonzero) or minimum: NaN if any element is NaN; of two
    equal values the later (NumPy's scalar loop's rule)."""
    for r in range(values.shape[0]):
        row = values[r]
        best = row[0]
        for i in range(1, row.shape[0]):
            v = row[i]
            if not ((best > v if larger else best < v) or best != best):
                best = v
        out[r] = best
    return 0


@njit(**_JIT)
def add_columns(values, out, zero):
    """The sums over axis 0 of C-contiguous (rows, columns) values, columns >= 2: NumPy adds
    row after row into its output there, from 0 (its identity: -0.0 rows sum to 0.0; for one
    column it sums the contiguous 1-D column pairwise, not this loop's case), so the same
    additions in the same order give its bits."""
    fp_clear()
    columns = values.shape[1]
    for j in range(columns):
        out[j] = zero
    for r in range(values.shape[0]):
        for j in range(columns):
            out[j] += values[r, j]
    return fp_flags()


@njit(**_JIT)
def extreme_columns(values, out, larger):
    """The maxima (``larger`` nonzero) or minima over axis 0 (columns >= 2): NumPy's
    ``maximum(out, row)`` row after row, the same rule element by element (NaN kept; of two
    equal values the row's), so its bits, the sign of zero included."""
    columns = values.shape[1]
    for j in range(columns):
        out[j] = values[0, j]
    for r in range(1, values.shape[0]):
        for j in range(columns):
            best, v = out[j], values[r, j]
            if not ((best > v if larger else best < v) or best != best):
                out[j] = v
    return 0


# name -> (loop, its third argument, in the values' dtype): the start of a sum or product, the
# direction of an extreme (1: maxima, 0: minima)
_ROWS = {"sum": (add_rows, 0), "mean": (add_rows, 0), "prod": (multiply_rows, 1),
         "max": (extreme_rows, 1), "min": (extreme_rows, 0), "sum_columns": (add_columns, 0),
         "max_columns": (extreme_columns, 1), "min_columns": (extreme_columns, 0)}


_reducers: dict = {}


# loop -> (the ufunc of its NumPy stand-in, or of each direction of an extreme; the axis):
# per loop, since a loop's deferred record (and so its stand-in) is shared by the names
# that call it (max and min share theirs)
_NUMPY_OF = {add_rows: (np.add, 1), multiply_rows: (np.multiply, 1),
             extreme_rows: ((np.minimum, np.maximum), 1), add_columns: (np.add, 0),
             extreme_columns: ((np.minimum, np.maximum), 0)}


def row_reducer(name, dtype, numpy_first=False):
    """``reduce(values, out)`` for C-contiguous (rows, L <= MAX_ROW) values of ``dtype``
    (``*_columns``: over axis 0 of C-contiguous (rows, columns >= 2) values).
    ``numpy_first``: NumPy's own reduce runs until the loop is compiled (on the compile thread,
    never in the caller: a plain reduction), else the first call waits for the compile (a
    fused kernel's, which compiled it beforehand: ``warm``)."""
    key = (name, dtype, numpy_first)
    reduce = _reducers.get(key)
    if reduce is None:
        loop, start = _ROWS[name]
        dtype = np.dtype(dtype)
        start = dtype.type(start)
        stand_in = _numpy_stand_in(loop) if numpy_first else None
        # values, out: writeable, C-contiguous; the loop is kept once compiled, no trial
        slot = bind(loop, stand_in, (dtype,), measure=False)

        def reduce(values, out):
            flags = slot[0](values, out, start)
            if flags:
                _report_fp_flags(flags, "reduce")
        reduce = _reducers.setdefault(key, reduce)
    return reduce


def _numpy_stand_in(loop):
    """NumPy's reduce computing what ``loop`` computes, called as the loop is (the third
    argument picks an extreme's direction). NumPy reports its own FP errors (the op's
    state)."""
    ufunc, axis = _NUMPY_OF[loop]
    if isinstance(ufunc, tuple):
        def reduce(values, out, larger):
            ufunc[bool(larger)].reduce(values, axis, None, out)
            return 0
    else:
        def reduce(values, out, start):
            ufunc.reduce(values, axis, None, out)
            return 0
    return reduce


def warm(name, dtype) -> None:
    """Compile (or load) the loop for ``dtype`` now: a background compile calls this, so the
    caller never waits for it."""
    values = np.ones((1, 9), dtype)
    row_reducer(name, dtype)(values, np.empty(1, dtype))
