"""What the engine offers a bulk of tiny ops pushed as one (MXNet's bulking; the gathering itself
is the array layer's, core/segment.py): the bulk size, and the failure rule applied per part
from inside a TOLERANT op, which holds every var of its parts while it runs.

`Bulk`, field by field
    size         how many tiny ops a pushing thread may gather into one push; read without the
                 lock (a plain int); always 1 when ``fixed`` (the NaiveEngine).
    fixed        the placement runs each op at its push: ``set_size`` keeps 1.
    executor     the engine's `Executor`: its ``lock`` guards the vars' error fields and its
                 ``seq`` numbers a failed part.
    failures     the engine's `Failures`: ``any_failed`` spares the per-part checks while no op
                 ever failed; a failed part is recorded there.
Kept across a fork (the size is a setting). Changed by ``engine.set_bulk_size`` and
``engine.bulk`` (settings.py).
"""
import operator

from .errors import record_failure, resolve_origin
from .var import inherited_failure

__all__ = ["Bulk"]


class Bulk:
    """See the module docstring."""

    __slots__ = ("size", "fixed", "executor", "failures")

    def __init__(self, size, fixed, executor, failures):
        self.size = 1 if fixed else size
        self.fixed = fixed
        self.executor = executor
        self.failures = failures

    def set_size(self, size):
        """Set ``size`` (an integer >= 1, a NumPy one too); returns the previous one. A fixed
        bulk keeps 1."""
        try:
            number = None if isinstance(size, bool) else operator.index(size)
        except TypeError:
            number = None
        if number is None or number < 1:
            raise ValueError(f"bulk size must be an integer >= 1 (1 pushes every op alone), "
                             f"got {size!r}")
        size = number
        previous = self.size
        if not self.fixed:
            self.size = size
        return previous

    def any_failed(self, vars):
        """True when one of ``vars`` holds the error of a failed op. Stable only inside a
        TOLERANT op that uses them: nothing else can write them then."""
        if not self.failures.any_failed:
            return False  # no op ever failed: the common case costs one check
        for var in vars:
            if var.error is not None:
                return True
        return False

    def inherit_failure(self, reads, writes):
        """From inside a TOLERANT op, for one of its parts (reading ``reads``, writing
        ``writes``, all among the op's vars): True when the part must not run because a var
        it uses failed; then its written vars take the earliest failure, as a skipped op's
        do (``skip_error``), and nothing is reported again."""
        if not self.failures.any_failed:
            return False
        with self.executor.lock:
            failed = inherited_failure(reads, writes)
            if failed is None:
                return False
            error, tb, seq = failed.error, failed.error_tb, failed.error_seq
            for var in writes:
                if var.error is None:
                    var.error, var.error_tb, var.error_seq = error, tb, seq
            return True

    def fail_part(self, writes, exc, name, origin):
        """From inside a TOLERANT op: one of its parts raised ``exc``: its written vars fail
        with it, noted with the part's ``name`` and ``origin``, and wait_for_all reports it,
        as for an op that failed alone."""
        tb = record_failure(exc, name, resolve_origin(origin), True)
        executor, failures = self.executor, self.failures
        with executor.lock:
            failures.fail_writes(writes, (), exc, tb, next(executor.seq))
            failures.errors.append((exc, tb))
