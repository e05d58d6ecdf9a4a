"""Automatic fusion's kernels: run a recorded element-wise expression as one pass over memory.

The layer above records element-wise ops lazily and, when it flushes them as one engine
op, builds a ``FusedProgram`` (``builder.ProgramBuilder``, see ``program``) and calls::

    kernel = kernel_for(program)          # cached per program structure
    kernel(arrays, scalars, outputs)      # NumPy arrays in, preallocated outputs written

Results equal the unfused ops' (each registered op run one after another on the whole
arrays) bit for bit, with two evaluators:

* blocked (``evaluators.BlockedEvaluator``, numexpr's approach): the registered ops' own
  loops on cache-sized blocks (256 KB of the widest dtype) into scratch buffers, over threads; no
  compile, exactly the unfused results (NumPy's SIMD transcendentals included);
* generated Numba kernel (``codegen``): every node per element in registers, one
  pass; compiled on a background thread, cached on disk (a second process loads it).

Which one runs (``evaluator="auto"``): the Numba kernel once compiled, for programs whose
ops its scalar functions compute exactly as the registered ops do (``numba_exact``: no
float transcendental, sigmoid or power, which the registered ops run with NumPy's SIMD
loops, 3-30x faster than Numba's libm calls and an ulp or two apart; float power of a
scalar exponent 2, 0.5, -1, 1 or 0 is exact, NumPy computing it without pow), unless the blocked
evaluator measured faster on this structure (best ns per element, calls of >= 64K
elements).  ``kernel_for(program, allow_inexact=True)`` lets those programs use the Numba
kernel too (within 4 ulp of the unfused result, tested), still
chosen by measurement.  A compile is requested on a call of >= ``COMPILE_MIN_ELEMENTS``
elements, or the ``COMPILE_AFTER_CALLS``-th call of a structure; until it is ready the
blocked evaluator runs, so a new expression costs its caller no compile time.

The choice made by measurement is recorded on disk beside the kernel (``evaluator_records``,
keyed by the kernel and the machine): a later process with the same record uses it from the
structure's first call, loading a recorded kernel in the caller (from disk, so no compile
wait) and measuring nothing; a recorded "blocked" requests no compile before the first
``RETRY_EVERY`` calls.

Before anything runs, every node's per-call check (``FusedProgram.check_values``) raises
NumPy's error for the scalar values (a weak Python int out of range): the exception
carries ``fusion_node``/``fusion_op``.  ``run_unfused`` and ``find_failing_node`` re-run a
program op by op to find which op raised anything else.

FP errors (NumPy's error state of the calling thread): the blocked evaluator's NumPy loops
report by themselves; the generated kernel returns the processor's FP flags of the whole
call, reported once the outputs are written (``fp_report``: each error named after the
first op that can raise it), and a row reduction's flags as NumPy's reduce reports them.
"""
from __future__ import annotations

import math
import time

import numba
import numpy as np

from . import evaluator_records as _records
from . import kernel_cache as _kernels
from .blocks import PARALLEL_MIN_ELEMENTS, block_elements
from .drivers import coalesced_views, layout_of, prepare_call, run_elementwise
from .evaluators import numba_block, prepare_slots
from .fp_report import culprits, report_kernel_flags
from ..families.row_reductions import row_reducer
from .builder import Const, ProgramBuilder
from .program import FusedProgram, NotFusible, OpNode, Scalar, attribute
from .reduction import reduction_exact, run_reduction
from ..runtime.parallel import cpu_count, parallel_enabled, run_parallel
from ..registry import get as get_op

__all__ = ["FusedProgram", "ProgramBuilder", "Const", "NotFusible", "FusedKernel", "kernel_for",
           "run", "run_unfused", "find_failing_node", "stats", "reset_stats",
           "COMPILE_MIN_ELEMENTS", "COMPILE_AFTER_CALLS", "EVALUATORS"]

COMPILE_MIN_ELEMENTS = 1 << 15  # a call this large asks for a compiled kernel
COMPILE_AFTER_CALLS = 8         # ... and so does a structure seen this often
NUMBA_BLOCK_ELEMENTS = 1 << 18  # a reduction's blocks, for the compiled kernel
HALO_BLOCKS = 2  # a compiled kernel's blocks, in blocked-evaluator blocks, when leaves are
# copied block by block (measured, 2M-point stencil: 3.7 ms a step at 1, 2.5 at 2)
MEASURE_RUNS = 3    # calls of the compiled kernel measured before the blocked one may win
RETRY_EVERY = 256   # ... and how often the loser runs again
EARLY_MARGIN = 2.0  # a kernel this many times faster than the blocked evaluator is kept at once
EVALUATORS = ("auto", "blocked", "numba", "unfused")
stats = _kernels.stats
reset_stats = _kernels.reset_stats


