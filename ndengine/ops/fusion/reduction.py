"""A fused program's tail reduction over its whole iteration space, block by block.

``run_reduction``: the program's outputs and its tail reduction, over the views
``drivers.coalesced_views`` made. The reduction gives exactly what the registered reduction
gives on the unfused temporary, because the blocks follow NumPy's own summation order on that
C-contiguous temporary (seen as ``(outer, L, inner)`` around the reduced axis):

* a row (``inner == 1``; every axis: one row of all elements): NumPy sums pairwise
  (``pairwise_sum``: halves rounded down to a multiple of 8).  Rows of at most a block are
  reduced whole by NumPy; a longer row is cut where NumPy's recursion cuts it, each piece
  reduced by NumPy (the same subtree) and the pieces added in the tree's order;
* columns (``inner > 1``): NumPy adds row after row; blocks of whole (L, inner) slabs are
  reduced by NumPy, longer columns carry the running result into the next block;
* prod multiplies in order: long rows carry like columns;
* integers (wrapping) and max/min do not depend on the order.

The mean divides as NumPy's ``_mean`` does (``true_divide(sum, intp(count))``).

``reduction_exact`` says where the blocked reduction cannot promise NumPy's result.
"""
from __future__ import annotations

import math

import numpy as np

from . import blocks as _blocks
from .blocks import flat_regions, run_tasks
from .drivers import threads_for
from ..families.row_reductions import MAX_ROW

__all__ = ["run_reduction", "REDUCE_UFUNCS", "reduction_exact"]

REDUCE_UFUNCS = {"sum": np.add, "mean": np.add, "prod": np.multiply, "max": np.maximum,
                 "min": np.minimum}
_IDENTITY = {"sum": 0, "mean": 0, "prod": 1}
_EXACT_FLOAT = 1 << 53
_PAIRWISE_BLOCK = 128  # NumPy's PW_BLOCKSIZE: pairwise_sum adds runs this short directly


def reduction_exact(program) -> bool:
    """Whether the blocked reduction reproduces NumPy's for this program: not for the mean
    of integers whose float64 partial sums could round (NumPy sums them in float64 in its
    own buffer order); exact integer sums below 2**53 are order-free."""
    r = program.reduction
    node = program.nodes[r.node]
    if r.name != "mean" or node.dtype.kind == "f":
        return True
    count = program.size if r.axis is None else program.shape[r.axis]
    if node.dtype.kind == "b":
        largest = 1
    else:
        info = np.iinfo(node.dtype)
        largest = max(-int(info.min), int(info.max))
    return count * largest < _EXACT_FLOAT


def run_reduction(call, views, block, limit=None, reduce_rows=None) -> None:
    """The program's outputs and its tail reduction (see the module docstring) over the
    coalesced ``views``; ``block(leaves, dests, workspace)`` fills one region; ``limit``:
    elements per block (default ``block_elements``); ``reduce_rows(values, out)``: reduces whole
    (rows, L) rows as NumPy would (default: NumPy's own reduce)."""
    program = call.program
    reduction = _TailReduction(program, views, block,
                               limit or _blocks.block_elements(program), reduce_rows)
    tasks, combine = reduction.tasks()
    run_tasks(tasks, threads_for(call, program.size))
    if combine is not None:
        combine()
    reduction.write(call.reduced_out)


