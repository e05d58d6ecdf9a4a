"""Where compiled code is kept (``runtime/disk_cache``), and a read-only install.

The read-only install is a copy of the package in a folder nobody may write, imported through
PYTHONPATH with a read-only HOME, in a subprocess. Root writes through permissions, so as root
the subprocess runs in a user namespace of its own (``unshare --user``), where it does not;
where neither makes the folder read-only, those tests skip."""
import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap

import pytest

from ndengine.ops.elementwise import scalars
from ndengine.ops.fusion import codegen
from ndengine.ops.runtime import disk_cache
from venv_helpers import clean_env, source_copy

TIMEOUT = 300

# Imports ndengine, then runs one of the package's cached loops and one generated fused
# kernel; prints what Numba's caches did and which warnings were given.
SUBPROCESS = textwrap.dedent("""
    import json, warnings
    import numpy as np
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import ndengine
        from ndengine.ops.elementwise import loops, scalars
        from ndengine.ops.fusion import kernel as fusion
        from ndengine.ops.runtime import disk_cache
        x = np.linspace(-3.0, 3.0, 101)
        out = np.empty_like(x)
        add = loops.binary_kernels(scalars.add).serial
        add(x, x, out)
        assert (out == x + x).all()
        b = fusion.ProgramBuilder()
        node = b.apply("maximum", b.apply("multiply", b.array(x), 0.5), np.float64(1))
        (fused,) = fusion.run(b.build(outputs=[node]), [x], evaluator="numba")
        assert (fused == np.maximum(x * 0.5, 1.0)).all()
    stats = fusion.stats()
    print(json.dumps({
        "module": ndengine.__file__, "numba_cache": disk_cache.NUMBA_CACHE,
        "loop": [sum(add.stats.cache_hits.values()), sum(add.stats.cache_misses.values())],
        "fused": [stats["compiles"], stats["disk_loads"]],
        "warnings": [w.category.__name__ for w in caught
                     if w.category is disk_cache.CacheUnavailableWarning]}))
""")


def _make_read_only(path):
    for folder, dirs, files in os.walk(path):
        for name in files:
            os.chmod(os.path.join(folder, name), 0o444)
        os.chmod(folder, 0o555)


def _restore_writable(path):
    for folder, _, _ in os.walk(path):
        os.chmod(folder, os.stat(folder).st_mode | stat.S_IWUSR)


@pytest.fixture
def install(tmp_path):
    """A read-only copy of the package, a read-only HOME, and how to run a process that
    cannot write them (a prefix of the command line)."""
    site = source_copy(tmp_path / "site")
    home = tmp_path / "home"
    home.mkdir()
    probe = home / "probe"
    _make_read_only(site)
    _make_read_only(home)
    prefix = None
    candidates = [[]] + ([["unshare", "--user"]] if shutil.which("unshare") else [])
    for candidate in candidates:
        try:
            written = subprocess.run(candidate + [sys.executable, "-c",
                                                  f"open({str(probe)!r}, 'w')"],
                                     capture_output=True, timeout=60).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            continue
        if os.path.exists(probe):
            _restore_writable(home)
            os.unlink(probe)
            _make_read_only(home)
        if not written:
            prefix = candidate
            break
    yield prefix, site, home
    _restore_writable(tmp_path)


def _run(install, **env):
    prefix, site, home = install
    if prefix is None:
        pytest.skip("no way to run a process that cannot write a read-only folder here")
    variables = clean_env(PYTHONPATH=str(site), HOME=str(home), **env)
    for name in ("NDENGINE_CACHE_DIR", "XDG_CACHE_HOME"):
        if name not in env:
            variables.pop(name, None)
    result = subprocess.run(prefix + [sys.executable, "-c", SUBPROCESS], cwd=site, env=variables,
                            capture_output=True, text=True, timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr[-6000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["module"] == str(site / "ndengine" / "__init__.py")  # the read-only copy
    return report


def _index_files(path):
    return sorted(p.name for p in path.rglob("*.nbi"))


def test_a_read_only_install_caches_under_xdg_cache_home(install, tmp_path):
    xdg = tmp_path / "xdg"
    xdg.mkdir()
    first = _run(install, XDG_CACHE_HOME=str(xdg))
    second = _run(install, XDG_CACHE_HOME=str(xdg))
    assert first["numba_cache"] and not first["warnings"] and not second["warnings"]
    assert first["loop"] == [0, 1] and first["fused"] == [1, 0]    # compiled and saved
    assert second["loop"] == [1, 0] and second["fused"] == [0, 1]  # loaded: nothing compiled
    assert any(name.startswith("loops.") for name in _index_files(xdg / "ndengine" / "numba"))
    assert list((xdg / "ndengine" / "fusion").glob("ndengine_fused_*.py"))


def test_a_numba_cache_dir_the_user_set_comes_first(install, tmp_path):
    xdg, user = tmp_path / "xdg", tmp_path / "user"
    xdg.mkdir()
    user.mkdir()
    report = _run(install, XDG_CACHE_HOME=str(xdg), NUMBA_CACHE_DIR=str(user))
    assert report["loop"] == [0, 1] and not report["warnings"]
    assert any(name.startswith("loops.") for name in _index_files(user))
    assert not _index_files(xdg / "ndengine" / "numba")


def test_with_nothing_writable_it_runs_uncached_with_one_warning(install, tmp_path):
    xdg, temporary = tmp_path / "xdg", tmp_path / "temporary"
    xdg.mkdir()
    temporary.mkdir()
    _make_read_only(xdg)
    report = _run(install, XDG_CACHE_HOME=str(xdg), TMPDIR=str(temporary))
    assert report["numba_cache"] is False
    assert report["warnings"] == ["CacheUnavailableWarning"]  # once, for loops and fusion
    assert report["loop"][0] == 0 and report["fused"] == [1, 0]
    assert not list(xdg.iterdir())
    assert not list(temporary.iterdir())  # the fused kernels' temporary folder, removed at exit


def test_the_cache_directory_follows_ndengine_cache_dir_then_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("NDENGINE_CACHE_DIR", str(tmp_path / "mine"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert disk_cache.cache_dir() == str(tmp_path / "mine")
    assert codegen.cache_dir() == str(tmp_path / "mine" / "fusion")
    monkeypatch.delenv("NDENGINE_CACHE_DIR")
    if sys.platform.startswith("linux"):  # XDG_CACHE_HOME is a Linux convention
        assert disk_cache.cache_dir() == str(tmp_path / "xdg" / "ndengine")
    assert os.path.basename(disk_cache.cache_dir()) == "ndengine"


def test_the_package_locator_answers_for_the_package_only(monkeypatch, tmp_path):
    monkeypatch.setenv("NDENGINE_CACHE_DIR", str(tmp_path))
    function = scalars.add
    locator = disk_cache.PackageCacheLocator.from_function(function, function.__code__.co_filename)
    assert locator.get_cache_path().startswith(str(tmp_path / "numba") + os.sep)

    def outside():
        pass
    assert disk_cache.PackageCacheLocator.from_function(outside, __file__) is None
