"""Memory shared with other libraries (DLPack, zero copy), on the CPU.

* ``shared_view(x)``: a NumPy array over ``x``'s own memory, after every pending read and
  write of ``x`` has finished (so nothing ndengine pushed earlier races with the reader).
  Its base is an ``_Export`` that holds ``x``: while the view (or a DLPack capsule made from
  it) lives, ``x``'s chunk lives, so its buffer never goes back to the pool under the
  consumer. Ops pushed on ``x`` later write the same memory: ordering them against the
  consumer is the caller's business, as with any shared memory.
* ``share_numpy(values, ctx)``: an NDArray over a writeable C-contiguous NumPy array's memory
  (from ``numpy.from_dlpack``): a ``SharedChunk`` whose ``data`` is that memory as bytes,
  which it keeps alive, and which its deletion never hands to the pool.
"""
import numpy as np

from .. import engine as _engine_mod
from .chunk import Chunk, array_on

__all__ = ["shared_view", "share_numpy", "SharedChunk", "can_share"]


class _Export:
    """The base of a shared view: its array interface, and the NDArray it keeps alive."""

    __slots__ = ("__array_interface__", "array")

    def __init__(self, interface, array):
        self.__array_interface__ = interface
        self.array = array


def shared_view(x):
    """A NumPy array sharing ``x``'s memory, once ``x`` has no pending reads or writes."""
    if x.context.device_type != "cpu":
        raise BufferError(f"sharing memory of arrays on {x.context} is not built yet")
    x.wait_to_write()
    view = x._data()
    return np.asarray(_Export(dict(view.__array_interface__), x))


class SharedChunk(Chunk):
    """A chunk over memory another library made (see the module docstring)."""

    __slots__ = ()

    def __init__(self, buffer, ctx, engine):
        self.var = engine.new_variable()
        self.ctx = ctx
        self.nbytes = buffer.nbytes
        self.data = buffer
        self.window = None

    def allocate(self):
        return self.data

    def __del__(self):
        try:  # the memory is its owner's: only the var is deleted
            _engine_mod.get().delete_variable(_nothing_to_free, self.ctx, self.var)
        except BaseException:  # noqa: B902 - at interpreter exit the engine may be gone
            pass


def _nothing_to_free(run_ctx):
    pass


def can_share(values) -> bool:
    """Whether ``share_numpy`` can take ``values`` without a copy."""
    return (type(values) is np.ndarray and values.flags.c_contiguous
            and values.flags.writeable and values.size > 0)


def share_numpy(values, ctx):
    """An NDArray over ``values``' memory (``can_share(values)`` must hold)."""
    buffer = values.reshape(-1).view(np.uint8)
    return array_on(SharedChunk(buffer, ctx, _engine_mod.get()), values.shape, values.dtype)
