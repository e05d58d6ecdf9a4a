"""Data-parallel linear regression with ndengine's 'dask' KVStore, checked against one process.

    python examples/data_parallel_regression.py [--steps 50] [--workers 2]

A LocalCluster of worker processes each takes its shard of the data, computes its share of the
mean-squared-error gradient with ndengine arrays and pushes it; the KVStore's server sums the
shares and applies SGD to the stored weights (the updater runs where the key lives); each
worker pulls the new weights for its next step (MXNet's dist_sync training loop). The same
steps in one process, on all the data with the 'local' KVStore, must give the same weights up to
the order of the floating-point sums.
"""
import argparse
import sys

import numpy as np

import ndengine as nd


def make_data(n=2000, d=8, noise=0.01, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    true_w = rng.standard_normal(d)
    y = X @ true_w + noise * rng.standard_normal(n)
    return X, y, true_w


def _train(kv, X, y, n_total, steps, learning_rate):
    """The training loop every process runs: pull the weights, push the gradient share."""
    d = X.shape[1]
    kv.init("w", nd.zeros((d,)))
    kv.set_optimizer(nd.kv.SGD(learning_rate=learning_rate))
    Xs, ys = nd.array(X), nd.array(y)
    w = nd.zeros((d,))
    for _ in range(steps):
        kv.pull("w", out=w)  # returns at once; the gradient below waits for it in the engine
        residual = nd.dot(Xs, w) - ys
        kv.push("w", nd.dot(Xs.T, residual) * (2.0 / n_total))
    kv.pull("w", out=w)
    return w.asnumpy()


def train_shard(X, y, steps, learning_rate):
    """One worker's part (run by nd.kv.launch): its shard of the rows, by rank."""
    kv = nd.kv.create("dask")
    rows = np.array_split(np.arange(len(X)), kv.num_workers)[kv.rank]
    return _train(kv, X[rows], y[rows], len(X), steps, learning_rate)


def train_data_parallel(client, X, y, steps=50, learning_rate=0.1, workers=None,
                        timeout=120):
    """The weights every worker ends with (they must agree), trained on the cluster."""
    from distributed import wait
    futures = nd.kv.launch(client, train_shard, X, y, steps, learning_rate, workers=workers)
    wait(futures, timeout=timeout)
    results = [f.result() for f in futures]
    for other in results[1:]:
        np.testing.assert_array_equal(other, results[0])  # every worker pulled the same
    return results[0]


def train_one_process(X, y, steps=50, learning_rate=0.1):
    return _train(nd.kv.create("local"), X, y, len(X), steps, learning_rate)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    from distributed import Client, LocalCluster

    X, y, true_w = make_data()
    with LocalCluster(n_workers=args.workers, processes=True, threads_per_worker=1,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        parallel = train_data_parallel(client, X, y, args.steps)
    single = train_one_process(X, y, args.steps)
    np.set_printoptions(precision=6, suppress=True)
    print(f"{args.workers} workers (dask KVStore): {parallel}")
    print(f"one process (local KVStore): {single}")
    print(f"true weights:                {true_w}")
    difference = np.max(np.abs(parallel - single))
    print(f"largest difference: {difference:.3g}")
    np.testing.assert_allclose(parallel, single, rtol=1e-9, atol=1e-12)
    print("data-parallel and one-process weights agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
