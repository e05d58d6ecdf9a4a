"""ndengine.profiler: Chrome trace, statistics table, timeline, switching, under every engine."""
import json
import pickle
import re
import sys
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndengine import engine as E
from ndengine.engine.devices import FakeStream
from ndengine import profiler
from ndengine.engine import cpu, gpu

KINDS = ["NaiveEngine", "ThreadedEnginePooled", "ThreadedEnginePerDevice"]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def fake_stream(ctx, is_copy):
    return FakeStream(ctx, is_copy)  # lets gpu(0) run on the CPU, no CuPy


@pytest.fixture(params=KINDS)
def eng(request, tmp_path):
    """A fresh engine of each kind, given to the default profiler (stopped and emptied)."""
    engine = E.create(request.param, num_cpu_workers=2, stream_factory=fake_stream)
    profiler.stop()
    profiler.set_config(filename=str(tmp_path / "profile.json"), engine=engine)
    profiler.reset()
    yield engine
    profiler.stop()
    profiler.reset()
    profiler.set_config()
    try:
        engine.wait_for_all()
    except Exception:  # noqa: BLE001 - a test's deliberate failures
        pass
    engine.notify_shutdown()


def sleeper(seconds):
    return lambda rc: time.sleep(seconds)


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def check_trace(trace):
    """Valid trace-event JSON Object Format; returns (complete events, process names by pid,
    thread names by (pid, tid))."""
    assert set(trace) >= {"traceEvents", "displayTimeUnit"}
    assert trace["displayTimeUnit"] in ("ms", "ns")
    processes, threads, complete = {}, {}, []
    for event in trace["traceEvents"]:
        assert event["ph"] in ("X", "M"), event
        for key in ("name", "ph", "pid", "tid"):
            assert key in event, (key, event)
        assert isinstance(event["pid"], int) and isinstance(event["tid"], int)
        if event["ph"] == "M":
            assert isinstance(event["args"]["name"], str)
            if event["name"] == "process_name":
                assert event["pid"] not in processes
                processes[event["pid"]] = event["args"]["name"]
            else:
                assert event["name"] == "thread_name"
                assert (event["pid"], event["tid"]) not in threads
                threads[(event["pid"], event["tid"])] = event["args"]["name"]
            continue
        for key in ("ts", "dur"):
            assert isinstance(event[key], (int, float)) and not isinstance(event[key], bool)
            assert event[key] >= 0, event
        assert isinstance(event["name"], str) and isinstance(event["cat"], str)
        assert isinstance(event["args"], dict)
        complete.append(event)
    last = {}
    for event in complete:  # monotonic per thread, in file order
        key = (event["pid"], event["tid"])
        assert event["ts"] >= last.get(key, 0), (event, last[key])
        last[key] = event["ts"]
        assert event["pid"] in processes and key in threads
    return complete, processes, threads


def test_dump_is_a_valid_chrome_trace(eng):
    a, b, c = (eng.new_variable() for _ in range(3))
    info = {"inputs": [((2, 3), "float32"), ((3,), "float32")], "outputs": [((2, 3), "float64")],
            "note": ("x", 1)}
    with profiler.scope():
        eng.push_sync(sleeper(0.002), cpu(0), const_vars=[a], mutable_vars=[b], name="add",
                      info=info)
        eng.push_sync(sleeper(0.001), cpu(0), mutable_vars=[a], name="fill")
        eng.push_sync(sleeper(0.001), cpu(0), const_vars=[b], mutable_vars=[c], name="exp")
        eng.push_async(lambda rc, done: done(), cpu(0), mutable_vars=[c], name="async")
        eng.delete_variable(lambda rc: None, cpu(0), a)
    records = profiler.records()
    path = profiler.dump()
    assert path == profiler._default.filename
    complete, processes, threads = check_trace(load(path))
    assert len(complete) == len(records) == 5
    assert sorted(e["name"] for e in complete) == sorted(r.name for r in records)
    assert processes == {1: "cpu(0)"}
    assert set(threads.values()) == {r.worker for r in records}
    assert min(e["ts"] for e in complete) == 0
    add = next(e for e in complete if e["name"] == "add")
    assert add["cat"] == "operator"
    assert add["args"]["inputs"] == ["float32[2, 3]", "float32[3]"]
    assert add["args"]["outputs"] == ["float64[2, 3]"]
    assert add["args"]["note"] == ["x", 1]
    assert add["args"]["reads"] == [a.id] and add["args"]["writes"] == [b.id]
    assert "failed" not in add["args"]
    assert add["dur"] >= 1500  # microseconds; the op slept 2 ms
    assert next(e for e in complete if e["name"] == "delete_variable")["cat"] == "delete"


