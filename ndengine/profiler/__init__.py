"""ndengine's profiler, shaped like MXNet's: record every op the engine runs, then look at it as a
Chrome trace (chrome://tracing, https://ui.perfetto.dev), a table of aggregate statistics, or a
Gantt chart of the workers::

    from ndengine import profiler
    profiler.set_config(filename="profile.json")
    with profiler.scope():          # start(); ...; wait for pending work; stop()
        ...                         # push work
    print(profiler.dumps())         # per op name: count, total, mean, min, max (ms)
    profiler.timeline("ops.png")    # needs matplotlib: pip install 'ndengine[viz]'
    profiler.dump()                 # writes profile.json: every op recorded until reset()

The engine does the timing: while the profiler runs, its `Recorder` is the engine's run hook
(``engine.set_run_hook``), called after each op with ``time.perf_counter_ns()`` stamps taken
around the run, in the thread that ran it; a lazy ``info`` given at the push (a callable) is
called then, and only then. Pause and stop remove the hook; with the profiler off the engine
takes no stamps and calls nothing.
The module functions drive one default `Profiler`; make another for a second engine.
``stop()`` first waits for the work pushed so far: ops run asynchronously, so work pushed just
before stop() would otherwise run after it, unrecorded.
Ops written are not always pushed yet: small ops gather in their thread's bulking window
(core/segment.py) and element-wise ops on large arrays in its fusion window (core/lazy.py), and
reach the engine only when the window is flushed. So every switch (start, stop, pause, resume,
a scope's enter and exit) first pushes every thread's open window, as ``waitall()`` does: the
ops written before a switch are pushed before it, and a window never holds ops from both sides
of it (a stop would otherwise miss the ops still in a window, and a start would merge the ops
written before it with those written after it into one recorded op). Reading the records
(records, dumps, dump, timeline) pushes nothing: it reports the ops that have run.
Every lock of a profiler is re-created in a forked child (a thread of the parent may have held
it at the fork).

Modules: _formats.py (Chrome trace events, statistics table), _timeline.py (the Gantt chart).
"""
import contextlib
import json
import os
import threading
import weakref

from ..core.segment import flush_all as _push_open_windows
from ..engine.recording import Recorder, records_of
from ._formats import stats_table, trace_events
from ._timeline import draw_timeline

__all__ = ["Profiler", "set_config", "start", "stop", "pause", "resume", "scope", "dump",
           "dumps", "timeline", "records", "reset"]


_profilers = weakref.WeakSet()  # every Profiler: their locks are re-created after fork


