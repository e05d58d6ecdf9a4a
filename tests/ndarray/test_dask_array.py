"""dask.array with NDArray chunks (ndengine/ndarray/dask_chunks.py), checked against NumPy.

Each expression runs on dask arrays of NDArrays and on dask arrays of NumPy arrays (or NumPy
itself): same values, same dtype, and the result is an NDArray. The threaded scheduler covers
the operations; a LocalCluster of two worker processes checks that chunks travel between
processes (pickled) and that the workers register NDArray too. Every compute has a deadline.
"""
import subprocess
import sys
import threading

import numpy as np
import pytest

import ndengine as nd
from ndengine.ndarray import dask_chunks

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")

TIMEOUT = 60  # seconds for any one compute: a hang fails the test instead of the CI job


def compute(array, scheduler="threads"):
    """``array.compute(scheduler=...)`` and the values, within TIMEOUT (a daemon thread,
    so a hung compute cannot keep the interpreter from exiting either)."""
    box = {}

    def run():
        try:
            result = array.compute(scheduler=scheduler)
            box["result"] = (result, result.asnumpy() if isinstance(result, nd.NDArray)
                             else np.asarray(result))
        except BaseException as exc:  # noqa: B902 - re-raised in the test's thread
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(TIMEOUT)
    if thread.is_alive():
        pytest.fail(f"compute did not finish within {TIMEOUT} s")
    if "error" in box:
        raise box["error"]
    return box["result"]


def check(result, values, expected, exact):
    assert type(result) is nd.NDArray
    expected = np.asarray(expected)
    assert values.dtype == expected.dtype and values.shape == expected.shape
    if exact:
        np.testing.assert_array_equal(values, expected)
    else:
        np.testing.assert_allclose(values, expected, rtol=1e-12, atol=1e-12)


A = np.random.default_rng(0).standard_normal((12, 10))
I = np.random.default_rng(1).integers(-100, 100, (12, 10))

# name -> (expression on a dask array, exact?): the same expression on NumPy's chunks is
# the oracle (reductions and products are not exact: the chunks change the summation order)
EXPRESSIONS = {
    "elementwise chain": (lambda d: np.exp(np.sin(d)) * 2 + d / 3 - abs(d), False),
    "sum": (lambda d: d.sum(), False),
    "sum axis 0": (lambda d: d.sum(axis=0), False),
    "mean axis 1": (lambda d: d.mean(axis=1), False),
    "max axis 1": (lambda d: d.max(axis=1), True),
    "argmin": (lambda d: d.argmin(axis=0), True),
    "std": (lambda d: d.std(axis=0, ddof=1), False),
    "keepdims": (lambda d: d.min(axis=0, keepdims=True), True),
    "matmul": (lambda d: d @ d.T, False),
    "dot": (lambda d: da.dot(d.T, d), False),
    "tensordot": (lambda d: da.tensordot(d, d, axes=([0], [0])), False),
    "einsum": (lambda d: da.einsum("ij,kj->ik", d, d), False),
    "transpose": (lambda d: d.T, True),
    "reshape": (lambda d: d.reshape(120), True),
    "slicing": (lambda d: d[1:11:2, ::-3], True),
    "integer index": (lambda d: d[5], True),
    "fancy index": (lambda d: d[[0, 7, 3]], True),
    "concatenate": (lambda d: da.concatenate([d, d[:4]], axis=0), True),
    "stack": (lambda d: da.stack([d, -d], axis=1), True),
    "where": (lambda d: da.where(d > 0, d, 0), True),
    "astype": (lambda d: (d * 10).astype(np.int32), True),
    "cumsum": (lambda d: d.cumsum(axis=1), False),
    "rechunk": (lambda d: d.rechunk((12, 3)) + 1, True),
    "map_blocks": (lambda d: d.map_blocks(lambda b: b * 2), True),
}


@pytest.mark.parametrize("name", EXPRESSIONS)
@pytest.mark.parametrize("values", [A, I], ids=["float64", "int64"])
def test_threaded_scheduler_matches_numpy(name, values):
    expression, exact = EXPRESSIONS[name]
    lazy = expression(da.from_array(nd.array(values), chunks=(6, 5)))
    assert isinstance(lazy._meta, nd.NDArray)
    result, got = compute(lazy)
    expected = expression(da.from_array(values, chunks=(6, 5))).compute(scheduler="sync")
    check(result, got, expected, exact)


def test_meta_is_an_empty_ndarray():
    dask_chunks.register()  # done at import already: a second call changes nothing
    d = da.from_array(nd.array(A), chunks=(6, 5))
    assert type(d._meta) is nd.NDArray and d._meta.shape == (0, 0)
    assert d._meta.dtype == A.dtype
    assert "chunktype=ndengine.NDArray" in repr(d)


