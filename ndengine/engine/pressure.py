"""Back-pressure, and the read that is exempt from it.

Back-pressure bounds the WORK pending in the engine, not the number of ops: every block carries
``work`` (1 for one op; a window of ops pushed as one gives its own, core/segment.py and
core/lazy.py), the engine sums it in ``_pending_work``, and a push made while it is at
``_max_pending`` or more waits until it falls to ``_resume_at`` (completions wake the sleepers
as it crosses that mark, executor.py). Counting ops would let a thread looping ``x += 1`` on a
large array queue 10,000 fused windows of 64 writes each: minutes of work ahead of any reader.

Who waits. Every push by default (``push_sync``'s ``throttle``), before it takes the engine
lock. A push made under a lock that other threads need (a window's, pushed by whichever thread
flushes it) passes ``throttle=False``, and the thread that owns the window waits for room once
it released that lock; a reader that flushes another thread's window therefore never sleeps
behind that thread's back-pressure. A read (``read_and_wait``) is not throttled either: its
thread waits for it, so it cannot run ahead, and a throttled read would wait for room behind a
writer that keeps filling the queue, instead of taking its place in the order at once.

Fields used (engine state, documented in core.py): ``_pending_work``, ``_max_pending``,
``_resume_at``, ``_stopped``, ``_sleepers``, under ``_lock`` (the first read without it where
noted).
"""
from .context import FnProperty
from .lifecycle import POLL
from .transitions import normalize_vars
from .var import OprBlock

__all__ = ["PressureMixin"]

ASYNC = FnProperty.ASYNC


class PressureMixin:
    def wait_for_room(self):
        """Back-pressure: while ``_max_pending`` work or more is pending, sleep until it
        falls to ``_resume_at`` (never inside an op: its own completion may be what is
        awaited). Every throttled push calls it first; a thread that pushed with
        ``throttle=False`` calls it once it released the lock it held."""
        if self._pending_work < self._max_pending:
            return  # the common case, without the lock
        blocked = False
        while True:
            with self._lock:
                limit = self._resume_at + 1 if blocked else self._max_pending
                if self._pending_work < limit or self._stopped or self._in_op():
                    return
                sleeper = self._new_sleeper()
            blocked = True
            sleeper.acquire(timeout=POLL)

    def read_and_wait(self, fn, ctx, var, prop=ASYNC, name=None):
        """Run fn(run_ctx), an op that reads ``var``, and return once it ran; raise the error
        of a failed write to ``var``, as wait_for_var does. It waits only for the ops pushed on
        ``var`` before it: unless it runs at once in this thread, a WAIT marker is queued right
        behind it in the same locked step, so what other threads push meanwhile queues after
        both, however fast they push (MXNet's order). Not throttled (see the module
        docstring)."""
        if self._deferred:
            self._flush_deferred()
        reads, _ = normalize_vars((var,), ())
        try:
            waiter = self._push_block(OprBlock(fn, False, ctx, reads, (), prop, 0,
                                               next(self._seq), name, None), False, True)
        except KeyboardInterrupt as exc:
            self._note_queued(exc)
            raise
        if waiter is not None:  # queued: a wait from inside an op would deadlock
            self._check_not_in_op(name or "read_and_wait")
        self._finish_wait(waiter, var)
