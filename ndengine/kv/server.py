"""The 'dask' KVStore's server: a dask scheduler extension that holds every store's values.

``install`` (run on the scheduler by ``client.run_on_scheduler``) adds the handlers below to
the scheduler's RPC and registers the server as a scheduler plugin, so that it hears when a
worker or a client leaves. Why the scheduler: every process of a dask cluster already talks to
it, it outlives any worker (a dead worker cannot take the values with it), and it is the one
place that knows who left. The handlers run on the scheduler's event loop; only the merge of a
round (the sum, the updater) runs in a thread, so the loop stays responsive.

Rounds (MXNet's dist_sync). Each worker numbers its pushes of a key 1, 2, ...; round r of the
key completes when all num_workers pushes numbered r arrived: the server sums them (in rank
order), runs the updater on the sum and the stored value (or stores the sum, without one) and
advances ``done``. A pull carries the number of pushes its worker made to the key so far and is
answered once ``done`` reached it: it sees the aggregate of the round its own push was in. A
pull that waits longer than the store's timeout, or whose round needs a worker that left,
is answered with an error naming the missing ranks.

Store state, field by field (one per store name)
    num_workers   fixed by the first registration; a different one is refused.
    members       rank -> (worker address or None, client id): who registered the rank.
    gone          rank -> why it left ("closed its store", "its worker ... left"): a round that
                  needs such a rank fails at once.
    keys          key -> _Key.
    updater       the updater sent by rank 0 (unpickled here), or None: rounds store the sum.
    barriers      barrier number -> set of ranks that arrived.
    changed       an asyncio.Event set (and replaced) on every change: waiters re-check.

_Key, field by field
    value      the stored NumPy array (never written in place: replaced by each round, so a
               reply being sent is never torn), or None before rank 0's init arrived.
    done       how many rounds completed.
    pending    round -> {rank: pushed array} of the rounds not complete yet.
    busy       a merge is running (in a thread); the merging task completes the next rounds.
    error      why the key is broken (the updater raised), or None.

Replies are dicts: {"value": array} or {} on success, {"error": kind, "message": text} on
failure (kinds: "timeout", "lost", "key", "value", "updater"); the worker side turns them into
exceptions (dask_store.py), so no exception class has to travel.
"""
import asyncio
import time

import numpy as np
from distributed.diagnostics.plugin import SchedulerPlugin
from distributed.protocol import pickle as _pickle
from distributed.protocol.serialize import ToPickle

from .base import WorkerLost

__all__ = ["install", "Server", "EXTENSION", "launch_key"]

EXTENSION = "ndengine_kv"
# RPC name -> method (``leave``, not ``close``: SchedulerPlugin.close is the plugin's own hook)
HANDLERS = {"register": "register", "init": "init", "push": "push", "pull": "pull",
            "pushpull": "pushpull", "updater": "updater", "barrier": "barrier",
            "close": "leave"}


LAUNCH_KEY_PREFIX = "ndengine-kv-launch-"


def launch_key(launch_id, rank):
    """The dask key of one rank's task of a launch (dask_store.launch)."""
    return f"{LAUNCH_KEY_PREFIX}{launch_id}-rank{rank}"


def install(dask_scheduler=None):
    """Add the server to this scheduler, once (idempotent)."""
    if EXTENSION not in dask_scheduler.extensions:
        Server(dask_scheduler)
    return True


def _error(kind, message):
    return {"error": kind, "message": message}


class _Key:
    __slots__ = ("value", "done", "pending", "busy", "error")

    def __init__(self):
        self.value = None
        self.done = 0
        self.pending = {}
        self.busy = False
        self.error = None


class _Store:
    def __init__(self, name, num_workers):
        self.name = name
        self.num_workers = num_workers
        self.members = {}
        self.gone = {}
        self.keys = {}
        self.updater = None
        self.barriers = {}
        self.changed = asyncio.Event()

    def notify(self):
        self.changed.set()
        self.changed = asyncio.Event()

    def key(self, key):
        state = self.keys.get(key)
        if state is None:
            state = self.keys[key] = _Key()
        return state

    def who(self, rank):
        """A rank as errors name it: with its worker's address when known."""
        member = self.members.get(rank)
        if member is None:
            return f"rank {rank} (never registered)"
        return f"rank {rank} ({'worker ' + member[0] if member[0] else 'client ' + member[1]})"

    def lost(self, ranks, what):
        """The error for a wait that needs ``ranks``, if one of them left; else None."""
        left = [r for r in ranks if r in self.gone]
        if not left:
            return None
        why = "; ".join(f"{self.who(r)}: {self.gone[r]}" for r in left)
        return _error("lost", f"ndengine.kv store {self.name!r}: {what} can never complete: "
                              f"{why}")


