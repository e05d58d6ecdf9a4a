"""Numba loops compiled only once they are used, and always on the compile thread.

An element-wise op whose ufunc is the op itself has two 1-D loops of the same result: the
Numba loop around its scalar function (compiled per operand types, ~0.15 s each, ~0.5 us a
call where NumPy's ufunc call costs ~1.5 us) and NumPy's own ufunc loop (the oracle, no
compile). Compiling every signature at its first call stalled a user's first call of each
new dtype combination and spent most of a cold test run compiling loops called a few times.
So a Numba loop's signature runs NumPy's loop for its first ``jit_after()`` calls, and the
next call compiles the Numba loop; from then on the faster of the two runs (below). A loop
with no NumPy loop of the same result (relu, where, integer power, the ``prange`` loops of ops
that do not defer, power's ``any_negative``, fusion's row loops: ``numpy_loop`` None)
compiles at its first call.

Either way the compile runs on the compile thread (``compile_queue``), never in the caller:
Ctrl-C, which Python delivers to the main thread only, can then never interrupt an LLVM compile
(an interrupted compile corrupted llvmlite's heap: a Ctrl-C storm aborted in malloc). Where a
NumPy loop stands in, the caller does not wait for the compile: the call that makes it due
queues it (COMPILING) and goes on with NumPy's loop, as do the calls after it until the compile
is done (MEASURING, then READY). A caller that waited stalled 0.2-0.6 s at the 17th call of
each new (op, dtype) pair, in the middle of a user's loop; going on costs ~1 us a call more
until the switch (the compile competes for the GIL with the loop that runs, so it takes longer
in wall time: a script that ends first never needed it). Where no NumPy loop stands in (or the
count is 0: compile at the first call, as a plain Numba dispatcher does) the caller waits for
the compile, and a failed compile raises in the caller the exception that Numba's own call
would have raised. ``NDENGINE_JIT_AFTER`` sets the count (default 16). Each compile is reported
to ``compile_log`` (the ``ndengine.compile`` logger, the process's compile time).

Compiled is not always faster: NumPy's loops of some (op, dtype) pairs are SIMD code that a
Numba loop of scalar calls does not match, while NumPy's call costs ~0.4 us more. So where a
NumPy loop stands in, the first call after the compile (MEASURING) times both loops once, on
the call's own operands (their first ``TRIAL_ELEMENTS`` elements; a call large enough to split
over the cores, up to ``PARALLEL_TRIAL_ELEMENTS``) into a scratch output,
``TRIAL_ROUNDS`` interleaved rounds, best of each, and keeps the faster for good: READY
(Numba's) or NUMPY_FASTER (NumPy's). Once per signature (op, dtypes, loop shape), about a
millisecond (a few for a split call); the call's own output is then written once, by the loop kept, which
alone reports FP errors.

Two ways to call a loop, one record per Numba signature behind both:

    bind               a plan's slot (a flat run: operand dtypes known at plan time, operands
                       the engine's writeable aligned C-contiguous 1-D buffers or copies, so one
                       Numba type per dtypes): once READY, the slot holds the loop's compiled
                       specialisation for those types, called without Numba's dispatch.
    deferred           a wrapper for operands of any types (the general run, power's loops),
                       keyed per call by the operands' Numba type fingerprints (the key
                       Numba's own dispatch uses: dtype, ndim, layout, read-only, aligned; the
                       general run's nditer chunks are read-only, a flat run's are not).

State, module-wide:

    _records   (Numba loop, key types, has a NumPy loop) -> _Record: one per loop, key
               types and kind, shared by every plan or wrapper that calls that loop with
               those types (key types: dtypes for ``bind``, fingerprints for ``deferred``).
    _jit_after the count above.

Each ``deferred`` wrapper keeps its own dict, call types -> _Record: a cache of _records.

A _Record, field by field:

    calls      calls NumPy's loop ran so far (0 without one). Counted without a lock: a
               count lost to a race only delays the compile by a call (two threads compiling
               at once meet in Numba's own compile lock; the second finds the loop compiled).
    state      WAITING (NumPy's loop runs; without one, the compile is due) -> COMPILING
               (queued, NumPy's loop runs; skipped where the caller waits) -> MEASURING
               (compiled; the next call times both loops) -> READY (the Numba loop runs) or
               NUMPY_FASTER (NumPy's loop measured faster: it runs for good); or
               NUMPY_ONLY (the compile failed: NumPy's loop runs for good, ``failure``
               says why) or NUMBA_ONLY (NumPy refused the operands, e.g. a cast its ufunc
               has no loop for: the Numba loop runs, compiled at that call).
               Without a NumPy loop a failed compile leaves it WAITING: each call tries again
               and raises, as a Numba dispatcher's call does. Without a NumPy loop a compile
               goes straight to READY (nothing to measure against), and so does one
               bound with ``measure=False`` (its NumPy stand-in is known slower).
    measure    False: the compile goes straight to READY (above).
    failure    why the last compile failed, or None.

Invariant: a record is MEASURING, READY or NUMPY_FASTER only once its Numba loop has a
compiled specialisation for the types of the call that made it due (compiled on the compile
thread, or found compiled already); no call through a record compiles outside the compile thread
(nor does the compile thread wait for itself: a call made on it compiles there at once),
save at exit, once that thread has stopped: then the caller compiles.
Results never depend on the state (NumPy's loop is the oracle the Numba loop is tested
against, ``tests/ops/test_ops_deferred_loops.py``). A bound loop (``bind``) swaps itself out of
its slot once READY (NumPy's loop once NUMPY_FASTER), so a plan's hot path pays one list
index; a ``deferred`` call, a tuple of fingerprints and a dict lookup (never ``typeof``,
which runs only before READY).
"""
from __future__ import annotations

