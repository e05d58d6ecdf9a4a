"""Waiting: how a thread sleeps until ops it depends on have run.

A wait sleeps on a lock of its own outside the engine lock (never a Condition, whose re-acquire
an interrupt can skip), and polls every ``POLL`` seconds in case a wake-up was lost to an
interrupt. wait_for_var pushes a WAIT marker that writes the var: it is granted, and releases
the waiting thread, once every op pushed before it on the var has finished. read_and_wait pushes
its op and, unless the op runs at once in this thread, a WAIT marker right behind it in the same
locked step. An interrupted wait's KeyboardInterrupt carries a note saying how many ops are
still queued and how to drop them (``cancel_pending``). A wait from inside an op raises (it
would deadlock). On the NaiveEngine a waiting thread also runs the ready blocks no pushing
thread took (naive.py).

Back-pressure (``wait_for_room``) bounds the WORK pending, not the number of
ops: a window of ops pushed as one gives its own ``work`` (core/segment.py, core/lazy.py).
Every push waits for room by default; a push made under a lock that other threads need passes
``throttle=False``, and its thread waits for room once it released that lock. A read
(``read_and_wait``) is not throttled: its thread waits for it, so it cannot run ahead, and a
throttled read would wait behind a writer that keeps filling the queue instead of taking its
place in the order at once.

`Waits` has no state of its own, field by field only what the engine hands it:
    executor     the engine's `Executor`: its lock, counters and limits, sleepers and pushes
                 (it calls ``wait_for_room`` back, handed by the engine).
    failures     the engine's `Failures`: the errors a wait raises or takes.
    deletions    the engine's `Deletions`: every wait first pushes the deferred ones.
    pools        the engine's `Pools`: how many workers are busy (the interrupt's note).
"""
from .context import FnProperty
from .devices import sync_host, synchronize
from .executor import POLL
from .threadstate import tls
from .transitions import normalize_vars
from .var import OprBlock, wait_marker

__all__ = ["Waits"]

ASYNC = FnProperty.ASYNC


def _raise_stored(error, traceback):
    raise error.with_traceback(traceback)


class Waits:
    """See the module docstring."""

    __slots__ = ("executor", "failures", "deletions", "pools")

    def __init__(self, executor, failures, deletions, pools):
        self.executor = executor
        self.failures = failures
        self.deletions = deletions
        self.pools = pools

    def check_not_in_op(self, what):
        if self.executor.in_op():
            raise RuntimeError(
                f"{what} was called from inside an op running on the engine; that would "
                "deadlock. Push the dependent work as another op instead.")

    def wait_for_var(self, var):
        """Return when every op pushed before this call that reads or writes var has finished;
        raise the error of the op that failed writing it, every time (and wait_for_all will
        not raise it again)."""
        executor = self.executor
        if tls.executor is executor or not var.is_idle():
            self.check_not_in_op("wait_for_var")
        if self.deletions.deferred:
            self.deletions.flush()
        waiter = None
        try:
            with executor.lock:
                if not var.is_idle():
                    marker = wait_marker(var)
                    waiter = marker.waiter
                    executor.push_locked(marker)
        except KeyboardInterrupt as exc:
            self.note_queued(exc)
            raise
        self.finish_wait(waiter, var)

    def read_and_wait(self, fn, ctx, var, prop=ASYNC, name=None):
        """Run fn(run_ctx), an op that reads ``var``, and return once it ran; raise the error
        of a failed write to ``var``, as wait_for_var does. It waits only for the ops pushed on
        ``var`` before it (MXNet's order); not throttled (see the module docstring)."""
        if self.deletions.deferred:
            self.deletions.flush()
        reads, _ = normalize_vars((var,), ())
        executor = self.executor
        try:
            waiter = executor.push(OprBlock(fn, False, ctx, reads, (), prop, 0,
                                            next(executor.seq), name, None), False, True)
        except KeyboardInterrupt as exc:
            self.note_queued(exc)
            raise
        if waiter is not None:  # queued: a wait from inside an op would deadlock
            self.check_not_in_op(name or "read_and_wait")
        self.finish_wait(waiter, var)

    def finish_wait(self, waiter, var):
        """Sleep until ``waiter`` (a pushed marker's, or None) is released; then raise the
        error of a failed write to ``var``."""
        try:
            if waiter is not None:
                if self.executor.inline_all:
                    while not waiter.acquire(timeout=POLL):
                        self.executor.run_queued()
                else:
                    waiter.acquire()
        except KeyboardInterrupt as exc:
            self.note_queued(exc)
            raise
        if var.device_sync is not None:  # its GPU work: that var's events, not the device
            sync_host((), (var,), clear=False)
        error = var.error
        if error is not None:
            self.failures.forget(error)
            _raise_stored(error, var.error_tb)

    def wait_for_all(self):
        """Return when no op is pending; raise the first failure no wait or push has raised
        yet (and forget the rest, so the next call is clean)."""
        executor = self.executor
        if tls.executor is executor or executor.pending or executor.pending_now:
            self.check_not_in_op("wait_for_all")
        try:
            self.wait_idle(take_errors=True)
        except KeyboardInterrupt as exc:
            self.note_queued(exc)
            raise
        errors = self.failures.pop_taken()
        for stream in list(self.pools.streams):  # GPU work queued by ops that have completed
            synchronize(stream)
        if errors:
            _raise_stored(*errors[0])

    def wait_idle(self, take_errors=False):
        """Sleep until nothing is pending; then (take_errors) move the errors to the
        failures' ``taken``, in the same locked section that saw the engine idle."""
        executor, deferred = self.executor, self.deletions.deferred
        while True:
            if deferred:
                self.deletions.flush()
            if executor.inline_all:
                executor.run_queued()
            with executor.lock:
                if executor.pending == 0 and executor.pending_now == 0 and not deferred:
                    if take_errors:
                        self.failures.take_for_wait()
                    return
                sleeper = executor.new_sleeper()
            sleeper.acquire(timeout=POLL)

    def wait_for_room(self):
        """Back-pressure: while ``max_pending`` work or more is pending, sleep until it
        falls to ``resume_at`` (never inside an op: its own completion may be what is
        awaited). Every throttled push calls it first; a thread that pushed with
        ``throttle=False`` calls it once it released the lock it held."""
        executor = self.executor
        if executor.pending_work < executor.max_pending:
            return  # the common case, without the lock
        blocked = False
        while True:
            with executor.lock:
                limit = executor.resume_at + 1 if blocked else executor.max_pending
                if executor.pending_work < limit or executor.stopped or executor.in_op():
                    return
                sleeper = executor.new_sleeper()
            blocked = True
            sleeper.acquire(timeout=POLL)

    def queued_estimate(self):
        """About how many pushed ops have not started (pending, less the busy workers)."""
        return max(0, self.executor.pending - self.pools.busy_workers())

    def note_queued(self, interrupt):
        queued = self.queued_estimate()
        if queued:
            interrupt.add_note(f"{queued} ops are still queued; call ndengine.cancel() "
                               "(engine.cancel_pending()) to drop them")