class Server(SchedulerPlugin):
    """The stores of one scheduler (see the module docstring)."""

    name = "ndengine-kv"

    def __init__(self, scheduler):
        self.scheduler = scheduler
        self.stores = {}
        scheduler.extensions[EXTENSION] = self
        scheduler.handlers.update({f"ndkv_{rpc}": getattr(self, method)
                                   for rpc, method in HANDLERS.items()})
        scheduler.add_plugin(self, name=self.name, idempotent=True)

    # ------------------------------------------------------------ membership
    def register(self, name=None, rank=None, num_workers=None, worker=None, client=None,
                 **_):
        store = self.stores.get(name)
        if store is None:
            store = self.stores[name] = _Store(name, num_workers)
        elif store.num_workers != num_workers:
            return _error("value", f"ndengine.kv store {name!r} has {store.num_workers} "
                                   f"workers; this one says {num_workers}")
        if rank in store.members:
            return _error("value", f"ndengine.kv store {name!r}: rank {rank} is already taken "
                                   f"({store.who(rank)}); use another store name")
        store.members[rank] = (worker, client)
        store.notify()
        return {}

    def leave(self, name=None, rank=None, **_):
        store = self.stores.get(name)
        if store is not None:
            self._leave(store, rank, "closed its store")
        return {}

    def _leave(self, store, rank, why):
        store.gone.setdefault(rank, why)
        store.notify()
        if len(store.gone) >= store.num_workers and set(store.gone) >= set(store.members):
            del self.stores[store.name]  # everyone left: the name can start afresh

    def remove_worker(self, scheduler=None, worker=None, stimulus_id=None, **kwargs):
        self._left(lambda member: member[0] == worker, f"its worker {worker} left the cluster")
        self._fail_launched_ranks(scheduler or self.scheduler, worker,
                                  stimulus_id or f"ndengine-kv-worker-left-{time.time()}")

    @staticmethod
    def _fail_launched_ranks(scheduler, worker, stimulus_id):
        """A launched rank's task may run only on its worker (dask_store.launch): once that
        worker left, dask keeps it unrunnable ("no-worker") until a worker of that address
        comes back, which never happens, and a gather of the launch never returns. Each such
        task fails here with WorkerLost naming its rank (what the other ranks' waits raise)."""
        for task in list(scheduler.unrunnable):
            key = task.key
            if not (isinstance(key, str) and key.startswith(LAUNCH_KEY_PREFIX)
                    and task.worker_restrictions == {worker} and not task.loose_restrictions):
                continue
            rank = key.rsplit("-rank", 1)[1]
            error = WorkerLost(f"ndengine.kv launch: rank {rank}'s worker {worker} left the "
                               "cluster before its function returned")
            recommendations = scheduler.transition(
                key, "erred", stimulus_id=stimulus_id, cause=key,
                exception=_pickle.dumps(error), traceback=None, exception_text=repr(error),
                traceback_text="")
            scheduler.transitions(recommendations, stimulus_id=stimulus_id)

    def remove_client(self, scheduler=None, client=None, **kwargs):
        self._left(lambda member: member[1] == client,
                   f"its process left (client {client} disconnected)")

    def _left(self, matches, why):
        for store in list(self.stores.values()):
            for rank, member in list(store.members.items()):
                if rank not in store.gone and matches(member):
                    self._leave(store, rank, why)

    # ------------------------------------------------------------ values
    def _store(self, name, rank):
        store = self.stores.get(name)
        if store is None or rank not in store.members:
            return None, _error("value", f"ndengine.kv store {name!r}: rank {rank} is not "
                                         "registered (was the store closed?)")
        return store, None

    def init(self, name=None, rank=None, key=None, value=None, **_):
        store, error = self._store(name, rank)
        if error:
            return error
        state = store.key(key)
        if state.value is not None:
            return _error("value", f"ndengine.kv store {name!r}: key {key!r} is already "
                                   "initialised")
        state.value = value
        store.notify()
        self._advance(store, key, state)
        return {}

    def updater(self, name=None, rank=None, updater=None, **_):
        store, error = self._store(name, rank)
        if error:
            return error
        store.updater = _pickle.loads(updater)
        return {}

    def push(self, name=None, rank=None, key=None, round=None, value=None, **_):
        store, error = self._store(name, rank)
        if error:
            return error
        state = store.key(key)
        state.pending.setdefault(round, {})[rank] = value
        self._advance(store, key, state)
        return {}

    async def pull(self, name=None, rank=None, key=None, round=0, timeout=None, **_):
        store, error = self._store(name, rank)
        if error:
            return error
        state = store.key(key)

        def check():
            if state.error is not None:
                return _error("updater", state.error)
            if state.value is None:
                return store.lost([0], f"the init of key {key!r}")
            if state.done >= round:
                return {"value": ToPickle(state.value)}
            return store.lost(self._missing(store, state),
                              f"round {state.done + 1} of key {key!r}")

        def expired():
            if state.value is None:
                return _error("timeout", f"ndengine.kv store {name!r}: key {key!r} was not "
                                         f"initialised by rank 0 within {timeout:g} s")
            missing = ", ".join(store.who(r) for r in self._missing(store, state))
            return _error("timeout",
                          f"ndengine.kv store {name!r}: rank {rank}'s pull of key {key!r} "
                          f"waited {timeout:g} s for round {state.done + 1}; no push from "
                          f"{missing} (uneven pushes across workers?)")
        return await _wait(store, check, timeout, expired)

    async def pushpull(self, name=None, rank=None, key=None, round=None, value=None,
                       timeout=None, **_):
        reply = self.push(name, rank, key, round, value)
        if reply:
            return reply
        return await self.pull(name, rank, key, round, timeout)

    async def barrier(self, name=None, rank=None, count=None, timeout=None, **_):
        store, error = self._store(name, rank)
        if error:
            return error
        arrived = store.barriers.setdefault(count, set())
        arrived.add(rank)
        store.barriers.pop(count - 2, None)  # every rank has left barrier count - 2
        store.notify()

        def waiting():
            return sorted(set(range(store.num_workers)) - arrived)

        def check():
            if not waiting():
                return {}
            return store.lost(waiting(), f"barrier {count}")

        def expired():
            return _error("timeout", f"ndengine.kv store {name!r}: barrier {count} waited "
                                     f"{timeout:g} s for " +
                                     ", ".join(store.who(r) for r in waiting()))
        return await _wait(store, check, timeout, expired)

    # ------------------------------------------------------------ rounds
    @staticmethod
    def _missing(store, state):
        arrived = state.pending.get(state.done + 1, {})
        return [r for r in range(store.num_workers) if r not in arrived]

    def _advance(self, store, key, state):
        """Complete every full round of ``key``; the merges run in a task, one at a time."""
        if state.busy or state.error is not None:
            return
        if state.value is None or len(state.pending.get(state.done + 1, ())) < store.num_workers:
            return
        state.busy = True
        asyncio.ensure_future(self._complete_rounds(store, key, state))

    async def _complete_rounds(self, store, key, state):
        try:
            while (state.value is not None and
                   len(state.pending.get(state.done + 1, ())) == store.num_workers):
                parts = state.pending.pop(state.done + 1)
                state.value = await asyncio.to_thread(
                    _merge, key, [parts[r] for r in sorted(parts)], state.value,
                    store.updater)
                state.done += 1
                store.notify()
        except Exception as exc:  # noqa: BLE001 - the key's pulls report it
            state.error = (f"ndengine.kv store {store.name!r}: the update of key {key!r} "
                           f"in round {state.done + 1} raised {type(exc).__name__}: {exc}")
            store.notify()
        finally:
            state.busy = False


async def _wait(store, check, timeout, expired):
    """check()'s reply once it has one (re-checked at every change), else expired()'s."""
    deadline = time.monotonic() + timeout
    while True:
        reply = check()
        if reply is not None:
            return reply
        left = deadline - time.monotonic()
        if left <= 0:
            return expired()
        try:
            await asyncio.wait_for(store.changed.wait(), left)
        except asyncio.TimeoutError:
            pass


def _merge(key, parts, stored, updater):
    """One round's new value: the sum of the workers' pushes, through the updater if any."""
    total = np.array(parts[0], dtype=stored.dtype, copy=True)
    for part in parts[1:]:
        total += part
    if updater is None:
        return total
    from ..ndarray import array  # the updater takes NDArrays, as in MXNet
    weight = array(stored, dtype=stored.dtype)
    updater(key, array(total, dtype=stored.dtype), weight)
    return weight.asnumpy()