def test_processes_per_device_threads_per_worker(eng):
    with profiler.scope():
        for i in range(12):
            ctx = (cpu(0), cpu(1), gpu(0))[i % 3]
            eng.push_sync(sleeper(0.001), ctx, mutable_vars=[eng.new_variable()], name=f"op{i % 3}")
    records = profiler.records()
    complete, processes, threads = check_trace(load(profiler.dump()))
    assert len(complete) == 12
    assert sorted(processes.values()) == ["cpu(0)", "cpu(1)", "gpu(0)"]
    pid = {name: p for p, name in processes.items()}
    assert {(pid[str(r.ctx)], r.worker) for r in records} == \
        {(p, name) for (p, _), name in threads.items()}
    for event in complete:  # each op in its device's process, on its worker's thread
        assert processes[event["pid"]] == {"op0": "cpu(0)", "op1": "cpu(1)",
                                            "op2": "gpu(0)"}[event["name"]]
    if eng.kind == "ThreadedEnginePerDevice":  # a pool per device: cpu(1) has its own workers
        assert all("cpu1" in name for (p, _), name in threads.items() if p == pid["cpu(1)"])
        assert len({name for name in threads.values()}) <= 6
    elif eng.kind == "ThreadedEnginePooled":
        assert len({name for name in threads.values()}) <= 2
    else:
        assert set(threads.values()) == {threading.current_thread().name}


def test_every_dump_writes_every_record_until_reset(eng, tmp_path):
    with profiler.scope():
        eng.push_sync(sleeper(0), cpu(0), mutable_vars=[eng.new_variable()], name="first")
    first = load(profiler.dump())
    again = load(profiler.dump())  # a second dump to the same file: the same trace
    assert again == first
    assert [e["name"] for e in check_trace(again)[0]] == ["first"]
    with profiler.scope():
        eng.push_sync(sleeper(0), cpu(0), mutable_vars=[eng.new_variable()], name="second")
    complete, _, _ = check_trace(load(profiler.dump(str(tmp_path / "other.json"))))
    assert [e["name"] for e in complete] == ["first", "second"]
    assert sorted(r.name for r in profiler.records()) == ["first", "second"]
    profiler.reset()
    assert profiler.records() == []
    assert check_trace(load(profiler.dump()))[0] == []  # empty but valid


def test_stop_waits_for_the_work_pushed_while_profiling(eng):
    profiler.start()
    for _ in range(3):  # on a worker, still running when stop() is called
        eng.push_sync(sleeper(0.02), cpu(0), mutable_vars=[eng.new_variable()], name="late")
    profiler.stop()
    assert eng.run_hook is None and profiler._default.state == "stopped"
    assert [r.name for r in profiler.records()] == ["late"] * 3
    complete, _, _ = check_trace(load(profiler.dump()))
    assert [e["name"] for e in complete] == ["late"] * 3


