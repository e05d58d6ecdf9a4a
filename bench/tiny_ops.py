"""Tiny-op overhead: ``x = x + 1`` on 16 float32 elements, --ops times in a row then one wait,
for each engine kind, in µs per op beside NumPy's ``x = x + 1`` measured in the same run.

    python bench/tiny_ops.py [--ops 10000] [--repeat 9] [--workers N] [--quick] [--no-dask]
                             [--no-torch] [--torch-threads N]

This is the whole per-op cost of ndengine's front end and engine (operand checks, dtype
inference, a new output array and its engine var, the push, the worker's run and completion,
the deletion of the array the loop drops) on an op whose arithmetic is nearly free.
Target: at most 10 µs per op on every engine (reference on this machine: NumPy ~1 µs/op,
MXNet 1.9.1 ~20 µs/op).  Each figure is the best of --repeat runs after a warm-up run, NumPy
and the engines timed in interleaved rounds; the median/best column shows the noise.
PyTorch eager (CPU), where torch is importable, is a peer timed in the same rounds. The last
line is issue 10's target: every engine at most 4x NumPy's time, from the same run.
"""
import argparse
import sys

import numpy as np

import ndengine as nd
from common import (KINDS, best_of, best_of_interleaved, check_close, dask_array, header,
                    on_engine, ratio_line, torch_label, torch_module, verdict)
from ndengine import engine

TARGET_US = 10.0
TARGET_RATIO = 4.0  # issue 10: x NumPy, every engine
N = 16


def numpy_run(ops):
    x = np.zeros(N, dtype=np.float32)
    for _ in range(ops):
        x = x + 1
    return x


def ndengine_run(ops):
    x = nd.zeros(N, dtype=np.float32)
    for _ in range(ops):
        x = x + 1
    x.wait_to_read()
    nd.waitall()  # the deletions of the dropped arrays are part of the cost
    return x


def torch_run(torch, ops):
    x = torch.zeros(N, dtype=torch.float32)
    for _ in range(ops):
        x = x + 1
    return x.numpy()


def dask_run(da, ops):
    x = da.zeros(N, dtype=np.float32, chunks=N)
    for _ in range(ops):
        x = x + 1
    return x.compute()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--workers", type=int, default=None, help="CPU workers (default: cores)")
    parser.add_argument("--kinds", nargs="+", default=list(KINDS), choices=KINDS)
    parser.add_argument("--quick", action="store_true", help="2,000 ops, 3 repeats")
    parser.add_argument("--no-dask", action="store_true", help="skip dask even if installed")
    parser.add_argument("--no-torch", action="store_true", help="skip PyTorch even if installed")
    parser.add_argument("--torch-threads", type=int, default=1,
                        help="PyTorch's intra-op threads (0: its own default, one per core)")
    parser.add_argument("--dask-ops", type=int, default=500,
                        help="ops for dask (its graph of --ops layers takes minutes)")
    args = parser.parse_args(argv)
    if args.quick:
        args.ops, args.repeat = 2000, 3

    header(f"tiny ops: x = x + 1 on {N} float32, {args.ops} ops then wait")
    want = numpy_run(args.ops)
    engines = {kind: engine.create(kind, num_cpu_workers=args.workers) for kind in args.kinds}
    fns = {"NumPy": lambda: numpy_run(args.ops)}
    for kind, eng in engines.items():
        engine.set_engine(eng)
        check_close(kind, ndengine_run(args.ops).asnumpy(), want)
        fns[kind] = on_engine(eng, lambda: ndengine_run(args.ops))
    torch = None if args.no_torch else torch_module(args.torch_threads)
    if torch is not None:
        check_close("PyTorch", torch_run(torch, args.ops), want)
        fns["PyTorch"] = lambda: torch_run(torch, args.ops)
    timings = best_of_interleaved(fns, args.repeat)
    base = timings.pop("NumPy")
    torch_timing = timings.pop("PyTorch", None)
    numpy_us = base.best / args.ops * 1e6
    print(f"{'implementation':34s} {'us/op':>8s} {'x NumPy':>8s} {'med/best':>9s}  target")
    print(f"{'NumPy':34s} {numpy_us:8.2f} {1.0:8.1f} {base.spread:9.2f}")
    worst = 0.0
    for kind, timing in timings.items():
        us = timing.best / args.ops * 1e6
        worst = max(worst, us)
        print(f"ndengine {kind:25s} {us:8.2f} {us / numpy_us:8.1f} {timing.spread:9.2f}  "
              f"<= {TARGET_US:g} us/op: {verdict(us <= TARGET_US)}")
    worst_ratio = worst / numpy_us
    if torch_timing is not None:
        us = torch_timing.best / args.ops * 1e6
        print(f"{torch_label(torch):34s} {us:8.2f} "
              f"{us / numpy_us:8.1f} {torch_timing.spread:9.2f}")
    for eng in engines.values():
        eng.notify_shutdown()
    da = None if args.no_dask else dask_array()
    if da is not None:
        ops = min(args.ops, args.dask_ops)
        check_close("dask", dask_run(da, ops), numpy_run(ops))
        timing = best_of(lambda: dask_run(da, ops), min(args.repeat, 3))
        us = timing.best / ops * 1e6
        print(f"{'dask (threads, ' + str(ops) + ' ops)':34s} {us:8.2f} {us / numpy_us:8.1f} "
              f"{timing.spread:9.2f}")
    print(f"worst ndengine engine: {worst:.2f} us/op (target <= {TARGET_US:g}): "
          f"{verdict(worst <= TARGET_US)}")
    print(ratio_line("worst ndengine engine, issue 10", worst_ratio, TARGET_RATIO))
    return 0


if __name__ == "__main__":
    sys.exit(main())
