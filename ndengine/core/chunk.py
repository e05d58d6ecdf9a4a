"""Chunks: the storage an array shares with its views.

A `Chunk` holds an engine var and ``data``, a pool buffer taken by the first op that runs on it
(MXNet's delayed allocation: pushed work that has not run holds no memory). When the last array
on a chunk goes away, the chunk hands its var to the engine's ``delete_variable``, which returns
the buffer to the pool once every op pushed on it has finished (at once when none is pending).

Both carry ``window``: the open segment window (segment.py) whose gathered ops touch the chunk,
or None (a window that is no longer open means nothing).

Both make their var at its first use: an array made and dropped inside one segment window, or
used only by ops run at once, never needs one (and a pool chunk without a var gives its buffer
back to the pool at once when it dies, without the engine's deletion).

A `SmallChunk` (a CPU array of at most ``SMALL_BYTES``) is the same without the pool and without
the deletion: its ``data`` is a NumPy array of the array's own shape and
dtype, made with the array, and freed by reference counting. Why: the pool exists for large
buffers, whose first write page-faults; a small one comes from malloc's free lists already
faulted in, and a tiny op would otherwise spend a third of its time in the pool and in the
deletion. No deletion is needed: every op pushed on the chunk holds an array of it, so once the
chunk dies no op is left to touch its memory, and nothing can push on its var again; the var's
own bookkeeping finishes on the var object, which the op's block keeps alive. Small arrays are
not counted in ``storage.stats``.

`flush_window_of` pushes the open window that touches a chunk (``window.flush()``) before a
wait or a direct use of its var: the chunk reaches its window, never segment.py.
"""
import os
import sys
import threading
import types

from .. import engine as _engine_mod
from ..engine.config import env_int
from . import storage
from .at_once import note_thread as _note_thread

__all__ = ["Chunk", "SmallChunk", "SMALL_BYTES", "COMPILED", "ARGUMENT_REFS", "flush_window_of",
           "idle"]

# Arrays up to this size: NumPy's memory (SmallChunk), and run in the pushing thread when ready.
SMALL_BYTES = env_int("NDENGINE_INLINE_MAX_BYTES", 1 << 16, minimum=0)


def _argument_refs():
    """References that passing an object to a function adds: 1 interpreted (the evaluation
    stack's), 0 compiled (Cython passes its argument borrowed). Measured, not assumed."""
    probe = object()
    return _getrefcount(probe) - 1


_getrefcount = sys.getrefcount
# The core runs compiled (ndengine/engine/compiled.py): its functions are not Python functions
# and push no frames (a walk of the stack sees none of them).
COMPILED = not isinstance(_argument_refs, types.FunctionType)
# what ``sys.getrefcount(x)`` counts beyond x's holders, from the core's compiled code or not
ARGUMENT_REFS = _argument_refs()


class _Storage:
    """What both chunks share: their engine var, made at its first use (``_var`` None until
    then; see the module docstring)."""

    __slots__ = ("_var",)

    @property
    def var(self):
        var = self._var
        if var is None:
            var = _made_var(self)
        return var

    @var.setter
    def var(self, var):
        self._var = var


class Chunk(_Storage):
    """Storage shared by an array and its views: one engine var (`_Storage`), and ``data``, a
    pool buffer taken by the first op that runs on it (None until then)."""

    __slots__ = ("ctx", "nbytes", "data", "window", "__weakref__")

    def __init__(self, nbytes, ctx):
        self._var = None
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
        # collection triggered there). A CPU chunk that never got a var was only ever used
        # by ops run at once (segment.py's run_now): nothing is pending on its buffer, which
        # goes back to the pool now, without the engine.
        try:
            data, ctx, var = self.data, self.ctx, self._var
            if var is None and ctx.device_type == "cpu":
                if data is not None:
                    storage.free(data, ctx)
                return
            _engine_mod.get().delete_variable(
                _nothing_to_free if data is None else _release_buffer(data, ctx), ctx,
                self.var)
        except BaseException:  # noqa: B902 - at interpreter exit the engine may be gone
            pass


class SmallChunk(_Storage):
    """A small CPU array's storage: one engine var and ``data``, a NumPy array of the array's
    shape and dtype (see the module docstring). The var is made at its first use (``_var``
    None until then): an array made and dropped inside one segment window never needs one,
    and a tiny op's new var cost about a tenth of the op."""

    __slots__ = ("ctx", "nbytes", "data", "window", "__weakref__")

    def allocate(self):
        return self.data


def _made_var(chunk):
    """A chunk's var at its first use: made once, whichever threads use it first."""
    with _var_lock[0]:
        var = chunk._var
        if var is None:
            var = chunk._var = _engine_mod.get().new_variable()
    return var


# reentrant: the cyclic GC may run a finalizer that uses a var inside the locked section
_var_lock = [threading.RLock()]


def _new_lock_after_fork():
    _var_lock[0] = threading.RLock()  # a thread of the parent may have held it at the fork


os.register_at_fork(after_in_child=_new_lock_after_fork)


def idle(chunk):
    """Nothing pushed or gathered touches ``chunk`` still, and it holds no failure: its memory
    holds its value now, and no queued op reads it (segment.py's ``run_now`` runs an op at once
    on idle chunks; a value read copies an idle chunk without the engine). A window that is no
    longer open means nothing (its ops were pushed: the var says whether they ran)."""
    kind = type(chunk)
    if kind is SmallChunk:
        small = chunk
        window = small.window
        var = small._var
    elif kind is Chunk:
        pooled = chunk
        window = pooled.window
        var = pooled._var  # (made at its first use: None, nothing was ever pushed on it)
    else:
        return False
    if window is not None and window.open:
        return False
    return var is None or (var.pending_write is None and var.num_pending_reads == 0
                           and var.error is None)


def flush_window_of(chunk):
    """Push the open segment window whose gathered ops touch ``chunk``, if any (before a wait
    or a direct use of its var). A thread other than at_once.py's owner first waits for the
    owner's op that runs at once now, if any."""
    _note_thread()
    window = chunk.window
    if window is not None and window.open:
        window.flush()


def _nothing_to_free(run_ctx):
    pass


def _release_buffer(data, ctx):
    if ctx.device_type == "gpu":
        # The deletion runs on a GPU stream that waited for every op on the buffer
        # (engine/devices.py): an event recorded there fences the buffer's reuse.
        return lambda run_ctx: storage.free(
            data, ctx, run_ctx.stream.record() if run_ctx.stream is not None else None)
    return lambda run_ctx: storage.free(data, ctx)
