"""The compiled core (ndengine/engine/compiled.py, setup.py): which core runs, and why.

The choice is tested on a planted package tree (its .py files, fake extension files, the
digests a build records), so every case (built, never built, half built, stale, asked for pure
Python) is checked without rebuilding anything; the running process is checked against what is
installed; and the pure-Python core runs a subset of the suite in a subprocess, so both cores
are tested in every CI run.
"""
import importlib.machinery
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import warnings

import pytest

import ndengine as nd
from ndengine.engine import compiled as compiled_core

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]


def _fresh_module():
    """compiled_core loaded again on its own (it imports only the standard library): a choice
    not yet made, whose globals a test may change."""
    spec = importlib.util.spec_from_file_location("compiled_core_under_test",
                                                  compiled_core.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def planted(tmp_path, monkeypatch):
    """A package tree with every module of MODULES as a .py, a fake extension beside it, and
    the digests of a build that compiled them all; returns (module, tree root)."""
    module = _fresh_module()
    here = tmp_path / "ndengine" / "engine"  # where compiled.py and the digests live
    digests = {}
    for name in module.MODULES:
        source = tmp_path.joinpath(*name.split(".")).with_suffix(".py")
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text(f"WHO = {name!r}\n")
        source.with_suffix(SUFFIX).write_bytes(b"")
        digests[name] = module.source_digest(str(source))
    here.mkdir(parents=True, exist_ok=True)
    (here / module.DIGESTS_FILE).write_text(json.dumps(digests))
    monkeypatch.setattr(module, "_HERE", str(here))
    return module, tmp_path


def _choose(module, pure_python=False):
    """module.choose(), its warnings recorded and its finder taken out of sys.meta_path."""
    before = list(sys.meta_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        state = dict(module.choose(pure_python))
        again = dict(module.choose(pure_python))  # decided once: no second warning, the same state
    added = [finder for finder in sys.meta_path if finder not in before]
    for finder in added:
        sys.meta_path.remove(finder)
    assert again == state
    return state, [w for w in caught if issubclass(w.category, RuntimeWarning)], added


def test_a_complete_build_of_the_present_sources_runs_compiled(planted):
    module, _ = planted
    state, warned, finders = _choose(module)
    assert state["core"] == "compiled" and state["modules"] == module.MODULES
    assert warned == [] and finders == []


@pytest.mark.parametrize("damage", ["no digests", "one extension missing"])
def test_a_missing_or_partial_build_runs_pure_python_with_one_warning(planted, damage):
    module, root = planted
    if damage == "no digests":
        os.remove(os.path.join(module._HERE, module.DIGESTS_FILE))
    else:
        victim = module.MODULES[-1]
        os.remove(root.joinpath(*victim.split(".")).with_suffix(SUFFIX))
    state, warned, finders = _choose(module)
    assert state["core"] == "pure Python" and state["modules"] == ()
    assert state["reason"].startswith("not built")
    assert len(warned) == 1 and "pure-Python core" in str(warned[0].message)
    # every module of the core comes from its .py, whatever else was built (never a mix)
    for name in module.MODULES:
        spec = finders[0].find_spec(name)
        assert spec.origin == str(root.joinpath(*name.split(".")).with_suffix(".py"))
    assert finders[0].find_spec("ndengine.ndarray.operators") is None


def test_a_source_edited_since_the_build_is_stale_and_named(planted):
    module, root = planted
    edited = module.MODULES[1]
    root.joinpath(*edited.split(".")).with_suffix(".py").write_text("WHO = 'edited'\n")
    state, warned, _ = _choose(module)
    assert state["core"] == "pure Python"
    assert state["reason"].startswith("stale") and edited.replace(".", os.sep) in state["reason"]
    assert len(warned) == 1 and "stale" in str(warned[0].message)


def test_asking_for_pure_python_is_obeyed_without_a_warning(planted):
    module, _ = planted
    state, warned, finders = _choose(module, pure_python=True)
    assert state["core"] == "pure Python" and "NDENGINE_PURE_PYTHON" in state["reason"]
    assert warned == [] and len(finders) == 1


def test_this_process_runs_what_is_installed():
    """Every module of the core is an extension when the state says compiled, a .py when not;
    and where a C compiler and Cython are at hand the install built it (a build that failed
    without a word would otherwise go unnoticed)."""
    state = compiled_core.STATE
    compiled = state["core"] == "compiled"
    for name in compiled_core.MODULES:
        assert sys.modules[name].__file__.endswith(".py") is not compiled, name
    if os.environ.get("NDENGINE_PURE_PYTHON") or os.environ.get("NDENGINE_BUILD_CORE") == "0":
        return
    if shutil.which("cc") is None or importlib.util.find_spec("Cython") is None:
        pytest.skip("no C compiler or no Cython here: the pure-Python core is expected")
    assert compiled, f"the compiled core is not running: {state['reason']}"


def test_the_core_knows_whether_it_is_compiled():
    """What the core's own code measures of itself (chunk.COMPILED, ARGUMENT_REFS) agrees
    with what runs: the origin walk and the windows' reference counts depend on it."""
    from ndengine.core import chunk
    assert chunk.COMPILED is (compiled_core.STATE["core"] == "compiled")
    probe = object()
    interpreted = sys.getrefcount(probe) - 1  # this test's own code is interpreted
    assert chunk.ARGUMENT_REFS == (0 if chunk.COMPILED else interpreted)


# the core's own tests (all three engines) and the errors' origins (frame walks differ compiled)
PURE_SUBSET = ["tests/core", "tests/engine/test_engine_errors.py",
               "tests/engine/test_engine_failures.py"]


def test_the_pure_python_core_passes_a_subset_of_the_suite():
    """The same source uncompiled: the core's tests (all three engines) in a subprocess."""
    if compiled_core.STATE["core"] != "compiled":
        pytest.skip("this process runs the pure-Python core already: the whole suite is its test")
    paths = [path for path in PURE_SUBSET if os.path.exists(os.path.join(ROOT, path))]
    env = dict(os.environ, NDENGINE_PURE_PYTHON="1")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *paths,
         "--ignore=tests/core/test_gpu_suite.py"],  # the whole suite again, on fake GPUs: ~30 s
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert " passed" in result.stdout


def test_the_running_core_is_reported():
    info = nd.show_runtime(as_dict=True)["core"]
    assert info["runs"] == compiled_core.STATE["core"]
    assert info["why"] == compiled_core.STATE["reason"]


def test_an_install_without_a_c_compiler_succeeds_and_runs_pure_python(tmp_path):
    """setup.py with no working compiler (CC=false): the build says why and exits 0, records
    no digests, and the package imports, warns once and runs its pure-Python core."""
    from venv_helpers import clean_env, source_copy
    src = source_copy(tmp_path / "src")
    cython_c = os.path.join(ROOT, "build", "cython")
    if os.path.isdir(cython_c):  # Cython's output of this checkout: only the C compile fails
        shutil.copytree(cython_c, src / "build" / "cython")
    env = clean_env(CC="false", LDSHARED="false", CXX="false")
    build = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
                           cwd=src, env=env, capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    assert "the compiled core was not built" in build.stderr, build.stderr[-3000:]
    assert not (src / "ndengine" / "engine" / compiled_core.DIGESTS_FILE).exists()
    probe = ("import warnings; warnings.simplefilter('always')\n"
             "with warnings.catch_warnings(record=True) as seen:\n"
             "    import ndengine as nd\n"
             "    x = nd.arange(4.0) + 1\n"
             "print(nd.engine.compiled.STATE['core'], x.asnumpy().tolist(),\n"
             "      sum('pure-Python core' in str(w.message) for w in seen))\n")
    run = subprocess.run([sys.executable, "-c", probe], cwd=src, capture_output=True,
                         text=True, timeout=300, env=clean_env())
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.split() == ["pure", "Python", "[1.0,", "2.0,", "3.0,", "4.0]", "1"], \
        run.stdout
