"""What the engine offers a bulk of tiny ops pushed as one (MXNet's bulking; the gathering itself
is the array layer's, core/segment.py): the bulk size, and the failure rule applied per part
from inside a TOLERANT op, which holds every var of its parts while it runs.

Fields used (engine state, documented in core.py): ``_bulk_size``, read without the lock;
``_any_failed``, ``_errors``, ``_seq`` and the vars' error fields, changed under ``_lock``.
"""
from .errors import record_failure, resolve_origin
from .var import inherited_failure

__all__ = ["BulkMixin"]


class BulkMixin:
    @property
    def bulk_size(self):
        """How many tiny ops a pushing thread may gather into one push (MXNet's bulk size; the
        gathering is core/segment.py's). 1: every op is pushed alone (always on the
        NaiveEngine, which runs each op at its push). Default: NDENGINE_BULK_SIZE, else 64."""
        return self._bulk_size

    def set_bulk_size(self, size):
        """Set ``bulk_size`` (an int >= 1); returns the previous one. The NaiveEngine keeps 1."""
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"bulk size must be an integer of at least 1, got {size!r}")
        previous = self._bulk_size
        if not self._inline_all:
            self._bulk_size = size
        return previous

    def any_failed(self, vars):
        """True when one of ``vars`` holds the error of a failed op. Stable only inside a
        TOLERANT op that uses them: nothing else can write them then."""
        if not self._any_failed:
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
        if not self._any_failed:
            return False
        with self._lock:
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
        with self._lock:
            self._any_failed = True
            seq = next(self._seq)
            for var in writes:
                if var.error is None:
                    var.error, var.error_tb, var.error_seq = exc, tb, seq
            self._errors.append((exc, tb))
