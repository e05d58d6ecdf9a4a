"""What pyproject.toml promises holds: the oldest supported Python, with the oldest numpy and
numba it names, installs ndengine and passes a fast subset of this suite (and a large op plus
fork and spawn Pools); the extras name installable binaries; the sdist is the checkout (the
package and everything its tests read), without build outputs."""
import glob
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile

import pytest

from venv_helpers import ROOT, check_probe, make_venv, probe, run, tbb_expected

PYPROJECT = (ROOT / "pyproject.toml").read_text()
# Quick to run on a cold Numba cache, and touching every layer: registry, engine, arrays.
FAST_SUBSET = ["tests/ops/test_ops_registry.py", "tests/core/test_ndarray_storage.py",
               "tests/ndarray/test_ndarray_functions.py"]


def _requires_python() -> tuple:
    found = re.search(r'^requires-python\s*=\s*">=\s*(\d+)\.(\d+)"', PYPROJECT, re.M)
    assert found, "requires-python must read \">=3.X\""
    return int(found.group(1)), int(found.group(2))


def _minimum(package: str) -> str:
    found = re.search(rf'^\s*"{package}>=([0-9.]+)[",;<]', PYPROJECT, re.M)
    assert found, f"pyproject.toml names no minimum for {package}"
    return found.group(1)


