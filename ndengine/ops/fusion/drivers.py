"""Running a fused program over its whole iteration space, block by block.

``prepare_call`` checks the call's arrays against the program and makes every leaf a view
broadcast to the program's shape; an input that overlaps an output other than as its very
same view is copied first (NumPy reads every input before writing), and ``direct`` says
whether a destination may be written before every leaf of its block is read.

``run_elementwise``: the views coalesced, then either one ``whole(leaves, outputs)`` call
(a generated kernel over everything) or ``block(...)`` per region, over threads. A program
with a tail reduction runs with ``reduction.run_reduction`` instead, over the same views.
"""
from __future__ import annotations

import math
import threading

import numpy as np
from numpy.lib.stride_tricks import as_strided

from . import blocks as _blocks
from .blocks import classify, coalesce, region_blocks, restride, run_tasks
from ..outputs import detach_overlapping, same_view

__all__ = ["Call", "prepare_call", "coalesced_views", "layout_of", "threads_for",
           "run_elementwise"]

_may_share_memory = np.may_share_memory


class Call:
    """One run's operands: leaf views broadcast to the program's shape, output arrays;
    ``shifted``: {leaf index: 1 ahead of the outputs it overlaps, -1 behind} for the leaves
    that overlap outputs as shifted views (see ``_halo``)."""
    __slots__ = ("program", "leaves", "outputs", "reduced_out", "direct", "threads", "shifted")

    def __init__(self, program, leaves, outputs, reduced_out, direct, threads, shifted=()):
        self.program, self.leaves, self.outputs = program, leaves, outputs
        self.reduced_out, self.direct, self.threads = reduced_out, direct, threads
        self.shifted = shifted


def prepare_call(program, arrays, outputs, threads) -> Call:
    if len(arrays) != len(program.leaves):
        raise TypeError(f"the program takes {len(program.leaves)} arrays, got {len(arrays)}")
    for leaf, array in zip(program.leaves, arrays):
        if type(array) is not np.ndarray or array.shape != leaf.shape or array.dtype != leaf.dtype:
            raise ValueError(f"array {leaf.index} must be a NumPy array of shape {leaf.shape} "
                             f"and dtype {leaf.dtype}")
    specs = program.output_specs
    if len(outputs) != len(specs):
        raise TypeError(f"the program writes {len(specs)} outputs, got {len(outputs)}")
    for out, (shape, dtype) in zip(outputs, specs):
        if (type(out) is not np.ndarray or out.shape != tuple(shape) or out.dtype != dtype
                or not out.flags.writeable):
            raise ValueError(f"an output must be a writeable NumPy array of shape {shape} and "
                             f"dtype {dtype}")
    shifted, direct = {}, True
    if any(_may_share_memory(a, o) for a in arrays for o in outputs):
        arrays, shifted = _detached(list(arrays), list(outputs), program)
        direct = not any(_may_share_memory(a, o) for i, a in enumerate(arrays)
                         if shifted.get(i) != -1 for o in outputs)
    shape = program.shape
    leaves = []
    for index, a in enumerate(arrays):
        if index in program.unused_leaves:
            a = np.zeros((), a.dtype)
        leaves.append(a if a.shape == shape else np.broadcast_to(a, shape))
    count = len(program.outputs)
    reduced = outputs[count] if program.reduction is not None else None
    return Call(program, leaves, list(outputs[:count]), reduced, direct, threads, shifted)


_copies = threading.local()  # .buffers: the copies of this thread's last call, reused


def _buffered_copier():
    """A ``copy(array)`` into this thread's buffers, kept from call to call: a fresh copy of
    a large array would pay its page faults on every call."""
    buffers = getattr(_copies, "buffers", None)
    if buffers is None:
        buffers = _copies.buffers = []
    used = [0]

    def copy(a):
        i = used[0]
        if i == len(buffers) or buffers[i].nbytes < a.nbytes:
            buffers[i:i + 1] = [np.empty(a.nbytes, np.uint8)]
        used[0] = i + 1
        copied = np.ndarray(a.shape, a.dtype, buffers[i])
        np.copyto(copied, a)
        return copied
    return copy


