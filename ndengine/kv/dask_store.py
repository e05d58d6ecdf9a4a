"""The 'dask' KVStore: several processes or machines through a dask.distributed cluster
(MXNet's dist_sync KVStore), and `launch`, which runs a function once per worker as ranks.

The values live in a server on the dask scheduler (server.py). Every push, pull, pushpull and
rank 0's init is ONE asynchronous engine op (core.comm.push_transfer): it reads the array it
sends and writes the array it receives, and it completes from the callback of the RPC to the
scheduler, which runs on the client's event loop. So the call returns at once, computation that
does not touch those arrays overlaps the transfer, and a wait on a received array waits for it
and raises its error (a timeout, a lost worker). The ops of one key are chained through the
key's `Link` (written by each), so they reach the server in program order, as MXNet orders
them through the key's communication buffer; different keys overlap.

Who is who, in this order (``create('dask', ...)`` arguments first):
    client       client= ; inside a dask task, the worker's client; the scheduler address in
                 NDENGINE_KV_SCHEDULER (a client made here, closed by close()); the default
                 client.
    rank, n      rank= and num_workers= ; the ones `launch` gave the running task; the
                 environment (NDENGINE_KV_RANK, NDENGINE_KV_NUM_WORKERS); inside a dask
                 task, this worker's index among the cluster's workers sorted by address
                 (one kv task per worker, on a cluster that does not change); else 0 of 1.
    name         name= ; the one `launch` made (fresh per launch); NDENGINE_KV_NAME;
                 "default". Stores of different names are independent.
    timeout      timeout= ; NDENGINE_KV_TIMEOUT (seconds); 120. How long a pull or barrier
                 waits for the other workers before it fails with KVStoreTimeout.

DaskStore state (beyond base.py's)
    _client, _owns_client   the client, and whether close() closes it.
    _rpc, _loop             the client's scheduler RPC and the event loop it runs on.
    _rank, _num_workers, _name, _timeout   as above.
    _rounds     key -> how many pushes this worker made to it (numbers the next push; a pull
                asks for the round of the last one).
    _links      key -> the key's Link.
    _barriers   how many barrier() calls this worker made (numbers the next one).
"""
import asyncio
import concurrent.futures
import threading
import uuid

import cloudpickle
import distributed
from distributed.protocol import pickle as _pickle
from distributed.protocol.serialize import ToPickle

from ..core import Link, push_transfer
from ..engine import cpu
from ..engine.config import env_float, env_int, env_text
from ..ndarray import empty, waitall
from . import server as _server
from .base import KVStore, KVStoreError, KVStoreTimeout, WorkerLost
from .progress import with_progress

__all__ = ["DaskStore", "launch"]

DEFAULT_TIMEOUT = 120.0
GRACE = 10.0  # beyond the server's own timeout, for the RPC itself (a scheduler gone silent)
_launched = threading.local()  # .context: (rank, num_workers, name, stores) inside a launch


def _in_worker():
    try:
        return distributed.get_worker()
    except ValueError:
        return None


def _resolve_client(client, worker):
    if client is not None:
        return client, False
    if worker is not None:
        return distributed.get_client(), False
    address = env_text("NDENGINE_KV_SCHEDULER")
    if address:
        return distributed.Client(address, set_as_default=False, timeout="30s"), True
    try:
        return distributed.default_client(), False
    except ValueError:
        raise KVStoreError("create('dask'): no dask client: pass client=, run inside a dask "
                           "task, or set NDENGINE_KV_SCHEDULER to a scheduler address") from None