import os
import threading
import time

import numpy as np
from numba import from_dtype as _from_dtype, typeof, types as _types
from numba._dispatcher import compute_fingerprint as _fingerprint

from ...engine.config import env_int
from . import compile_log, compile_queue
from .parallel import PARALLEL_MIN_SIZE

__all__ = ["bind", "deferred", "deferred_kernels", "call_types", "jit_after", "set_jit_after",
           "state_of", "stats", "WAITING", "COMPILING", "MEASURING", "READY", "NUMPY_FASTER",
           "NUMPY_ONLY", "NUMBA_ONLY", "TRIAL_ELEMENTS", "PARALLEL_TRIAL_ELEMENTS",
           "TRIAL_ROUNDS"]

WAITING, COMPILING, READY, NUMPY_ONLY, NUMBA_ONLY = "waiting", "compiling", "ready", "numpy", "numba"
MEASURING, NUMPY_FASTER = "measuring", "numpy-faster"

# The timing of both loops: enough elements that the per-element cost shows (a NumPy call's
# fixed ~0.5 us is a twentieth of a 64K-element float32 loop, where SIMD and memory decide),
# few enough that the trial stays about a millisecond; the best of interleaved rounds. A call
# of PARALLEL_MIN_SIZE elements or more runs the loops that split over the cores (prange,
# split_run), which only split from that size on: it is timed on up to PARALLEL_TRIAL_ELEMENTS.
TRIAL_ELEMENTS = 1 << 16
PARALLEL_TRIAL_ELEMENTS = 4 * PARALLEL_MIN_SIZE
TRIAL_ROUNDS = 3


_jit_after = env_int("NDENGINE_JIT_AFTER", 16, minimum=0)  # at import: a bad value fails here
_records: dict = {}
_lock = threading.Lock()


def jit_after() -> int:
    """How many calls of a signature run NumPy's loop before its Numba loop compiles."""
    return _jit_after


def set_jit_after(count: int) -> int:
    """Set that count (0: compile at the first call); returns the previous one."""
    global _jit_after
    if not isinstance(count, int) or count < 0:
        raise ValueError(f"the count must be a whole number >= 0, got {count!r}")
    previous, _jit_after = _jit_after, count
    return previous