def _detached(arrays, outputs, program):
    """(arrays, shifted): ``detach_overlapping`` (``u[1:-1] += f(u[2:], u[:-2])`` reads what
    it writes), except the leaves that overlap outputs only as shifted views of the same
    layout (``shifted``: leaf index -> ``_shift``'s direction): ``_halo`` reads those block
    by block."""
    shifted = {}
    if program.reduction is None:
        limit = _blocks.block_elements(program)
        for i, a in enumerate(arrays):
            shift = _shift(a, outputs, limit)
            if shift:
                shifted[i] = shift
    kept = [None if i in shifted else a for i, a in enumerate(arrays)]
    detached = detach_overlapping(kept, outputs, copy=_buffered_copier())
    for i in shifted:
        detached[i] = arrays[i]
    return detached, shifted


def _address(a):
    return a.__array_interface__["data"][0]


def _shift(a, outputs, limit):
    """How ``a`` overlaps the outputs: 0 when it overlaps none (or only as its very view),
    else, when each overlapping output is a C-contiguous array of its shape and itemsize
    less than ``limit`` elements away (``u[2:]``, ``u[:-2]`` against ``u[1:-1]``): 1 when
    every one of them lies behind ``a`` (a forward pass reads ``a`` before writing there),
    -1 otherwise; None when it overlaps an output in another way."""
    found = 0
    for out in outputs:
        if not _may_share_memory(a, out) or same_view(a, out):
            continue
        shift, rest = divmod(_address(a) - _address(out), a.itemsize)
        if (rest or abs(shift) > limit or a.shape != out.shape or a.itemsize != out.itemsize
                or not (a.flags.c_contiguous and out.flags.c_contiguous)):
            return None
        found = 1 if shift > 0 and found >= 0 else -1
    return found


def coalesced_views(call, memo=None):
    """(shape, leaf views, output views) coalesced; 0-d becomes (1,). ``memo``: a dict
    from the views' strides to their coalesced shape and strides (one per program)."""
    views = call.leaves + call.outputs
    key = tuple([v.strides for v in views])
    found = None if memo is None else memo.get(key)
    if found is None:
        shape, strides = coalesce(call.program.shape, list(key))
        if not shape:
            shape = (1,)
            strides = [(v.itemsize,) for v in views]
        found = (shape, strides)
        if memo is not None:
            if len(memo) >= 64:
                memo.clear()
            memo[key] = found
    shape, strides = found
    views = [restride(v, shape, st) for v, st in zip(views, strides)]
    count = len(call.leaves)
    return shape, views[:count], views[count:]


def layout_of(views) -> tuple:
    """The kernel layout of coalesced views (see ``blocks.classify``)."""
    return classify(len(views[0]), views[1], views[2])


def threads_for(call, size) -> int:
    """The threads a run over ``size`` elements uses (one below the parallel threshold)."""
    return call.threads if size >= _blocks.PARALLEL_MIN_ELEMENTS else 1


def run_elementwise(call, views, block, limit=None) -> None:
    """``block(leaves, dests, workspace)`` per region of the coalesced ``views`` (shape,
    leaves, outputs), over threads; ``limit``: elements per block (default
    ``block_elements``)."""
    shape, leaves, outputs = views
    size = math.prod(shape)
    limit = limit or _blocks.block_elements(call.program)
    if call.shifted:
        if len(shape) == 1:
            _halo(call, views, block, limit)
            return
        copy = _buffered_copier()  # not one run of memory: copied whole, as NumPy would
        leaves = [copy(v) if i in call.shifted else v for i, v in enumerate(leaves)]
    tasks = []
    for index in region_blocks(shape, limit):
        tasks.append(lambda ws, index=index: block([v[index] for v in leaves],
                                                   [o[index] for o in outputs], ws))
    run_tasks(tasks, threads_for(call, size))


