"""The newcomer's path: every notebook is stored run top to bottom with its outputs, runs again
the same way (profiles that show ops, plots that are drawn), and the quickstart demo works."""
import copy
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


def test_quickstart_demo_writes_profile_and_timeline(tmp_path):
    pytest.importorskip("matplotlib")
    env = dict(os.environ, NDENGINE_ENGINE_TYPE="ThreadedEnginePerDevice")
    result = subprocess.run(
        [sys.executable, "-m", "ndengine", "--out", str(tmp_path), "--size", "400000",
         "--steps", "3"], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    for expected in ("NumPy", "ndengine", "speed-up", "ThreadedEnginePerDevice", "workers",
                     "profile.json", "timeline.png"):
        assert expected in out, (expected, out)
    assert (tmp_path / "profile.json").stat().st_size > 0
    assert (tmp_path / "timeline.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # nothing on stderr but, on a cold first run, the one notice of time spent compiling
    assert [line for line in result.stderr.splitlines()
            if line.strip() and "CompileTimeNotice" not in line] == [], result.stderr