class _Record:
    __slots__ = ("numba_loop", "numpy_loop", "measure", "calls", "state", "failure")

    def __init__(self, numba_loop, numpy_loop, measure=True):
        self.numba_loop = numba_loop
        self.numpy_loop = numpy_loop
        self.measure = measure
        self.calls = 0
        self.state = WAITING
        self.failure = None

    def run(self, args):
        """One call while not READY: NumPy's loop (queueing the compile once it is due), or
        the compile and Numba's loop where none stands in; the loop's result."""
        state = self.state
        if state is READY or state is NUMBA_ONLY:
            return self.numba_loop(*args)
        numpy_loop = self.numpy_loop
        if state is NUMPY_FASTER:
            return numpy_loop(*args)
        if state is MEASURING:
            self._measure(args)
            return self.run(args)
        if state is WAITING:
            if numpy_loop is None:
                error = self._compile(args)
                if error is not None:
                    raise error
                return self.numba_loop(*args)
            if self.calls == 0 and self._compiled(args):
                return self.numba_loop(*args)
            self.calls += 1
            if self.calls > _jit_after:
                if _jit_after == 0:
                    if self._compile(args) is None:
                        return self.numba_loop(*args)
                else:
                    self._start_compile(args)
        try:
            return numpy_loop(*args)
        except TypeError:  # NumPy has no loop for these operands: Numba's compiles now
            error = self._compile(args)
            if error is not None:
                raise error
            self.state = NUMBA_ONLY
            return self.numba_loop(*args)

    def _compiled(self, args) -> bool:
        """Whether the Numba loop has these types compiled already (then MEASURING)."""
        if tuple(typeof(a) for a in args) in getattr(self.numba_loop, "overloads", ()):
            self._set_compiled()
            return True
        return False

    def _set_compiled(self):
        self.state = MEASURING if self.numpy_loop is not None and self.measure else READY

    def _measure(self, args):
        """Time both loops on ``args`` (their first TRIAL_ELEMENTS elements) into a scratch
        output and keep the faster: READY (Numba's) or NUMPY_FASTER. The trial's FP errors
        are not reported: the call's own run reports them."""
        trial = _trial_operands(args)
        if trial is None:  # a cut operand would need a compile of its own: keep Numba's
            self.state = READY
            return
        numba_loop, numpy_loop = self.numba_loop, self.numpy_loop
        numba_best = numpy_best = float("inf")
        clock = time.perf_counter
        try:
            with np.errstate(all="ignore"):
                for _ in range(TRIAL_ROUNDS):
                    start = clock()
                    numba_loop(*trial)
                    middle = clock()
                    numpy_loop(*trial)
                    numba_best = min(numba_best, middle - start)
                    numpy_best = min(numpy_best, clock() - middle)
        except TypeError:  # NumPy has no loop for these operands
            self.state = NUMBA_ONLY
            return
        self.state = NUMPY_FASTER if numpy_best < numba_best else READY

    def _compile(self, args):
        """Compile for the types of ``args`` on the compile thread, waiting for it (at once
        where this is the compile thread); the compile's exception, or None (READY)."""
        signature = tuple(typeof(a) for a in args)
        if signature in getattr(self.numba_loop, "overloads", ()):
            self._set_compiled()
            return None
        if compile_queue.on_compile_thread():
            return self._compile_now(signature)
        outcome = []
        compile_queue.submit(lambda: outcome.append(self._compile_now(signature))).wait()
        if not outcome:  # the queue ran nothing (the interpreter exits): compile here
            return self._compile_now(signature)
        return outcome[0]

    def _start_compile(self, args):
        """Queue the compile for the types of ``args`` without waiting for it (COMPILING,
        READY once done); NumPy's loop goes on meanwhile. A call made on the compile thread
        compiles at once."""
        signature = tuple(typeof(a) for a in args)
        if signature in getattr(self.numba_loop, "overloads", ()):
            self._set_compiled()
            return
        self.state = COMPILING
        if compile_queue.on_compile_thread():
            self._compile_now(signature)
        else:
            compile_queue.submit(lambda: self._compile_now(signature))

    def _compile_now(self, signature):
        what = f"{getattr(self.numba_loop, '__name__', 'loop')}{signature}"
        start = time.perf_counter()
        try:
            self.numba_loop.compile(signature)
        except Exception as exc:  # noqa: BLE001 - NumPy's loop stays in use, or the caller raises
            self.failure = f"{type(exc).__name__}: {exc}"
            if self.numpy_loop is not None:
                self.state = NUMPY_ONLY
            compile_log.record(what, time.perf_counter() - start, exc,
                               "NumPy's loop runs instead" if self.numpy_loop is not None
                               else None)
            return exc
        self._set_compiled()
        compile_log.record(what, time.perf_counter() - start)
        return None


def _trial_operands(args):
    """``args`` cut to their first TRIAL_ELEMENTS elements (PARALLEL_TRIAL_ELEMENTS for a
    call that splits over the cores; one-element operands as they are) and a scratch output;
    None where a cut operand's Numba type would differ (a compile)."""
    out = args[-1]
    size = min(out.size, TRIAL_ELEMENTS if out.size < PARALLEL_MIN_SIZE
               else PARALLEL_TRIAL_ELEMENTS)
    trial = [a[:size] if a.size == out.size else a for a in args[:-1]]
    trial.append(np.empty(size, out.dtype))
    if tuple(map(_fingerprint, trial)) != tuple(map(_fingerprint, args)):
        return None
    return trial


