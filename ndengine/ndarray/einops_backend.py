"""einops on NDArrays: ``rearrange``, ``reduce``, ``repeat``, ``einsum``, ``pack``/``unpack``
take and return NDArrays, every step an ndengine op pushed like any other.

einops finds a tensor's backend among the subclasses of its ``AbstractBackend`` whose
``framework_name`` is an imported module; it knows NumPy, PyTorch, JAX and others by name,
not ndengine. ``register()`` defines that subclass (``framework_name = "ndengine"``); it runs
once einops is imported (``after_import.when_imported``), so ndengine never imports einops
itself. What einops asks of a backend maps to ndengine's NumPy-named functions, and the
reductions to NDArray's methods (einops' default).
"""
import sys

from ..core import NDArray
from .after_import import when_imported

__all__ = ["register", "install"]

_backend_class = [None]


def register():
    """Define einops' backend for NDArrays (imports einops; idempotent)."""
    if _backend_class[0] is None:
        _backend_class[0] = _make_backend()


def install():
    """Register now if einops is imported, else once it is. Called by ndengine/ndarray's
    ``__init__`` once its functions exist (the backend calls them)."""
    if _backend_class[0] is None:
        when_imported("einops", register)


def _make_backend():
    from einops._backends import AbstractBackend

    api = sys.modules[__package__]  # ndengine.ndarray, complete once install() is called

    class NDengineBackend(AbstractBackend):
        framework_name = "ndengine"

        def is_appropriate_type(self, tensor):
            return isinstance(tensor, NDArray)

        def from_numpy(self, x):
            return api.array(x)

        def to_numpy(self, x):
            return x.asnumpy()

        def arange(self, start, stop):
            return api.arange(start, stop)

        def stack_on_zeroth_dimension(self, tensors: list):
            return api.stack(tensors)

        def tile(self, x, repeats):
            return api.tile(x, repeats)

        def concat(self, tensors, axis: int):
            return api.concatenate(tensors, axis=axis)

        def is_float_type(self, x):
            return x.dtype.kind == "f"

        def add_axis(self, x, new_position):
            return api.expand_dims(x, new_position)

        def einsum(self, pattern, *x):
            return api.einsum(pattern, *x)

    return NDengineBackend