class DaskStore(KVStore):
    type = "dask"

    def __init__(self, client=None, rank=None, num_workers=None, name=None, timeout=None):
        super().__init__()
        worker = _in_worker()
        launched = getattr(_launched, "context", None)
        self._client, self._owns_client = _resolve_client(client, worker)
        if (rank is None) != (num_workers is None):
            raise ValueError("create('dask'): give both rank= and num_workers=, or neither")
        if rank is None and launched is not None:
            rank, num_workers = launched[0], launched[1]
        if rank is None:
            rank = env_int("NDENGINE_KV_RANK", minimum=0)
            num_workers = env_int("NDENGINE_KV_NUM_WORKERS", minimum=1)
            if (rank is None) != (num_workers is None):
                raise ValueError("set both NDENGINE_KV_RANK and NDENGINE_KV_NUM_WORKERS")
        if rank is None and worker is not None:
            workers = sorted(self._client.scheduler_info(n_workers=-1)["workers"])
            rank, num_workers = workers.index(worker.address), len(workers)
        if rank is None:
            rank, num_workers = 0, 1
        if not (isinstance(num_workers, int) and num_workers >= 1 and isinstance(rank, int)
                and 0 <= rank < num_workers):
            raise ValueError(f"create('dask'): need 0 <= rank < num_workers, got rank={rank!r}"
                             f", num_workers={num_workers!r}")
        self._rank, self._num_workers = rank, num_workers
        self._name = str(name or (launched[2] if launched else None)
                         or env_text("NDENGINE_KV_NAME") or "default")
        timeout = timeout if timeout is not None else env_float("NDENGINE_KV_TIMEOUT", minimum=0)
        self._timeout = float(timeout if timeout is not None else DEFAULT_TIMEOUT)
        if self._timeout <= 0:
            raise ValueError(f"timeout must be > 0 seconds, got {self._timeout!r}")
        self._rpc = self._client.scheduler
        self._loop = self._client.loop.asyncio_loop
        self._rounds = {}
        self._links = {}
        self._barriers = 0
        self._client.run_on_scheduler(_server.install)
        self._call("register", num_workers=num_workers,
                   worker=worker.address if worker is not None else None,
                   client=self._client.id)
        if launched is not None:
            launched[3].append(self)

    @property
    def rank(self):
        return self._rank

    @property
    def num_workers(self):
        return self._num_workers

    @property
    def name(self):
        return self._name

    # ------------------------------------------------------------ RPC
    def _remote(self, method, **kwargs):
        """The RPC ``ndkv_<method>`` started on the client's loop: a concurrent Future. A long
        wait for its answer logs progress on ``ndengine.kv`` (progress.py)."""
        call = getattr(self._rpc, f"ndkv_{method}")(name=self._name, rank=self._rank, **kwargs)
        what = f"ndengine.kv store {self._name!r} rank {self._rank}: {method}"
        if "key" in kwargs:
            what += f" of key {kwargs['key']!r}"
        if "round" in kwargs:
            what += f" (round {kwargs['round']})"
        if "count" in kwargs:
            what += f" {kwargs['count']} (waits for every rank)"
        what += f", timeout {self._timeout:g} s"
        return asyncio.run_coroutine_threadsafe(
            with_progress(call, what, self._timeout + GRACE), self._loop)

    def _outcome(self, future, what):
        """(reply, None) or (None, exception) for a finished RPC future."""
        try:
            reply = future.result()
        except (asyncio.TimeoutError, concurrent.futures.TimeoutError):
            return None, KVStoreTimeout(f"ndengine.kv store {self._name!r}: {what}: no answer "
                                        f"from the scheduler within "
                                        f"{self._timeout + GRACE:g} s")
        except Exception as exc:  # noqa: BLE001 - a comm failure: the op's error
            error = KVStoreError(f"ndengine.kv store {self._name!r}: {what} failed: "
                                 f"{type(exc).__name__}: {exc}")
            error.__cause__ = exc
            return None, error
        kind = reply.get("error") if isinstance(reply, dict) else None
        if kind is None:
            return reply, None
        cls = {"timeout": KVStoreTimeout, "lost": WorkerLost, "key": KeyError,
               "value": ValueError}.get(kind, KVStoreError)
        return None, cls(reply["message"])

    def _call(self, method, **kwargs):
        """A blocking RPC (registration, updater, barrier): its error raises here."""
        future = self._remote(method, **kwargs)
        try:
            future.result(self._timeout + 2 * GRACE)
        except concurrent.futures.TimeoutError:
            future.cancel()
        except Exception:  # noqa: BLE001 - reported by _outcome below
            pass
        reply, error = self._outcome(future, method) if future.done() else (
            None, KVStoreTimeout(f"ndengine.kv store {self._name!r}: {method}: no answer"))
        if error is not None:
            raise error
        return reply

    def _transfer(self, method, what, key, reads, writes, priority, **kwargs):
        """Push the async engine op of one RPC: reads are sent as ``value``, the reply's
        value lands in ``writes``."""
        link = self._links.get(key)
        if link is None:
            link = self._links[key] = Link()

        def run(inputs, deliver):
            if inputs:
                kwargs["value"] = ToPickle(inputs[0])  # zero copy: the op holds the array
            future = self._remote(method, key=key, **kwargs)

            def finished(future):
                reply, error = self._outcome(future, what)
                if error is not None:
                    deliver(error=error)
                else:
                    deliver([reply["value"]] if writes else None)
            future.add_done_callback(finished)
        push_transfer(run, reads, writes, (link,), priority, f"kv_{method} {key!r}")

    # ------------------------------------------------------------ staging
    def _merged(self, key, values):
        """The devices' values summed on the CPU, in the key's dtype (pushed ops)."""
        dtype = self._specs[key][1]
        merged = None
        for x in values:
            x = x.as_in_context(cpu())
            if x.dtype != dtype:
                x = x.astype(dtype)
            merged = x if merged is None else merged + x
        return merged

    def _receiver(self, key, outs):
        """The CPU array a reply lands in: the first out when it is on the CPU."""
        if outs[0].context.device_type == "cpu":
            return outs[0], outs[1:]
        shape, dtype = self._specs[key]
        return empty(shape, dtype=dtype, ctx=cpu()), outs

    # ------------------------------------------------------------ the kind
    def _init(self, key, value):
        self._rounds[key] = 0
        if self._rank == 0:
            self._transfer("init", f"init of key {key!r}", key, [self._merged(key, [value])],
                           [], 0)

    def _push(self, key, values, priority):
        self._rounds[key] += 1
        self._transfer("push", f"push of key {key!r}", key, [self._merged(key, values)], [],
                       priority, round=self._rounds[key])

    def _pull(self, key, outs, priority):
        target, rest = self._receiver(key, outs)
        self._transfer("pull", f"pull of key {key!r}", key, [], [target], priority,
                       round=self._rounds[key], timeout=self._timeout)
        for out in rest:
            target.copyto(out)

    def _pushpull(self, key, values, outs, priority):
        merged = self._merged(key, values)
        target, rest = self._receiver(key, outs)
        self._rounds[key] += 1
        self._transfer("pushpull", f"pushpull of key {key!r}", key, [merged], [target],
                       priority, round=self._rounds[key], timeout=self._timeout)
        for out in rest:
            target.copyto(out)

    def _set_updater(self, updater):
        if self._rank == 0:  # rank 0's updater runs on the server, as MXNet's
            self._call("updater", updater=_pickle.dumps(updater))

    def barrier(self):
        self._check_open()
        self._barriers += 1
        self._call("barrier", count=self._barriers, timeout=self._timeout)

    def close(self):
        """Wait for this process's pending ops, then leave the store: a round that still
        needs this rank fails at once in the others. Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            waitall()
        except Exception:  # noqa: BLE001 - errors stay with the arrays they failed
            pass
        try:
            self._call("close")
        except Exception:  # noqa: BLE001 - the scheduler may be gone already
            pass
        if self._owns_client:
            self._client.close()


def _run_as_rank(pickled_fn, rank, num_workers, name, args, kwargs):
    """A launched task: fn runs with create('dask') seeing this rank; its stores are closed
    when it returns."""
    fn = cloudpickle.loads(pickled_fn)
    stores = []
    _launched.context = (rank, num_workers, name, stores)
    try:
        return fn(*args, **kwargs)
    finally:
        _launched.context = None
        for store in stores:
            store.close()


def launch(client, fn, *args, workers=None, **kwargs):
    """Run ``fn(*args, **kwargs)`` once on each dask worker (``workers``: addresses; default
    every worker now), as kv ranks 0 .. n-1 in address order: inside it, ``create('dask')``
    needs no arguments. Returns the futures, in rank order (``client.gather`` them). Each
    launch gets a store name of its own. A rank whose worker leaves the cluster before its
    function returns fails with WorkerLost (server.py), as the others' waits on it do."""
    addresses = sorted(workers if workers is not None
                       else client.scheduler_info(n_workers=-1)["workers"])
    if not addresses:
        raise ValueError("launch: the cluster has no workers")
    launch_id = uuid.uuid4().hex[:12]
    name = f"launch-{launch_id}"
    # the server fails the task of a rank whose worker leaves (dask would keep it waiting for
    # that worker forever): it must be on the scheduler before any worker can leave
    client.run_on_scheduler(_server.install)
    # cloudpickle, not the task's pickle: it honours register_pickle_by_value, so a function
    # of a module the workers cannot import can still be launched
    pickled_fn = cloudpickle.dumps(fn)
    return [client.submit(_run_as_rank, pickled_fn, rank, len(addresses), name, args, kwargs,
                          key=_server.launch_key(launch_id, rank), workers=[address],
                          allow_other_workers=False, pure=False, retries=0)
            for rank, address in enumerate(addresses)]
