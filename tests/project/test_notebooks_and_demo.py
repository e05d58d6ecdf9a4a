"""The newcomer's path: every notebook runs top to bottom, and the quickstart demo works."""
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs_top_to_bottom(path, tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    notebook = nbformat.read(path, as_version=4)
    assert all(not c.get("outputs") for c in notebook.cells if c.cell_type == "code"), \
        f"{path.name} is committed with outputs; clear them"
    client = nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError on the first failing cell
    errors = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error"]
    assert not errors


def test_notebooks_exist():
    assert {p.name for p in NOTEBOOKS} >= {"quickstart.ipynb", "custom_op.ipynb"}


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
    assert result.stderr.strip() == "", result.stderr
