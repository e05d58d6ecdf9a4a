"""Waiting, cancelling, deleting vars, shutdown and fork: what every engine does around its
pushes (the state these methods use is documented in core.py).

Waits. A wait sleeps on a lock of its own outside the engine lock (never a Condition, whose
re-acquire an interrupt can skip), and polls every ``POLL`` seconds in case a wake-up was lost to
an interrupt. wait_for_var pushes a WAIT marker that writes the var: it is granted, and releases
the waiting thread, once every op pushed before it on the var has finished. An interrupted
wait's KeyboardInterrupt carries a note saying how many ops are still queued and how to drop
them (``cancel_pending``). A wait from inside an op raises (it would deadlock). On the
NaiveEngine a waiting thread also runs the ready blocks no pushing thread took (naive.py).

Cancelling. ``cancel_pending()`` drops every op pushed so far that has not started: the thread
that takes such a block skips it, as it skips an op whose input failed (``skip_error``), and its
outputs fail with `Cancelled`. Ops already running finish; ops pushed afterwards run, unless
they read a cancelled output (then they fail with the same Cancelled error) or overwrite it
completely.

Deleting. ``delete_variable`` frees an idle CPU var at once in the calling thread, without the
lock; any other deletion is pushed as a DELETE block that writes the var. Called while the
engine lock is held (a garbage-collector finalizer that ran inside the engine), a deletion that
must be pushed is appended to ``_deferred`` instead; every push and wait first pushes what is
there (``_flush_deferred``).

Fork. Before a fork the engine waits for the blocks the forking thread pushed (and so for
everything they depend on): the child sees their results. It does not wait for other threads,
which may push forever, nor for blocks that stop making progress (``FORK_STALL_SECONDS``: one
blocked on a lock that another library's fork handler holds); it then holds its lock across
the fork (engine/__init__.py orders the handlers). The child keeps every var and
its error, starts new pools lazily, and drops what was still pending: a var that an op still
pending at the fork (queued, running on a worker or in another thread) was to write fails with
`ForkedWhilePending`; vars only read become idle. Pending deletions are dropped too (their
memory stays with the parent's copy).

Thread state (``tls``): ``engine`` is set while the thread runs ops (a worker, or a pusher
running one inline), so a wait from inside an op is caught and a nested push skips
back-pressure; ``pusher`` counts the blocks it pushed that are still pending (see Fork).
"""
import sys
import threading
import time

from .context import Context, FnProperty, RunContext
from .devices import sync_host
from .executor import synchronize
from .errors import NOTE_PREFIX, ForkedWhilePending, record_failure
from .var import DELETE, WAIT, OprBlock, ThreadedVar

__all__ = ["LifecycleMixin", "Operator", "tls", "POLL", "DELETE_PRIORITY", "fail_forked_vars",
           "unraised_report"]

POLL = 0.05  # seconds between re-checks of a sleeping wait
DELETE_PRIORITY = 1 << 30  # above any priority a user gives
NORMAL = FnProperty.NORMAL
_perf_ns = time.perf_counter_ns
_getframe = sys._getframe


class _ThreadState(threading.local):
    engine = None  # class defaults: a missing attribute on a local costs an exception
    pusher = None


tls = _ThreadState()


def _raise_stored(error, traceback):
    raise error.with_traceback(traceback)


class Operator:
    """A reusable op made by ``new_operator``; push it many times without rebuilding it."""

    __slots__ = ("fn", "const_vars", "mutable_vars", "prop", "name", "num_pending", "deleted",
                 "__weakref__")

    def __init__(self, fn, const_vars, mutable_vars, prop, name):
        self.fn = fn
        self.const_vars = const_vars
        self.mutable_vars = mutable_vars
        self.prop = prop
        self.name = name
        self.num_pending = 0
        self.deleted = False

    def __repr__(self):
        return f"<Operator {self.name or getattr(self.fn, '__name__', '?')}>"


