"""The 'dask' KVStore (ndengine.kv) across worker processes of one LocalCluster.

One module-scoped cluster of 3 worker processes; every blocking step has a timeout, so that a
bug fails the test instead of hanging the run. The dead-worker test kills a worker: it runs
last (a nanny restarts the worker under a new address).
"""
import importlib.util
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
import cloudpickle  # noqa: E402 - distributed's own dependency

import ndengine as nd  # noqa: E402

# The workers cannot import this test module: its functions travel by value.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

WAIT = 60  # seconds: the most any gather of the tests may take
SHAPE = (3, 4)
BIG = (500, 500)  # 2 MB of float64: a pooled array, sent without a copy


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=3, processes=True, threads_per_worker=1,
                                       dashboard_address=":0")
    client = distributed.Client(cluster)
    try:
        client.wait_for_workers(3, timeout=WAIT)
        yield client
    finally:
        client.close()
        cluster.close()


def results(client, futures):
    distributed.wait(futures, timeout=WAIT)
    return [f.result() for f in futures]


# ---------------------------------------------------------------- the workers' programs
def sync_rounds(steps):
    """MXNet's dist_sync_kvstore.py check: every rank pushes ones * (rank + 1)."""
    kv = nd.kv.create("dask")
    rank, n = kv.rank, kv.num_workers
    total = n * (n + 1) / 2
    kv.init([3, "w"], [nd.zeros(SHAPE), nd.zeros(BIG)])
    kv.init("devices", nd.zeros(SHAPE))
    seen = []
    out, big = nd.zeros(SHAPE), nd.zeros(BIG)
    for _ in range(steps):
        kv.push([3, "w"], [nd.ones(SHAPE) * (rank + 1), nd.ones(BIG) * (rank + 1)])
        kv.pull([3, "w"], out=[out, big])
        seen.append((float(out.asnumpy().min()), float(out.asnumpy().max()),
                     float(big.asnumpy().min()), float(big.asnumpy().max())))
    # several devices in one worker: summed here, then across workers
    kv.push("devices", [nd.ones(SHAPE, ctx=nd.cpu(0)), nd.ones(SHAPE, ctx=nd.cpu(1)) * 2])
    outs = [nd.zeros(SHAPE, ctx=nd.cpu(0)), nd.zeros(SHAPE, ctx=nd.cpu(1))]
    kv.pull("devices", out=outs)
    devices = [float(o.asnumpy().max()) for o in outs]
    value = nd.ones(SHAPE) * (rank + 1)
    kv.pushpull(3, value)  # out=None: the aggregate lands in value
    kv.barrier()
    return rank, n, total, seen, devices, float(value.asnumpy().max())


def updater_rounds(steps, rate):
    kv = nd.kv.create("dask")

    def updater(key, grad, weight):
        weight += grad * rate

    kv.set_updater(updater)
    kv.init(9, nd.ones(SHAPE))
    kv.init("sgd", nd.zeros(SHAPE))
    out = nd.zeros(SHAPE)
    for _ in range(steps):
        kv.push(9, nd.ones(SHAPE) * (kv.rank + 1))
    kv.pull(9, out=out)
    return kv.num_workers, float(out.asnumpy().min()), float(out.asnumpy().max())


def uneven_pushes(timeout):
    kv = nd.kv.create("dask", timeout=timeout)
    kv.init("u", nd.zeros(SHAPE))
    out = nd.zeros(SHAPE)
    kv.push("u", nd.ones(SHAPE))
    kv.pull("u", out=out)
    first = float(out.asnumpy().max())
    if kv.rank != 0:
        time.sleep(timeout + 1.0)  # alive, and silent: leaving would be another error
        return kv.rank, first, None, 0.0
    kv.push("u", nd.ones(SHAPE))  # a push the others never match
    start = time.monotonic()
    kv.pull("u", out=out)  # returns at once: the error waits for the wait
    returned = time.monotonic() - start
    try:
        out.asnumpy()
    except nd.kv.KVStoreTimeout as exc:
        return kv.rank, first, str(exc), returned
    return kv.rank, first, "no error", returned


def dies_at_step_two(timeout):
    kv = nd.kv.create("dask", timeout=timeout)
    kv.init("d", nd.zeros(SHAPE))
    out = nd.zeros(SHAPE)
    for step in range(4):
        if step == 2 and kv.rank == kv.num_workers - 1:
            os._exit(1)  # the process dies without a word
        kv.push("d", nd.ones(SHAPE))
        kv.pull("d", out=out)
        try:
            out.asnumpy()
        except nd.kv.WorkerLost as exc:
            return kv.rank, step, str(exc)
    return kv.rank, 4, "no error"


# ---------------------------------------------------------------- tests
def test_dist_sync_pulls_see_the_sum_of_every_workers_push(client):
    found = results(client, nd.kv.launch(client, sync_rounds, 3))
    assert sorted(r[0] for r in found) == [0, 1, 2]
    for rank, n, total, seen, devices, pushpulled in found:
        assert n == 3
        assert seen == [(total, total, total, total)] * 3  # exactly, every round
        assert devices == [3.0 * n, 3.0 * n]
        assert pushpulled == total


def test_updater_runs_on_the_server(client):
    steps, rate = 4, 0.5
    found = results(client, nd.kv.launch(client, updater_rounds, steps, rate))
    n = len(found)
    want = 1 + steps * rate * n * (n + 1) / 2  # MXNet's closed form
    assert found == [(n, want, want)] * n