def test_stop_raises_an_op_error_after_stopping(eng):
    def boom(rc):
        time.sleep(0.01)
        raise ZeroDivisionError("op failed")

    profiler.start()
    with pytest.raises(ZeroDivisionError, match="op failed"):  # Naive: at the push
        eng.push_sync(boom, cpu(0), mutable_vars=[eng.new_variable()], name="boom")
        profiler.stop()
    profiler.stop()  # Naive raised at the push: stop now (nothing left to wait for)
    assert eng.run_hook is None and profiler._default.state == "stopped"
    assert [(r.name, r.failed) for r in profiler.records()] == [("boom", True)]
    eng.wait_for_all()  # the error was raised once, not left behind


def test_stop_without_waiting(eng):
    gate, v = threading.Event(), eng.new_variable()
    profiler.start()
    if eng.kind != "NaiveEngine":  # NaiveEngine runs each op at its push: nothing to wait for
        eng.push_sync(lambda rc: gate.wait(5), cpu(0), mutable_vars=[v], name="held")
        eng.push_sync(sleeper(0), cpu(0), mutable_vars=[v], name="queued")
    profiler.stop(wait=False)  # returns at once, with "held" running and "queued" waiting
    assert profiler._default.state == "stopped" and eng.run_hook is None
    gate.set()
    eng.wait_for_all()
    assert "queued" not in [r.name for r in profiler.records()]


def test_failed_and_skipped_ops_are_marked(eng):
    v = eng.new_variable()

    def boom(rc):
        raise ValueError("boom")

    profiler.start()
    with pytest.raises(ValueError):  # Naive raises at push, the others at the wait
        eng.push_sync(boom, cpu(0), mutable_vars=[v], name="boom")
        eng.wait_for_all()
    try:  # skipped: Naive raises the same error at the push, the others only skip it
        eng.push_sync(sleeper(0), cpu(0), const_vars=[v], mutable_vars=[eng.new_variable()],
                      name="skipped")
    except ValueError:
        assert eng.kind == "NaiveEngine"
    eng.wait_for_all()
    profiler.stop()
    complete, _, _ = check_trace(load(profiler.dump()))
    assert {e["name"]: e["args"].get("failed") for e in complete} == \
        {"boom": True, "skipped": True}


def parse_table(text):
    lines = text.splitlines()
    assert lines[0].startswith("Profile Statistics")
    assert lines[1].split()[:2] == ["Name", "Count"] and "Total (ms)" in lines[1]
    assert set(lines[2]) == {"-"}
    rows = []
    for line in lines[3:]:
        name, count, total, mean, low, high = line.rsplit(None, 5)
        rows.append((name.strip(), int(count), float(total), float(mean), float(low),
                     float(high)))
    return rows


def test_dumps_table_counts_and_order(eng):
    # total: slow 2 x 40 ms = 80, medium 5 x 10 ms = 50, fast 10 x 1 ms = 10
    program = [("slow", 0.040, 2), ("fast", 0.001, 10), ("medium", 0.010, 5)]
    with profiler.scope():
        for name, seconds, count in program:
            for _ in range(count):
                eng.push_sync(sleeper(seconds), cpu(0), mutable_vars=[eng.new_variable()],
                              name=name)
    rows = parse_table(profiler.dumps())
    assert [r[0] for r in rows] == ["slow", "medium", "fast"]
    for (name, count, total, mean, low, high), (_, seconds, expected_count) in zip(
            rows, sorted(program, key=lambda p: -p[1] * p[2])):
        assert count == expected_count
        assert total >= expected_count * seconds * 1e3 * 0.99
        assert low >= seconds * 1e3 * 0.99 and low <= mean <= high
        assert mean == pytest.approx(total / count, abs=2e-3)
    assert [r[0] for r in parse_table(profiler.dumps(reset=True))] == ["slow", "medium", "fast"]
    assert parse_table(profiler.dumps()) == []


def test_dumps_needs_aggregate_stats(eng, tmp_path):
    profiler.set_config(aggregate_stats=False, engine=eng)
    with pytest.raises(RuntimeError, match="aggregate_stats"):
        profiler.dumps()