class LifecycleMixin:
    """Waits, cancel, deletions, shutdown and fork."""

    _taken_errors = None

    # ---------------------------------------------------------------- waiting
    def _in_op(self):
        """True when this thread runs an op of this engine: a worker, a block run in a pushing
        thread (``tls.engine``), or an op run by ``_run_now`` (found on the stack: only asked
        before a thread would sleep, so the per-op path sets nothing)."""
        if tls.engine is self:
            return True
        run_now = self._run_now.__func__.__code__
        frame = _getframe(1)
        while frame is not None:
            if frame.f_code is run_now:
                frame_locals = frame.f_locals
                if frame_locals.get("in_fn") and frame_locals.get("self") is self:
                    return True
            frame = frame.f_back
        return False

    def _check_not_in_op(self, what):
        if self._in_op():
            raise RuntimeError(
                f"{what} was called from inside an op running on the engine; that would "
                "deadlock. Push the dependent work as another op instead.")

    def wait_for_var(self, var):
        """Return when every op pushed before this call that reads or writes var has finished;
        raise the error of the op that failed writing it, every time (and wait_for_all will
        not raise it again)."""
        if tls.engine is self or not var.is_idle():
            self._check_not_in_op("wait_for_var")
        if self._deferred:
            self._flush_deferred()
        waiter = None
        try:
            with self._lock:
                if not var.is_idle():
                    marker = self._wait_marker(var)
                    waiter = marker.waiter
                    self._push_locked(marker)
        except KeyboardInterrupt as exc:
            self._note_queued(exc)
            raise
        self._finish_wait(waiter, var)

    @staticmethod
    def _wait_marker(var):
        """A WAIT marker writing ``var``: once pushed, it is granted, and releases its
        ``waiter`` (a lock held until then), when every op pushed on var before it finished."""
        waiter = threading.Lock()
        waiter.acquire()
        marker = OprBlock(None, False, None, (), (var,), 0, 0, 0, "wait_for_var", None, WAIT)
        marker.waiter = waiter
        return marker

    def _finish_wait(self, waiter, var):
        """Sleep until ``waiter`` (a pushed marker's, or None) is released; then raise the
        error of a failed write to ``var``."""
        try:
            if waiter is not None:
                if self._inline_all:
                    while not waiter.acquire(timeout=POLL):
                        self._run_queued()
                else:
                    waiter.acquire()
        except KeyboardInterrupt as exc:
            self._note_queued(exc)
            raise
        if var.device_sync is not None:  # its GPU work: that var's events, not the device
            sync_host((), (var,), clear=False)
        error = var.error
        if error is not None:
            self._forget_error(error)
            _raise_stored(error, var.error_tb)

    def _forget_error(self, error):
        """``error`` was raised to the user: wait_for_all does not raise it again."""
        with self._lock:
            if self._errors:
                self._errors = [entry for entry in self._errors if entry[0] is not error]

    def wait_for_all(self):
        """Return when no op is pending; raise the first failure no wait or push has raised
        yet (and forget the rest, so the next call is clean)."""
        if tls.engine is self or self._pending or self._pending_now:
            self._check_not_in_op("wait_for_all")
        try:
            self._wait_idle(take_errors=True)
        except KeyboardInterrupt as exc:
            self._note_queued(exc)
            raise
        errors = self._taken_errors
        self._taken_errors = None
        for stream in list(self._streams):  # GPU work queued by ops that have completed
            synchronize(stream)
        if errors:
            _raise_stored(*errors[0])

    def _wait_idle(self, take_errors=False):
        """Sleep until nothing is pending; then (take_errors) move the errors to
        ``_taken_errors``, in the same locked section that saw the engine idle."""
        while True:
            if self._deferred:
                self._flush_deferred()
            if self._inline_all:
                self._run_queued()
            with self._lock:
                if self._pending == 0 and self._pending_now == 0 and not self._deferred:
                    if take_errors and self._errors:
                        self._taken_errors, self._errors = self._errors, []
                    return
                sleeper = self._new_sleeper()
            sleeper.acquire(timeout=POLL)

    def _drain(self):
        """Wait for all pending work without raising or forgetting errors."""
        self._wait_idle()

    def take_unraised_errors(self):
        """The errors of failed ops that no wait or push has raised yet (what wait_for_all
        would raise first), oldest first, each once; forgets them."""
        with self._lock:
            entries, self._errors = self._errors, []
        unique = {id(error): error for error, _ in entries}
        return list(unique.values())

    def _queued_estimate(self):
        """About how many pushed ops have not started (pending, less the busy workers)."""
        busy = sum(len(pool.workers) - pool.num_idle for pool in self._all_pools)
        return max(0, self._pending - busy)

    def _note_queued(self, interrupt):
        queued = self._queued_estimate()
        if queued:
            interrupt.add_note(f"{queued} ops are still queued; call ndengine.cancel() "
                               "(engine.cancel_pending()) to drop them")

    def cancel_pending(self):
        """Drop every op pushed so far that has not started: it will not run, and its
        outputs (and those of ops that read them) fail with `Cancelled` at the next wait.
        Ops already running finish; deletions still run; the engine keeps working.
        Returns about how many ops were dropped."""
        with self._lock:
            queued = self._queued_estimate()
            self._cancel_below = next(self._seq)
        return queued

    # ---------------------------------------------------------------- deletion
    def delete_variable(self, delete_fn, ctx, var):
        """Run delete_fn(run_ctx) after every op pushed earlier on var, failed or not; no op
        may use var afterwards (a push with it raises).

        A CPU var with nothing pending is deleted at once in the calling thread, without the
        engine lock: arrays die by the thousand in tight loops, and a push would cost more
        than the deletion. Safe from a garbage-collector finalizer at any moment: called while
        the engine lock is held (by this thread, inside the engine, or another), a deletion
        that must be queued is deferred, and the next push or wait pushes it. A pushed deletion
        outranks every other op once ready, so freed memory is reused at once."""
        if var.deleted:
            raise ValueError(f"{var!r} was already deleted")
        if not isinstance(ctx, Context):
            raise TypeError(f"ctx must be a Context such as cpu(0), got {ctx!r}")
        if var.pending_write is None and var.num_pending_reads == 0 \
                and ctx.device_type == "cpu":
            # Idle and, by the caller's promise, never pushed again: nobody else touches it.
            var.deleted = True
            self._delete_now(delete_fn, ctx, var)
        elif self._lock.locked():
            var.deleted = True
            self._deferred.append((delete_fn, ctx, var))  # one C call: safe without the lock
        else:
            self._push_deletion(delete_fn, ctx, var)

    def _delete_now(self, delete_fn, ctx, var):
        hook = self._hook
        start = _perf_ns() if hook is not None else 0
        try:
            delete_fn(self._inline_run_ctxs.get(ctx) or RunContext(ctx, None))  # a CPU's
        except KeyboardInterrupt:
            raise  # not freed, or not all: the garbage collector takes the rest
        except BaseException as exc:  # noqa: B902 - kept for wait_for_all, as a pushed one's
            tb = record_failure(exc, "delete_variable", None, True)
            if var.error is None:
                var.error, var.error_tb, var.error_seq = exc, tb, next(self._seq)
            self._errors.append((exc, tb))  # one C call; a wait swaps the list under the lock
            if self._inline_all and not self._lock.locked():
                self._forget_error(exc)
                raise
        if hook is not None:
            self._report(hook, "delete_variable", None, ctx, (), (var,), None, start, False)

    def _push_deletion(self, delete_fn, ctx, var):
        block = OprBlock(delete_fn, False, ctx, (), (var,), NORMAL, DELETE_PRIORITY,
                         next(self._seq), "delete_variable", None, DELETE)
        var.deleted = True
        try:
            self._push_block(block)
        except BaseException:
            if block.stage == 0:
                var.deleted = False  # nothing was pushed: the var is still usable
            raise

    # ---------------------------------------------------------------- deferred deletions
    def _flush_deferred(self):
        """Push the deletions deferred while the lock was held (core.delete_variable)."""
        deferred = self._deferred
        while deferred:
            try:
                delete_fn, ctx, var = deferred.pop()
            except IndexError:  # another thread took the last one
                return
            if var.is_idle() and ctx.device_type == "cpu":
                self._delete_now(delete_fn, ctx, var)
            else:
                self._push_deletion(delete_fn, ctx, var)

    # ---------------------------------------------------------------- shutdown and fork
    def notify_shutdown(self):
        """Finish pending work, then stop the workers. Further pushes raise."""
        if self._stopped or self._in_op():
            return
        self._drain()
        with self._lock:
            self._stopped = True
            for pool in self._all_pools:
                pool.stopping = True
                while pool.num_idle:
                    pool.num_idle -= 1
                    pool.wakeups.put(None)

    FORK_STALL_SECONDS = 5.0  # a fork's wait gives up after this long without progress

    def _wait_before_fork(self):
        """Wait for the blocks this thread pushed (not for other threads, which may push
        forever), while they make progress: a block blocked on a lock that another fork handler
        holds (a library's, run before this one) would never finish, so after
        ``FORK_STALL_SECONDS`` without one finishing the fork goes on without them (the child
        fails their outputs with ForkedWhilePending). Returns False when it gave up. Never
        raises: os.fork would go on regardless."""
        pusher = tls.pusher
        if tls.engine is self or pusher is None:
            return True
        try:
            left = pusher.pending
            deadline = time.monotonic() + self.FORK_STALL_SECONDS
            while True:
                with self._lock:
                    if pusher.pending <= 0:
                        return True
                    if pusher.pending < left:
                        left = pusher.pending
                        deadline = time.monotonic() + self.FORK_STALL_SECONDS
                    elif time.monotonic() > deadline:
                        return False
                    self._forking = True
                    sleeper = self._new_sleeper()
                sleeper.acquire(timeout=POLL)
        except BaseException:  # noqa: B902 - Ctrl-C: fork with what is finished
            return True
        finally:
            self._forking = False

    def _lock_for_fork(self):
        """Hold the lock across the fork (after ``_wait_before_fork``)."""
        self._lock.acquire()

    def _after_fork_in_parent(self):
        self._lock.release()

    def _after_fork_in_child(self):
        """Threads do not survive fork: keep vars and errors, start pools anew. Returns
        True when ops were pending at the fork (their vars need `fail_forked_vars`)."""
        errors = self._errors
        had_pending = bool(self._pending or self._pending_now)
        if had_pending:
            self._any_failed = True  # some vars fail with ForkedWhilePending
        self._init_state()
        self._errors = errors
        tls.engine = None
        tls.pusher = None  # what it counted was dropped with the parent's pending work
        return had_pending


