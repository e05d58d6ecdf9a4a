"""``ndengine.show_runtime()``: what a bug report needs, read from the running process (like
``numpy.show_runtime()`` and ``torch.utils.collect_env``).

It reads every layer (the engine, the op runtime's caches and compile counters, core's fusion
switch), so it sits beside the top-level package's ``__init__``, which imports it; nothing
inside the subpackages imports it. Every value is read at the call, never remembered: the
report is the state of the process now. Reading creates the process-wide engine if no op has
yet (creating it starts no thread), so the engine reported is the one ops will use.
"""
import importlib.metadata
import os
import platform
import sys

import numba
import numpy as np

from . import engine
from .engine import compiled as compiled_core
from .core import lazy
from .engine import devices
from .ops.fusion import codegen
from .ops.runtime import compile_log, deferred_loops, disk_cache

__all__ = ["show_runtime", "runtime_info"]


def _version(distribution):
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _cupy_version():
    """CuPy's version if it is installed (its wheels are named cupy-cudaXXx), without
    importing it."""
    if "cupy" in sys.modules:
        return sys.modules["cupy"].__version__
    for distribution in importlib.metadata.packages_distributions().get("cupy", ()):
        return _version(distribution)
    return None


def _directory(path):
    """{path, exists, writable}: writable where this process could create files in it (or
    create it: its nearest existing parent is writable)."""
    probe = path
    while not os.path.isdir(probe) and os.path.dirname(probe) != probe:
        probe = os.path.dirname(probe)
    return {"path": path, "exists": os.path.isdir(path),
            "writable": os.access(probe, os.W_OK | os.X_OK)}


def _threading_layer():
    try:
        return numba.threading_layer()  # the layer chosen by the first parallel run
    except ValueError:
        return f"not chosen yet (requested: {numba.config.THREADING_LAYER})"


def _gpus():
    fake = devices.fake_gpu_count()
    if fake:
        return {"kind": "fake", "count": fake}
    count = devices.device_count()
    return {"kind": "real" if count else "none", "count": count}


def runtime_info() -> dict:
    """The report of `show_runtime`, as a dict of sections."""
    current = engine.get()
    return {
        "versions": {"ndengine": _version("ndengine"), "python": platform.python_version(),
                     "numpy": np.__version__, "numba": numba.__version__,
                     "llvmlite": _version("llvmlite"), "cupy": _cupy_version()},
        "platform": {"system": platform.platform(), "machine": platform.machine(),
                     "cpu_count": os.cpu_count()},
        "engine": {"kind": current.kind, "cpu_workers": current.num_cpu_workers,
                   "gpu_workers": current.num_gpu_workers,
                   "copy_workers": current.num_copy_workers, "bulk_size": current.bulk_size,
                   "fusion": lazy.ENABLED},
        "core": {"runs": compiled_core.STATE["core"], "why": compiled_core.STATE["reason"],
                 "modules": len(compiled_core.STATE["modules"])},
        "numba": {"threading_layer": _threading_layer(), "num_threads": numba.get_num_threads(),
                  "jit_after": deferred_loops.jit_after(),
                  "compile": compile_log.totals()},
        "caches": {"ndengine": _directory(disk_cache.cache_dir()),
                   "fusion": _directory(codegen.cache_dir()),
                   "numba_disk_cache": bool(disk_cache.NUMBA_CACHE)},
        "gpus": _gpus(),
    }


def _lines(info, indent=""):
    for key, value in info.items():
        if isinstance(value, dict):
            yield f"{indent}{key}:"
            yield from _lines(value, indent + "  ")
        else:
            yield f"{indent}{key}: {value}"


def show_runtime(as_dict=False):
    """Print the versions, engine, threads, caches and devices of this process (what a bug
    report needs); with ``as_dict=True`` return them as a dict instead of printing."""
    info = runtime_info()
    if as_dict:
        return info
    print("\n".join(_lines(info)))
    return None
