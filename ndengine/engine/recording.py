"""Run hooks: how a profiler sees every op the engine runs, without the engine knowing it.

``engine.set_run_hook(hook)`` installs ``hook``; from then on the engine calls it once per op,
in the thread that ran the op, right after the run (or the skip of an op whose input failed)::

    hook(name, ctx, reads, writes, info, start_ns, end_ns, failed)

``name`` is the op's name (or its function's), ``ctx`` its Context, ``reads``/``writes`` the
tuples of vars it read and wrote, ``info`` what the push gave as ``info=`` (a callable one is
the hook's to call: that is how a push describes itself lazily, paying only when a hook records
it), ``start_ns``/``end_ns`` ``time.perf_counter_ns()`` stamps taken around the run (the engine
takes them only while a hook is installed) and ``failed`` whether it failed or was skipped. A
hook must be quick and must not raise: it runs on the workers' path. With no hook installed the
engine takes no stamps and calls nothing.

`Recorder` is the standard hook: it keeps an `OpRecord` per op until ``take()``.
"""
import threading
import time
import warnings
from collections import namedtuple

__all__ = ["OpRecord", "Recorder", "records_of", "report"]

OpRecord = namedtuple("OpRecord", "name ctx worker start_ns end_ns reads writes info failed")
OpRecord.__doc__ = ("One executed op: its name, Context, worker thread name, start and end "
                    "(time.perf_counter_ns), ids of the vars read and written, the info given at "
                    "push (called, when callable), and whether it failed or was skipped.")

_current_thread = threading.current_thread
_perf_ns = time.perf_counter_ns


def report(hook, name, fn, ctx, reads, writes, info, start, failed):
    """Tell ``hook`` about one op that ran from ``start`` until now. A hook that raises gets a
    RuntimeWarning: a broken hook must not leave the op unfinished."""
    try:
        hook(name or getattr(fn, "__name__", "op"), ctx, reads, writes, info, start,
             _perf_ns(), failed)
    except Exception as exc:  # noqa: BLE001 - a broken hook must not leave the op unfinished
        warnings.warn(f"the engine's run hook {hook!r} raised {exc!r}; the op it was "
                      "told about finished normally", RuntimeWarning, stacklevel=2)


class Recorder:
    """A run hook that keeps the ops it sees; ``take()`` returns their OpRecords, oldest first.

    State: ``_raw``, the list the hook appends to (one C call, so no lock: appends from several
    workers cannot interleave). ``take()`` swaps it for a new one; a worker that read the old
    list just before the swap may still append to it, so ``take_raw()`` returns that list
    itself, to be read later with `records_of` (the profiler does)."""

    __slots__ = ("_raw",)

    def __init__(self):
        self._raw = []

    def __call__(self, name, ctx, reads, writes, info, start_ns, end_ns, failed):
        # The info is resolved now: a lazy one may hold the op's arrays, which must not live
        # as long as the records do. The rest stays raw until take().
        if callable(info):
            info = info()
        self._raw.append((name, ctx, _current_thread().name, start_ns, end_ns, reads, writes,
                          info, failed))

    def take(self):
        """The OpRecords kept so far, oldest first; the recorder forgets them."""
        raw, self._raw = self._raw, []
        return records_of(raw)

    def take_raw(self):
        """The list of raw records as kept (a late append may still land in it): read it with
        `records_of` once no op can run any more, or whenever an extra late record is fine."""
        raw, self._raw = self._raw, []
        return raw


def records_of(raw):
    """The OpRecords of a list of raw records (`Recorder.take_raw`)."""
    return [OpRecord(name, ctx, worker, start, end, tuple(v.id for v in reads),
                     tuple(v.id for v in writes), info, failed)
            for name, ctx, worker, start, end, reads, writes, info, failed in raw]

