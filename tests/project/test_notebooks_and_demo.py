"""The newcomer's path: every notebook is stored run top to bottom with its outputs, runs again
the same way (profiles that show ops, plots that are drawn), and the quickstart demo works."""
import copy
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
MAX_NOTEBOOK_BYTES = 300_000
EMPTY_PROFILE = re.compile(r"\b0 ops\b|no ops recorded")  # the table's and the timeline's words
# What a run must show, per notebook: each pattern is searched in the text of its outputs
EXPECTED_OUTPUTS = {
    "quickstart.ipynb": [
        r"buffers reused from the pool: [1-9]",  # the pool serves the loop's new arrays
        r"buffers taken for 20 unread temporaries: 0\b",  # fused away (threaded engines)
        r"raised at the second wait on bad: Integers to negative",
        r"waitall reports it: Integers to negative", r"the next waitall returns",
        r"\nfused 3 ops +8 ",  # every window of the profiled loop, the last one too
        r"<ndengine timeline: \d+ ops on \d+ worker rows>",
    ],
    "autograd.ipynb": [r"final mean squared error"],
    "custom_op.ipynb": [r"matches NumPy"],
}


def code_cells(notebook):
    return [c for c in notebook.cells if c.cell_type == "code"]


def texts(cell):
    """The text a cell showed: its streams and the plain text of its results."""
    for output in cell.outputs:
        if output.output_type == "stream":
            yield output.text
        elif "data" in output:
            yield output.data.get("text/plain", "")


def shows_image(cell):
    return any("image/png" in output.get("data", {}) for output in cell.outputs)


def assert_shows_expected_outputs(path, notebook):
    shown = "\n".join(text for cell in code_cells(notebook) for text in texts(cell))
    for pattern in EXPECTED_OUTPUTS.get(path.name, ()):
        assert re.search(pattern, shown), (path.name, pattern, shown)


def read(path):
    nbformat = pytest.importorskip("nbformat")
    return nbformat.read(path, as_version=4)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_stored_with_its_outputs(path):
    """A reader sees the results without running anything: each notebook is stored as one run
    from top to bottom left it, with at least one plot, a profile that shows ops, no error, and
    under the size limit."""
    notebook = read(path)
    cells = code_cells(notebook)
    assert [c.execution_count for c in cells] == list(range(1, len(cells) + 1)), \
        f"{path.name}: run it top to bottom and store it with its outputs"
    assert not [o for c in cells for o in c.outputs if o.output_type == "error"]
    assert any(shows_image(c) for c in cells), f"{path.name} stores no plot"
    assert path.stat().st_size < MAX_NOTEBOOK_BYTES, f"{path.name}: keep its outputs small"
    shown = "".join(text for c in cells for text in texts(c))
    assert str(ROOT) not in shown and "site-packages" not in shown  # no machine paths
    assert not EMPTY_PROFILE.search(shown), f"{path.name} stores an empty profile"
    assert_shows_expected_outputs(path, notebook)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs_top_to_bottom(path, tmp_path):
    nbclient = pytest.importorskip("nbclient")
    stored = read(path)
    notebook = copy.deepcopy(stored)
    client = nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    # under the defaults a newcomer gets: none of the suite's NDENGINE_ settings
    defaults = {k: v for k, v in os.environ.items() if not k.startswith("NDENGINE_")}
    client.execute(env=defaults)  # raises CellExecutionError on the first failing cell
    for index, (was, now) in enumerate(zip(code_cells(stored), code_cells(notebook))):
        assert not [o for o in now.outputs if o.output_type == "error"]
        for text in texts(now):
            assert not EMPTY_PROFILE.search(text), (f"{path.name} code cell {index}: the "
                                                    f"profile is empty", text)
        if shows_image(was):
            assert shows_image(now), f"{path.name} code cell {index} drew no plot"
    assert_shows_expected_outputs(path, notebook)


def test_notebooks_exist():
    assert {p.name for p in NOTEBOOKS} >= {"quickstart.ipynb", "custom_op.ipynb", "autograd.ipynb"}


