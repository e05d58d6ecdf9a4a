"""What every KVStore kind shares: the MXNet call signatures, the argument checks (made at the
call, before anything is pushed) and the per-key bookkeeping of this process.

KVStore state, field by field
    _specs      key -> (shape, dtype) fixed by ``init``; a key not in it is unknown (KeyError
                at the call). Keys are ints or strings.
    _updater    the updater given by set_updater / set_optimizer, or None. Where it runs is
                the kind's business (local.py: here; dask_store.py: on the server).
    _closed     True after close(): every call raises.

A value is one NDArray or a list of them (one per device: they are summed); ``out`` is one
NDArray or a list (each gets the whole value). With a list of keys, value and out are lists
with one entry per key.
"""
import numpy as np

from ..ndarray import NDArray

__all__ = ["KVStore", "KVStoreError", "KVStoreTimeout", "WorkerLost", "check_key"]


class KVStoreError(RuntimeError):
    """A KVStore operation failed (raised at the wait on the arrays it writes)."""


class KVStoreTimeout(KVStoreError, TimeoutError):
    """A pull or barrier waited longer than the store's timeout for the other workers."""


class WorkerLost(KVStoreError):
    """A worker whose contribution was needed left the cluster (or closed its store)."""


def check_key(key):
    if isinstance(key, bool) or not isinstance(key, (int, str)):
        raise TypeError(f"KVStore keys are ints or strings, got {key!r}")
    return key


def _arrays(value, what):
    """One NDArray or a non-empty list of them -> a list."""
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if not items:
        raise ValueError(f"{what}: an empty list of arrays")
    for x in items:
        if not isinstance(x, NDArray):
            raise TypeError(f"{what}: expected NDArrays, got {type(x).__name__}")
    return items


def _pairs(key, value, what):
    """[(key, [arrays])] for one key or a list of keys."""
    if isinstance(key, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(key):
            raise ValueError(f"{what}: {len(key)} keys need a list of {len(key)} values")
        return [(check_key(k), _arrays(v, what)) for k, v in zip(key, value)]
    return [(check_key(key), _arrays(value, what))]


class KVStore:
    """MXNet's KVStore interface; `create` makes one of a kind (local.py, dask_store.py)."""

    type = None

    def __init__(self):
        self._specs = {}
        self._updater = None
        self._closed = False

    # ------------------------------------------------------------ identity
    @property
    def rank(self):
        """This worker's rank, 0 .. num_workers - 1."""
        return 0

    @property
    def num_workers(self):
        """How many workers push to each key (a pull sees the sum of all of them)."""
        return 1

    def __repr__(self):
        return (f"<KVStore {self.type} rank={self.rank} num_workers={self.num_workers} "
                f"keys={len(self._specs)}>")

    # ------------------------------------------------------------ checks
    def _check_open(self):
        if self._closed:
            raise KVStoreError("this KVStore was closed")

    def _spec(self, key, what):
        try:
            return self._specs[key]
        except KeyError:
            raise KeyError(f"{what}: key {key!r} was never initialised (call init first)") \
                from None

    def _check_shapes(self, key, arrays, what):
        shape = self._spec(key, what)[0]
        for x in arrays:
            if x.shape != shape:
                raise ValueError(f"{what}: key {key!r} holds shape {shape}, got an array of "
                                 f"shape {x.shape}")

    # ------------------------------------------------------------ the API
    def init(self, key, value):
        """Give each key its initial value (every worker calls it; rank 0's value is kept).
        A key is initialised once."""
        self._check_open()
        pairs = _pairs(key, value, "init")
        for k, values in pairs:
            if k in self._specs:
                raise ValueError(f"init: key {k!r} is already initialised")
        for k, values in pairs:
            first = values[0]
            self._specs[k] = (first.shape, np.dtype(first.dtype))
            self._init(k, first)

    def push(self, key, value, priority=0):
        """Push values (summed over the list, then over the workers); returns at once."""
        self._check_open()
        pairs = _pairs(key, value, "push")
        for k, values in pairs:
            self._check_shapes(k, values, "push")
        for k, values in pairs:
            self._push(k, values, priority)

    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        """Pull each key's value into ``out`` (every array of it); returns at once: a wait on
        ``out`` waits for the value."""
        self._check_open()
        if out is None:
            raise TypeError("pull: out= is required (the arrays that receive the value)")
        pairs = _pairs(key, out, "pull")
        for k, outs in pairs:
            self._check_shapes(k, outs, "pull")
        for k, outs in pairs:
            self._pull(k, outs, priority)

    def pushpull(self, key, value, out=None, priority=0):
        """push then pull in one step; ``out=None`` writes the result into ``value``."""
        self._check_open()
        pairs = _pairs(key, value, "pushpull")
        outs = pairs if out is None else _pairs(key, out, "pushpull")
        for (k, values), (_, targets) in zip(pairs, outs):
            self._check_shapes(k, values, "pushpull")
            self._check_shapes(k, targets, "pushpull")
        for (k, values), (_, targets) in zip(pairs, outs):
            self._pushpull(k, values, targets, priority)

    def broadcast(self, key, value, out, priority=0):
        """init(key, value) then pull(key, out): every worker gets rank 0's value."""
        self.init(key, value)
        self.pull(key, out, priority)

    def set_updater(self, updater):
        """``updater(key, recv_grad, stored_weight)`` runs where the key lives, on every
        aggregated push: it updates ``stored_weight`` in place, and a pull sees the result."""
        self._check_open()
        if not callable(updater):
            raise TypeError(f"set_updater: expected a callable, got {type(updater).__name__}")
        self._updater = updater
        self._set_updater(updater)

    def set_optimizer(self, optimizer):
        """Use ``optimizer`` (an `SGD`, or any updater-like callable) as the updater."""
        self.set_updater(optimizer)

    def barrier(self):
        """Block until every worker reached its matching barrier() call."""
        self._check_open()

    def close(self):
        """Let the store go (idempotent)."""
        self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # ------------------------------------------------------------ the kinds
    def _init(self, key, value):
        raise NotImplementedError

    def _push(self, key, values, priority):
        raise NotImplementedError

    def _pull(self, key, outs, priority):
        raise NotImplementedError

    def _pushpull(self, key, values, outs, priority):
        self._push(key, values, priority)
        self._pull(key, outs, priority)

    def _set_updater(self, updater):
        pass
