"""Add bandwidth: ``c = a + b`` on two float32 arrays, a new output every time (a loop of
--loops, then one wait), in GB/s counting 3 arrays (two reads, one write) per add, beside
NumPy's ``c = a + b`` measured in the same run; then ``nd.storage.stats()``.

    python bench/add_bandwidth.py [--size 50000000] [--loops 20] [--repeat 3] [--quick]

NumPy gets a fresh output from malloc each time (a 200 MB block is mmapped, so every page is
faulted in on first write); ndengine's pool hands the dropped output's buffer to the next op,
already faulted in, which is what ``reuses`` in the storage stats counts.
Target: ndengine >= 1.0x NumPy's GB/s (reference on this machine: NumPy 14-24 GB/s, MXNet ~4,
dask ~10). Each figure is the best of --repeat runs after a warm-up run; med/best shows noise.
"""
import argparse
import sys

import numpy as np

import ndengine as nd
from common import KINDS, best_of, check_close, dask_array, header, use_engine, verdict

TARGET = 1.0


def numpy_run(a, b, loops):
    for _ in range(loops):
        c = a + b
    return c


def ndengine_run(a, b, loops):
    for _ in range(loops):
        c = a + b
    c.wait_to_read()
    nd.waitall()  # the dropped outputs' deletions too
    return c


def dask_run(a, b, loops):
    for _ in range(loops):
        c = (a + b).persist()  # materialised as chunks (compute() would add a concatenation)
    return c


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=50_000_000, help="elements per array")
    parser.add_argument("--loops", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", type=int, default=None, help="CPU workers (default: cores)")
    parser.add_argument("--kinds", nargs="+", default=list(KINDS), choices=KINDS)
    parser.add_argument("--quick", action="store_true", help="10M elements, 10 loops, 2 repeats")
    parser.add_argument("--no-dask", action="store_true", help="skip dask even if installed")
    parser.add_argument("--dask-chunks", default="auto", help="dask chunk size (elements)")
    args = parser.parse_args(argv)
    if args.quick:
        args.size, args.loops, args.repeat = 10_000_000, 10, 2

    nbytes = args.size * 4
    moved = 3 * nbytes * args.loops
    header(f"add bandwidth: c = a + b on {args.size:,} float32 ({nbytes / 1e6:.0f} MB each), "
           f"{args.loops} times then wait")
    rng = np.random.default_rng(0)
    a0 = rng.random(args.size, dtype=np.float32)
    b0 = rng.random(args.size, dtype=np.float32)
    want = numpy_run(a0, b0, 1)
    base = best_of(lambda: numpy_run(a0, b0, args.loops), args.repeat)
    base_gbs = moved / base.best / 1e9
    print(f"{'implementation':34s} {'GB/s':>7s} {'x NumPy':>8s} {'med/best':>9s}")
    print(f"{'NumPy':34s} {base_gbs:7.2f} {1.0:8.2f} {base.spread:9.2f}")
    for kind in args.kinds:
        use_engine(kind, args.workers)
        before = nd.storage.stats()
        a, b = nd.array(a0), nd.array(b0)
        check_close(kind, ndengine_run(a, b, 1).asnumpy(), want)
        timing = best_of(lambda: ndengine_run(a, b, args.loops), args.repeat)
        gbs = moved / timing.best / 1e9
        after = nd.storage.stats()
        print(f"ndengine {kind:25s} {gbs:7.2f} {gbs / base_gbs:8.2f} {timing.spread:9.2f}  "
              f"{verdict(gbs / base_gbs >= TARGET)}")
        print(f"   storage: {after['allocs'] - before['allocs']} allocs, "
              f"{after['reuses'] - before['reuses']} reuses for 2 inputs and "
              f"{1 + (1 + args.repeat) * args.loops} outputs; now {after}")
        del a, b
        nd.waitall()
    da = None if args.no_dask else dask_array()
    if da is not None:
        chunks = args.dask_chunks if args.dask_chunks == "auto" else int(args.dask_chunks)
        a, b = da.from_array(a0, chunks=chunks), da.from_array(b0, chunks=chunks)
        check_close("dask", dask_run(a, b, 1).compute(), want)
        timing = best_of(lambda: dask_run(a, b, args.loops), args.repeat)
        gbs = moved / timing.best / 1e9
        label = f"dask (threads, {a.numblocks[0]} chunks/array)"
        print(f"{label:34s} {gbs:7.2f} {gbs / base_gbs:8.2f} {timing.spread:9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
