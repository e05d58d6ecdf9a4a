"""Fresh virtual environments for the packaging tests: ndengine installed from a copy of this
checkout (so the build leaves nothing in the working tree), run with PYTHONPATH cleared so the
installed copy is the one imported.

A step that needs the package index and cannot reach it (pip's network errors, or a timeout)
skips the test with the reason; any other failure fails it.
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

_NETWORK_ERRORS = ("NewConnectionError", "Failed to establish a new connection",
                   "Temporary failure in name resolution", "Name or service not known",
                   "Network is unreachable", "ConnectTimeoutError", "ReadTimeoutError",
                   "ProxyError", "SSLError", "Could not fetch URL",
                   "No matching distribution found", "Could not find a version that satisfies")


def clean_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")
           and not k.startswith("NUMBA_")}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONDONTWRITEBYTECODE="1", **extra)
    return env


def run(cmd, *, timeout, cwd, what, network=False, env=None) -> subprocess.CompletedProcess:
    """Runs ``cmd``; a failure fails the test, or skips it when ``network`` and the output
    says the package index could not be reached."""
    try:
        result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                                timeout=timeout, cwd=cwd, env=clean_env(**(env or {})))
    except subprocess.TimeoutExpired:
        if network:
            pytest.skip(f"{what}: no answer from the package index within {timeout} s")
        pytest.fail(f"{what}: timed out after {timeout} s")
    output = result.stdout + result.stderr
    if result.returncode:
        said = [line.strip() for line in output.splitlines()
                if any(marker in line for marker in _NETWORK_ERRORS)]
        if network and said:
            pytest.skip(f"{what}: the package index is unreachable (pip said: {said[0][:300]})")
        pytest.fail(f"{what} failed ({result.returncode}):\n{output[-6000:]}")
    return result


def source_copy(dest: pathlib.Path) -> pathlib.Path:
    """What pip needs to build ndengine, copied from this checkout."""
    dest.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, dest / name)
    # what a build left in the checkout (the compiled core's extensions) is built again there
    shutil.copytree(ROOT / "ndengine", dest / "ndengine",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc",
                                                  "*.so", "*.pyd", "*.c", "_compiled.json"))
    return dest


def make_venv(python, where: pathlib.Path, *requirements, timeout=420,
              build_core=True, build_env=None) -> pathlib.Path:
    """A venv made by ``python`` with ndengine (from a copy of the checkout) and
    ``requirements`` installed; returns its interpreter. ``build_core=False``: without the
    compiled core (NDENGINE_BUILD_CORE=0; a minute less), for a test of something else: run
    its interpreter with NDENGINE_PURE_PYTHON=1 (`PURE`), or the import warns. ``build_env``:
    more environment for the install (a compiler's flags, say)."""
    run([python, "-m", "venv", where / "venv"], timeout=180, cwd=where, what="python -m venv")
    venv_python = where / "venv" / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    src = source_copy(where / "src")
    run([venv_python, "-m", "pip", "install", "--quiet", src, *requirements],
        timeout=timeout, cwd=where, what="pip install", network=True,
        env={**(build_env or {}), **({} if build_core else {"NDENGINE_BUILD_CORE": "0"})})
    return venv_python


# Run in a fresh venv: the layer Numba picked after a large op, then a fork Pool and a
# spawn Pool whose workers run large ops too.
PROBE = textwrap.dedent("""
    import json, multiprocessing, sys, warnings
    import numpy as np

    def large_op(seed):
        import ndengine as nd
        x = nd.array(np.full(1 << 20, seed, dtype=np.float64))
        return float((nd.exp(x * 0.0) + x).sum().item())

    if __name__ == "__main__":
        import numba, ndengine as nd
        from ndengine.ops import parallel
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            first = large_op(1)
        report = {"file": nd.__file__, "layer": numba.threading_layer(),
                  "tbb_status": getattr(parallel, "tbb_status", ""), "first": first,
                  "warnings": [f"{w.category.__name__}: {w.message}" for w in caught]}
        for method in ("fork", "spawn"):
            with multiprocessing.get_context(method).Pool(2) as pool:
                report[method] = pool.map_async(large_op, range(3)).get(timeout=120)
        print("REPORT " + json.dumps(report), flush=True)
""")


PURE = {"NDENGINE_PURE_PYTHON": "1"}  # the environment of a venv made with build_core=False


def probe(venv_python, cwd: pathlib.Path, env=None) -> dict:
    script = cwd / "probe.py"
    script.write_text(PROBE)
    result = run([venv_python, script], timeout=300, cwd=cwd, what="threading probe", env=env)
    lines = [ln for ln in result.stdout.splitlines() if ln.startswith("REPORT ")]
    assert lines, result.stdout + result.stderr
    report = json.loads(lines[-1][len("REPORT "):])
    report["stderr"] = result.stderr
    return report


def check_probe(report: dict, venv_dir: pathlib.Path, expected_layer: str) -> None:
    assert pathlib.Path(report["file"]).resolve().is_relative_to(venv_dir.resolve()), \
        f"imported {report['file']}, not the venv's copy"
    assert report["layer"] == expected_layer, report
    assert report["first"] == 2.0 * (1 << 20)
    expected = [float((1 + seed) * (1 << 20)) for seed in range(3)]  # exp(0) + seed
    assert report["fork"] == expected and report["spawn"] == expected, report


def tbb_expected() -> bool:
    """Whether the ``tbb`` requirement applies here (see pyproject.toml's marker)."""
    import platform
    return platform.machine() == "x86_64" and sys.platform != "darwin"
