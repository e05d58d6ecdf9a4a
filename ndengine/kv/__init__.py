"""ndengine.kv: MXNet's KVStore on the engine, for data-parallel training.

    kv = nd.kv.create('local')                       # one process, several devices
    kv = nd.kv.create('dask', client=client)         # several processes (dask.distributed)
    kv.init(3, nd.zeros(shape))
    kv.push(3, [grad_on_gpu0, grad_on_gpu1])         # summed over the list and the workers
    kv.pull(3, out=[w_on_gpu0, w_on_gpu1])           # returns at once; w.asnumpy() waits
    kv.set_optimizer(nd.kv.SGD(learning_rate=0.1))   # then pushes update the stored weights

Every call returns at once: it pushes engine ops (the 'local' kind: copies and sums; the
'dask' kind: one asynchronous op per transfer that reads the sent array and writes the
received one, completed from the network's callback). Errors of a transfer (a timeout, a lost
worker) raise at the next wait on the arrays it writes. Argument errors (an unknown key, a
shape mismatch) raise at the call.

Modules: base.py (the interface and its checks), local.py ('local'), dask_store.py ('dask'
and `launch`), server.py (the 'dask' server on the scheduler), optimizer.py (`SGD`).
docs/distributed.md describes running it.
"""
from .base import KVStore, KVStoreError, KVStoreTimeout, WorkerLost
from .local import LocalStore
from .optimizer import SGD

__all__ = ["create", "launch", "KVStore", "KVStoreError", "KVStoreTimeout", "WorkerLost",
           "SGD", "KINDS"]

KINDS = ("local", "dask")


def create(kind="local", **options):
    """A new KVStore. ``kind``: 'local' (options: ctx, where values are kept and summed;
    default cpu(0)) or 'dask' (options: client, rank, num_workers, name, timeout; see
    dask_store.py for the defaults, taken from the environment). 'device' is an alias of
    'local'; 'dist_sync' and 'dist' of 'dask'."""
    if kind in ("local", "device"):
        return LocalStore(**options)
    if kind in ("dask", "dist_sync", "dist"):
        from .dask_store import DaskStore  # dask is optional: imported only for this kind
        return DaskStore(**options)
    raise ValueError(f"unknown KVStore kind {kind!r}; choose one of {list(KINDS)}")


def launch(client, fn, *args, workers=None, **kwargs):
    """Run ``fn(*args, **kwargs)`` once per dask worker as kv ranks 0 .. n-1 (inside it,
    ``create('dask')`` needs no arguments); returns the futures in rank order."""
    from .dask_store import launch as _launch
    return _launch(client, fn, *args, workers=workers, **kwargs)