def fail_forked_vars():
    """In a forked child: every var that an op pending in the parent was to write fails with
    ForkedWhilePending; every busy var becomes idle. Vars are found through the garbage
    collector's list of objects (only done when some engine had work pending at the fork)."""
    import gc
    error = ForkedWhilePending(
        "this array's value was still being computed in the parent process when it forked, "
        "so the child has no value for it; wait for it (e.g. ndengine.waitall()) before "
        "forking")
    for obj in gc.get_objects():
        if type(obj) is not ThreadedVar or obj.is_idle():
            continue
        writes = obj.pending_write is not None or any(w for _, w in obj.queue or ())
        if writes and obj.error is None:
            obj.error, obj.error_tb, obj.error_seq = error, None, -1
        obj.pending_write = None
        obj.num_pending_reads = 0
        obj.queue = None


UNRAISED_REPORT_LINES = 20  # at most this many lines, then how many more


def unraised_report(errors):
    """One line per error of ``errors`` (from ``take_unraised_errors``): its type, the first
    line of its message and its "raised by OP, pushed at FILE:LINE" note."""
    lines = []
    for error in errors[:UNRAISED_REPORT_LINES]:
        notes = [note for note in getattr(error, "__notes__", None) or ()
                 if isinstance(note, str) and note.startswith(NOTE_PREFIX)]
        message = str(error).strip().splitlines()
        lines.append(f"ndengine: an op failed and no wait raised its error"
                     f"{f' ({notes[0]})' if notes else ''}: {type(error).__name__}"
                     f"{f': {message[0]}' if message else ''}")
    if len(errors) > UNRAISED_REPORT_LINES:
        lines.append(f"ndengine: ... and {len(errors) - UNRAISED_REPORT_LINES} more failed "
                     "ops that no wait raised")
    return lines
