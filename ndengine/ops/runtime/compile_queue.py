"""One background thread that compiles what callers asked for, one job at a time.

Numba compiles one function at a time anyway (its compiler lock), so one thread is all a
queue of compiles can use; while it works, callers run something slower that needs no
compile (fusion's blocked evaluator), or wait for it (``deferred_loops``: a wait, unlike a
compile, may be cut short by Ctrl-C; a job that itself needs a compile runs it at once,
``on_compile_thread``). Callers keep their own record of what they asked for
(one request per thing to compile).

State, module-wide:

    _queue    the jobs not yet started, in submission order: (job, event).
    _thread   the daemon thread running them, started by the first submission (and again
              after a fork, whose child has none of the parent's threads).

Invariant: a job's event is set once the job has run, whatever its outcome; a job records
its own failure where its caller looks (the queue never raises, and keeps serving). Jobs
queued in a parent that forks never run in the child: their events stay unset there, and
callers forget them at fork (``fusion.kernel_cache``).

The process's warnings state is left alone here. Numba's type inference wraps the typing of
each statement in ``warnings.catch_warnings(record=True)`` (its ``WarningsFixer``), which swaps
the process-wide filters and handler on entry and puts back on exit what it found: run here,
concurrently with a thread that records warnings (``catch_warnings(record=True)``,
``pytest.warns``), a warning raised in that thread (an op's FP error surfacing at a wait) went
into Numba's list, or to a handler restored under it, and was lost; and a handler put back late
stayed installed for the whole process. So this module replaces Numba's ``errors.WarningsFixer``
at import with `_CompileThreadWarnings`, which swaps nothing on this thread (elsewhere it is
Numba's): the warnings Numba raises while typing here go out as they are raised, under the
process's filters (without Numba's deduplication and its line of the typed statement).
"""
from __future__ import annotations

import contextlib
import os
import queue
import sys
import threading

from numba.core import errors as _numba_errors

__all__ = ["submit", "on_compile_thread", "drain"]

_queue: queue.Queue = queue.Queue()
_thread = None
_lock = threading.Lock()


def submit(job, event=None) -> threading.Event:
    """Run ``job()`` on the compile thread; returns the event set once it has run."""
    global _thread
    event = threading.Event() if event is None else event
    with _lock:
        _queue.put((job, event))
        if _thread is None or not _thread.is_alive():
            # a daemon: an exit never waits for a compile (Numba's cache writes are atomic)
            _thread = threading.Thread(target=_run_jobs, name="ndengine-compile", daemon=True)
            _thread.start()
    return event


def drain(timeout=None) -> bool:
    """Wait until every job submitted so far has run (they run in order: a job queued now runs
    after them); False if ``timeout`` seconds passed first."""
    if on_compile_thread():
        raise RuntimeError("drain() on the compile thread would wait for itself")
    return submit(lambda: None).wait(timeout)


def on_compile_thread() -> bool:
    """Whether the calling thread is the compile thread (whose job must not wait for a job
    queued behind it: it runs the work itself)."""
    return threading.current_thread() is _thread


class _CompileThreadWarnings(_numba_errors.WarningsFixer):
    """Numba's collector of the warnings its type inference raises (one per function typed),
    made by Numba as ``errors.WarningsFixer``: on the compile thread it leaves the process's
    warnings state alone (module docstring); elsewhere it is Numba's own."""

    def catch_warnings(self, filename=None, lineno=None):
        if on_compile_thread():
            return contextlib.nullcontext()
        return super().catch_warnings(filename, lineno)


_numba_errors.WarningsFixer = _CompileThreadWarnings


def _run_jobs():
    while True:
        job, event = _queue.get()
        if sys.is_finalizing():
            event.set()  # nothing compiles at exit: a caller waiting goes on without it
            return
        try:
            job()
        except BaseException:  # noqa: BLE001 - a job records its own failure; keep serving
            pass
        finally:
            event.set()


def _reset_in_child():
    global _queue, _thread, _lock
    _queue = queue.Queue()
    _thread = None
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_in_child)
