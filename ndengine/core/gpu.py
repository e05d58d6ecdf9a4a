"""GPU memory and copies: what an array on ``gpu(i)`` is made of, per kind of GPU.

Two backends with the same methods, chosen per context by ``backend(ctx)``:

* `CupyBackend` (a real GPU): buffers are CuPy arrays of bytes from CuPy's memory pool on the
  device; views are ``cupy.ndarray`` over them; copies to and from the host go through
  pinned (page-locked) host memory from CuPy's pinned pool, so the DMA runs asynchronously on
  the copy worker's stream while compute streams go on.
* `FakeBackend` (a fake GPU, engine/devices.py): the same code path with NumPy standing in for
  CuPy; buffers are aligned NumPy byte arrays, copies are NumPy copies.

``xp`` is the array module the device's kernels compute with (``cupy`` or ``numpy``): the ops
layer takes it from the arrays it is handed (ops/gpu/kernels.py).

Staging of uploads (host to device). ``from_numpy`` must copy the user's values at the call
(the user may change them right after), so it copies them into a pinned staging array there,
and the pushed upload only starts the DMA from it. The staging array must live until that DMA
is done: `Staging` keeps each one with the event recorded after its copy, and lets go of it
once the event is done (checked at the next staging, never waited for).

Reuse of freed device buffers across streams: the storage pool (storage.py) keeps a fence
event with each freed GPU buffer, recorded on the deleting op's stream after it waited for
every op that used the buffer (engine/devices.py); the op that takes the buffer next makes its
own stream wait on that fence before using it (``wait_fence``).
"""
import threading

import numpy as np

from ..engine import devices as _devices

__all__ = ["backend", "xp", "FakeBackend", "CupyBackend", "ALIGN"]

ALIGN = 256  # bytes: CUDA's allocation alignment, kept by fake buffers too


def _aligned_bytes(nbytes):
    raw = np.empty(nbytes + ALIGN, dtype=np.uint8)
    start = -raw.ctypes.data % ALIGN
    return raw[start:start + nbytes]


class Staging:
    """Host arrays handed to asynchronous copies, kept until each copy's event is done."""

    def __init__(self):
        self.in_flight = []  # [(event, array)], oldest first
        self.lock = threading.Lock()

    def keep(self, event, array):
        with self.lock:
            self.in_flight.append((event, array))

    def prune(self):
        with self.lock:
            self.in_flight = [(e, a) for e, a in self.in_flight if not e.done]


class FakeBackend:
    """A fake GPU: NumPy memory, NumPy copies, the fake streams' events."""

    fake = True
    xp = np

    def new_buffer(self, ctx, nbytes):
        return _aligned_bytes(nbytes)

    def view(self, buffer, shape, dtype, offset, strides):
        return np.ndarray(shape, dtype, buffer, offset, strides)

    def host_empty(self, shape, dtype):
        """Host memory a device copies into or out of (pinned on a real GPU)."""
        return np.empty(shape, dtype)

    def upload(self, target, values, stream):
        np.copyto(target, values, casting="unsafe")

    def download(self, source, stream):
        return np.array(source, copy=True)

    def device_copy(self, target, source, stream):
        np.copyto(target, source, casting="unsafe")

    def export(self, view, owner):
        raise AssertionError("a fake GPU's memory is shared as NumPy memory (sharing.py)")

    def release_cached(self, ctx):
        pass

    def memory_info(self, ctx):
        return {}


class CupyBackend:
    """A real GPU through CuPy."""

    fake = False

    def __init__(self):
        import cupy
        import cupyx
        self.xp = cupy
        self._cupyx = cupyx
        self.staging = Staging()

    def new_buffer(self, ctx, nbytes):
        with self.xp.cuda.Device(ctx.device_id):
            return self.xp.empty(max(nbytes, 1), dtype=np.uint8)

    def view(self, buffer, shape, dtype, offset, strides):
        return self.xp.ndarray(shape, dtype, buffer.data + offset, strides=strides)

    def host_empty(self, shape, dtype):
        return self._cupyx.empty_pinned(shape, dtype)

    def upload(self, target, values, stream):
        """Start the copy of host ``values`` (pinned: asynchronous) into device ``target``,
        on ``stream``."""
        values = np.asarray(values)
        if values.dtype != target.dtype:
            values = values.astype(target.dtype)
        if target.flags.c_contiguous and values.flags.c_contiguous \
                and values.shape == target.shape:
            target.set(values, stream=stream)
        else:  # a view of a buffer: through a contiguous device temporary
            temp = self.xp.empty(values.shape, target.dtype)
            temp.set(np.ascontiguousarray(values).reshape(values.shape), stream=stream)
            target[...] = temp
        self.staging.prune()
        self.staging.keep(stream.record(), values)

    def download(self, source, stream):
        """A host copy of ``source`` (pinned memory), complete when this returns."""
        out = self.host_empty(source.shape, source.dtype)
        if source.size:  # (ascontiguousarray would make a 0-d array 1-d)
            contiguous = source if source.flags.c_contiguous else source.copy(order="C")
            contiguous.get(stream=stream, out=out)
        stream.synchronize()
        return out

    def device_copy(self, target, source, stream):
        if target.device == source.device:
            self.xp.copyto(target, source, casting="unsafe")
        else:  # another GPU: through the host (peer access is not assumed)
            self.upload(target, self.download(source, stream), stream)

    def export(self, view, owner):
        """A CuPy array over ``view``'s memory that keeps ``owner`` alive while it lives."""
        cuda = self.xp.cuda
        span = view.data.mem.size - (view.data.ptr - view.data.mem.ptr)
        memory = cuda.UnownedMemory(view.data.ptr, span, owner, view.device.id)
        return self.xp.ndarray(view.shape, view.dtype, cuda.MemoryPointer(memory, 0),
                               strides=view.strides)

    def release_cached(self, ctx):
        with self.xp.cuda.Device(ctx.device_id):
            self.xp.get_default_memory_pool().free_all_blocks()
        self.xp.get_default_pinned_memory_pool().free_all_blocks()

    def memory_info(self, ctx):
        pool = self.xp.get_default_memory_pool()
        with self.xp.cuda.Device(ctx.device_id):
            free, total = self.xp.cuda.runtime.memGetInfo()
        return {"device_bytes_free": free, "device_bytes_total": total,
                "cupy_pool_bytes_used": pool.used_bytes(),
                "cupy_pool_bytes_held": pool.total_bytes()}


_FAKE = FakeBackend()
_cupy_backend = []


def backend(ctx):
    """The backend of a GPU context (after ``engine.devices.check``: the error that says
    why a GPU cannot be used raises there)."""
    if _devices.is_fake(ctx):
        return _FAKE
    if not _cupy_backend:
        _devices.check(ctx)
        _cupy_backend.append(CupyBackend())
    return _cupy_backend[0]


def xp(ctx):
    """The array module of ``ctx``'s kernels: NumPy on the CPU and on fake GPUs, else CuPy."""
    return np if ctx.device_type == "cpu" else backend(ctx).xp


def wait_fence(ctx, fence):
    """Make the calling op's stream on ``ctx`` wait on ``fence`` (a freed buffer's last use)
    before it uses the buffer; on the host when no stream is current."""
    stream = _devices.current_stream(ctx)
    if stream is not None:
        stream.wait_event(fence)
    else:
        fence.synchronize()
