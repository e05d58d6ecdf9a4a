"""The profiler's Gantt chart of the workers, drawn with matplotlib (an optional extra).

The chart is a matplotlib Figure whose text form names what it shows ("ndengine timeline: 48
ops on 2 worker rows", or "... no ops recorded"), so a REPL, a print or a notebook's text output
tells an empty profile from a full one; Jupyter shows it as a PNG even if pyplot was never used.
The Figure subclass is made at its first use (a draw, or an unpickling that looks up
``TimelineFigure`` here): matplotlib is imported only then."""
import io
import zlib

from ._formats import natural_key

_MISSING_MPL = "ndengine.profiler.timeline needs matplotlib: pip install 'ndengine[viz]'"


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


_figure_class = None  # TimelineFigure, made at the first draw (see _timeline_figure_class)


def _timeline_figure_class():
    global _figure_class
    if _figure_class is None:
        from matplotlib.figure import Figure

        class TimelineFigure(Figure):
            """A timeline chart: its text form is its summary, it shows as PNG in Jupyter."""
            __qualname__ = "TimelineFigure"  # module-level for pickle (see __getattr__)
            summary = "ndengine timeline"

            def __repr__(self):
                return f"<{self.summary}>"

            def __str__(self):
                return self.summary

            def _repr_png_(self):
                buffer = io.BytesIO()
                self.savefig(buffer, format="png", dpi=100)
                return buffer.getvalue()

        _figure_class = TimelineFigure
    return _figure_class


def __getattr__(name):
    if name == "TimelineFigure":  # where pickle finds the class of a pickled chart
        return _timeline_figure_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _summary(records, rows):
    if not records:
        return "ndengine timeline: no ops recorded"
    return f"ndengine timeline: {len(records)} ops on {len(rows)} worker rows"


def draw_timeline(path=None, records=()):
    """See `Profiler.timeline`; draws ``records`` (no pyplot, so no global state is touched)."""
    try:
        import matplotlib  # noqa: F401 - first, so a missing package fails here
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.patches import Patch
    except ImportError as exc:
        raise ImportError(_MISSING_MPL) from exc
    records = sorted(records, key=lambda r: (r.start_ns, r.end_ns))
    rows = sorted({(r.ctx, r.worker) for r in records},
                  key=lambda k: (k[0].device_type, k[0].device_id, natural_key(k[1])))
    row_of = {key: i for i, key in enumerate(rows)}
    fig = _timeline_figure_class()(figsize=(11, 1.6 + 0.45 * max(len(rows), 1)))
    fig.summary = _summary(records, rows)
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
                       edgecolors="black" if r.failed else "none", linewidth=1.0,
                       hatch="xxx" if r.failed else None)  # failed or skipped ops are hatched
    ax.set_yticks(range(len(rows)), [worker for _, worker in rows])
    ax.set_ylim(max(len(rows), 1) - 0.5, -0.5)
    ax.set_xlim(0, span * 1.02)
    ax.set_xlabel("time since the first op (ms)")
    ax.set_title(fig.summary)
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
    return fig
