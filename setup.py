"""Builds ndengine's compiled core (ndengine/engine/compiled.py lists its modules) with Cython.

Everything else of the package is in pyproject.toml. The build is optional and all or
nothing: without Cython or a C compiler, or when any module fails to compile, the install
still succeeds and the package runs its pure-Python core (the same source), saying so at
import. ``NDENGINE_BUILD_CORE=0`` skips the build on purpose.
"""
import json
import os
import runpy
import sys

from setuptools import setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
CORE = runpy.run_path(os.path.join(HERE, "ndengine", "engine", "compiled.py"))


def _core_extensions():
    """The compiled core's extensions, or [] (and why) when they cannot be made here."""
    if os.environ.get("NDENGINE_BUILD_CORE", "1").strip().lower() in ("0", "false", "no", "off"):
        print("ndengine: NDENGINE_BUILD_CORE=0: the pure-Python core only", file=sys.stderr)
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("ndengine: Cython is not installed: the pure-Python core only", file=sys.stderr)
        return []
    sources = [os.path.relpath(CORE["module_path"](name, HERE), HERE) for name in CORE["MODULES"]]
    return cythonize(sources, language_level=3, build_dir=os.path.join("build", "cython"),
                     compiler_directives={
                         # the pure-Python semantics the source is written for
                         "binding": True, "embedsignature": True,
                         "always_allow_keywords": True,
                         # types come from the .pxd files only: an annotation stays a comment
                         "annotation_typing": False,
                     })


class OptionalCoreBuild(build_ext):
    """build_ext that records what it built (engine/compiled.py: DIGESTS_FILE) when it built every
    module, and falls back to the pure-Python core, with a message, when any fails."""

    def run(self):
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001 - no compiler is not an install failure
            self._give_up(exc)
            return
        self._record_digests()

    def _package_dir(self):
        return os.path.dirname(self.get_ext_fullpath("ndengine.engine.compiled"))

    def _record_digests(self):
        if not self.extensions:
            return
        digests = {name: CORE["source_digest"](CORE["module_path"](name, HERE))
                   for name in CORE["MODULES"]}
        target = os.path.join(self._package_dir(), CORE["DIGESTS_FILE"])
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w") as out:
            json.dump(digests, out, indent=1, sort_keys=True)

    def _give_up(self, exc):
        target = os.path.join(self._package_dir(), CORE["DIGESTS_FILE"])
        if os.path.exists(target):
            os.remove(target)  # whatever was built of it is not run (engine/compiled.py: choose)
        print(f"ndengine: the compiled core was not built ({type(exc).__name__}: {exc}); "
              "the pure-Python core runs instead", file=sys.stderr)


setup(ext_modules=_core_extensions(), cmdclass={"build_ext": OptionalCoreBuild})
