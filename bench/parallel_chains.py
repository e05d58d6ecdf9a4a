"""Parallel chains: two independent chains written as plain serial code, interleaved in one
loop, then waited; speed-up over the very same serial NumPy code, per engine kind.

    python bench/parallel_chains.py [--size 20000000] [--steps 10] [--repeat 2] [--quick]

Workload A ("affine"):  for 10 steps:  a = a * 1.0001 + 0.5;  b = b * 1.0001 + 0.5
Workload B ("exp-sin"): for 10 steps:  a = nd.exp(nd.sin(a)); b = nd.exp(nd.sin(b))
on two float32 arrays of --size elements (NumPy: the same lines with np.exp / np.sin).

What the engine can exploit: the two chains share no array, so their ops may run at the same
time (and each large kernel may also use every core itself). Targets: speed-up >= 1.5 on A
(memory-bound) and >= 2.0 on B (compute-bound). References on this machine: MXNet 0.12-0.2x
and 0.25x, dask ~1.9x and 2.2-3x. Each figure is the best of --repeat runs after a warm-up run
(which also compiles the kernels); med/best shows the noise.
"""
import argparse
import sys

import numpy as np

import ndengine as nd
from common import KINDS, best_of, check_close, dask_array, header, use_engine, verdict

TARGETS = {"affine": 1.5, "exp-sin": 2.0}


def affine_np(a, b, steps):
    for _ in range(steps):
        a = a * 1.0001 + 0.5
        b = b * 1.0001 + 0.5
    return a, b


def expsin_np(a, b, steps):
    for _ in range(steps):
        a = np.exp(np.sin(a))
        b = np.exp(np.sin(b))
    return a, b


def affine_nd(a, b, steps):
    for _ in range(steps):
        a = a * 1.0001 + 0.5
        b = b * 1.0001 + 0.5
    a.wait_to_read()
    b.wait_to_read()
    return a, b


def expsin_nd(a, b, steps):
    for _ in range(steps):
        a = nd.exp(nd.sin(a))
        b = nd.exp(nd.sin(b))
    a.wait_to_read()
    b.wait_to_read()
    return a, b


def affine_dask(da, a, b, steps):
    for _ in range(steps):
        a = a * 1.0001 + 0.5
        b = b * 1.0001 + 0.5
    return da.compute(a, b)


def expsin_dask(da, a, b, steps):
    for _ in range(steps):
        a = da.exp(da.sin(a))
        b = da.exp(da.sin(b))
    return da.compute(a, b)


WORKLOADS = {"affine": (affine_np, affine_nd, affine_dask),
             "exp-sin": (expsin_np, expsin_nd, expsin_dask)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=20_000_000, help="elements per array")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--workers", type=int, default=None, help="CPU workers (default: cores)")
    parser.add_argument("--kinds", nargs="+", default=list(KINDS), choices=KINDS)
    parser.add_argument("--workloads", nargs="+", default=list(WORKLOADS), choices=WORKLOADS)
    parser.add_argument("--quick", action="store_true", help="4M elements, 2 repeats")
    parser.add_argument("--no-dask", action="store_true", help="skip dask even if installed")
    parser.add_argument("--dask-chunks", default="auto", help="dask chunk size (elements)")
    args = parser.parse_args(argv)
    if args.quick:
        args.size, args.repeat = 4_000_000, 2

    header(f"parallel chains: 2 chains x {args.steps} steps on {args.size:,} float32 "
           f"({args.size * 4 / 1e6:.0f} MB each)")
    rng = np.random.default_rng(0)
    a0 = rng.random(args.size, dtype=np.float32)
    b0 = rng.random(args.size, dtype=np.float32)
    da = None if args.no_dask else dask_array()
    chunks = args.dask_chunks if args.dask_chunks == "auto" else int(args.dask_chunks)
    for name in args.workloads:
        np_fn, nd_fn, dask_fn = WORKLOADS[name]
        target = TARGETS[name]
        print(f"\n-- {name}: speed-up over serial NumPy (target >= {target:g}x)")
        want_a, want_b = np_fn(a0, b0, args.steps)
        base = best_of(lambda: np_fn(a0, b0, args.steps), args.repeat, warmup=0)
        print(f"{'implementation':34s} {'seconds':>8s} {'speed-up':>9s} {'med/best':>9s}")
        print(f"{'NumPy (serial)':34s} {base.best:8.3f} {1.0:8.2f}x {base.spread:9.2f}")
        for kind in args.kinds:
            use_engine(kind, args.workers)
            a, b = nd.array(a0), nd.array(b0)
            got_a, got_b = nd_fn(a, b, args.steps)  # the warm-up: compiles, fills the pool
            check_close(kind, got_a.asnumpy(), want_a)
            check_close(kind, got_b.asnumpy(), want_b)
            del got_a, got_b
            timing = best_of(lambda: nd_fn(a, b, args.steps), args.repeat, warmup=0)
            nd.waitall()
            speedup = base.best / timing.best
            print(f"ndengine {kind:25s} {timing.best:8.3f} {speedup:8.2f}x {timing.spread:9.2f}"
                  f"  {verdict(speedup >= target)}")
            del a, b
        if da is not None:
            a, b = da.from_array(a0, chunks=chunks), da.from_array(b0, chunks=chunks)
            got_a, got_b = dask_fn(da, a, b, args.steps)  # the warm-up
            check_close("dask", got_a, want_a)
            check_close("dask", got_b, want_b)
            del got_a, got_b
            timing = best_of(lambda: dask_fn(da, a, b, args.steps), args.repeat, warmup=0)
            label = f"dask (threads, {a.numblocks[0]} chunks/array)"
            print(f"{label:34s} {timing.best:8.3f} {base.best / timing.best:8.2f}x "
                  f"{timing.spread:9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
