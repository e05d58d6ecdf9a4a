"""Automatic fusion, end to end: plain NumPy-style code, the same function body run with
``xp=numpy`` and ``xp=ndengine``, interleaved in rounds; ratio = NumPy's time / ndengine's
(above 1: ndengine faster). The fusion issue's targets:

    python bench/fusion_targets.py [--quick] [--repeat 3] [--only NAME]

workload                                              target (x faster than NumPy)
affine      2 chains x 10 x a*1.0001+0.5, 20M float32         >= 5
exp-sin     2 chains x 10 x exp(sin(a)), 20M float32          >= 4
black-sch.  call and put, 10M float32                          >= 4
k-means     step, 1M x 8 points, 16 centres                    >= 3
stencil-1k  u[1:-1] += a*(u[2:]-2u[1:-1]+u[:-2]), 1,000 pts, 2,000 steps   >= 1/3
stencil-2M  same, 2M points, 200 steps                         >= 3
softmax-sgd batch 256 x 64, momentum updates in place, 200 steps  >= 1/1.5
tiny-chain  x = x + 1, 16 float32, 10,000 ops                  >= 1/2
Each ndengine figure waits for its result; results are checked against NumPy's first.
--quick divides sizes by 10 (a smoke run, figures not comparable to the targets).
"""
import argparse
import time

import numpy as np

import ndengine as nd
from common import check_close, header, verdict


def affine(xp, a, b):
    for _ in range(10):
        a = a * 1.0001 + 0.5
        b = b * 1.0001 + 0.5
    return a, b


def exp_sin(xp, a, b):
    for _ in range(10):
        a = xp.exp(xp.sin(a))
        b = xp.exp(xp.sin(b))
    return a, b


def _cnd(xp, x):
    return (xp.tanh((x + x ** 3.0 * 0.044715) * 0.7978845608) + 1.0) * 0.5


def black_scholes(xp, S, K, T):
    r, v = 0.02, 0.3
    vs = xp.sqrt(T) * v
    d1 = (xp.log(S / K) + T * (r + 0.5 * v * v)) / vs
    d2 = d1 - vs
    discount = K * xp.exp(T * -r)
    call = S * _cnd(xp, d1) - discount * _cnd(xp, d2)
    put = discount * _cnd(xp, -d2) - S * _cnd(xp, -d1)
    return call, put


def kmeans_step(xp, X, C):
    d = ((X[:, None, :] - C[None, :, :]) ** 2).sum(2)
    labels = d.argmin(1)
    return d, labels


def stencil(xp, u, steps):
    for _ in range(steps):
        u[1:-1] += 0.1 * (u[2:] - 2 * u[1:-1] + u[:-2])
    return (u,)


def softmax_sgd(xp, X, Y, W, V, steps):
    for _ in range(steps):
        z = X @ W
        z = z - z.max(1, keepdims=True)
        p = xp.exp(z)
        p /= p.sum(1, keepdims=True)
        g = X.T @ (p - Y) * (1.0 / X.shape[0])
        V *= 0.9
        V -= 0.01 * g
        W += V
    return (W,)


def tiny_chain(xp, x):
    for _ in range(10_000):
        x = x + 1
    return (x,)