def test_a_client_process_is_a_worker_too(client):
    """rank and num_workers given at create; push and pull return at once; errors of the
    arguments raise at the call."""
    kv = nd.kv.create("dask", client=client, rank=0, num_workers=1, name="client-test",
                      timeout=20)
    assert (kv.type, kv.rank, kv.num_workers) == ("dask", 0, 1)
    kv.init("a", nd.arange(12.0).reshape(SHAPE))
    out = nd.zeros(SHAPE)
    kv.pull("a", out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.arange(12.0).reshape(SHAPE))
    start = time.monotonic()
    for _ in range(3):
        kv.push("a", nd.ones(SHAPE) * 2)
        kv.pull("a", out=out)
    assert time.monotonic() - start < 1.0  # nothing waited for the network
    np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 2.0))
    with pytest.raises(KeyError):
        kv.pull("unknown", out=out)
    with pytest.raises(ValueError, match="shape"):
        kv.push("a", nd.zeros((2,)))
    kv.set_optimizer(nd.kv.SGD(learning_rate=0.25))
    kv.push("a", nd.ones(SHAPE))
    kv.pushpull("a", nd.ones(SHAPE), out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 1.5))
    kv.close()


def test_the_environment_names_the_scheduler(client, monkeypatch):
    monkeypatch.setenv("NDENGINE_KV_SCHEDULER", client.scheduler.address)
    monkeypatch.setenv("NDENGINE_KV_RANK", "0")
    monkeypatch.setenv("NDENGINE_KV_NUM_WORKERS", "1")
    monkeypatch.setenv("NDENGINE_KV_NAME", "env-test")
    monkeypatch.setenv("NDENGINE_KV_TIMEOUT", "15")
    with nd.kv.create("dask") as kv:  # its own client, from the environment
        assert kv.name == "env-test" and kv._timeout == 15.0
        assert kv._client is not client
        kv.broadcast("b", nd.ones(SHAPE) * 7, out=nd.zeros(SHAPE))
        out = nd.zeros(SHAPE)
        kv.pull("b", out=out)
        np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 7.0))


@pytest.mark.parametrize("name, value", [
    ("NDENGINE_KV_RANK", "first"), ("NDENGINE_KV_RANK", "-1"),
    ("NDENGINE_KV_NUM_WORKERS", "0"), ("NDENGINE_KV_TIMEOUT", "soon"),
])
def test_a_bad_kv_variable_raises_naming_it(client, monkeypatch, name, value):
    monkeypatch.setenv("NDENGINE_KV_RANK", "0")
    monkeypatch.setenv("NDENGINE_KV_NUM_WORKERS", "1")
    monkeypatch.setenv(name, value)
    with pytest.raises(ValueError, match=f"environment variable {name} must be .*, got "
                                         f"'{re.escape(value)}'"):
        nd.kv.create("dask", client=client)


def test_uneven_pushes_time_out_with_a_clear_error(client):
    start = time.monotonic()
    found = results(client, nd.kv.launch(client, uneven_pushes, 1.5))
    elapsed = time.monotonic() - start
    by_rank = {r[0]: r for r in found}
    assert all(r[1] == 3.0 for r in found)  # the even round completed
    rank, _, error, returned = by_rank[0]
    assert returned < 0.5, "the pull itself must not wait"
    assert "waited 1.5 s" in error and "rank 1" in error and "rank 2" in error, error
    assert elapsed < 30


def test_data_parallel_example_matches_one_process(client):
    path = Path(__file__).resolve().parents[2] / "examples" / "data_parallel_regression.py"
    spec = importlib.util.spec_from_file_location("data_parallel_regression", path)
    example = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = example  # cloudpickle sends registered modules' code by value
    spec.loader.exec_module(example)
    cloudpickle.register_pickle_by_value(example)
    X, y, true_w = example.make_data(n=600, d=5)
    workers = sorted(client.scheduler_info(n_workers=-1)["workers"])[:2]
    parallel = example.train_data_parallel(client, X, y, steps=20, workers=workers,
                                           timeout=WAIT)
    single = example.train_one_process(X, y, steps=20)
    np.testing.assert_allclose(parallel, single, rtol=1e-9, atol=1e-12)


def test_kv_benchmark_runs_and_prints_its_table():
    bench = Path(__file__).resolve().parents[2] / "bench"
    result = subprocess.run([sys.executable, str(bench / "kv.py"), "--quick"], cwd=bench,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = [line.split() for line in result.stdout.splitlines()
            if line.startswith(("scatter+gather", "push+pull", "pull", "pushpull"))]
    assert len(rows) == 8 and all(float(row[2]) > 0 for row in rows), result.stdout


def test_a_dead_worker_fails_the_others_waits_and_its_own_future(client):
    """Runs last: it kills a worker process. The others' waits raise WorkerLost, named, long
    before their timeout; the dead rank's own future fails with WorkerLost too, so a gather
    of the launch returns (it used to wait forever for a worker of that address)."""
    timeout = 40.0
    futures = nd.kv.launch(client, dies_at_step_two, timeout)
    start = time.monotonic()
    try:
        distributed.wait(futures, timeout=timeout / 2)  # raises TimeoutError if one hangs
    finally:
        for future in futures:
            if not future.done():
                future.cancel()  # ends a hanging one, so the module's cluster can close
    elapsed = time.monotonic() - start
    for rank, step, error in [f.result() for f in futures[:2]]:
        assert step == 2, (rank, step, error)
        assert "rank 2" in error and "left" in error, error
    assert futures[2].status == "error", futures[2]
    with pytest.raises(nd.kv.WorkerLost, match=r"rank 2's worker tcp://\S+ left the cluster"):
        client.gather(futures)
    assert elapsed < timeout / 2, f"took {elapsed:.1f} s: the loss was not noticed"
