"""Fused element-wise kernels (ndengine.ops.fusion.kernel) against NumPy's unfused op sequence.

    python bench/fusion_kernels.py [--quick] [--repeat 5] [--threads N]

Ops level, no engine: each workload is one ``FusedProgram`` built once, run by its kernel
(outputs allocated per call, as NumPy's expression allocates its result), timed in
interleaved rounds against the same expression written with NumPy.  Rows:

  NumPy           the expression, op by op (temporaries included)
  fused auto      what the fuser picks (compiled kernel for exact-arithmetic programs; the
                  blocked evaluator where NumPy's SIMD transcendentals are needed)
  fused blocked   the registered ops' loops on 256 KB blocks, over the threads
  fused numba     the generated kernel (for transcendental programs within 4 ulp)

The bytes-moved floor: (distinct inputs + outputs) x bytes / copy bandwidth, the bandwidth
measured with ``a[:] = b`` on a large array (bytes read + written per second).  "floor %"
is floor time / fused time: near 100% is as fast as memory allows.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import best_of_interleaved, header  # noqa: E402

from ndengine.ops.fusion import kernel as fusion  # noqa: E402
from ndengine.ops.fusion.kernel import ProgramBuilder  # noqa: E402


def copy_bandwidth(n, repeat):
    a = np.ones(n, np.float32)
    b = np.empty_like(a)

    def copy():
        b[:] = a
    timing = best_of_interleaved({"copy": copy}, repeat)["copy"]
    return 2 * a.nbytes / timing.best  # bytes read + written per second


# ------------------------------------------------------------------ workloads

def scale_chain(n):
    a = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    b = ProgramBuilder()
    x = b.array(a)
    for _ in range(10):
        x = b.apply("add", b.apply("multiply", x, 1.0001), 0.5)
    program = b.build(outputs=[x])

    def numpy_version():
        y = a
        for _ in range(10):
            y = y * 1.0001 + 0.5
        return y
    return "10 x (a*1.0001+0.5), float32", program, [a], numpy_version, 2 * a.nbytes


def transcendental_chain(n):
    a = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    b = ProgramBuilder()
    x = b.array(a)
    for _ in range(5):
        x = b.apply("exp", b.apply("sin", x))
    program = b.build(outputs=[x])

    def numpy_version():
        y = a
        for _ in range(5):
            y = np.exp(np.sin(y))
        return y
    return "5 x exp(sin(a)) (10 ops), float32", program, [a], numpy_version, 2 * a.nbytes


def black_scholes(n):
    rng = np.random.default_rng(2)
    S = rng.uniform(10, 50, n).astype(np.float32)
    K = rng.uniform(10, 50, n).astype(np.float32)
    T = rng.uniform(0.2, 2, n).astype(np.float32)
    r, v = 0.02, 0.3
    b = ProgramBuilder()
    s, k, t = b.array(S), b.array(K), b.array(T)

    def cnd(x):  # 0.5 * (1 + tanh(0.7978845608 * (x + 0.044715 * x**3)))
        inner = b.apply("multiply", b.apply("add", x, b.apply("multiply", b.apply(
            "power", x, 3.0), 0.044715)), 0.7978845608)
        return b.apply("multiply", b.apply("add", b.apply("tanh", inner), 1.0), 0.5)
    vsqrt = b.apply("multiply", b.apply("sqrt", t), v)
    d1 = b.apply("true_divide", b.apply("add", b.apply("log", b.apply("true_divide", s, k)),
                                        b.apply("multiply", t, r + 0.5 * v * v)), vsqrt)
    d2 = b.apply("subtract", d1, vsqrt)
    discount = b.apply("exp", b.apply("multiply", t, -r))
    call = b.apply("subtract", b.apply("multiply", s, cnd(d1)),
                   b.apply("multiply", b.apply("multiply", k, discount), cnd(d2)))
    program = b.build(outputs=[call])

    def numpy_cnd(x):
        return (np.tanh((x + x ** 3.0 * 0.044715) * 0.7978845608) + 1.0) * 0.5

    def numpy_version():
        vs = np.sqrt(T) * v
        d1 = (np.log(S / K) + T * (r + 0.5 * v * v)) / vs
        d2 = d1 - vs
        return S * numpy_cnd(d1) - K * np.exp(T * -r) * numpy_cnd(d2)
    return "Black-Scholes, float32", program, [S, K, T], numpy_version, 4 * S.nbytes


def kmeans_distance(points, centres=16, dims=8):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((points, dims)).astype(np.float32)
    C = rng.standard_normal((centres, dims)).astype(np.float32)
    b = ProgramBuilder()
    d = b.apply("subtract", b.array(X[:, None, :]), b.array(C[None, :, :]))
    program = b.build(reduction=("sum", b.apply("power", d, 2.0), 2, False))

    def numpy_version():
        return ((X[:, None, :] - C[None, :, :]) ** 2).sum(2)
    moved = X.nbytes + points * centres * 4  # read X, write the distances
    return (f"k-means distances ({points:,} x {dims}, {centres} centres)", program,
            [X[:, None, :], C[None, :, :]], numpy_version, moved)


# ------------------------------------------------------------------ running

def run_workload(make, repeat, threads, bandwidth):
    title, program, arrays, numpy_version, moved = make()
    exact = program.exact_with(program.scalar_values)
    runners = {"NumPy": numpy_version}
    auto = fusion.kernel_for(program)
    inexact = fusion.kernel_for(program, allow_inexact=True)
    runners["fused auto"] = lambda: auto(arrays, threads=threads)
    runners["fused blocked"] = lambda: auto(arrays, threads=threads, evaluator="blocked")
    runners["fused numba"] = lambda: inexact(arrays, threads=threads, evaluator="numba")
    expected = numpy_version()
    start = time.perf_counter()
    for name in ("fused numba", "fused auto"):  # compile (or load) before timing
        (got,) = runners[name]()
        if exact or name == "fused auto":
            np.testing.assert_allclose(got, expected, rtol=2e-6 if not exact else 1e-6,
                                       atol=0)
        else:  # within a few ulp per op; cancellations make that absolute
            np.testing.assert_allclose(got, expected, rtol=1e-5,
                                       atol=1e-5 * float(np.abs(expected).max()))
    warm = time.perf_counter() - start
    timings = best_of_interleaved(runners, repeat)
    base = timings["NumPy"].best
    floor = moved / bandwidth
    print(f"\n{title}: {'exact' if exact else 'transcendentals'}, first fused calls "
          f"{warm:.2f} s (compile or cache load)")
    print(f"  {'':16s} {'ms':>8s} {'x faster':>9s} {'floor %':>8s} {'med/best':>9s}")
    for name, timing in timings.items():
        print(f"  {name:16s} {timing.best * 1e3:8.1f} {base / timing.best:9.2f} "
              f"{100 * floor / timing.best:8.0f} {timing.spread:9.2f}")
    print(f"  floor (bytes moved {moved / 1e6:.0f} MB / copy bandwidth): {floor * 1e3:.1f} ms")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, 2 rounds")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None,
                        help="thread budget of the fused kernels (default: every core)")
    args = parser.parse_args(argv)
    scale = 50 if args.quick else 1
    repeat = 2 if args.quick else args.repeat
    header("fused element-wise kernels vs NumPy's op-by-op sequence")
    bandwidth = copy_bandwidth(20_000_000 // scale, repeat)
    print(f"   copy bandwidth (a[:] = b, 80 MB): {bandwidth / 1e9:.1f} GB/s read+written")
    for make in (lambda: scale_chain(20_000_000 // scale),
                 lambda: transcendental_chain(20_000_000 // scale),
                 lambda: black_scholes(10_000_000 // scale),
                 lambda: kmeans_distance(1_000_000 // scale)):
        run_workload(make, repeat, args.threads, bandwidth)
    print()
    print(fusion.stats()["compile_seconds"], "s compiling or loading kernels in all")


if __name__ == "__main__":
    main()
