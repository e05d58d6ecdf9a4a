"""``ndengine.show_runtime()`` (ndengine/runtime_info.py) reports the process's real state."""
import os
import subprocess
import sys

import numba
import numpy as np

import ndengine as nd
from ndengine.ops.runtime import deferred_loops, disk_cache

SECTIONS = {"versions", "platform", "engine", "core", "numba", "caches", "gpus"}


def test_the_report_is_the_state_of_the_process():
    info = nd.show_runtime(as_dict=True)
    assert set(info) == SECTIONS
    assert info["versions"]["ndengine"] == nd.__version__
    assert info["versions"]["numpy"] == np.__version__
    assert info["versions"]["numba"] == numba.__version__
    engine = nd.engine.get()
    assert info["engine"]["kind"] == engine.kind
    assert info["engine"]["cpu_workers"] == engine.num_cpu_workers
    assert info["engine"]["bulk_size"] == engine.bulk_size
    import ndengine.core.pipeline as pipeline  # one of the compiled core's modules
    compiled = not pipeline.__file__.endswith(".py")
    assert info["core"]["runs"] == ("compiled" if compiled else "pure Python")
    assert info["core"]["modules"] == (len(nd.engine.compiled.MODULES) if compiled else 0)
    assert info["numba"]["jit_after"] == deferred_loops.jit_after()
    assert info["numba"]["num_threads"] == numba.get_num_threads()
    assert info["caches"]["ndengine"]["path"] == disk_cache.cache_dir()
    assert info["caches"]["numba_disk_cache"] == disk_cache.NUMBA_CACHE


def test_the_report_follows_changes():
    previous = nd.engine.set_bulk_size(7)
    try:
        assert nd.show_runtime(as_dict=True)["engine"]["bulk_size"] == 7
    finally:
        nd.engine.set_bulk_size(previous)
    previous = deferred_loops.set_jit_after(5)
    try:
        assert nd.show_runtime(as_dict=True)["numba"]["jit_after"] == 5
    finally:
        deferred_loops.set_jit_after(previous)


def test_it_prints_every_section(capsys):
    assert nd.show_runtime() is None
    printed = capsys.readouterr().out
    for section in SECTIONS:
        assert f"{section}:" in printed
    assert f"kind: {nd.engine.get().kind}" in printed


def test_environment_settings_show(tmp_path):
    # a fresh process: the engine kind, the fake GPUs and an unwritable cache directory
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    code = ("import ndengine as nd; info = nd.show_runtime(as_dict=True); "
            "print(info['engine']['kind'], info['gpus']['kind'], info['gpus']['count'], "
            "info['caches']['ndengine']['writable'])")
    env = dict(os.environ, NDENGINE_ENGINE_TYPE="NaiveEngine", NDENGINE_FAKE_GPUS="2",
               NDENGINE_CACHE_DIR=str(locked / "cache"))
    try:
        result = subprocess.run([sys.executable, "-W", "ignore", "-c", code], env=env,
                                capture_output=True, text=True, timeout=120)
    finally:
        locked.chmod(0o700)
    assert result.returncode == 0, result.stderr
    writable = "True" if os.geteuid() == 0 else "False"  # root writes anywhere
    assert result.stdout.split() == ["NaiveEngine", "fake", "2", writable]
