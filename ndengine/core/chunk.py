"""Chunks: the storage an array shares with its views.

A `Chunk` holds one engine var and ``data``, a pool buffer taken by the first op that runs on it
(MXNet's delayed allocation: pushed work that has not run holds no memory). When the last array
on a chunk goes away, the chunk hands its var to the engine's ``delete_variable``, which returns
the buffer to the pool once every op pushed on it has finished (at once when none is pending).

Both carry ``window``: the open segment window (segment.py) whose gathered ops touch the chunk,
or None (a window that is no longer open means nothing).

A `SmallChunk` (a CPU array of at most ``SMALL_BYTES``) is the same without the pool, without
the deletion, and with its var made at its first use (an array made and dropped inside one
segment window never needs one): its ``data`` is a NumPy array of the array's own shape and
dtype, made with the array, and freed by reference counting. Why: the pool exists for large
buffers, whose first write page-faults; a small one comes from malloc's free lists already
faulted in, and a tiny op would otherwise spend a third of its time in the pool and in the
deletion. No deletion is needed: every op pushed on the chunk holds an array of it, so once the
chunk dies no op is left to touch its memory, and nothing can push on its var again; the var's
own bookkeeping finishes on the var object, which the op's block keeps alive. Small arrays are
not counted in ``storage.stats``.

`new_array` makes an NDArray on a fresh chunk; `RawArray` is NDArray's slots without its
checked ``__setattr__`` (array.py), so that building an array costs plain slot writes.
"""
import os
import threading

import numpy as np

from .. import engine as _engine_mod
from ..engine import devices as _devices
from . import storage

__all__ = ["Chunk", "SmallChunk", "RawArray", "new_array", "array_on", "c_strides",
           "SMALL_BYTES", "RECORDING"]

# [threads recording for autograd now] (tape.py): invoke's and _view_of's one check
RECORDING = [0]
# Arrays up to this size: NumPy's memory (SmallChunk), and run in the pushing thread when ready.
SMALL_BYTES = int(os.environ.get("NDENGINE_INLINE_MAX_BYTES", 1 << 16))


class Chunk:
    """Storage shared by an array and its views: one engine var, and ``data``, a pool buffer
    taken by the first op that runs on it (None until then)."""

    __slots__ = ("var", "ctx", "nbytes", "data", "window", "__weakref__")

    def __init__(self, nbytes, ctx, engine):
        self.var = engine.new_variable()
        self.ctx = ctx
        self.nbytes = nbytes
        self.data = None
        self.window = None  # never gathered (segment.py): only small chunks are

    def allocate(self):
        data = storage.alloc(self.nbytes, self.ctx)
        if self.data is None:  # two first readers may race here; the loser gives its back
            self.data = data
        else:
            storage.free(data, self.ctx)
        return self.data

    def __del__(self):
        # Every op on this chunk holds an array of it, so none is left to run and ``data``
        # is final: the deletion only has to wait for the ops' var bookkeeping. The engine
        # frees an idle var at once, and defers by itself when this runs inside it (a
        # collection triggered there).
        try:
            data, ctx = self.data, self.ctx
            _engine_mod.get().delete_variable(
                _nothing_to_free if data is None else _release_buffer(data, ctx), ctx, self.var)
        except BaseException:  # noqa: B902 - at interpreter exit the engine may be gone
            pass


class SmallChunk:
    """A small CPU array's storage: one engine var and ``data``, a NumPy array of the array's
    shape and dtype (see the module docstring). The var is made at its first use (``var``
    unset until then): an array made and dropped inside one segment window never needs one,
    and a tiny op's new var cost about a tenth of the op."""

    __slots__ = ("var", "ctx", "nbytes", "data", "window", "__weakref__")

    def allocate(self):
        return self.data

    def __getattr__(self, name):  # called only for an unset slot: ``var`` before its first use
        if name != "var":
            raise AttributeError(name)
        with _var_lock[0]:  # two threads' first uses make one var
            try:
                return _small_var.__get__(self, SmallChunk)
            except AttributeError:
                var = self.var = _engine_mod.get().new_variable()
                return var


_small_var = SmallChunk.__dict__["var"]  # the slot itself: reads it without __getattr__
# reentrant: the cyclic GC may run a finalizer that uses a var inside the locked section
_var_lock = [threading.RLock()]


def _new_lock_after_fork():
    _var_lock[0] = threading.RLock()  # a thread of the parent may have held it at the fork


os.register_at_fork(after_in_child=_new_lock_after_fork)


def _nothing_to_free(run_ctx):
    pass


def _release_buffer(data, ctx):
    if ctx.device_type == "gpu":
        # The deletion runs on a GPU stream that waited for every op on the buffer
        # (engine/devices.py): an event recorded there fences the buffer's reuse.
        return lambda run_ctx: storage.free(
            data, ctx, run_ctx.stream.record() if run_ctx.stream is not None else None)
    return lambda run_ctx: storage.free(data, ctx)


_new_object = object.__new__
_np_empty = np.empty
_ArrayMemoryError = np._core._exceptions._ArrayMemoryError
# a CPU array larger than this raises MemoryError at the call (storage.host_memory_bytes)
_host_bytes = storage.HOST_MEMORY_BYTES or float("inf")


class RawArray:
    """NDArray's slots, without its checked ``__setattr__``: arrays are built as a _RawArray
    (plain slot writes) and then made NDArrays, which costs less than writing every slot
    through a checked or descriptor call. Reads of ``x.shape`` stay plain slot reads."""

    __slots__ = ("shape", "dtype", "_chunk", "_offset", "_strides", "_view_cache",
                 "__weakref__")


def new_array(shape, dtype, ctx, engine=None):
    """A fresh NDArray with a fresh chunk: a small CPU array gets its NumPy memory now, any
    other no memory until an op writes it."""
    arr = _new_object(RawArray)
    arr.shape = shape
    arr.dtype = dtype
    nbytes = dtype.itemsize
    for n in shape:
        nbytes *= n
    if nbytes <= SMALL_BYTES and ctx.device_type == "cpu":
        chunk = _new_object(SmallChunk)  # its var: at its first use (SmallChunk)
        chunk.ctx = ctx
        chunk.nbytes = nbytes
        chunk.window = None  # the open segment window that touches it (segment.py)
        chunk.data = arr._view_cache = _np_empty(shape, dtype)
        arr._chunk = chunk
    else:
        if ctx.device_type != "cpu":
            _devices.check(ctx)  # a GPU that cannot be used says why, at the call
        elif nbytes > _host_bytes:  # never backed: NumPy's error, at the call
            raise _ArrayMemoryError(tuple(shape), dtype)
        arr._chunk = Chunk(nbytes, ctx, engine or _engine_mod.get())
        arr._view_cache = None
    arr._offset = 0
    arr._strides = None
    arr.__class__ = array_type[0]
    return arr


def array_on(chunk, shape, dtype, offset=0, strides=None):
    """A new NDArray viewing ``chunk`` (byte ``offset``, byte ``strides``; None: the whole
    chunk, C-contiguous)."""
    arr = _new_object(RawArray)
    arr.shape = shape
    arr.dtype = dtype
    arr._chunk = chunk
    arr._offset = offset
    arr._strides = strides
    arr._view_cache = None
    arr.__class__ = array_type[0]
    return arr


def c_strides(shape, itemsize):
    strides = []
    step = itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))



array_type = [None]  # NDArray, set by array.py when it defines the class
