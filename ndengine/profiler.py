"""ndengine's profiler, shaped like MXNet's: record every op the engine runs, then look at it as a
Chrome trace (chrome://tracing, https://ui.perfetto.dev), a table of aggregate statistics, or a
Gantt chart of the workers::

    from ndengine import profiler
    profiler.set_config(filename="profile.json")
    with profiler.scope():          # start(); ...; wait for pending work; stop()
        ...                         # push work
    print(profiler.dumps())         # per op name: count, total, mean, min, max (ms)
    profiler.timeline("ops.png")    # needs matplotlib: pip install 'ndengine[viz]'
    profiler.dump()                 # writes profile.json and forgets the records

The engine does the measuring: while its ``profiling`` attribute is True each op appends an
``OpRecord`` with ``time.perf_counter_ns()`` stamps taken on the worker as the op runs. The
profiler switches that attribute and collects the records with ``engine.take_records()`` at
start, pause, stop and whenever it reads them. With the profiler off the engine records nothing.
The module functions drive one default `Profiler`; make another for a second engine.
"""
import contextlib
import json
import math
import re
import threading
import zlib

__all__ = ["Profiler", "set_config", "start", "stop", "pause", "resume", "scope", "dump",
           "dumps", "timeline", "records", "reset"]

_MISSING_MPL = "ndengine.profiler.timeline needs matplotlib: pip install 'ndengine[viz]'"


class Profiler:
    def __init__(self):
        self._lock = threading.RLock()
        self._state = "stopped"  # "running", "paused" or "stopped"
        self._chunks = []  # lists returned by take_records, kept as is (see _collect)
        self._engine = None  # the engine in use, resolved at start()
        self.set_config()

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
        with self._lock:
            if self._engine is None:
                from . import engine as engine_module
                self._engine = engine_module.get()
            self._collect()
            self._engine.profiling = True
            self._state = "running"

    def stop(self):
        """Stop recording and collect the records (they accumulate until dump or reset)."""
        with self._lock:
            if self._engine is not None:
                self._engine.profiling = False
            self._state = "stopped"
            self._collect()

    def pause(self):
        """Stop recording for a while; ops that run until resume() are not recorded."""
        with self._lock:
            if self._state == "running":
                self._engine.profiling = False
                self._state = "paused"
                self._collect()

    def resume(self):
        with self._lock:
            if self._state == "paused":
                self._engine.profiling = True
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
            engine.wait_for_all()
        finally:
            self._leave(before)

    def _leave(self, before):
        if before == "stopped":
            self.stop()
        elif before == "paused":
            self.pause()

    # ------------------------------------------------------------------ records
    def _collect(self):
        # take_records swaps the engine's list for a new one without a lock, so a worker may
        # still append to the list it returned: keep those lists and read them late.
        if self._engine is not None:
            self._chunks.append(self._engine.take_records())

    def records(self):
        """A list (a copy) of the OpRecords collected so far, oldest first."""
        with self._lock:
            self._collect()
            return [record for chunk in self._chunks for record in chunk]

    def reset(self):
        """Forget the collected records (recording goes on if running)."""
        with self._lock:
            self._collect()
            self._chunks = []

    # ------------------------------------------------------------------ outputs
    def dump(self, path=None, reset=True):
        """Write the records as Chrome trace-event JSON to ``path`` (default: the configured
        filename) and return the path. Forgets the records unless ``reset=False``."""
        path = self.filename if path is None else path
        with self._lock:
            recs = self.records()
            if reset:
                self._chunks = []
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


# ---------------------------------------------------------------------- formats
def _natural(text):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text)]


def _category(record):
    return "delete" if record.name == "delete_variable" else "operator"


def _jsonable(value):
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "__index__"):
        return int(value.__index__())
    return str(value)


def _array_desc(entry):
    """(shape, dtype) -> "float32[2, 3]"; anything else as JSON."""
    if isinstance(entry, (list, tuple)) and len(entry) == 2 and isinstance(entry[1], str) \
            and isinstance(entry[0], (list, tuple)):
        return f"{entry[1]}[{', '.join(str(d) for d in entry[0])}]"
    return _jsonable(entry)


def _args(record):
    args = {}
    if isinstance(record.info, dict):
        for key, value in record.info.items():
            if key in ("inputs", "outputs") and isinstance(value, (list, tuple)):
                args[key] = [_array_desc(v) for v in value]
            else:
                args[str(key)] = _jsonable(value)
    elif record.info is not None:
        args["info"] = _jsonable(record.info)
    args["reads"] = list(record.reads)
    args["writes"] = list(record.writes)
    if record.failed:
        args["failed"] = True
    return args


