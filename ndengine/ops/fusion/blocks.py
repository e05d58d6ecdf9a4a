"""How a fused program's iteration space is cut into blocks, and the threads that run them.

* ``coalesce``: merges adjacent axes that every operand walks with one stride and drops
  length-1 axes, so most programs become 1-D;
* ``classify``: "flat" (1-D; each leaf contiguous or one element, outputs contiguous:
  ``("flat", ("full" | "one", ...))``) or ``("nd", ndim)``;
* ``region_blocks``: element-wise blocks of about ``limit`` elements, each a region of the
  index space (a run of whole rows, or a piece of one row), kept n-dimensional;
* ``flat_regions``: the regions covering a range of the C-order flat index, what a
  reduction's blocks are (its summation order is defined on the C-order temporary);
* ``run_tasks``: tasks split over up to ``threads`` threads (the caller runs a share, the
  process's helper threads the rest: ``runtime/parallel.run_each``), each with its own
  ``Workspace`` of scratch buffers; NumPy ufuncs and ``nogil`` Numba kernels release the
  GIL, so blocks run in parallel.
"""
from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..runtime.parallel import PARALLEL_MIN_SIZE, run_each

__all__ = ["coalesce", "classify", "region_blocks", "flat_regions", "run_tasks", "Workspace",
           "BLOCK_BYTES", "BLOCK_ELEMENTS", "PARALLEL_MIN_ELEMENTS", "block_elements"]

# Bytes per scratch buffer of the blocked evaluator: a few live buffers of 256 KB stay in a
# 1 MB L2, and each loop call on a block (~2-4 us of Python and dispatch) is small against
# its work (measured, 20M float32: 4K-element blocks 3x slower than 64K).
BLOCK_BYTES = 1 << 18
BLOCK_ELEMENTS = None  # a fixed element count instead (tests use tiny blocks)
# Below this many elements a fused program runs on one thread: the ops' threshold, a knob of
# its own so that tests can thread small programs without threading every op.
PARALLEL_MIN_ELEMENTS = PARALLEL_MIN_SIZE


def block_elements(program) -> int:
    """Elements per block for ``program``: ``BLOCK_BYTES`` of its widest dtype."""
    if BLOCK_ELEMENTS is not None:
        return BLOCK_ELEMENTS
    return max(1024, BLOCK_BYTES // program.widest)


def coalesce(shape, strides_list):
    """(shape, [strides, ...]) with length-1 axes dropped and adjacent axes merged where every
    operand allows it (C order kept)."""
    axes = [k for k, n in enumerate(shape) if n != 1]
    new_shape, new_strides = [], [[] for _ in strides_list]
    for k in axes:
        if new_shape and all(st[-1] == s[k] * shape[k] for st, s in zip(new_strides, strides_list)):
            new_shape[-1] *= shape[k]
            for st, s in zip(new_strides, strides_list):
                st[-1] = s[k]
            continue
        new_shape.append(shape[k])
        for st, s in zip(new_strides, strides_list):
            st.append(s[k])
    return tuple(new_shape), [tuple(st) for st in new_strides]


def restride(array, shape, strides):
    """``array``'s memory seen with another (equivalent) shape and strides."""
    if array.shape == shape and array.strides == strides:
        return array
    if len(shape) == 1 and strides[0] == array.itemsize and array.flags.c_contiguous:
        return array.reshape(shape)  # a tenth of as_strided's cost
    return as_strided(array, shape=shape, strides=strides, writeable=array.flags.writeable)


def classify(ndim, leaves, outputs) -> tuple:
    """The layout of same-shape, coalesced ``ndim``-d views (see the module docstring)."""
    if ndim <= 1:
        classes = []
        for leaf in leaves:
            stride = leaf.strides[0] if leaf.ndim else 0
            if stride == 0:
                classes.append("one")
            elif stride == leaf.itemsize:
                classes.append("full")
            else:
                break
        else:
            if all(out.ndim == 0 or out.strides[0] == out.itemsize for out in outputs):
                return ("flat", tuple(classes))
    return ("nd", max(ndim, 1))


def region_blocks(shape, limit):
    """Index tuples (one slice per axis, so every region keeps the full ndim) of C-order
    regions of ``shape`` with about ``limit`` elements each: runs of whole trailing
    sub-arrays along the outermost axis that needs splitting."""
    ndim = len(shape)
    if ndim == 0:
        yield ()
        return
    tail = 1
    k = ndim - 1
    while k >= 0 and tail * shape[k] <= limit:
        tail *= shape[k]
        k -= 1
    if k < 0:
        yield (slice(None),) * ndim
        return
    step = max(1, limit // tail)
    rest = (slice(None),) * (ndim - k - 1)
    for prefix in np.ndindex(*shape[:k]):
        head = tuple(slice(i, i + 1) for i in prefix)
        for start in range(0, shape[k], step):
            yield head + (slice(start, min(start + step, shape[k])),) + rest


def flat_regions(shape, lo, hi):
    """Index tuples (slices only) of the C-order regions covering flat elements [lo, hi)."""
    if lo >= hi:
        return
    if not shape:
        yield ()
        return
    inner = math.prod(shape[1:])
    first, offset = divmod(lo, inner)
    if offset:
        stop = min(hi, (first + 1) * inner)
        for index in flat_regions(shape[1:], offset, stop - first * inner):
            yield (slice(first, first + 1),) + index
        first += 1
        if first * inner >= hi:
            return
    last, rest = divmod(hi, inner)
    full = (slice(None),) * (len(shape) - 1)
    if last > first:
        yield (slice(first, last),) + full
    if rest:
        for index in flat_regions(shape[1:], 0, rest):
            yield (slice(last, last + 1),) + index


class Workspace:
    """Scratch buffers of one thread, reused across its blocks (grown when too small)."""

    def __init__(self):
        self._buffers = {}

    def get(self, key, dtype, size) -> np.ndarray:
        buf = self._buffers.get(key)
        if buf is None or buf.size < size or buf.dtype != dtype:
            buf = np.empty(max(size, 1), dtype)
            self._buffers[key] = buf
        return buf[:size]


def _run_group(group):
    workspace = Workspace()
    for task in group:
        task(workspace)


def run_tasks(tasks, threads: int) -> None:
    """Run every ``task(workspace)``; over up to ``threads`` threads (in contiguous groups, the
    caller running the first).  Returns when all are done; re-raises the first error."""
    threads = max(1, min(int(threads), len(tasks)))
    if threads == 1:
        _run_group(tasks)
        return
    step = -(-len(tasks) // threads)
    run_each(_run_group, [tasks[i:i + step] for i in range(0, len(tasks), step)])
