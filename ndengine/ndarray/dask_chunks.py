"""NDArrays as the chunks of dask arrays, as CuPy's and sparse's arrays are.

``dask.array.from_array(x, chunks=...)`` over an NDArray makes a dask array whose chunks are
NDArrays: every chunk's work (``np.sin``, ``+``, ``sum``, ``@``, slicing, ``concatenate``...)
is an ndengine op pushed on the process that runs the task, and ``.compute()`` gives an
NDArray. NDArray's ``__array_ufunc__`` and ``__array_function__`` carry most of it; what dask
looks up by the chunk's type is registered by ``register()``:
- the chunk type (``register_chunk_type``): dask computes with NDArrays instead of deferring
  to them, so ``dask_array * ndarray`` is a dask array;
- the dispatch tables of ``dask.array.dispatch`` (concatenate, tensordot, einsum, take,
  empty, percentile, the element counts of mean and var, to_numpy), each to ndengine's
  function;
- ``dask.sizeof`` (the scheduler's memory accounting) and ``dask.base.normalize_token``
  (from_array's name: a hash of the values, as for NumPy's arrays, which waits for them);
- an array backend named "ndengine": ``dask.config.set({"array.backend": "ndengine"})``
  makes ``da.ones``, ``zeros``, ``empty``, ``full``, ``arange`` build NDArray chunks, and
  ``dask_array.to_backend("ndengine")`` converts NumPy chunks.

When it runs: dask does not know ndengine (it registers CuPy itself, lazily), and importing
dask.array costs a third of a second, so ndengine never imports it. ``install()``, called when
ndengine is imported, registers at once if dask.array is already imported, and otherwise
right after dask.array's first import (``after_import.when_imported``). Either import order
works, in the user's process and in every dask worker process (a worker imports ndengine when
it unpickles the first NDArray or ndengine function). ``register()`` may also be
called directly; it is idempotent.
"""
import sys

import numpy as np

from ..core import NDArray
from .after_import import when_imported

__all__ = ["register", "install"]  # and NDengineBackend, made on first use

_registered = [False]
_backend_class = [None]


def register():
    """Register NDArray with dask.array (imports dask.array; idempotent). No lock: the
    import hook runs this while holding dask.array's import lock, and a lock here taken by
    another thread importing dask.array would deadlock; registering twice is harmless."""
    if not _registered[0]:
        _register()
        _registered[0] = True


def _register():
    from dask.array import backends, chunk_types, dispatch
    from dask.base import normalize_token
    from dask.sizeof import sizeof

    api = sys.modules[__package__]  # ndengine.ndarray: complete once install() is called

    if not chunk_types.is_valid_chunk_type(NDArray):
        chunk_types.register_chunk_type(NDArray)
    dispatch.concatenate_lookup.register(NDArray, api.concatenate)
    dispatch.tensordot_lookup.register(NDArray, api.tensordot)
    dispatch.einsum_lookup.register(NDArray, api.einsum)  # NumPy's casting= and order= too
    dispatch.take_lookup.register(NDArray, api.take)
    dispatch.empty_lookup.register(NDArray, api.empty)
    dispatch.percentile_lookup.register(NDArray, backends.percentile)
    # mean, var & co. divide by these counts: NDArrays, as CuPy's are CuPy arrays (NumPy's
    # default is right too, copied into an NDArray per chunk; a private dask name: optional)
    numel = getattr(backends, "_numel_arraylike", None)
    if numel is not None:
        dispatch.numel_lookup.register(NDArray, numel)
    dispatch.to_numpy_dispatch.register(NDArray, _to_numpy)
    sizeof.register(NDArray, _sizeof)
    normalize_token.register(NDArray, _token)
    backends.array_creation_dispatch.register_backend("ndengine", _backend()())


def _to_numpy(data, **kwargs):
    return np.asarray(data.asnumpy(), **kwargs)


def _sizeof(x):
    # a broadcast view (a zero stride) holds only the elements it repeats, as dask counts
    # NumPy's; no wait: the size is known before the values are
    size = x.dtype.itemsize
    for n, stride in zip(x.shape, x.strides):
        if stride != 0:
            size *= n
    return int(size)


def _token(x):
    from dask.base import normalize_token
    return "ndengine.NDArray", str(x.context), normalize_token(x.asnumpy())


# ---------------------------------------------------------------- the "ndengine" backend
def _with_ndarray_meta(name, *args, meta=None, **kwargs):
    """dask's creation function ``name`` with a 0-d NDArray as the chunks' meta."""
    import dask
    import dask.array as da
    meta = sys.modules[__package__].empty(()) if meta is None else meta
    with dask.config.set({"array.backend": "numpy"}):  # dask's own code, our meta
        return getattr(da, name)(*args, meta=meta, **kwargs)


def _backend():
    """The ArrayBackendEntrypoint subclass (made once: it needs dask imported)."""
    if _backend_class[0] is not None:
        return _backend_class[0]
    from dask.array.backends import ArrayBackendEntrypoint

    class NDengineBackend(ArrayBackendEntrypoint):
        """``dask.config.set({"array.backend": "ndengine"})``: NDArray chunks."""

        @classmethod
        def to_backend_dispatch(cls):
            return _to_ndarray

        @classmethod
        def to_backend(cls, data, **kwargs):
            if isinstance(data._meta, NDArray):
                return data
            return data.map_blocks(_to_ndarray, **kwargs)

        @property
        def RandomState(self):
            raise NotImplementedError(
                "the ndengine dask backend has no random arrays yet: make them with the "
                "'numpy' backend and convert, x.to_backend('ndengine')")

        default_bit_generator = RandomState

        @staticmethod
        def ones(*args, **kwargs):
            return _with_ndarray_meta("ones", *args, **kwargs)

        @staticmethod
        def zeros(*args, **kwargs):
            return _with_ndarray_meta("zeros", *args, **kwargs)

        @staticmethod
        def empty(*args, **kwargs):
            return _with_ndarray_meta("empty", *args, **kwargs)

        @staticmethod
        def full(*args, **kwargs):
            return _with_ndarray_meta("full", *args, **kwargs)

        @staticmethod
        def arange(*args, like=None, **kwargs):
            import dask
            import dask.array as da
            like = sys.modules[__package__].empty(()) if like is None else like
            with dask.config.set({"array.backend": "numpy"}):
                return da.arange(*args, like=like, **kwargs)

    _backend_class[0] = NDengineBackend
    return NDengineBackend


def _to_ndarray(data, **kwargs):
    """One chunk of another backend's as an NDArray (a copy, as ndengine.array makes)."""
    if isinstance(data, NDArray):
        return data
    return sys.modules[__package__].array(data, **kwargs)


def __getattr__(name):
    if name == "NDengineBackend":  # importing dask.array only when asked for
        return _backend()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---------------------------------------------------------------- when to register
def install():
    """Register now if dask.array is imported, else once it is (see the module docstring).
    Called last in ndengine/ndarray/__init__.py: registering reads its functions."""
    if not _registered[0]:
        when_imported("dask.array", register)