def _requeue_in_child():
    # a forked child has no compile thread of the parent's: a compile queued there never runs
    # here, so its record waits again (its next call queues it anew)
    for record in list(_records.values()):
        if record.state is COMPILING:
            record.state = WAITING


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_requeue_in_child)


def _record(numba_loop, numpy_loop, types, measure=True) -> _Record:
    key = (numba_loop, types, numpy_loop is not None)
    record = _records.get(key)
    if record is None:
        with _lock:
            record = _records.setdefault(key, _Record(numba_loop, numpy_loop, measure))
    return record


def bind(numba_loop, numpy_loop, dtypes, measure=True) -> list:
    """A plan's slot for one loop called with operands and output of ``dtypes``: a one-item
    list whose item is the callable to call. It runs NumPy's loop (``numpy_loop``; None: none)
    while the Numba loop's signature waits or compiles, and puts the loop kept in the slot:
    the Numba loop's compiled specialisation for ``dtypes`` once READY (`_bound_entry`),
    NumPy's once NUMPY_FASTER. ``measure`` False: no trial, the Numba loop is kept once
    compiled (a function that is no element-wise loop, whose stand-in is known slower)."""
    record = _record(numba_loop, numpy_loop, tuple(dtypes), measure)
    if record.state is READY:
        return [_bound_entry(numba_loop, dtypes)]
    if record.state is NUMPY_FASTER:
        return [numpy_loop]
    slot = []

    def until_ready(*args):
        result = record.run(args)
        if record.state is READY:
            slot[0] = _bound_entry(numba_loop, dtypes)
        elif record.state is NUMPY_FASTER:
            slot[0] = numpy_loop
        return result

    slot.append(until_ready)
    return slot


def _bound_entry(numba_loop, dtypes):
    """What a READY bound slot calls: the Numba loop's compiled specialisation for writeable,
    aligned, C-contiguous 1-D operands of ``dtypes``, which is what a flat run passes (see
    ``bind``), called as it is: Numba's dispatch by argument types (~90 ns of a ~240 ns call
    on 16 elements) is left out, the argument unboxing stays. The loop itself where it has
    no such specialisation (a loop that is not a Numba dispatcher, or other types)."""
    overloads = getattr(numba_loop, "overloads", None)
    if not overloads:
        return numba_loop
    signature = tuple(_types.Array(_from_dtype(np.dtype(d)), 1, "C") for d in dtypes)
    compiled = overloads.get(signature)
    return numba_loop if compiled is None else compiled.entry_point


def call_types(*args) -> tuple:
    """The key types of a call through ``deferred``: each array operand's Numba type
    fingerprint."""
    return tuple(map(_fingerprint, args))


def deferred(numba_loop, numpy_loop=None):
    """``numba_loop`` for array operands of any types (NumPy's loop ``numpy_loop`` standing in
    until due; None: none), its record looked up per call by the operands' Numba types."""
    records = {}  # call types -> _Record: this wrapper's own lookup into _records

    def loop(*args):
        types = tuple(map(_fingerprint, args))
        record = records.get(types)
        if record is None:
            record = records[types] = _record(numba_loop, numpy_loop, types)
        if record.state is READY:
            return numba_loop(*args)
        return record.run(args)
    return loop


def deferred_kernels(numba_loops, numpy_loops=None):
    """``numba_loops`` (a LoopKernels) with every loop ``deferred`` (the general run, whose
    operand types are known only at the call); ``numpy_loops`` None: no NumPy loops."""
    if numpy_loops is None:
        numpy_loops = (None,) * len(numba_loops)
    return type(numba_loops)(*[None if numba_loop is None else deferred(numba_loop, numpy_loop)
                               for numba_loop, numpy_loop in zip(numba_loops, numpy_loops)])


def state_of(numba_loop, types, numpy=True):
    """(state, calls run by NumPy's loop) of a loop's signature (``types``: the dtypes given
    to ``bind``, or ``call_types`` of a ``deferred`` call; ``numpy``: of the record with a
    NumPy loop, or without); (None, 0) if never called."""
    record = _records.get((numba_loop, tuple(types), numpy))
    return (None, 0) if record is None else (record.state, record.calls)


def stats() -> dict:
    """How many signatures are in each state, and the failures."""
    counts = {}
    failures = []
    for record in list(_records.values()):
        counts[record.state] = counts.get(record.state, 0) + 1
        if record.failure is not None:
            failures.append(record.failure)
    return {"signatures": counts, "failures": failures, "jit_after": _jit_after}