def run_demo(*args, cwd):
    """``python -m ndengine ARGS`` under the defaults a newcomer gets (none of the suite's
    NDENGINE_ settings), on the default engine."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NDENGINE_")}
    env["NDENGINE_ENGINE_TYPE"] = "ThreadedEnginePerDevice"
    return subprocess.run([sys.executable, "-m", "ndengine", *args], capture_output=True,
                          text=True, timeout=300, env=env, cwd=cwd)


def op_events(trace_path):
    """The complete events (one per op run) of a Chrome trace the demo wrote."""
    trace = json.loads(trace_path.read_text())
    workers = {(e["pid"], e["tid"]): e["args"]["name"] for e in trace["traceEvents"]
               if e["name"] == "thread_name"}
    return [dict(e, worker=workers[e["pid"], e["tid"]]) for e in trace["traceEvents"]
            if e["ph"] == "X"]


def overlapping_workers(events):
    """The worker threads whose ops ran at the same time as an op of another worker thread."""
    ops = [e for e in events if e["worker"].startswith("ndengine-") and e["cat"] == "operator"]
    return {e["worker"] for e in ops for f in ops if e["worker"] != f["worker"]
            and e["ts"] < f["ts"] + f["dur"] and f["ts"] < e["ts"] + e["dur"]}


def test_quickstart_demo_shows_the_engine_and_fusion(tmp_path):
    """Part 1's profile has ops of the two chains on two worker threads at the same time; part
    2's profile has the whole element-wise chain as one fused op; both pictures are drawn."""
    pytest.importorskip("matplotlib")
    steps = 8
    result = run_demo("--out", str(tmp_path), "--size", "400000", "--matrix", "600",
                      "--steps", str(steps), "--repeat", "1", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    for expected in ("NumPy", "ndengine", "first run", "best", "speed-up", "steady state",
                     "ThreadedEnginePerDevice", "workers", "profile.json", "timeline.png",
                     "fusion_profile.json", "fusion_timeline.png"):
        assert expected in out, (expected, out)
    for picture in ("timeline.png", "fusion_timeline.png"):
        assert (tmp_path / picture).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", picture

    engine_ops = op_events(tmp_path / "profile.json")
    assert "mean" in {e["name"] for e in engine_ops}  # reductions: not fused, pushed one by one
    assert len(overlapping_workers(engine_ops)) >= 2, engine_ops

    fused = [re.fullmatch(r"fused (\d+) ops", e["name"])
             for e in op_events(tmp_path / "fusion_profile.json")]
    sizes = [int(m.group(1)) for m in fused if m]
    assert sizes and max(sizes) >= 2 * steps, sizes  # exp and sin of every step in one op
    # nothing on stderr but, on a cold first run, the one notice of time spent compiling
    assert [line for line in result.stderr.splitlines()
            if line.strip() and "CompileTimeNotice" not in line] == [], result.stderr


def test_demo_help_is_plain_text_with_defaults_and_it_has_a_version(tmp_path):
    from ndengine import __version__
    help_text = run_demo("--help", cwd=tmp_path)
    assert help_text.returncode == 0, help_text.stderr
    assert "``" not in help_text.stdout and ":func:" not in help_text.stdout
    for option in ("--out", "--size", "--matrix", "--steps", "--repeat", "--ctx", "--version"):
        assert option in help_text.stdout, option
    assert "(default: 8000000)" in help_text.stdout and "(default: cpu(0))" in help_text.stdout
    version = run_demo("--version", cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.strip() == f"ndengine {__version__}"


@pytest.mark.parametrize("argv, message", [
    (["--ctx", "gpu0"], "--ctx must look like cpu(0) or gpu(0)"),
    (["--ctx", "tpu(0)"], "--ctx must look like cpu(0) or gpu(0)"),
    (["--steps", "0"], "--steps: must be an integer >= 1"),
    (["--size", "many"], "--size: must be an integer >= 1"),
])
def test_demo_rejects_bad_options_before_any_benchmark(tmp_path, argv, message):
    result = run_demo(*argv, cwd=tmp_path)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert "NumPy" not in result.stdout and not list(tmp_path.iterdir()), result.stdout


def test_demo_rejects_a_device_it_cannot_use_before_any_benchmark(tmp_path):
    try:
        import cupy  # noqa: F401
        pytest.skip("CuPy is installed: gpu(0) may be usable")
    except ImportError:
        pass
    result = run_demo("--ctx", "gpu(0)", "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert result.returncode == 2 and "--ctx gpu(0): " in result.stderr, result.stderr
    assert "NumPy" not in result.stdout and not (tmp_path / "out").exists(), result.stdout