def _halo(call, views, block, limit) -> None:
    """``run_elementwise`` of 1-D views with shifted leaves (``call.shifted``), which are
    not copied whole. Blocks run forward; block k's slice of a shifted leaf is written only
    by blocks k-1, k and k+1 (its shift is at most ``block_elements``, at most a block). A
    leaf ahead of the outputs it overlaps (``u[2:]`` against ``u[1:-1]``) is read before it
    is written; a leaf behind them (``u[:-2]``) is copied one block ahead, before block k-1
    is written. The first and last block of each thread's run of blocks read copies made
    before any thread starts (a neighbouring run writes them). Leaves that are shifts of one
    another share one copy of the span they cover; the copies stay in cache, so the data
    crosses memory once each way."""
    (n,), leaves, outputs = views
    shifted = call.shifted
    every = _shift_groups(leaves, list(shifted), n)
    behind = _shift_groups(leaves, [j for j, way in shifted.items() if way < 0], n)
    blocks = [(lo, min(n, lo + limit)) for lo in range(0, n, limit)]
    threads = max(1, min(threads_for(call, n), len(blocks)))
    step = -(-len(blocks) // threads)
    runs = [blocks[i:i + step] for i in range(0, len(blocks), step)]

    def copies(lo, hi, groups, buffer_of):
        taken = {}
        for g, (span, members) in enumerate(groups):
            buffer = buffer_of(g, span[lo:hi + len(span) - n])
            for j, shift in members:
                taken[j] = buffer[shift:shift + hi - lo]
        return taken
    ends = [{(lo, hi): copies(lo, hi, every, lambda g, part: part.copy())
             for lo, hi in {run[0], run[-1]}} for run in runs]

    def run_task(ws, run, ends):
        def buffered(parity):
            def buffer_of(g, part):
                buffer = ws.get(("halo", g, parity), part.dtype, len(part))
                np.copyto(buffer, part)
                return buffer
            return buffer_of
        buffers = (buffered(0), buffered(1))
        ahead = ends[run[0]]
        for k, (lo, hi) in enumerate(run):
            current = ahead
            if k + 1 < len(run):
                nxt = run[k + 1]
                ahead = ends[nxt] if nxt in ends else copies(*nxt, behind,
                                                             buffers[(k + 1) % 2])
            block([current.get(j, v[lo:hi]) if j in shifted else v[lo:hi]
                   for j, v in enumerate(leaves)], [o[lo:hi] for o in outputs], ws)
    run_tasks([lambda ws, run=run, ends=ends: run_task(ws, run, ends)
               for run, ends in zip(runs, ends)], threads)


def _shift_groups(leaves, shifted, n):
    """[(span, [(leaf index, shift), ...]), ...]: the shifted 1-D leaves grouped by the
    memory they read (shifts of one another: same dtype and stride, whole elements apart);
    ``span``, a view of ``n`` + the widest shift elements from the group's lowest leaf."""
    found = []  # [first leaf, [(j, address), ...]]
    for j in shifted:
        leaf = leaves[j]
        for first, members in found:
            if (leaf.dtype == first.dtype and leaf.strides == first.strides
                    and (_address(leaf) - _address(first)) % leaf.strides[0] == 0
                    and _may_share_memory(leaf, first)):
                members.append((j, _address(leaf)))
                break
        else:
            found.append((leaf, [(j, _address(leaf))]))
    groups = []
    for first, members in found:
        stride = first.strides[0]
        low = min(address for _, address in members)
        shifts = [(j, (address - low) // stride) for j, address in members]
        lowest = leaves[next(j for j, shift in shifts if shift == 0)]
        width = max(shift for _, shift in shifts)
        groups.append((as_strided(lowest, (n + width,), (stride,), writeable=False), shifts))
    return groups
