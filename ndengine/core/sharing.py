"""Memory shared with other libraries (DLPack, zero copy).

* ``shared_view(x)``: an array over ``x``'s own memory (NumPy on the CPU and on a fake GPU,
  CuPy on a real GPU), after every pending read and write of ``x`` has finished, its GPU
  work included (so nothing ndengine pushed earlier races with the reader, on any stream).
  The view keeps ``x`` alive (a NumPy view's base is an ``_Export`` that holds ``x``; a CuPy
  view's memory is CuPy's ``UnownedMemory`` whose owner is ``x``): while the view (or a DLPack
  capsule made from it) lives, ``x``'s chunk lives, so its buffer never goes back to the
  pool under the consumer. Ops pushed on ``x`` later write the same memory: ordering them
  against the consumer is the caller's business, as with any shared memory.
* ``share_values(values, ctx)``: an NDArray over a writeable C-contiguous NumPy (or, on a
  GPU, CuPy) array's memory (from ``numpy.from_dlpack`` / ``cupy.from_dlpack``): a
  ``SharedChunk`` whose ``data`` is that memory as bytes, which it keeps alive, and which
  its deletion never hands to the pool.
"""
import numpy as np

from .. import engine as _engine_mod
from . import gpu as _gpu
from .array import array_on
from .chunk import Chunk

__all__ = ["shared_view", "share_values", "share_numpy", "SharedChunk", "can_share",
           "dlpack_device", "dlpack_values"]

DLPACK_CPU, DLPACK_CUDA = 1, 2  # DLPack's kDLCPU and kDLCUDA device types


class _Export:
    """The base of a shared view: its array interface, and the NDArray it keeps alive."""

    __slots__ = ("__array_interface__", "array")

    def __init__(self, interface, array):
        self.__array_interface__ = interface
        self.array = array


def shared_view(x):
    """An array sharing ``x``'s memory, once ``x`` has no pending reads or writes."""
    x.wait_to_write()
    view = x._data()
    ctx = x.context
    if ctx.device_type == "gpu" and not _gpu.backend(ctx).fake:
        return _gpu.backend(ctx).export(view, x)
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
    """Whether ``share_values`` can take ``values`` without a copy."""
    return (type(values).__module__.split(".")[0] in ("numpy", "cupy")
            and values.flags.c_contiguous and getattr(values.flags, "writeable", True)
            and values.size > 0)


def share_values(values, ctx):
    """An NDArray over ``values``' memory (``can_share(values)`` must hold)."""
    buffer = values.reshape(-1).view(np.uint8)
    return array_on(SharedChunk(buffer, ctx, _engine_mod.get()), values.shape, values.dtype)


share_numpy = share_values  # the CPU's name


def dlpack_device(x):
    """(DLPack device type, id) of ``x``'s memory: a real GPU's is CUDA memory; the CPU's and
    a fake GPU's are host memory."""
    ctx = x.context
    if ctx.device_type == "gpu" and not _gpu.backend(ctx).fake:
        return DLPACK_CUDA, ctx.device_id
    return DLPACK_CPU, 0


def dlpack_values(producer):
    """(values, ctx): a DLPack producer's memory as a NumPy array (host memory, ``cpu(0)``)
    or a CuPy array (CUDA memory, ``gpu(id)``), zero copy. CUDA memory is made ready for
    every stream first: the producer orders its work before this thread's current stream,
    which is then synchronised."""
    kind, device_id = producer.__dlpack_device__() if hasattr(producer, "__dlpack_device__") \
        else (DLPACK_CPU, 0)
    if kind == DLPACK_CUDA:
        ctx = _engine_mod.gpu(device_id)
        cupy = _gpu.backend(ctx).xp
        with cupy.cuda.Device(device_id):
            values = cupy.from_dlpack(producer)
            cupy.cuda.get_current_stream().synchronize()
        return values, ctx
    return np.from_dlpack(producer), _engine_mod.cpu(0)