def _dests(program) -> tuple:
    dests = tuple((i, program.nodes[i].dtype) for i in program.outputs)
    if program.reduction is not None:
        dests += ((program.reduction.node, program.reduction.dtype),)
    return dests


class FusedKernel:
    """A program's runner: ``kernel(arrays, scalars=None, outputs=None, threads=None,
    evaluator="auto")`` (see ``__call__``).  ``entry`` is the cache entry it shares with
    every program of the same structure."""

    def __init__(self, program: FusedProgram, allow_inexact=False):
        self.program = program
        self.allow_inexact = allow_inexact
        self.entry = _kernels.entry_for(program, _dests(program))
        self._checked = None  # the key of the last scalar values that passed the checks
        self._coalesced = {}  # coalesced_views' memo

    def __repr__(self):
        return f"<FusedKernel {'+'.join(self.program.member_names)}>"

    def stats(self) -> dict:
        """Its structure's calls, runs per evaluator and compiled variants (compile or load
        seconds: ``kernel_cache.entry_stats``)."""
        return _kernels.entry_stats(self.entry)

    def __call__(self, arrays, scalars=None, outputs=None, *, threads=None, evaluator="auto",
                 compile_after=1):
        """Run the program; returns the outputs (allocated when ``outputs`` is None).

        ``arrays``: one NumPy array per leaf (exact shape and dtype); ``scalars``: one value
        per scalar, of the type the program was built with (default: the values it was
        built with); ``outputs``: one writeable array per ``program.output_specs`` (the
        element-wise outputs, then the reduction's), which may be the very same array as an
        input (in place); ``threads``: the most threads to use (default: every core);
        ``evaluator``: "auto", "blocked", "numba" (compiles now if needed) or "unfused";
        ``compile_after``: no compile is requested before the structure's this-many-th call
        (a caller whose structures may never repeat asks for 2)."""
        if evaluator not in EVALUATORS:
            raise ValueError(f"evaluator must be one of {EVALUATORS}, got {evaluator!r}")
        program = self.program
        values = program.scalar_values if scalars is None else tuple(scalars)
        values_key = _values_key(values)
        if values_key != self._checked or not values_key:
            program.check_values(values)
            self._checked = values_key
        if outputs is None:
            outputs = [np.empty(shape, dtype) for shape, dtype in program.output_specs]
        entry = self.entry
        entry.calls += 1
        if (evaluator == "unfused" or program.size == 0
                or (program.reduction is not None and not reduction_exact(program))):
            run_unfused(program, arrays, values, outputs)
            entry.record("unfused", 0.0, 0)
            return outputs
        call = prepare_call(program, arrays, outputs, cpu_count() if threads is None
                            else max(1, int(threads)))
        views = coalesced_views(call, self._coalesced)
        start = time.perf_counter()
        variant = self._variant(call, views, evaluator, values)
        kept = self._kept(variant) if evaluator == "auto" else None
        kernel = None
        if variant is not None:
            kernel = entry.variants.get(variant)
            if kernel is None and kept == "numba":  # recorded the faster: load it now
                kernel = _kernels.load_now(entry, variant)
                start = time.perf_counter()
            elif kernel is None and evaluator == "numba":
                kernel = _kernels.wait(entry, variant)
                if kernel is None:
                    raise RuntimeError(f"compiling the fused kernel failed: "
                                       f"{entry.failed.get(variant)}")
                start = time.perf_counter()
        slots = self._slots(values, values_key) if kernel is not None else None
        if slots is not None and evaluator == "auto" and _blocked_wins(entry, kept):
            slots = None
        flags = 0
        if slots is None:
            self._run_blocked(call, views, values)
            used = "blocked"
        else:
            flags = self._run_numba(call, views, kernel, variant, slots, threads)
            used = "numba"
        entry.record(used, time.perf_counter() - start, program.size)
        if variant is not None and evaluator == "auto":
            self._after_auto_run(variant, kept, used, compile_after)
        if flags:
            report_kernel_flags(flags, culprits(program))
        return outputs

    def _kept(self, variant):
        """The evaluator an earlier process recorded for ``variant`` (looked up once per
        process; None: none recorded, or the program is too small to be measured)."""
        kept = self.entry.kept
        if variant not in kept:
            kept[variant] = (_records.load(self.entry, variant) if variant is not None
                             and self.program.size >= _kernels.MEASURE_MIN_ELEMENTS else None)
        return kept[variant]

    def _after_auto_run(self, variant, kept, used, compile_after):
        """Request the compile this structure may need; record the evaluator once the
        measurement settles (``MEASURE_RUNS`` runs of the kernel) and differs from the
        record, or "numba" as soon as the kernel beats the blocked evaluator by
        ``EARLY_MARGIN`` (a script that ends before the kernel's third run leaves the record
        too: its next process loads the kernel at the first call). A recorded "blocked"
        compiles nothing before the first retry."""
        entry, program = self.entry, self.program
        if (variant not in entry.events and entry.calls >= compile_after
                and (program.size >= COMPILE_MIN_ELEMENTS or entry.calls >= COMPILE_AFTER_CALLS)
                and (kept != "blocked" or entry.calls >= RETRY_EVERY)):
            _kernels.request(entry, variant)  # after the run: its loops are warm by now
        if used != "numba" or program.size < _kernels.MEASURE_MIN_ELEMENTS:
            return
        runs = entry.runs["numba"]
        if runs == MEASURE_RUNS:
            choice = _measured_choice(entry)
        elif runs < MEASURE_RUNS and _kernel_clearly_wins(entry):
            choice = "numba"  # kept now: a process may end before MEASURE_RUNS runs of it
        else:
            return
        if choice != kept and _records.save(entry, variant, choice, entry.best_ns):
            entry.kept[variant] = choice

    def _variant(self, call, views, evaluator, values):
        """The compiled variant this call would use, or None for the blocked evaluator."""
        program = self.program
        if evaluator == "blocked" or not program.numba_able:
            if evaluator == "numba":
                raise NotFusible(f"{program!r} has an op the generated kernel cannot compute")
            return None
        if not (program.exact_with(values) or self.allow_inexact or evaluator == "numba"):
            return None
        parallel = (program.reduction is None and not call.shifted
                    and program.size >= PARALLEL_MIN_ELEMENTS and call.threads > 1
                    and parallel_enabled())
        return (layout_of(views), parallel)

    def _slots(self, values, key):
        """The kernel's scalar arguments, kept for the last values seen (a flush usually
        repeats them); ``key``: the values' ``_values_key``."""
        entry = self.entry
        last_key, last = entry.last_slots
        if key == last_key and key:
            return last
        slots = prepare_slots(entry.slots, values)
        try:
            entry.last_slots = (key, slots)
        except TypeError:
            pass
        return slots

    def _run_blocked(self, call, views, values):
        blocked = self.entry.blocked
        params = blocked.call_params(values)
        direct = call.direct

        def block(leaves, dests, ws):
            blocked.evaluate(values, params, leaves, dests, ws, direct)
        if self.program.reduction is None:
            run_elementwise(call, views, block)
        else:
            run_reduction(call, views, block)

    def _run_numba(self, call, views, kernel, variant, slots, threads):
        """Run the compiled kernel; returns the FP flags it raised (every block's)."""
        layout, parallel = variant
        classes = layout[1] if layout[0] == "flat" else None
        raised = []  # the flags of the blocks that raised any (blocks run on several threads)

        def block(leaves, dests, ws):
            flags = numba_block(kernel, classes, slots, leaves, dests)
            if flags:
                raised.append(flags)
        r = self.program.reduction
        _, leaves, outputs = views
        if r is not None:  # big blocks: values are written once and read once
            run_reduction(call, views, block, NUMBA_BLOCK_ELEMENTS, row_reducer(r.name, r.dtype))
        elif call.shifted:  # leaves read through per-block copies: block by block, over threads
            run_elementwise(call, views, block, HALO_BLOCKS * block_elements(self.program))
        elif not parallel:
            raised.append(numba_block(kernel, classes, slots, leaves, outputs))
        elif threads is None:
            raised.append(run_parallel(numba_block, kernel, classes, slots, leaves, outputs))
        else:
            previous = numba.get_num_threads()
            numba.set_num_threads(max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS)))
            try:
                raised.append(numba_block(kernel, classes, slots, leaves, outputs))
            finally:
                numba.set_num_threads(previous)
        flags = 0
        for value in raised:
            flags |= value
        return flags


