"""Unary element-wise kernels, one core and all cores: our Numba loops vs NumPy's ufuncs.

    python bench/unary_ufuncs.py [--size 4000000] [--repeat 5] [--ops exp sin ...]

Per op and float dtype, in ms (best of --repeat after a warm-up):
  numpy      the NumPy ufunc with out=, one call (one core)
  numba-1    our serial Numba loop (one core)
  numba-N    our prange Numba loop (all cores)
  kernel     the registered CPU kernel as the engine calls it (whatever it chose)
The per-core comparison (numpy vs numba-1) decides which ops ``elementwise`` hands to NumPy.
Inputs are uniform in [-3, 3] (positive for log/sqrt, [-0.99, 0.99] for arcsin/arccos).
"""
import argparse
import sys
import time

import numpy as np

import ndengine.ops as ops
from ndengine.ops import OpReq
from ndengine.ops.elementwise import operators as elementwise

OPS = ["exp", "log", "log1p", "expm1", "sqrt", "sin", "cos", "tan", "tanh", "arcsin",
       "arccos", "arctan", "sigmoid", "relu", "square", "abs", "negative"]


def best_ms(fn, repeat):
    fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def inputs(name, dtype, size, rng):
    x = rng.uniform(-3, 3, size)
    if name in ("log", "log1p", "sqrt"):
        x = np.abs(x) + 0.01
    elif name in ("arcsin", "arccos"):
        x = x / 3.03
    return x.astype(dtype)


def numpy_fn(name):
    if name == "sigmoid":
        def sigmoid(x, out):
            np.negative(x, out=out)
            np.exp(out, out=out)
            np.add(out, 1, out=out)
            np.divide(1, out, out=out)
        return sigmoid
    if name == "relu":
        return lambda x, out: np.maximum(x, 0, out=out)
    ufunc = getattr(np, name)
    return lambda x, out: ufunc(x, out=out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=4_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--ops", nargs="+", default=OPS)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    print(f"{args.size:,} elements; ms, best of {args.repeat}")
    print(f"{'op':9s} {'dtype':8s} {'numpy':>8s} {'numba-1':>8s} {'numba-N':>8s} {'kernel':>8s}"
          f"  numba-1/numpy")
    specs = {name: elementwise.spec(name) for name in args.ops}
    for dtype in (np.float32, np.float64):
        for name in args.ops:
            x = inputs(name, dtype, args.size, rng)
            out = np.empty_like(x)
            loops = specs[name].numba_loops
            kernel = ops.get(name).kernels["cpu"]
            t_np = best_ms(lambda: numpy_fn(name)(x, out), args.repeat)
            t_serial = best_ms(lambda: loops.serial(x, out), args.repeat)
            t_parallel = best_ms(lambda: loops.parallel(x, out), args.repeat)
            t_kernel = best_ms(lambda: kernel([x], [out], [OpReq.WRITE_TO]), args.repeat)
            print(f"{name:9s} {np.dtype(dtype).name:8s} {t_np:8.2f} {t_serial:8.2f} "
                  f"{t_parallel:8.2f} {t_kernel:8.2f}  {t_serial / t_np:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
