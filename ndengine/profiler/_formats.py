"""The profiler's text formats: Chrome trace events and the aggregate statistics table."""
import math
import re


def natural_key(text):
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
    tids = {w: i + 1 for i, w in enumerate(sorted({r.worker for r in records}, key=natural_key))}
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