def _values_key(values):
    """The scalar values, told apart as the kernel tells them: by type and sign of zero
    (-0.0 == 0.0, but they differ)."""
    return tuple([(type(v), v, math.copysign(1.0, v) if isinstance(v, (float, np.floating))
                   else 0) for v in values])


def _kernel_clearly_wins(entry) -> bool:
    """Whether the compiled kernel's best run already took at most 1/``EARLY_MARGIN`` of the
    blocked evaluator's (20M float32, 2 chains of 10 ops: 0.45 against 3.8 ns an element)."""
    blocked, compiled = entry.best_ns.get("blocked"), entry.best_ns.get("numba")
    return blocked is not None and compiled is not None and compiled * EARLY_MARGIN <= blocked


def _measured_choice(entry) -> str:
    """The evaluator measured faster: "blocked" only when it beat the kernel by 10%."""
    blocked, compiled = entry.best_ns.get("blocked"), entry.best_ns.get("numba")
    if blocked is None or compiled is None or blocked >= 0.9 * compiled:
        return "numba"
    return "blocked"


def _blocked_wins(entry, kept=None) -> bool:
    """Whether the blocked evaluator runs instead of the compiled kernel: it measured
    faster, each measured on ``MEASURE_RUNS`` calls at least (a kernel's first calls pay
    its dispatch), and the loser is tried again every ``RETRY_EVERY`` calls (the machine's
    load changes).  Until the kernel is measured, ``kept`` (the evaluator recorded by an
    earlier process) stands in for the measurement up to the first retry."""
    if entry.calls % RETRY_EVERY == 0:
        return False
    if entry.runs.get("numba", 0) < MEASURE_RUNS:
        return kept == "blocked" and entry.calls < RETRY_EVERY
    return _measured_choice(entry) == "blocked"



