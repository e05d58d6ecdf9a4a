"""The engine's record of failures: which errors no wait has raised yet, whether any op ever
failed, and which blocks were cancelled. The failure rule itself (which error a block is
skipped with) is ``transitions.skip_error``; the errors kept on the vars are var.py's.

`Failures`, field by field (changed under the engine lock, except as noted)
    errors       (exception, traceback) of failed ops that no wait or push has raised yet, in
                 the order they failed. Appended by whoever records a failure (the executor's
                 completion, a bulk's failed part, a deletion run in the calling thread) in one
                 C call (``errors.append``), so an interrupt cannot split it and the deletion
                 may do it without the lock; replaced, never emptied in place, by ``forget``,
                 ``take_for_wait`` and ``take_unraised``: holders must not keep the list.
    taken        the errors a ``wait_for_all`` took in the locked step that saw the engine
                 idle (``take_for_wait``), until it raises the first of them (waits.py).
    any_failed   False until an op failed, was cancelled or was pending at a fork; while it is
                 False no var a new op may use holds an error, so a block about to run skips
                 the failure rule with one check (executor.py), and a bulk its per-part checks.
    cancel_below blocks with a smaller push number (``OprBlock.seq``) that have not started are
                 cancelled (``cancel``); 0 until the first ``cancel_pending``.

Kept across a fork (the vars keep their errors too): ``errors``, ``any_failed``; reset there:
``cancel_below`` (push numbers start again in the child).
"""
from .errors import interrupted, record_failure

__all__ = ["Failures", "failure_of"]


def failure_of(exc, name, origin, seq, in_pusher):
    """(error, traceback, error_seq, report) for an op whose function raised ``exc``. A Ctrl-C
    in the pushing thread (``in_pusher``) fails the outputs with the "interrupted" error, not
    reported to wait_for_all (the interrupt itself goes on to the user)."""
    if in_pusher and isinstance(exc, KeyboardInterrupt):
        return (*interrupted(exc), seq, False)
    return exc, record_failure(exc, name, origin, True), seq, True


class Failures:
    """See the module docstring. ``lock`` is the engine's one lock (core.py makes it)."""

    __slots__ = ("lock", "errors", "taken", "any_failed", "cancel_below")

    def __init__(self, lock):
        self.lock = lock
        self.errors = []
        self.taken = None
        self.any_failed = False
        self.cancel_below = 0

    def fail_writes(self, writes, overwrites, error, traceback, error_seq):
        """With the lock held: a block writing ``writes`` failed with ``error``. Each written
        var takes it unless it already holds an earlier failure (one it overwrites completely
        takes the new one). Calling it again, after an interrupt, changes nothing more."""
        self.any_failed = True
        for var in writes:
            if var.error is None or var in overwrites:
                var.error, var.error_tb, var.error_seq = error, traceback, error_seq

    def cancel(self, seq):
        """With the lock held: every block pushed before ``seq`` that has not started is
        cancelled. ``any_failed`` is set too: a block about to run then checks the rule."""
        self.cancel_below = seq
        self.any_failed = True

    def forget(self, error):
        """``error`` was raised to the user: wait_for_all does not raise it again."""
        with self.lock:
            if self.errors:
                self.errors = [entry for entry in self.errors if entry[0] is not error]

    def take_for_wait(self):
        """With the lock held, in the step that saw the engine idle: move the errors to
        ``taken``, for the wait_for_all that saw it."""
        if self.errors:
            self.taken, self.errors = self.errors, []

    def pop_taken(self):
        """The errors ``take_for_wait`` moved to ``taken``, or None; forgets them."""
        taken, self.taken = self.taken, None
        return taken

    def take_unraised(self):
        """The errors no wait or push has raised yet, oldest first, each once; forgets them."""
        with self.lock:
            entries, self.errors = self.errors, []
        unique = {id(error): error for error, _ in entries}
        return list(unique.values())

    def after_fork_in_child(self, had_pending):
        """In a forked child: push numbers start again; ``had_pending``: some vars fail with
        ForkedWhilePending (lifecycle.fail_forked_vars)."""
        self.cancel_below = 0
        if had_pending:
            self.any_failed = True
