"""Cancelling, shutdown and fork: what every engine does around its pushes and waits, outside
the per-op path.

Cancelling. ``cancel_pending()`` drops every op pushed so far that has not started: the thread
that takes such a block skips it, as it skips an op whose input failed (``skip_error``), and its
outputs fail with `Cancelled`. Ops already running finish; ops pushed afterwards run, unless
they read a cancelled output (then they fail with the same Cancelled error) or overwrite it
completely.

Shutdown. ``notify_shutdown`` finishes the pending work, then stops the executor: further
pushes raise, and the workers exit.

Fork. Before a fork the engine waits for the blocks the forking thread pushed (and so for
everything they depend on): the child sees their results. It does not wait for other threads,
which may push forever, nor for blocks that stop making progress (``FORK_STALL_SECONDS``: one
blocked on a lock that another library's fork handler holds); it then holds its lock across
the fork (engine/__init__.py orders the handlers). The child keeps every var and its error,
starts new pools lazily, and drops what was still pending: a var that an op still pending at
the fork (queued, running on a worker or in another thread) was to write fails with
`ForkedWhilePending`; vars only read become idle. Pending deletions are dropped too (their
memory stays with the parent's copy). Each part resets its own state in the child
(``after_fork_in_child``); core.py calls them in order.

`Lifecycle` has no state of its own, field by field only what the engine hands it:
    executor     the engine's `Executor` (its lock, counters, ``forking`` and ``stop``).
    failures     the engine's `Failures` (``cancel``).
    waits        the engine's `Waits` (the drain before a shutdown, the queued estimate).
"""
import time

from .errors import NOTE_PREFIX, ForkedWhilePending
from .executor import POLL
from .threadstate import tls
from .var import ThreadedVar

__all__ = ["Lifecycle", "fail_forked_vars", "unraised_report"]


class Lifecycle:
    """See the module docstring."""

    __slots__ = ("executor", "failures", "waits")

    def __init__(self, executor, failures, waits):
        self.executor = executor
        self.failures = failures
        self.waits = waits

    def cancel_pending(self):
        """Drop every op pushed so far that has not started: it will not run, and its
        outputs (and those of ops that read them) fail with `Cancelled` at the next wait.
        Ops already running finish; deletions still run; the engine keeps working.
        Returns about how many ops were dropped."""
        executor = self.executor
        with executor.lock:
            queued = self.waits.queued_estimate()
            self.failures.cancel(next(executor.seq))
        return queued

    def notify_shutdown(self):
        """Finish pending work, then stop the workers. Further pushes raise."""
        executor = self.executor
        if executor.stopped or executor.in_op():
            return
        self.waits.wait_idle()
        with executor.lock:
            executor.stop()

    def wait_before_fork(self, stall_seconds):
        """Wait for the blocks this thread pushed (not for other threads, which may push
        forever), while they make progress: a block blocked on a lock that another fork handler
        holds (a library's, run before this one) would never finish, so after
        ``stall_seconds`` without one finishing the fork goes on without them (the child
        fails their outputs with ForkedWhilePending). Returns False when it gave up. Never
        raises: os.fork would go on regardless."""
        executor = self.executor
        pusher = tls.pusher
        if tls.executor is executor or pusher is None:
            return True
        try:
            left = pusher.pending
            deadline = time.monotonic() + stall_seconds
            while True:
                with executor.lock:
                    if pusher.pending <= 0:
                        return True
                    if pusher.pending < left:
                        left = pusher.pending
                        deadline = time.monotonic() + stall_seconds
                    elif time.monotonic() > deadline:
                        return False
                    executor.forking = True
                    sleeper = executor.new_sleeper()
                sleeper.acquire(timeout=POLL)
        except BaseException:  # noqa: B902 - Ctrl-C: fork with what is finished
            return True
        finally:
            executor.forking = False


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
