"""Numba loops compiled only once they are used: NumPy's loop runs a signature until then.

An element-wise op whose ufunc is the op itself has two 1-D loops of the same result: the
Numba loop around its scalar function (compiled per operand types, ~0.15 s each, ~0.5 us a
call where NumPy's ufunc call costs ~1.5 us) and NumPy's own ufunc loop (the oracle, no
compile). Compiling every signature at its first call stalled a user's first call of each
new dtype combination and spent most of a cold test run compiling loops called a few times.
So a Numba loop's signature runs NumPy's loop for its first ``jit_after()`` calls, and the
next call compiles the Numba loop and runs it from then on. The compile runs on the compile
thread (``compile_queue``) while the caller waits for it: Ctrl-C, which Python delivers to
the main thread only, then interrupts the wait and never an LLVM compile (an interrupted
compile corrupted llvmlite's heap: a Ctrl-C storm aborted in malloc). The caller waits
rather than going on with NumPy's loop: a compile competing for the GIL with the hot loop
that needs it took longer than a whole benchmark of tiny ops. ``NDENGINE_JIT_AFTER`` sets the count
(default 16); 0 compiles at the first call, as a plain Numba dispatcher does.

State, module-wide:

    _records   (Numba loop, operand dtypes) -> _Record: one per loop and signature, shared
               by every plan that calls that loop with those dtypes.
    _jit_after the count above.

A _Record, field by field:

    calls      calls NumPy's loop ran so far. Counted without a lock: a count lost to a race
               only delays the compile by a call (two threads compiling at once meet in
               Numba's own compile lock; the second finds the loop compiled).
    state      WAITING (NumPy's loop runs) -> READY (the Numba loop runs); or NUMPY_ONLY
               (the compile failed: NumPy's loop runs for good, ``failure`` says why) or
               NUMBA_ONLY (NumPy refused the operands, e.g. a cast its ufunc has no loop
               for: the Numba loop runs, compiled at that call).
    failure    why the compile failed, or None.

Invariant: a record is READY only once its Numba loop has a compiled specialisation for the
types of the call that compiled it; results never depend on the state (NumPy's loop is the
oracle the Numba loop is tested against, ``tests/test_ops_deferred_loops.py``). A bound loop
(``bind``) swaps itself out of its slot once READY, so a plan's hot path pays one list index.
"""
from __future__ import annotations

import os
import threading

from numba import typeof

from . import compile_queue

__all__ = ["bind", "deferred_kernels", "jit_after", "set_jit_after", "state_of", "stats"]

WAITING, READY, NUMPY_ONLY, NUMBA_ONLY = "waiting", "ready", "numpy", "numba"


def _read_jit_after() -> int:
    text = os.environ.get("NDENGINE_JIT_AFTER", "16")
    try:
        count = int(text)
    except ValueError:
        count = -1
    if count < 0:
        raise ValueError(f"NDENGINE_JIT_AFTER must be a whole number >= 0, got {text!r}")
    return count


_jit_after = _read_jit_after()
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
    __slots__ = ("numba_loop", "numpy_loop", "calls", "state", "failure")

    def __init__(self, numba_loop, numpy_loop):
        self.numba_loop = numba_loop
        self.numpy_loop = numpy_loop
        self.calls = 0
        self.state = WAITING
        self.failure = None

    def run(self, args):
        """One call while not READY: NumPy's loop, or the compile once it is due."""
        state = self.state
        if state is READY or state is NUMBA_ONLY:
            self.numba_loop(*args)
            return
        if state is WAITING:
            self.calls += 1
            if self.calls > _jit_after and self._compile(args):
                self.numba_loop(*args)
                return
        try:
            self.numpy_loop(*args)
        except TypeError:  # NumPy has no loop for these operands: Numba's compiles now
            self._compile(args)
            self.state = NUMBA_ONLY
            self.numba_loop(*args)

    def _compile(self, args) -> bool:
        """Compile for the types of ``args`` on the compile thread, waiting for it; whether
        the loop is READY."""
        signature = tuple(typeof(a) for a in args)
        compile_queue.submit(lambda: self._compile_now(signature)).wait()
        return self.state is READY

    def _compile_now(self, signature):
        try:
            self.numba_loop.compile(signature)
        except Exception as exc:  # noqa: BLE001 - NumPy's loop stays in use
            self.failure = f"{type(exc).__name__}: {exc}"
            self.state = NUMPY_ONLY
        else:
            self.state = READY


def _record(numba_loop, numpy_loop, dtypes) -> _Record:
    key = (numba_loop, dtypes)
    record = _records.get(key)
    if record is None:
        with _lock:
            record = _records.setdefault(key, _Record(numba_loop, numpy_loop))
    return record


def bind(numba_loop, numpy_loop, dtypes) -> list:
    """A plan's slot for one loop called with operands and output of ``dtypes``: a one-item
    list whose item is the callable to call. It runs NumPy's loop while the Numba loop's
    signature waits or compiles, and puts the Numba loop itself in the slot once READY."""
    record = _record(numba_loop, numpy_loop, dtypes)
    if record.state is READY:
        return [numba_loop]
    slot = []

    def deferred(*args):
        record.run(args)
        if record.state is READY:
            slot[0] = numba_loop

    slot.append(deferred)
    return slot


def deferred_kernels(numba_loops, numpy_loops):
    """``numba_loops`` (a LoopKernels) with every loop deferred per call's dtypes (the
    general run, whose operand dtypes are known only at the call)."""
    def defer(numba_loop, numpy_loop):
        if numba_loop is None:
            return None

        def loop(*args):
            record = _record(numba_loop, numpy_loop, tuple(a.dtype for a in args))
            if record.state is READY:
                numba_loop(*args)
            else:
                record.run(args)
        return loop

    return type(numba_loops)(*map(defer, numba_loops, numpy_loops))


def state_of(numba_loop, dtypes):
    """(state, calls run by NumPy's loop) of a loop's signature; (None, 0) if never called."""
    record = _records.get((numba_loop, tuple(dtypes)))
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
