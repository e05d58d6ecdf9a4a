"""Speed by array size: three plain NumPy loops, one body run with ``xp=numpy`` and with
``xp=ndengine`` on the default engine, at array sizes from 16 to 16M float32, timed in
interleaved rounds; prints NumPy's time over ndengine's (above 1: ndengine is faster) and draws
it (``docs/speed_by_size.png``, the README's picture).

    python bench/speed_by_size.py [--quick] [--sizes N ...] [--repeat 5] [--out docs]
                                  [--no-plot]

The loops: ``x = x * 1.0001 + 0.5`` (cheap arithmetic, two ops a step), ``x = exp(x * -0.5 +
0.1)`` (a transcendental: NumPy's SIMD loop is the work) and ``s = sqrt(x * x + 1).sum()`` (a
reduction of a chain). The result is kept until ``waitall`` returns (ndengine computes
nothing nobody can read: a dropped result's fused window is never run). Each size runs
enough steps for ~20 ms of NumPy's time; a step on ndengine ends when its values are
computed (``waitall``). Figures are the steady state (the
best of --repeat rounds after a warm-up and ``settle``); the first call is not shown here:
``bench/fusion_first_calls.py`` and ``realistic_scripts.py`` print it.
"""
import argparse
import os
import time

import numpy as np

import ndengine as nd
from common import best_of_interleaved, header

SIZES = (16, 256, 4096, 65536, 1 << 20, 1 << 24)
QUICK_SIZES = (16, 4096, 1 << 20)
TARGET_SECONDS = 0.02


def arithmetic(xp, x, steps):
    for _ in range(steps):
        x = x * 1.0001 + 0.5
    return x


def transcendental(xp, x, steps):
    for _ in range(steps):
        x = xp.exp(x * -0.5 + 0.1)
    return x


def reduction(xp, x, steps):
    total = None
    for _ in range(steps):
        total = xp.sqrt(x * x + 1).sum()
    return total


LOOPS = {"x * 1.0001 + 0.5": arithmetic, "exp(x * -0.5 + 0.1)": transcendental,
         "sqrt(x * x + 1).sum()": reduction}


def steps_for(loop, size):
    """Steps that take NumPy about TARGET_SECONDS at this size (at least 2)."""
    x = np.random.default_rng(0).random(size, dtype=np.float32)
    loop(np, x, 2)
    start = time.perf_counter()
    loop(np, x, 4)
    per_step = (time.perf_counter() - start) / 4
    return max(2, min(20_000, int(TARGET_SECONDS / max(per_step, 1e-9))))


def measure(loop, size, repeat):
    """(NumPy seconds, ndengine seconds, steps) for ``loop`` at ``size``; the results agree."""
    data = np.random.default_rng(1).random(size, dtype=np.float32)
    on_nd = nd.asarray(data)
    steps = steps_for(loop, size)

    def numpy_run():
        loop(np, data, steps)

    def ndengine_run():
        result = loop(nd, on_nd, steps)  # kept alive: a dropped result is never computed
        nd.waitall()
        return result

    want = np.asarray(loop(np, data, steps))
    got = loop(nd, on_nd, steps)
    got = got.asnumpy() if isinstance(got, nd.NDArray) else np.asarray(got)
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=1e-5)
    timings = best_of_interleaved({"numpy": numpy_run, "ndengine": ndengine_run}, repeat)
    return timings["numpy"].best, timings["ndengine"].best, steps


def _size_label(n):
    for unit, scale in (("M", 1 << 20), ("K", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{unit}"
    return str(n)


def draw(results, sizes, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, speedups in results.items():
        ax.plot(sizes, speedups, marker="o", label=name)
    ax.axhline(1.0, color="grey", linestyle="--", linewidth=1)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xticks(sizes, [_size_label(n) for n in sizes])
    ticks = [2.0 ** k for k in range(-4, 5)]
    ax.set_yticks(ticks, [f"{t:g}x" for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel("array size (float32 elements)")
    ax.set_ylabel("NumPy's time / ndengine's time")
    ax.set_title(f"ndengine against NumPy by array size ({os.cpu_count()} cores; "
                 "above 1: faster)")
    ax.legend()
    ax.grid(True, which="major", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--sizes", type=int, nargs="*")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "docs"))
    parser.add_argument("--no-plot", action="store_true")
    args = parser.parse_args()
    sizes = tuple(args.sizes or (QUICK_SIZES if args.quick else SIZES))
    repeat = 2 if args.quick else args.repeat
    header("speed by array size: NumPy's time / ndengine's time (above 1: ndengine faster)")
    print(f"{'loop':24s}{'size':>10s}{'steps':>8s}{'NumPy ms':>10s}{'nd ms':>10s}"
          f"{'speed-up':>10s}")
    results = {}
    for name, loop in LOOPS.items():
        speedups = results[name] = []
        for size in sizes:
            numpy_s, nd_s, steps = measure(loop, size, repeat)
            speedups.append(numpy_s / nd_s)
            print(f"{name:24s}{size:>10d}{steps:>8d}{numpy_s * 1e3:>10.2f}{nd_s * 1e3:>10.2f}"
                  f"{numpy_s / nd_s:>10.2f}")
    if not args.no_plot:
        path = os.path.join(args.out, "speed_by_size.png")
        draw(results, sizes, path)
        print(f"drawn: {os.path.normpath(path)}")


if __name__ == "__main__":
    main()