def trace_events(records):
    """The Chrome trace (JSON Object Format) of ``records``: a process per Context, a thread per
    worker, a complete event per op; times in microseconds from the first op."""
    records = sorted(records, key=lambda r: (r.start_ns, r.end_ns))
    ctxs = sorted({r.ctx for r in records}, key=lambda c: (c.device_type, c.device_id))
    pids = {ctx: i + 1 for i, ctx in enumerate(ctxs)}
    tids = {w: i + 1 for i, w in enumerate(sorted({r.worker for r in records}, key=_natural))}
    events = [{"name": "process_name", "ph": "M", "pid": pids[ctx], "tid": 0,
               "args": {"name": str(ctx)}} for ctx in ctxs]
    events += [{"name": "thread_name", "ph": "M", "pid": pid, "tid": tids[worker],
                "args": {"name": worker}}
               for pid, worker in sorted({(pids[r.ctx], r.worker) for r in records},
                                         key=lambda k: (k[0], tids[k[1]]))]
    origin = records[0].start_ns if records else 0
    for r in records:
        events.append({"name": r.name, "cat": _category(r), "ph": "X",
                       "ts": round((r.start_ns - origin) / 1e3, 3),
                       "dur": round(max(r.end_ns - r.start_ns, 0) / 1e3, 3),
                       "pid": pids[r.ctx], "tid": tids[r.worker], "args": _args(r)})
    return {"traceEvents": events, "displayTimeUnit": "ms"}


def stats_table(records):
    """Aggregate statistics per op name, by total time descending, as text."""
    stats = {}
    for r in records:
        ms = (r.end_ns - r.start_ns) / 1e6
        s = stats.setdefault(r.name, [0, 0.0, math.inf, -math.inf])
        s[0] += 1
        s[1] += ms
        s[2] = min(s[2], ms)
        s[3] = max(s[3], ms)
    rows = sorted(stats.items(), key=lambda kv: (-kv[1][1], kv[0]))
    width = max([len("Name")] + [len(name) for name in stats])
    head = f"{'Name':<{width}}  {'Count':>7}  " + "  ".join(
        f"{h:>12}" for h in ("Total (ms)", "Mean (ms)", "Min (ms)", "Max (ms)"))
    lines = [f"Profile Statistics: {len(records)} ops, {len(stats)} names", head,
             "-" * len(head)]
    for name, (count, total, low, high) in rows:
        lines.append(f"{name:<{width}}  {count:>7}  {total:>12.3f}  {total / count:>12.3f}  "
                     f"{low:>12.3f}  {high:>12.3f}")
    return "\n".join(lines) + "\n"


def _colours(names, palette):
    """Stable colours: each name prefers the palette slot of its crc32, and takes the next free
    slot when another name of the same picture holds it."""
    taken, result = set(), {}
    for name in sorted(names):
        slot = zlib.crc32(name.encode()) % len(palette)
        while slot in taken and len(taken) < len(palette):
            slot = (slot + 1) % len(palette)
        taken.add(slot)
        result[name] = palette[slot]
    return result


def draw_timeline(path=None, records=()):
    """See `Profiler.timeline`; draws ``records`` (no pyplot, so no global state is touched)."""
    try:
        import matplotlib  # noqa: F401 - first, so a missing package fails here
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.patches import Patch
    except ImportError as exc:
        raise ImportError(_MISSING_MPL) from exc
    records = sorted(records, key=lambda r: (r.start_ns, r.end_ns))
    rows = sorted({(r.ctx, r.worker) for r in records},
                  key=lambda k: (k[0].device_type, k[0].device_id, _natural(k[1])))
    row_of = {key: i for i, key in enumerate(rows)}
    fig = Figure(figsize=(11, 1.6 + 0.45 * max(len(rows), 1)))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    if not records:
        ax.text(0.5, 0.5, "no ops recorded", ha="center", va="center", transform=ax.transAxes)
    origin = records[0].start_ns if records else 0
    span = max([(r.end_ns - origin) / 1e6 for r in records] + [1e-3])
    totals = {}
    for r in records:
        totals[r.name] = totals.get(r.name, 0) + r.end_ns - r.start_ns
    palette = [matplotlib.colormaps["tab20"](i) for i in range(20)]
    colour = _colours(totals, palette)
    for r in records:
        width = max((r.end_ns - r.start_ns) / 1e6, span * 1e-3)  # keep instant ops visible
        ax.broken_barh([((r.start_ns - origin) / 1e6, width)], (row_of[(r.ctx, r.worker)] - 0.4,
                       0.8), facecolors=colour[r.name],
                       edgecolors="red" if r.failed else "none", linewidth=1.5)
    ax.set_yticks(range(len(rows)), [worker for _, worker in rows])
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlim(0, span * 1.02)
    ax.set_xlabel("time since the first op (ms)")
    ax.set_title(f"ndengine timeline: {len(records)} ops on {len(rows)} worker rows")
    groups = {}
    for i, (ctx, _) in enumerate(rows):
        groups.setdefault(ctx, []).append(i)
    device_axis = ax.twinx()
    device_axis.set_ylim(ax.get_ylim())
    device_axis.set_yticks([sum(ix) / len(ix) for ix in groups.values()],
                           [str(ctx) for ctx in groups], fontweight="bold")
    for ix in list(groups.values())[1:]:
        ax.axhline(ix[0] - 0.5, color="grey", linewidth=0.8)
    ax.grid(axis="x", alpha=0.3)
    names = sorted(totals, key=lambda n: -totals[n])
    if names:
        ax.legend(handles=[Patch(color=colour[n], label=n) for n in names], loc="upper left",
                  bbox_to_anchor=(1.08, 1.0), fontsize="small", title="op")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, format="png", dpi=100)
        return path
    fig._repr_png_ = lambda: _png_bytes(fig)  # inline in Jupyter even if pyplot was never used
    return fig


def _png_bytes(fig):
    import io
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    return buffer.getvalue()


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