def test_timeline_writes_png(eng, tmp_path):
    mpimg = pytest.importorskip("matplotlib.image")
    with profiler.scope():
        for i in range(6):
            eng.push_sync(sleeper(0.001), (cpu(0), cpu(1))[i % 2],
                          mutable_vars=[eng.new_variable()], name=("a", "b", "c")[i % 3])
    path = str(tmp_path / "timeline.png")
    assert profiler.timeline(path) == path
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == PNG_SIGNATURE and len(data) > 1000
    image = mpimg.imread(path)
    assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100
    assert profiler.timeline(str(tmp_path / "empty.png"), records=[])  # no ops: still a picture


def test_timeline_without_path_returns_figure(eng):
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure
    with profiler.scope():
        eng.push_sync(sleeper(0.001), cpu(0), mutable_vars=[eng.new_variable()], name="x")
    fig = profiler.timeline()
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == [profiler.records()[0].worker]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["x"]
    assert fig._repr_png_()[:8] == PNG_SIGNATURE  # what Jupyter shows inline


def test_timeline_figure_text_says_what_it_shows(eng):
    pytest.importorskip("matplotlib")
    with profiler.scope():
        for _ in range(3):
            eng.push_sync(sleeper(0), cpu(0), mutable_vars=[eng.new_variable()], name="x")
    fig = profiler.timeline()  # the text a REPL, print() or a notebook's text output shows
    assert re.fullmatch(r"<ndengine timeline: 3 ops on [12] worker rows>", repr(fig)), repr(fig)
    assert str(fig) == fig.axes[0].get_title() == repr(fig)[1:-1]
    empty = profiler.timeline(records=[])
    assert repr(empty) == "<ndengine timeline: no ops recorded>"
    assert [t.get_text() for t in empty.axes[0].texts] == ["no ops recorded"]
    assert repr(pickle.loads(pickle.dumps(fig))) == repr(fig)  # matplotlib figures pickle


def test_timeline_colours_are_stable():
    from ndengine.profiler._timeline import _colours
    palette = list(range(20))
    one = _colours(["add", "mul"], palette)
    two = _colours(["mul", "add", "exp"], palette)
    assert one["add"] == two["add"] and one["mul"] == two["mul"]
    many = _colours([f"op{i}" for i in range(20)], palette)
    assert sorted(many.values()) == palette  # no two names share a colour while there is room


def test_timeline_without_matplotlib(eng, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=re.escape(
            "ndengine.profiler.timeline needs matplotlib: pip install 'ndengine[viz]'")):
        profiler.timeline()


def test_times_are_taken_when_the_op_runs(eng):
    v = eng.new_variable()
    with profiler.scope():
        pushed_blocker = time.perf_counter_ns()
        eng.push_sync(sleeper(0.2), cpu(0), mutable_vars=[v], name="blocker")
        eng.push_sync(sleeper(0), cpu(0), const_vars=[v], mutable_vars=[eng.new_variable()],
                      name="waiter")
    by_name = {r.name: r for r in profiler.records()}
    blocker, waiter = by_name["blocker"], by_name["waiter"]
    assert blocker.end_ns - blocker.start_ns >= 0.19e9
    assert waiter.start_ns >= blocker.end_ns
    assert waiter.start_ns - pushed_blocker >= 0.19e9  # not the push time of either op


def test_profiler_off_records_nothing(eng):
    for _ in range(5):
        eng.push_sync(sleeper(0), cpu(0), mutable_vars=[eng.new_variable()], name="quiet")
    eng.wait_for_all()
    assert eng.run_hook is None
    assert eng.take_records() == []
    assert profiler.records() == []
    profiler.start()
    profiler.stop()  # started and stopped around nothing
    eng.push_sync(sleeper(0), cpu(0), mutable_vars=[eng.new_variable()], name="after")
    eng.wait_for_all()
    assert profiler.records() == []


