"""Minibatch SGD with momentum: softmax regression (64 features, 10 classes) on 256-row
batches picked by fancy indexing, one epoch per run, per engine kind, beside NumPy.

    python bench/sgd_step.py [--rows 80000] [--repeat 5] [--workers N] [--quick]
                             [--index numpy|ndarray|both]

The step is plain NumPy code against an ``xp`` namespace (numpy or ndengine), run literally:
``X[idx]`` with each batch's index array, ``logits.max(axis=1, keepdims=True)``,
``p[np.arange(n), y] -= 1``, ``xb.T @ p`` and in-place momentum updates. Its small, many ops
stress what lies above the per-op floor: the plan memo (an index array in a key), the
engine's reads of NDArray index arrays (``Y[idx]`` is one even with a NumPy ``idx``: they are
op inputs, never waited for at the call) and copies. ``--index numpy`` indexes with the
epoch's NumPy permutation, ``--index ndarray`` with an ndengine one (the same values). Each
figure is the best of --repeat runs after a warm-up, NumPy and the engines timed in
interleaved rounds; every run starts from the same weights, and the last weights are checked
against NumPy's.
"""
import argparse
import sys

import numpy as np

import ndengine as nd
from common import KINDS, best_of_interleaved, check_close, header, on_engine, ratio_line
from ndengine import engine

FEATURES, CLASSES, BATCH = 64, 10, 256
LR, MOMENTUM = 0.05, 0.9
TARGET_RATIO = 1.0  # x NumPy (issue 28): not slower


def sgd_epoch(xp, X, Y, order, W, b, vW, vb):
    """One epoch of minibatch SGD with momentum, in place on W, b, vW, vb; ``order`` is the
    epoch's shuffled row order (an index array of xp's or NumPy's)."""
    rows = np.arange(BATCH)
    for start in range(0, X.shape[0] - BATCH + 1, BATCH):
        idx = order[start:start + BATCH]
        xb, yb = X[idx], Y[idx]
        logits = xb @ W + b
        logits = logits - logits.max(axis=1, keepdims=True)
        e = xp.exp(logits)
        p = e / e.sum(axis=1, keepdims=True)
        p[rows, yb] -= 1
        p /= BATCH
        vW *= MOMENTUM
        vW -= LR * (xb.T @ p)
        vb *= MOMENTUM
        vb -= LR * p.sum(axis=0)
        W += vW
        b += vb
    return W


def make_data(rows, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((rows, FEATURES), dtype=np.float32)
    Y = rng.integers(0, CLASSES, rows)
    order = rng.permutation(rows)
    W0 = (rng.standard_normal((FEATURES, CLASSES)) * 0.01).astype(np.float32)
    return X, Y, order, W0


def numpy_run(data):
    X, Y, order, W0 = data
    W, b = W0.copy(), np.zeros(CLASSES, np.float32)
    return sgd_epoch(np, X, Y, order, W, b, np.zeros_like(W), np.zeros_like(b))


def ndengine_runner(data, ndarray_index):
    X, Y, order, W0 = data
    X_nd, Y_nd = nd.array(X), nd.array(Y)
    order_nd = nd.array(order) if ndarray_index else order

    def run():
        W, b = nd.array(W0), nd.zeros(CLASSES, dtype=np.float32)
        W = sgd_epoch(nd, X_nd, Y_nd, order_nd, W, b, nd.zeros(W.shape, dtype=np.float32),
                      nd.zeros(b.shape, dtype=np.float32))
        W.wait_to_read()
        nd.waitall()
        return W
    return run


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=80_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--quick", action="store_true", help="20,000 rows, 3 repeats")
    parser.add_argument("--index", choices=("numpy", "ndarray", "both"), default="both")
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.repeat = 20_000, 3
    data = make_data(args.rows)
    steps = args.rows // BATCH
    header(f"SGD epoch: {steps} steps of {BATCH}x{FEATURES} -> {CLASSES}, momentum, "
           f"best of {args.repeat}")
    want = numpy_run(data)
    engines = {kind: engine.create(kind, num_cpu_workers=args.workers) for kind in KINDS}
    variants = ("numpy", "ndarray") if args.index == "both" else (args.index,)
    for variant in variants:
        runners = {"NumPy": lambda: numpy_run(data)}
        for kind, eng in engines.items():
            run = ndengine_runner(data, variant == "ndarray")
            engine.set_engine(eng)
            check_close(f"{kind} ({variant} index)", run().asnumpy(), want, rtol=1e-3)
            runners[kind] = on_engine(eng, run)
        timings = best_of_interleaved(runners, args.repeat)
        base = timings["NumPy"].best
        print(f"\nindex arrays of {variant}:")
        print(f"  {'NumPy':28s} {base * 1e3:8.1f} ms  ({base / steps * 1e6:6.1f} us/step)")
        for kind in KINDS:
            best = timings[kind].best
            print(f"  {kind:28s} {best * 1e3:8.1f} ms  ({best / steps * 1e6:6.1f} us/step)")
            print(ratio_line(f"  {kind}", best / base, TARGET_RATIO))
    for eng in engines.values():
        engine.set_engine(eng)
        nd.waitall()
    return 0


if __name__ == "__main__":
    sys.exit(main())