class Profiler:
    """Records the ops of one engine; the module functions use a default instance."""

    def __init__(self):
        self._lock = threading.RLock()
        self._state = "stopped"  # "running", "paused" or "stopped"
        self._chunks = []  # raw lists taken from the recorder, kept as is (see _collect)
        self._recorder = Recorder()  # the run hook installed while running
        self._engine = None  # the engine in use, resolved at start()
        self.set_config()
        _profilers.add(self)

    @property
    def state(self):
        return self._state

    def set_config(self, filename="profile.json", aggregate_stats=True, engine=None):
        """Where dump() writes, whether dumps() may report, and the engine to profile (default:
        ``ndengine.engine.get()``, looked up at start()). Every call sets all three."""
        with self._lock:
            if self._state != "stopped":
                raise RuntimeError("stop the profiler before calling set_config")
            if engine is not self._engine:
                self._collect()  # keep what the previous engine recorded
            self.filename, self.aggregate_stats = filename, aggregate_stats
            self._engine = engine

    # ------------------------------------------------------------------ switching
    def start(self):
        """Record from now on (a paused profiler resumes)."""
        _push_open_windows()  # the ops written so far are pushed unhooked
        with self._lock:
            if self._engine is None:
                from .. import engine as engine_module
                self._engine = engine_module.get()
            self._collect()
            self._engine.set_run_hook(self._recorder)
            self._state = "running"

    def stop(self, wait=True):
        """Wait for the ops pushed so far, then stop recording and collect the records (they
        accumulate until reset). Without the wait, ops pushed just before stop() would run
        after it, unrecorded. An op error the wait meets is raised once the profiler has
        stopped, as waitall() would raise it (and then not again). ``wait=False`` stops at
        once: ops that have not started by then are not recorded."""
        with self._lock:
            engine = self._engine if self._state != "stopped" else None
        try:
            _push_open_windows()
            if wait and engine is not None:
                engine.wait_for_all()
        finally:
            with self._lock:
                if self._engine is not None:
                    self._unhook()
                self._state = "stopped"
                self._collect()

    def pause(self):
        """Stop recording for a while; ops that run until resume() are not recorded."""
        _push_open_windows()
        with self._lock:
            if self._state == "running":
                self._unhook()
                self._state = "paused"
                self._collect()

    def resume(self):
        """Record again (after pause()); the ops written while paused are pushed first."""
        _push_open_windows()
        with self._lock:
            if self._state == "paused":
                self._engine.set_run_hook(self._recorder)
                self._state = "running"

    @contextlib.contextmanager
    def scope(self):
        """``with scope(): ...`` starts on enter; on exit waits for pending work, then stops (or
        goes back to the state found on enter), and raises any op error the wait found. When the
        body raises, the profiler stops at once and pending op errors stay in the engine."""
        with self._lock:
            before = self._state
            self.start()
            engine = self._engine
        try:
            yield self
        except BaseException:
            self._leave(before)
            raise
        try:
            _push_open_windows()
            engine.wait_for_all()
        finally:
            self._leave(before)

    def _leave(self, before):
        if before == "stopped":
            self.stop(wait=False)  # scope waited already, or its body raised: no more waiting
        elif before == "paused":
            self.pause()

    # ------------------------------------------------------------------ records
    def _unhook(self):
        if self._engine.run_hook is self._recorder:  # another hook installed since: keep it
            self._engine.set_run_hook(None)

    def _collect(self):
        # take_raw swaps the recorder's list for a new one without a lock, so a worker may
        # still append to the list it returned: keep those lists and read them late.
        chunks = self._chunks  # drop older empty lists, so frequent reads do not pile up
        self._chunks = [c for c in chunks[:-1] if c] + chunks[-1:]
        self._chunks.append(self._recorder.take_raw())

    def records(self):
        """A list (a copy) of the OpRecords collected so far, oldest first."""
        with self._lock:
            self._collect()
            return [record for chunk in self._chunks for record in records_of(chunk)]

    def reset(self):
        """Forget the collected records (recording goes on if running)."""
        with self._lock:
            self._collect()
            self._chunks = []

    # ------------------------------------------------------------------ outputs
    def dump(self, path=None):
        """Write every record collected until now (since the last reset()) as Chrome
        trace-event JSON to ``path`` (default: the configured filename); return the path.
        Each dump writes the whole trace, as records(), dumps() and timeline() see it, so a
        second dump to the same file never replaces a trace with a shorter one."""
        path = self.filename if path is None else path
        recs = self.records()
        with open(path, "w", encoding="utf-8") as f:
            json.dump(trace_events(recs), f)
        return path

    def dumps(self, reset=False):
        """A text table of the records per op name: count and total, mean, min and max
        milliseconds, by total descending. ``reset=True`` forgets the records afterwards."""
        if not self.aggregate_stats:
            raise RuntimeError("aggregate stats are off: set_config(aggregate_stats=True)")
        with self._lock:
            recs = self.records()
            if reset:
                self._chunks = []
        return stats_table(recs)

    def timeline(self, path=None, records=None):
        """A Gantt chart of the records (or of ``records``): a row per worker, grouped by device,
        ops coloured by name. Saved as PNG to ``path`` (returns path), else returns the
        matplotlib Figure (Jupyter shows it inline)."""
        return draw_timeline(path, self.records() if records is None else records)

    def _after_fork_in_child(self):
        self._lock = threading.RLock()


def _after_fork_in_child():
    for profiler in list(_profilers):
        profiler._after_fork_in_child()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


# ---------------------------------------------------------------------- the default profiler
_default = Profiler()
set_config = _default.set_config
start = _default.start
stop = _default.stop
pause = _default.pause
resume = _default.resume
scope = _default.scope
dump = _default.dump
dumps = _default.dumps
records = _default.records
reset = _default.reset

timeline = _default.timeline
