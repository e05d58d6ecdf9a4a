"""The quickstart warns, before its first timing, that the first run includes JIT compilation."""
import json
from pathlib import Path

QUICKSTART = Path(__file__).resolve().parents[2] / "notebooks" / "quickstart.ipynb"


def test_quickstart_says_its_first_timing_includes_jit_compilation():
    cells = json.loads(QUICKSTART.read_text(encoding="utf-8"))["cells"]
    first_timing = next(i for i, c in enumerate(cells)
                        if c["cell_type"] == "code" and "perf_counter" in "".join(c["source"]))
    before = " ".join("".join(c["source"]) for c in cells[:first_timing]
                      if c["cell_type"] == "markdown")
    assert "JIT" in before and "Numba" in before and "first" in before
