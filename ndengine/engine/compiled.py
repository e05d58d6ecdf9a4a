"""The compiled core: which modules Cython compiles, and whether this process runs them.

The per-op path (``MODULES``) is plain Python typed by the ``.pxd`` file beside each module
(Cython's pure-Python mode): one source, which ``pip install`` compiles when a C compiler is
there (setup.py) and which runs as it is where none is. The engine's ``__init__`` (the lowest
layer, imported first) calls `choose` before any of these modules is imported, and the
pure-Python core runs when

- ``NDENGINE_PURE_PYTHON`` asks for it (no warning: the user chose it; the engine reads it
  through config.py and passes it to `choose`);
- the core was never built, or only part of it (a build without a compiler): a warning, once;
- a module changed since the build (an editable install whose ``.py`` was edited: its
  extension is stale and would silently run the old code): a warning naming the module.

Pure Python means every module of ``MODULES``, never a mix: the compiled modules share typed
extension types (declared in their ``.pxd``), which the pure ones do not define. The choice is
made by a finder put first in ``sys.meta_path`` that loads those modules from their ``.py``.
``STATE`` says what runs (``ndengine.show_runtime()`` prints it).

Imports nothing but the standard library: setup.py reads ``MODULES`` and `source_digest` from
this file before the package can be imported. It names modules of every layer, as strings
only: it imports none of them (the finder loads them when their importers ask).
"""
import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
import warnings

__all__ = ["MODULES", "DIGESTS_FILE", "STATE", "choose", "source_digest", "module_path"]

# The per-op path, in the package's import order (a module's .pxd may cimport an earlier one)
MODULES = (
    "ndengine.engine.errors",
    "ndengine.ops.plans",
    "ndengine.ops.elementwise.dtype_rules",
    "ndengine.ops.elementwise.runs",
    "ndengine.core.fp_errors",
    "ndengine.core.at_once",
    "ndengine.core.storage",
    "ndengine.core.chunk",
    "ndengine.core.array",
    "ndengine.core.views",
    "ndengine.core.runs",
    "ndengine.core.segment",
    "ndengine.core.lazy",
    "ndengine.core.pipeline",
    "ndengine.core.keys",
    "ndengine.core.array_methods",
    "ndengine.ndarray.operator_methods",
)
DIGESTS_FILE = "_compiled.json"  # beside this file: {module: digest of the .py it was built from}
_HERE = os.path.dirname(os.path.abspath(__file__))  # ndengine/engine

STATE = {"core": "pure Python", "reason": "not chosen yet", "modules": ()}


def module_path(name, root=None):
    """The ``.py`` file of module ``name`` (dotted), under ``root`` (the directory holding
    the ndengine package, by default this one's)."""
    root = os.path.dirname(os.path.dirname(_HERE)) if root is None else root
    return os.path.join(root, *name.split(".")) + ".py"


def source_digest(path):
    """What a build records of a module's source, and what `choose` compares with."""
    with open(path, "rb") as source:
        return hashlib.sha256(source.read()).hexdigest()


def _extension_of(name):
    """The built extension file of module ``name`` beside its .py, or None."""
    base = module_path(name)[:-3]
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        if os.path.exists(base + suffix):
            return base + suffix
    return None


def _why_not_compiled(pure_python):
    """None when every module has an extension built from its present source; else why not."""
    if pure_python:
        return "NDENGINE_PURE_PYTHON is set"
    try:
        with open(os.path.join(_HERE, DIGESTS_FILE)) as recorded:
            digests = json.load(recorded)
    except (OSError, ValueError):
        digests = None
    missing = [name for name in MODULES if _extension_of(name) is None]
    if digests is None or missing:
        return ("not built (no C compiler or no Cython when it was installed; with both, "
                "`pip install -e .` again builds it)")
    for name in MODULES:
        if digests.get(name) != source_digest(module_path(name)):
            return (f"stale: {module_path(name)} changed since the core was built "
                    "(`pip install -e .` again rebuilds it)")
    return None


class _SourceFinder:
    """Loads the modules of ``MODULES`` from their .py files, whatever was built beside."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name not in MODULES:
            return None
        return importlib.util.spec_from_file_location(name, module_path(name))


def choose(pure_python=False):
    """Decide, once and before any module of ``MODULES`` is imported, which core runs;
    ``pure_python``: the user asked for the pure-Python core (NDENGINE_PURE_PYTHON)."""
    if STATE["reason"] != "not chosen yet":
        return STATE
    reason = _why_not_compiled(pure_python)
    if reason is None:
        STATE.update(core="compiled", reason="built by Cython", modules=MODULES)
        return STATE
    sys.meta_path.insert(0, _SourceFinder)
    STATE.update(core="pure Python", reason=reason, modules=())
    if not reason.startswith("NDENGINE_PURE_PYTHON"):
        warnings.warn(f"ndengine runs its pure-Python core, several times slower per op on "
                      f"small arrays: the compiled core is {reason}. Set "
                      "NDENGINE_PURE_PYTHON=1 to choose the pure-Python core without this "
                      "warning.", RuntimeWarning, stacklevel=3)
    return STATE
