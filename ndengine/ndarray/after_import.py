"""Registrations with third-party libraries, made once the library is imported, never importing
it.

Libraries that take arrays find an array type's support by tables of their own (dask.array's
dispatch tables, einops' backends). ndengine fills them in, but importing those libraries
costs time (dask.array a third of a second) and ndengine must not pay it for users who never
import them. ``when_imported(name, register)`` runs ``register()`` at once if module ``name``
is imported, else right after its first import, through a one-shot import hook: either import
order works, in the user's process and in every worker process that unpickles an NDArray.

A failed registration never breaks the library's import nor ndengine's: it warns, naming the
function to call to see the error.
"""
import importlib.abc
import importlib.util
import sys
import warnings

__all__ = ["when_imported"]


def when_imported(name, register):
    """``register()`` now if module ``name`` is imported, else right after it is."""
    if name in sys.modules:
        _register_or_warn(name, register)
    elif not any(isinstance(f, _AfterImport) and f.name == name and f.register is register
                 for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport(name, register))


class _AfterImport(importlib.abc.MetaPathFinder):
    """A one-shot import hook: registers right after module ``name`` is first imported."""

    def __init__(self, name, register):
        self.name = name
        self.register = register

    def find_spec(self, fullname, path, target=None):
        if fullname != self.name:
            return None
        self._remove()  # before finding the real spec: no recursion, and one shot
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            spec.loader = _RegisteringLoader(spec.loader, self)
        return spec

    def _remove(self):
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass


class _RegisteringLoader(importlib.abc.Loader):
    """The module's own loader, which then registers and puts itself back in place."""

    def __init__(self, loader, hook):
        self.loader = loader
        self.hook = hook

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        module.__loader__ = module.__spec__.loader = self.loader  # the module's own again
        try:
            self.loader.exec_module(module)
        except BaseException:
            sys.meta_path.insert(0, self.hook)  # the import failed: wait for a later one
            raise
        _register_or_warn(self.hook.name, self.hook.register)

    def __getattr__(self, name):
        return getattr(self.loader, name)


def _register_or_warn(name, register):
    try:
        register()
    except Exception as exc:  # never break the library's import nor ndengine's: say why
        warnings.warn(f"ndengine could not register NDArray with {name} ({exc!r}); call "
                      f"{register.__module__}.{register.__qualname__}() to see the error",
                      RuntimeWarning, stacklevel=3)