def test_pause_and_resume(eng):
    def run(name):
        eng.push_sync(sleeper(0), cpu(0), mutable_vars=[eng.new_variable()], name=name)
        eng.wait_for_all()

    profiler.start()
    assert eng.run_hook is not None and profiler._default.state == "running"
    run("before")
    profiler.pause()
    assert eng.run_hook is None and profiler._default.state == "paused"
    run("paused")
    profiler.resume()
    assert eng.run_hook is not None
    run("resumed")
    profiler.stop()
    assert eng.run_hook is None
    run("stopped")
    profiler.start()  # records accumulate across start/stop
    run("again")
    profiler.stop()
    assert [r.name for r in profiler.records()] == ["before", "resumed", "again"]


def test_scope_starts_waits_and_stops(eng):
    with profiler.scope():
        assert eng.run_hook is not None
        for _ in range(4):  # still pending when the body ends: scope waits for them
            eng.push_sync(sleeper(0.01), cpu(0), mutable_vars=[eng.new_variable()], name="w")
    assert eng.run_hook is None and profiler._default.state == "stopped"
    assert [r.name for r in profiler.records()] == ["w"] * 4


def test_scope_body_error_propagates(eng):
    with pytest.raises(KeyError, match="mine"):
        with profiler.scope():
            raise KeyError("mine")
    assert eng.run_hook is None and profiler._default.state == "stopped"


def test_scope_op_error_propagates_after_stopping(eng):
    def boom(rc):
        time.sleep(0.01)
        raise ZeroDivisionError("op failed")

    with pytest.raises(ZeroDivisionError, match="op failed"):
        with profiler.scope():  # Naive raises at the push, the others at scope's wait
            eng.push_sync(boom, cpu(0), mutable_vars=[eng.new_variable()], name="boom")
    assert eng.run_hook is None and profiler._default.state == "stopped"
    assert [(r.name, r.failed) for r in profiler.records()] == [("boom", True)]
    eng.wait_for_all()  # the error was raised once, not left behind


def test_engine_is_resolved_lazily_at_start(monkeypatch):
    made = []

    class Fake:
        run_hook = None

        def set_run_hook(self, hook):
            previous, self.run_hook = self.run_hook, hook
            return previous

        def wait_for_all(self):
            pass

    monkeypatch.setattr(E, "get", lambda: made.append(Fake()) or made[-1])
    p = profiler.Profiler()
    p.set_config()
    assert made == []
    p.start()
    assert len(made) == 1 and made[0].run_hook is not None
    p.stop()
    assert made[0].run_hook is None
    with pytest.raises(RuntimeError):
        p.start()
        p.set_config()  # only while stopped
    p.stop()


@settings(max_examples=8, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["add", "mul", "exp"]), st.integers(0, 2),
                          st.integers(0, 3), st.integers(0, 3)), max_size=25))
def test_random_programs_give_valid_traces(eng, program):
    profiler.reset()
    devices = (cpu(0), cpu(1), gpu(0))
    vs = [eng.new_variable() for _ in range(4)]
    with profiler.scope():
        for name, device, read, write in program:
            eng.push_sync(lambda rc: None, devices[device], const_vars=[vs[read]],
                          mutable_vars=[vs[write]], name=name)
    records = profiler.records()
    complete, processes, _ = check_trace(load(profiler.dump()))
    assert len(complete) == len(records) == len(program)
    assert sorted(processes.values()) == sorted({str(devices[p[1]]) for p in program})
    profiler.reset()


def test_a_run_hook_that_raises_is_reported_and_the_ops_still_finish(eng):
    def broken(*args):
        raise ValueError("broken hook")
    eng.set_run_hook(broken)
    done = []
    try:
        var = eng.new_variable()
        with pytest.warns(RuntimeWarning, match="broken hook"):
            for prop in (E.FnProperty.ASYNC, E.FnProperty.NORMAL):
                eng.push_sync(lambda rc: done.append(1), E.cpu(), (), (var,), prop)
            eng.wait_for_var(var)
            eng.wait_for_all()
    finally:
        eng.set_run_hook(None)
    assert done == [1, 1]