def test_percentile_values():
    # the merge step is dask's merge_percentiles, whose np.interp ndengine lacks: its
    # result comes back from NumPy's fallback (a NumPy array), with the right values
    x = np.arange(100.0)
    d = da.from_array(nd.array(x), chunks=25)
    _, got = compute(da.percentile(d, [10, 50, 90]))
    np.testing.assert_allclose(got, da.percentile(da.from_array(x, chunks=25),
                                                  [10, 50, 90]).compute())


def test_ndarray_operand_with_a_dask_array():
    d = da.from_array(nd.array(A), chunks=(6, 5))
    two = nd.array(2.0)
    for lazy in (d * two, two * d, np.multiply(two, d), two < d):
        assert isinstance(lazy, da.Array)
        result, got = compute(lazy)
        assert type(result) is nd.NDArray
    np.testing.assert_array_equal(compute(two * d)[1], 2.0 * A)


def test_sizeof_and_tokenize():
    from dask.base import tokenize
    from dask.sizeof import sizeof
    x = nd.array(A)
    assert sizeof(x) == A.nbytes
    assert sizeof(x[::2, 1:]) == A[::2, 1:].nbytes  # a view: its own elements, as NumPy's
    assert tokenize(x) == tokenize(nd.array(A))  # by value, as for NumPy's arrays
    assert tokenize(x) != tokenize(x + 1)


def test_ndengine_backend_creates_ndarray_chunks():
    with dask.config.set({"array.backend": "ndengine"}):
        ones = da.ones((6, 4), chunks=(3, 2))
        ramp = da.arange(10, chunks=4)
    check(*compute(ones + ramp[:4]), np.ones((6, 4)) + np.arange(4), exact=True)
    converted = da.from_array(A, chunks=(6, 5)).to_backend("ndengine")
    check(*compute(converted.sum(axis=0)), A.sum(axis=0), exact=False)
    back, values = compute(da.from_array(nd.array(A), chunks=6).to_backend("numpy"))
    assert type(back) is np.ndarray and np.array_equal(values, A)


def test_ndengine_backend_has_no_random_arrays():
    with dask.config.set({"array.backend": "ndengine"}):
        with pytest.raises(NotImplementedError, match="no random arrays"):
            da.random.random((4, 4), chunks=2)


@pytest.mark.parametrize("first, then", [("ndengine", "dask.array"), ("dask.array", "ndengine")])
def test_registered_in_either_import_order(first, then):
    code = (f"import sys, {first}, {then}\n"
            "import dask.array as da, ndengine as nd, numpy as np\n"
            "from ndengine.ndarray import dask_chunks\n"
            "assert dask_chunks._registered[0]\n"
            "assert not [f for f in sys.meta_path if getattr(f, 'name', '') == 'dask.array']\n"
            "d = da.from_array(nd.arange(10.0), chunks=5)\n"
            "assert type(d.sum().compute(scheduler='sync')) is nd.NDArray\n"
            "print(float(da.percentile(d, 50).compute(scheduler='sync')))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    # (dask's percentile merges the chunks' percentiles: not NumPy's 4.5, dask's own 5.0)
    expected = da.percentile(da.from_array(np.arange(10.0), chunks=5), 50).compute()
    assert float(done.stdout) == float(expected)


# ---------------------------------------------------------------- two worker processes
@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                       dashboard_address=None)
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def on_cluster(client, lazy):
    result = client.compute(lazy).result(timeout=TIMEOUT)
    return result, result.asnumpy()


CLUSTER_EXPRESSIONS = ("elementwise chain", "sum", "sum axis 0", "matmul", "slicing",
                       "concatenate")


@pytest.mark.parametrize("name", CLUSTER_EXPRESSIONS)
def test_cluster_matches_numpy(client, name):
    expression, exact = EXPRESSIONS[name]
    lazy = expression(da.from_array(nd.array(A), chunks=(6, 5)))  # 4 chunks: both workers
    result, got = on_cluster(client, lazy)
    check(result, got, expression(A), exact)


def test_cluster_workers_hold_ndarrays(client):
    d = da.from_array(nd.array(A), chunks=(6, 5)).persist()
    try:
        distributed.wait(d, timeout=TIMEOUT)
        keys = {str(key) for row in d.__dask_keys__() for key in row}
        held = client.run(_held)
        # the chunks of d, once each: a worker may also hold a replica of a chunk (one that
        # an earlier test's computation moved, under the same content-derived key)
        chunks = {key: (kind, size) for worker in held.values()
                  for key, kind, size in worker if key in keys}
        assert set(chunks) == keys, held
        assert {kind for kind, _ in chunks.values()} == {"NDArray"}, held
        # each worker registered NDArray with its own dask.sizeof: the sizes it reports
        # are the chunks' bytes (unregistered, sys.getsizeof would say ~100 bytes each)
        assert sum(size for _, size in chunks.values()) == A.nbytes
    finally:
        del d


def _held(dask_worker):
    """(key, type name, size the worker accounts for it) of each value the worker holds."""
    return [(str(key), type(dask_worker.data[key]).__name__, dask_worker.state.tasks[key].nbytes)
            for key in dask_worker.data]
