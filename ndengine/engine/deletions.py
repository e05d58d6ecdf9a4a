"""Deleting vars. ``delete_variable`` frees an idle CPU var at once in the calling thread,
without the lock (arrays die by the thousand in tight loops, and a push would cost more than the
deletion); any other deletion is pushed as a DELETE block that writes the var, with a priority
above any a user gives, so freed memory is reused at once. Called while the engine lock is held
(a garbage-collector finalizer that ran inside the engine), a deletion that must be pushed is
appended to ``deferred`` instead; every push and wait first pushes what is there (``flush``).

`Deletions`, field by field
    deferred     [(delete_fn, ctx, var)] asked for while the lock was held: appended without the
                 lock (one C call), popped by ``flush``. The engine reads it on every push (its
                 ``_deferred``, the same list): emptied in place after a fork, never replaced.
    executor     the engine's `Executor`: pushes deletions, and its ``lock``, ``hook``,
                 ``seq`` and ``inline_run_ctxs`` serve a deletion run here.
    failures     the engine's `Failures`: a deletion that raised is recorded there.
Invariant: every var in ``deferred`` is marked ``deleted``; it is pushed (or freed) by the next
push or wait of any thread.
"""
import time

from .context import Context, FnProperty, RunContext
from .errors import record_failure
from .recording import report
from .var import DELETE, OprBlock

__all__ = ["Deletions", "DELETE_PRIORITY"]

DELETE_PRIORITY = 1 << 30  # above any priority a user gives
NORMAL = FnProperty.NORMAL
_perf_ns = time.perf_counter_ns


class Deletions:
    """See the module docstring."""

    __slots__ = ("deferred", "executor", "failures")

    def __init__(self, executor, failures):
        self.deferred = []
        self.executor = executor
        self.failures = failures

    def delete_variable(self, delete_fn, ctx, var):
        """Run delete_fn(run_ctx) after every op pushed earlier on var, failed or not; no op
        may use var afterwards (a push with it raises). See the module docstring."""
        if var.deleted:
            raise ValueError(f"{var!r} was already deleted")
        if not isinstance(ctx, Context):
            raise TypeError(f"ctx must be a Context such as cpu(0), got {ctx!r}")
        if var.pending_write is None and var.num_pending_reads == 0 \
                and ctx.device_type == "cpu":
            # Idle and, by the caller's promise, never pushed again: nobody else touches it.
            var.deleted = True
            self._delete_now(delete_fn, ctx, var)
        elif self.executor.lock.locked():
            var.deleted = True
            self.deferred.append((delete_fn, ctx, var))  # one C call: safe without the lock
        else:
            self._push(delete_fn, ctx, var)

    def _delete_now(self, delete_fn, ctx, var):
        executor = self.executor
        hook = executor.hook
        start = _perf_ns() if hook is not None else 0
        try:
            delete_fn(executor.inline_run_ctxs.get(ctx) or RunContext(ctx, None))  # a CPU's
        except KeyboardInterrupt:
            raise  # not freed, or not all: the garbage collector takes the rest
        except BaseException as exc:  # noqa: B902 - kept for wait_for_all, as a pushed one's
            tb = record_failure(exc, "delete_variable", None, True)
            if var.error is None:
                var.error, var.error_tb, var.error_seq = exc, tb, next(executor.seq)
            self.failures.errors.append((exc, tb))  # one C call; a wait swaps the list
            if executor.inline_all and not executor.lock.locked():
                self.failures.forget(exc)
                raise
        if hook is not None:
            report(hook, "delete_variable", None, ctx, (), (var,), None, start, False)

    def _push(self, delete_fn, ctx, var):
        block = OprBlock(delete_fn, False, ctx, (), (var,), NORMAL, DELETE_PRIORITY,
                         next(self.executor.seq), "delete_variable", None, DELETE)
        var.deleted = True
        try:
            self.executor.push(block)
        except BaseException:
            if block.stage == 0:
                var.deleted = False  # nothing was pushed: the var is still usable
            raise

    def flush(self):
        """Push the deletions deferred while the lock was held."""
        deferred = self.deferred
        while deferred:
            try:
                delete_fn, ctx, var = deferred.pop()
            except IndexError:  # another thread took the last one
                return
            if var.is_idle() and ctx.device_type == "cpu":
                self._delete_now(delete_fn, ctx, var)
            else:
                self._push(delete_fn, ctx, var)

    def after_fork_in_child(self):
        """Pending deletions are dropped (their memory stays with the parent's copy)."""
        del self.deferred[:]
