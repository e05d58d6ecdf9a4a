"""The 'local' KVStore: one process, several devices (MXNet's KVStoreLocal).

Every call is made of ordinary pushed array ops, so it returns at once and the engine orders it
by the arrays' vars: a push copies each device's value to the store's context and sums them
there, then writes the stored value (or hands it to the updater, which writes it in place); a
pull copies the stored value into every out array. ``priority`` is accepted and not used: the
copies and sums are plain ops.

LocalStore state (beyond base.py's)
    _ctx       the context the values live and are summed on (cpu(0) unless given).
    _store     key -> the stored NDArray on ``_ctx``.
"""
from ..engine import cpu
from .base import KVStore

__all__ = ["LocalStore"]


class LocalStore(KVStore):
    type = "local"

    def __init__(self, ctx=None):
        super().__init__()
        self._ctx = ctx if ctx is not None else cpu()
        self._store = {}

    def _init(self, key, value):
        self._store[key] = value.copyto(self._ctx)

    def _merged(self, key, values):
        """The sum of the devices' values, on the store's context, in the key's dtype."""
        stored = self._store[key]
        merged = None
        for x in values:
            x = x.as_in_context(self._ctx)
            if x.dtype != stored.dtype:
                x = x.astype(stored.dtype)
            merged = x if merged is None else merged + x
        return merged

    def _push(self, key, values, priority):
        merged = self._merged(key, values)
        stored = self._store[key]
        if self._updater is not None:
            self._updater(key, merged, stored)
        else:
            merged.copyto(stored)

    def _pull(self, key, outs, priority):
        stored = self._store[key]
        for out in outs:
            stored.copyto(out)