def kernel_for(program: FusedProgram, *, allow_inexact=False) -> FusedKernel:
    """The runner of ``program`` (cheap: the compiled kernels live in the shared cache)."""
    return FusedKernel(program, allow_inexact)


def run(program: FusedProgram, arrays, scalars=None, outputs=None, **options):
    """``kernel_for(program)(arrays, scalars, outputs, **options)``."""
    return kernel_for(program)(arrays, scalars, outputs, **options)


# ------------------------------------------------------------------ op by op

def _unfused_values(program, arrays, values):
    """The values of the outputs and of the reduction, each op run by its registered op on
    whole arrays (a value is dropped once nothing needs it)."""
    last_use = {i: len(program.nodes) for i in program.outputs}
    if program.reduction is not None:
        last_use[program.reduction.node] = len(program.nodes)
    for i, node in enumerate(program.nodes):
        if isinstance(node, OpNode):
            for arg in node.args:
                last_use[arg] = max(last_use.get(arg, i), i)
    vals = {}
    for i, node in enumerate(program.nodes):
        if isinstance(node, Scalar):
            vals[i] = values[node.index]
        elif not isinstance(node, OpNode):
            vals[i] = arrays[node.index]
        else:
            params = program.node_inputs(node, values)[1]
            try:
                (vals[i],) = get_op(node.name).apply(*[vals[a] for a in node.args], **params)
            except Exception as exc:
                raise attribute(exc, i, node.name) from None
            for arg in set(node.args):
                if last_use.get(arg) == i:
                    del vals[arg]
    r = program.reduction
    if r is not None:
        try:
            (vals["reduction"],) = get_op(r.name).apply(vals[r.node], axis=r.axis,
                                                        keepdims=r.keepdims)
        except Exception as exc:
            raise attribute(exc, len(program.nodes), r.name) from None
    return vals


def run_unfused(program, arrays, scalars=None, outputs=None):
    """The program op by op, each registered op on whole arrays (the oracle, and the way to
    find which op raises: its exception carries ``fusion_node`` and ``fusion_op``).  The
    outputs are written only once every op has succeeded."""
    values = program.scalar_values if scalars is None else tuple(scalars)
    program.check_values(values)
    if outputs is None:
        outputs = [np.empty(shape, dtype) for shape, dtype in program.output_specs]
    vals = _unfused_values(program, list(arrays), values)
    for out, i in zip(outputs, program.outputs):
        np.copyto(out, vals[i])
    if program.reduction is not None:
        np.copyto(outputs[-1], vals["reduction"])
    return outputs


def find_failing_node(program, arrays, scalars=None):
    """(node id, exception) of the first op that raises when the program runs op by op
    (the reduction's id is ``len(program.nodes)``), or None; writes nothing."""
    values = program.scalar_values if scalars is None else tuple(scalars)
    try:
        program.check_values(values)
        _unfused_values(program, list(arrays), values)
    except Exception as exc:  # noqa: BLE001 - reported to the caller
        return getattr(exc, "fusion_node", None), exc
    return None
