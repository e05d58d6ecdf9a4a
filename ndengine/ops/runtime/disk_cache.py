"""Where ndengine keeps what it compiles, so that a second process compiles nothing, and what
happens when no directory can be written.

The cache directory (``cache_dir``) is ``NDENGINE_CACHE_DIR`` if set, else the platform's user
cache directory for ndengine (``platformdirs.user_cache_dir``: on Linux
``$XDG_CACHE_HOME/ndengine``, by default ``~/.cache/ndengine``).  It holds:

* ``fusion/``: the generated fused kernels' modules (``fusion/codegen``), with Numba's cache of
  their machine code beside them, and the evaluator each kernel's program was measured to run
  fastest with on this machine (``fusion/evaluator_records``);
* ``numba/``: Numba's cache of the package's own ``cache=True`` functions (the element-wise
  loops, the fused row reductions), used when the package's ``__pycache__`` folders cannot be
  written (a read-only install).

Numba picks a cached function's directory by asking its locator classes in turn (the user's
``NUMBA_CACHE_DIR``, the source's ``__pycache__``, ``~/.cache/numba``, ...) and raises at
decoration when none can write.  ``PackageCacheLocator`` is placed right after the
``__pycache__`` one and answers for this package's source files only, with ``numba/`` above.
It is not ``numba.config.CACHE_DIR``: that would move every library's cached functions in the
process, ahead of their own ``__pycache__``, and Numba sets it back from the environment at its
next compile once any ``NUMBA_*`` variable changed.  A ``NUMBA_CACHE_DIR`` the user set keeps
coming first, as Numba orders it; a ``NUMBA_CACHE_LOCATOR_CLASSES`` of their own replaces the
list, ours included.

When Numba can write nowhere for this package (``NUMBA_CACHE`` False, decided once at import
by asking Numba's locators for one of the package's functions), the package's functions are
compiled without a disk cache: their decorators pass ``cache=NUMBA_CACHE``.  Fused kernels'
modules then go to a temporary directory of the process.  Either way one
``CacheUnavailableWarning`` per process says so (``warn_unavailable``).

State: ``NUMBA_CACHE``; ``_warned`` (whether the warning was given).
"""
from __future__ import annotations

import os
import threading
import warnings

import platformdirs
from numba.core import caching as _numba_caching

from ...engine.config import env_text

__all__ = ["cache_dir", "CacheUnavailableWarning", "PackageCacheLocator", "NUMBA_CACHE",
           "warn_unavailable"]

# the package's folder: PackageCacheLocator answers for the files under it
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class CacheUnavailableWarning(RuntimeWarning):
    """No writable cache directory: what ndengine compiles is compiled again in every process."""


def cache_dir() -> str:
    """The directory ndengine caches compiled code in (see the module docstring)."""
    return (env_text("NDENGINE_CACHE_DIR")
            or platformdirs.user_cache_dir("ndengine", appauthor=False))


_warn_lock = threading.Lock()
_warned = False


def warn_unavailable(what: str) -> None:
    """Warn, once per process, that ``what`` cannot be kept on disk."""
    global _warned
    with _warn_lock:
        if _warned:
            return
        _warned = True
    warnings.warn(f"ndengine: {what}, so compiled code is not kept on disk and each process "
                  "compiles it again; set NDENGINE_CACHE_DIR to a writable directory to keep it",
                  CacheUnavailableWarning, stacklevel=3)


class PackageCacheLocator(_numba_caching._SourceFileBackedLocatorMixin,
                          _numba_caching._CacheLocator):
    """Numba's cache of this package's functions under ``cache_dir()/numba``: the same layout
    as Numba's ``NUMBA_CACHE_DIR`` (a folder per source folder, named by its path's hash)."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = os.path.join(cache_dir(), "numba",
                                        self.get_suitable_cache_subpath(py_file))

    def get_cache_path(self):
        return self._cache_path

    @classmethod
    def from_function(cls, py_func, py_file):
        path = os.path.abspath(py_file)
        if os.path.commonpath((path, _PACKAGE_DIR)) != _PACKAGE_DIR:
            return None  # another library's function: Numba's own locators decide
        return super().from_function(py_func, py_file)


def _register_locator() -> None:
    """Put ``PackageCacheLocator`` right after Numba's ``__pycache__`` locator."""
    classes = _numba_caching.CacheImpl._locator_classes
    if PackageCacheLocator in classes:
        return
    in_tree = _numba_caching.InTreeCacheLocator
    classes.insert(classes.index(in_tree) + 1 if in_tree in classes else len(classes),
                   PackageCacheLocator)


def _numba_can_cache() -> bool:
    """Whether one of Numba's locators (ours among them) finds a writable directory for a
    function of this package, as it will for the package's ``cache=True`` functions."""
    try:
        _numba_caching.FunctionCache(_numba_can_cache)
    except RuntimeError:  # Numba's "cannot cache function ...: no locator available"
        return False
    return True


_register_locator()
NUMBA_CACHE = _numba_can_cache()
if not NUMBA_CACHE:
    warn_unavailable(f"neither the package's __pycache__ folders nor {cache_dir()} "
                     "can be written")