def _interpreter(major: int, minor: int):
    """An interpreter of exactly that version: on PATH, else under pyenv's versions."""
    name = f"python{major}.{minor}"
    candidates = [shutil.which(name)]
    pyenv_root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    candidates += sorted(glob.glob(os.path.join(pyenv_root, "versions", f"{major}.{minor}.*",
                                                "bin", name)), reverse=True)
    for path in filter(None, candidates):
        try:
            out = subprocess.run([path, "-c", "import sys, venv; print(sys.version_info[:2])"],
                                 capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if out.returncode == 0 and out.stdout.strip() == str((major, minor)):
            return path
    return None


def test_pyproject_names_binary_wheels_and_a_compatible_tbb():
    assert re.search(r'gpu\s*=\s*\[\s*"cupy-cuda12x>=', PYPROJECT), "gpu extra: cupy-cuda12x"
    assert '"cupy>=' not in PYPROJECT  # the source package compiles CuPy from scratch
    # Numba's TBB layer needs TBB_INTERFACE_VERSION >= 12060: oneTBB 2021.6
    assert re.search(r'"tbb>=2021\.6[,;"]', PYPROJECT)


def test_oldest_supported_python_with_the_oldest_numpy_and_numba(tmp_path):
    major, minor = _requires_python()
    python = _interpreter(major, minor)
    if python is None:
        pytest.skip(f"python{major}.{minor} (the oldest supported, from requires-python) is "
                    "neither on PATH nor under pyenv")
    numpy_min, numba_min = _minimum("numpy"), _minimum("numba")
    # the compiled core built as pip builds it, at -O0: the install is tested, not its speed
    venv_python = make_venv(python, tmp_path, f"numpy=={numpy_min}", f"numba=={numba_min}",
                            "pytest", "hypothesis", build_env={"CFLAGS": "-O0"})
    versions = run([venv_python, "-c", "import sys, numpy, numba; "
                    "print(sys.version_info[:2], numpy.__version__, numba.__version__)"],
                   timeout=120, cwd=tmp_path, what="versions").stdout
    assert versions.startswith(str((major, minor))), versions
    assert versions.split()[-2:] == [numpy_min, numba_min], versions  # exactly the minimums
    report = probe(venv_python, tmp_path)
    check_probe(report, tmp_path / "venv", "tbb" if tbb_expected() else "workqueue")
    # pip built the compiled core (a C compiler is here: Cython is a build requirement)
    core = run([venv_python, "-c", "import ndengine; "
                "print(ndengine.engine.compiled.STATE['core'])"],
               timeout=120, cwd=tmp_path, what="which core").stdout.strip()
    assert core == ("compiled" if shutil.which("cc") else "pure Python"), core
    # The suite's files, run from outside the checkout against the installed copy.
    tests = tmp_path / "tests"
    shutil.copytree(ROOT / "tests", tests, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")  # pytest settings
    result = run([venv_python, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                  *FAST_SUBSET], timeout=600, cwd=tmp_path, what="fast subset",
                 env={"HYPOTHESIS_PROFILE": "ci"})
    assert " passed" in result.stdout and "failed" not in result.stdout, result.stdout


def test_installed_metadata_has_one_version_and_the_license():
    """The version is written once (ndengine.__version__, read by setuptools); the license
    is an SPDX expression and its text ships with the distribution."""
    from importlib import metadata

    import ndengine

    assert 'version = "' not in PYPROJECT, "the version is read from ndengine.__version__"
    meta = metadata.metadata("ndengine")
    assert meta["Version"] == ndengine.__version__
    assert meta["License-Expression"] == "Apache-2.0"
    assert (ROOT / "LICENSE").read_text().lstrip().startswith("Apache License")
    licenses = [f for f in metadata.files("ndengine") or () if f.name == "LICENSE"]
    assert licenses, "the LICENSE file is not in the installed distribution"


# Repository plumbing, not part of the sdist (MANIFEST.in says why the rest is).
SDIST_LEFT_OUT = {".gitignore", ".ci/run"}
# What setuptools writes into every sdist.
SDIST_GENERATED = re.compile(r"PKG-INFO|setup\.cfg|ndengine\.egg-info/.+")
# What builds and runs leave in a checkout; planted in the copy, none may reach the sdist.
# (The package's own leftovers, the compiled core's included, never reach it: setuptools takes
# the package's .py files and declared package data; the grafted folders need MANIFEST.in.)
BUILD_LEFTOVERS = ["ndengine/__pycache__/pipeline.cpython-311.pyc",
                   "ndengine/engine/executor.c", "ndengine/engine/_compiled.json",
                   "ndengine/engine/executor.cpython-311-x86_64-linux-gnu.so",
                   "tests/__pycache__/conftest.cpython-311-pytest-8.4.1.pyc",
                   "tests/ops/__pycache__/test_kernels.kernel-42.py311.nbi",
                   "tests/ops/__pycache__/test_kernels.kernel-42.py311.1.nbc",
                   "bench/__pycache__/common.cpython-311.pyc",
                   "bench/scripts/kernel.cpython-311-x86_64-linux-gnu.so",
                   "bench/scripts/kernel.cp311-win_amd64.pyd"]


def _checkout_files() -> list:
    """The files of this checkout: tracked, or untracked and not ignored (the next commit)."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                                 "--exclude-standard"], cwd=ROOT, capture_output=True,
                                timeout=60, check=True).stdout
    except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired):
        pytest.skip("not a git checkout")
    return sorted(name for name in listed.decode().split("\0") if name and (ROOT / name).is_file())


def test_the_sdist_holds_the_package_and_everything_its_tests_read(tmp_path):
    """The sdist runs its own tests (as NumPy's and CuPy's do): it holds every file of the
    checkout but the repository's plumbing, and nothing a build or a run left behind. Built from
    a copy without the compiled core (no Cython run), so it takes about a second."""
    import ndengine

    files = _checkout_files()
    src = tmp_path / "src"
    for name in files + BUILD_LEFTOVERS:
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        if name in files:
            shutil.copy2(ROOT / name, src / name)
        else:
            (src / name).write_bytes(b"left by a build")
    run([sys.executable, "setup.py", "-q", "sdist", "--dist-dir", tmp_path / "dist"],
        timeout=120, cwd=src, what="setup.py sdist", env={"NDENGINE_BUILD_CORE": "0"})
    (archive,) = (tmp_path / "dist").glob("*.tar.gz")
    top = f"ndengine-{ndengine.__version__}/"
    with tarfile.open(archive) as tar:
        names = [member.name for member in tar.getmembers() if member.isfile()]
        changelog = (tar.extractfile(top + "CHANGELOG.md").read().decode()
                     if top + "CHANGELOG.md" in names else "")
    assert all(name.startswith(top) for name in names), names[:5]
    shipped = {name[len(top):] for name in names}
    assert {"LICENSE", "CHANGELOG.md", "pyproject.toml", "setup.py", "tests/conftest.py",
            "tests/support/venv_helpers.py"} <= shipped
    missing = set(files) - SDIST_LEFT_OUT - shipped
    assert not missing, f"files the sdist lacks (MANIFEST.in): {sorted(missing)}"
    unexpected = {name for name in shipped - set(files) if not SDIST_GENERATED.fullmatch(name)}
    assert not unexpected, f"build outputs or strays in the sdist: {sorted(unexpected)}"
    # the changelog has a section for the version being packaged (Keep a Changelog's heading)
    assert f"## [{ndengine.__version__}]" in changelog