class _TailReduction:
    """One run of a program's tail reduction: the reduced node's C-contiguous temporary seen
    as (outer, length, inner) around the reduced axis, cut into tasks that follow NumPy's
    order (the module docstring), each filling its part of the temporary block by block."""

    def __init__(self, program, views, block, limit, reduce_rows):
        r = program.reduction
        self.name, self.size = r.name, program.size
        self.shape, self.leaves, self.outputs = views
        if r.axis is None:
            self.outer, self.length, self.inner = 1, self.size, 1
        else:
            full = program.shape
            self.outer, self.length, self.inner = (
                math.prod(full[:r.axis]), full[r.axis], math.prod(full[r.axis + 1:]))
        self.every_axis = r.axis is None
        self.acc = np.dtype(r.dtype)
        self.ufunc = REDUCE_UFUNCS[r.name]
        self.identity = _IDENTITY.get(r.name)
        self.result = np.empty(self.outer * self.inner, self.acc)
        self.block, self.limit, self.reduce_rows = block, limit, reduce_rows

    def fill(self, ws, lo, hi, scratch):
        """Elements [lo, hi) of the temporary into ``scratch`` (the outputs written too)."""
        shape, offset = self.shape, 0
        for index in flat_regions(shape, lo, hi):
            region = _region_shape(index, shape)
            count = math.prod(region)
            dest = scratch[offset:offset + count].reshape(region)
            self.block([v[index] for v in self.leaves],
                       [o[index] for o in self.outputs] + [dest], ws)
            offset += count

    def tasks(self):
        """(the tasks, what combines their results afterwards or None)."""
        inner, length, limit = self.inner, self.length, self.limit
        if inner == 1 and length <= limit:
            return self._row_tasks(), None
        if inner == 1 and not (self.name == "prod" and self.acc.kind == "f"):
            return self._pairwise_tasks()
        if inner == 1 or inner <= limit:  # columns (or long prod rows): carry chunk to chunk
            if length * inner <= limit:
                return self._slab_tasks(max(1, limit // (length * inner))), None
            return self._carry_tasks(), None
        return self._wide_tasks(), None

    def write(self, reduced_out) -> None:
        """The result (the mean divided as NumPy's ``_mean`` does) into ``reduced_out``."""
        result = self.result
        if self.name == "mean":
            np.true_divide(result, np.intp(self.size if self.every_axis else self.length),
                           out=result, casting="unsafe")
        np.copyto(reduced_out, result.reshape(reduced_out.shape))

    def _row_tasks(self):
        """Whole rows, as many as a block holds, each reduced by NumPy (or ``reduce_rows``)."""
        length, acc, result, ufunc = self.length, self.acc, self.result, self.ufunc
        reduce_rows = self.reduce_rows
        rows = max(1, self.limit // length)
        tasks = []
        for r0 in range(0, self.outer, rows):
            r1 = min(self.outer, r0 + rows)

            def rows_task(ws, r0=r0, r1=r1):
                scratch = ws.get("reduce", acc, (r1 - r0) * length)
                self.fill(ws, r0 * length, r1 * length, scratch)
                if reduce_rows is None or length > MAX_ROW:
                    ufunc.reduce(scratch.reshape(r1 - r0, length), axis=1, out=result[r0:r1])
                else:
                    reduce_rows(scratch.reshape(r1 - r0, length), result[r0:r1])
            tasks.append(rows_task)
        return tasks

    def _pairwise_tasks(self):
        """Long rows cut where NumPy's pairwise recursion cuts them; the pieces' results
        combined in the tree's order afterwards."""
        length, acc, ufunc = self.length, self.acc, self.ufunc
        limit = max(self.limit, _PAIRWISE_BLOCK)  # never below NumPy's own leaves
        pieces = _pairwise_pieces(0, length, limit)
        partials = np.empty((self.outer, len(pieces)), acc)
        tasks = []
        for row in range(self.outer):
            for j, (lo, n) in enumerate(pieces):
                def piece_task(ws, row=row, j=j, lo=lo, n=n):
                    scratch = ws.get("reduce", acc, n)
                    self.fill(ws, row * length + lo, row * length + lo + n, scratch)
                    partials[row, j] = ufunc.reduce(scratch)
                tasks.append(piece_task)

        def combine_rows():
            for row in range(self.outer):
                self.result[row] = _combine_pieces(ufunc, acc, self.identity, pieces,
                                                   partials[row], length, limit)
        return tasks, combine_rows

    def _slab_tasks(self, slabs):
        """Whole (length, inner) slabs, ``slabs`` to a block, each reduced by NumPy."""
        length, inner, acc, ufunc = self.length, self.inner, self.acc, self.ufunc
        result2 = self.result.reshape(self.outer, inner)
        tasks = []
        for o0 in range(0, self.outer, slabs):
            o1 = min(self.outer, o0 + slabs)

            def slab_task(ws, o0=o0, o1=o1):
                scratch = ws.get("reduce", acc, (o1 - o0) * length * inner)
                self.fill(ws, o0 * length * inner, o1 * length * inner, scratch)
                ufunc.reduce(scratch.reshape(o1 - o0, length, inner), axis=1,
                             out=result2[o0:o1])
            tasks.append(slab_task)
        return tasks

    def _carry_tasks(self):
        """Columns longer than a block: chunks of rows in order, the running result carried
        into the next chunk as its first row."""
        length, inner, acc, ufunc = self.length, self.inner, self.acc, self.ufunc
        step = max(1, self.limit // inner)
        result2 = self.result.reshape(self.outer, inner)
        tasks = []
        for o in range(self.outer):
            def carry_task(ws, o=o):
                target = result2[o]
                base = o * length * inner
                for l0 in range(0, length, step):
                    l1 = min(length, l0 + step)
                    scratch = ws.get("reduce", acc, (l1 - l0 + 1) * inner)
                    self.fill(ws, base + l0 * inner, base + l1 * inner, scratch[inner:])
                    if l0 == 0:
                        ufunc.reduce(scratch[inner:].reshape(l1 - l0, inner), axis=0,
                                     out=target)
                    else:
                        scratch[:inner] = target
                        ufunc.reduce(scratch.reshape(l1 - l0 + 1, inner), axis=0,
                                     out=target)
            tasks.append(carry_task)
        return tasks

    def _wide_tasks(self):
        """Rows wider than a block: one row piece at a time, accumulated in order."""
        length, inner, acc, ufunc = self.length, self.inner, self.acc, self.ufunc
        identity, limit = self.identity, self.limit
        result2 = self.result.reshape(self.outer, inner)
        tasks = []
        for o in range(self.outer):
            for j0 in range(0, inner, limit):
                j1 = min(inner, j0 + limit)

                def wide_task(ws, o=o, j0=j0, j1=j1):
                    target = result2[o, j0:j1]
                    if identity is not None:
                        target.fill(identity)
                    scratch = ws.get("reduce", acc, j1 - j0)
                    for l in range(length):
                        start = (o * length + l) * inner
                        self.fill(ws, start + j0, start + j1, scratch)
                        if l == 0 and identity is None:
                            target[...] = scratch
                        else:
                            ufunc(target, scratch, out=target)
                tasks.append(wide_task)
        return tasks


def _pairwise_pieces(lo, n, limit):
    """The ranges NumPy's pairwise_sum recursion reaches first at or below ``limit``."""
    if n <= limit:
        return [(lo, n)]
    half = n // 2
    half -= half % 8
    return _pairwise_pieces(lo, half, limit) + _pairwise_pieces(lo + half, n - half, limit)


def _combine_pieces(ufunc, acc, identity, pieces, partials, length, limit):
    """The pieces' partial results combined as NumPy's recursion adds them (float add;
    order-free reductions just reduce them), after the reduction's initial value."""
    if ufunc is not np.add or acc.kind != "f":
        return ufunc.reduce(partials)
    partial_at = {lo: value for (lo, _), value in zip(pieces, partials)}
    with np.errstate(all="ignore"):  # NumPy's own reduce of the pieces warned already
        return acc.type(identity) + _tree(partial_at, 0, length, limit)


def _tree(partial_at, lo, n, limit):
    if n <= limit:
        return partial_at[lo]
    half = n // 2
    half -= half % 8
    return _tree(partial_at, lo, half, limit) + _tree(partial_at, lo + half, n - half, limit)


def _region_shape(index, shape):
    return tuple(len(range(*part.indices(n))) for part, n in zip(index, shape))