def _workloads(scale):
    rng = np.random.default_rng(0)
    n20, n10 = 20_000_000 // scale, 10_000_000 // scale
    a, b = rng.random(n20, np.float32), rng.random(n20, np.float32)
    S = rng.uniform(10, 50, n10).astype(np.float32)
    K = rng.uniform(10, 50, n10).astype(np.float32)
    T = rng.uniform(0.2, 2, n10).astype(np.float32)
    X = rng.standard_normal((1_000_000 // scale, 8)).astype(np.float32)
    C = rng.standard_normal((16, 8)).astype(np.float32)
    u1k, u2m = rng.random(1000), rng.random(2_000_000 // scale)
    Xs = rng.standard_normal((256, 64)).astype(np.float32)
    Ys = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 256)]
    W0 = np.zeros((64, 10), np.float32)
    return [  # name, target (x faster), body, arrays (copied fresh per run), extra args
        ("affine", 5, affine, (a, b), ()),
        ("exp-sin", 4, exp_sin, (a, b), ()),
        ("black-scholes", 4, black_scholes, (S, K, T), ()),
        ("k-means", 3, kmeans_step, (X, C), ()),
        ("stencil-1k", 1 / 3, stencil, (u1k,), (2000,)),
        ("stencil-2M", 3, stencil, (u2m,), (200,)),
        ("softmax-sgd", 1 / 1.5, softmax_sgd, (Xs, Ys, W0, W0), (200,)),
        ("tiny-chain", 1 / 2, tiny_chain, (np.zeros(16, np.float32),), ()),
    ]


def _runner(xp, body, arrays, extra):
    def run():
        inputs = [np.array(a) for a in arrays] if xp is np else [nd.array(a) for a in arrays]
        if xp is nd:
            nd.waitall()
        start = time.perf_counter()
        results = body(xp, *inputs, *extra)
        if xp is nd:
            for r in results:
                r.wait_to_read()
        run.elapsed = time.perf_counter() - start
        run.results = results
    return run


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default=None)
    args = parser.parse_args()
    header("automatic fusion: plain code, numpy vs ndengine, interleaved")
    scale = 10 if args.quick else 1
    print(f"{'workload':15s} {'NumPy s':>9s} {'ndengine s':>11s} {'x faster':>9s} "
          f"{'target':>7s}  med/best")
    for name, target, body, arrays, extra in _workloads(scale):
        if args.only and args.only != name:
            continue
        runs = {"NumPy": _runner(np, body, arrays, extra),
                "ndengine": _runner(nd, body, arrays, extra)}
        for run in runs.values():
            run()
        for got, want in zip(runs["ndengine"].results, runs["NumPy"].results):
            check_close(name, got.asnumpy(), want, rtol=1e-4)
        times = {label: [] for label in runs}
        for _ in range(args.repeat):
            for label, run in runs.items():
                run()
                times[label].append(run.elapsed)
        best = {label: min(t) for label, t in times.items()}
        spread = max(sorted(t)[len(t) // 2] / min(t) for t in times.values())
        ratio = best["NumPy"] / best["ndengine"]
        print(f"{name:15s} {best['NumPy']:9.4f} {best['ndengine']:11.4f} {ratio:9.2f} "
              f"{target:7.2f}  {spread:.2f}  {verdict(ratio >= target)}")
    if not args.only:
        _memory_and_first_call(scale)
    stats = nd.core.lazy.program_stats()
    print(f"window programs: {stats}")


def _memory_and_first_call(scale):
    """Pool buffers a 10-op chain takes (target: the result's only), and the time of the
    first call of an expression never seen (target: <= 0.2 s more than NumPy's)."""
    from ndengine.core import storage
    a = nd.array(np.random.default_rng(1).random(20_000_000 // scale, np.float32))
    nd.waitall()
    before = storage.stats()
    x = a
    for _ in range(10):
        x = x * 1.0001 + 0.5
    x.wait_to_read()
    after = storage.stats()
    taken = (after["allocs"] + after["reuses"]) - (before["allocs"] + before["reuses"])
    print(f"10-op chain: {taken} pool buffer(s) of {x.nbytes / 2**20:.0f} MiB taken "
          f"(NumPy: 20 temporaries): {verdict(taken == 1)}")
    y = a
    start = time.perf_counter()
    for k in range(7):  # a structure no earlier run had (its constants are arguments)
        y = nd.tanh(y * 1.25 - 0.125) + nd.sqrt(nd.abs(y) + k)
    y.wait_to_read()
    first = time.perf_counter() - start
    an = a.asnumpy()
    start = time.perf_counter()
    yn = an
    for k in range(7):
        yn = np.tanh(yn * 1.25 - 0.125) + np.sqrt(np.abs(yn) + k)
    numpy_time = time.perf_counter() - start
    check_close("first call", y.asnumpy(), yn, rtol=1e-4)
    print(f"first call of a new 35-op expression: {first:.3f} s, NumPy {numpy_time:.3f} s: "
          f"{verdict(first <= numpy_time + 0.2)}")


if __name__ == "__main__":
    main()
