"""Operator-layer overhead: ``op.infer`` and ``op.kernels["cpu"]`` per call, in µs.

    python bench/ops_overhead.py [--sizes 16 1048576] [--repeat 7] [--json out.json]

Each figure is the best of --repeat timing runs (``timeit``, auto-scaled
number of calls).  Below ``parallel.PARALLEL_MIN_SIZE`` elements everything runs
in the calling thread, so the timer is that thread's CPU time: it leaves out
time the OS gave to other processes, which makes sub-µs figures stable on a
busy machine.  Sizes that can use the thread pool are timed by wall clock.  The matching NumPy call (``np.add(a, 1, out=out)`` ...) is
shown alongside the kernel as the floor.
"""
import argparse
import json
import time
import timeit

import numpy as np

import ndengine.ops as ops
from ndengine.ops import OpReq
from ndengine.ops.runtime.parallel import PARALLEL_MIN_SIZE

W = [OpReq.WRITE_TO]


def cases(n):
    a = np.arange(n, dtype=np.float32) / n
    b = np.ones(n, np.float32)
    cond = (np.arange(n) % 2).astype(bool)
    out = np.empty(n, np.float32)
    out0 = np.empty((), np.float32)
    outb = np.empty(n, bool)
    g = ops.get
    add, exp, sm, cp, fill, where, clip, less = (
        g("add"), g("exp"), g("sum"), g("copy"), g("fill"), g("where"), g("clip"), g("less"))
    return [
        ("add(array, scalar)", lambda: add.infer(a, 1),
         lambda k=add.kernels["cpu"]: k([a, 1], [out], W), lambda: np.add(a, 1, out=out)),
        ("add(array, array)", lambda: add.infer(a, b),
         lambda k=add.kernels["cpu"]: k([a, b], [out], W), lambda: np.add(a, b, out=out)),
        ("add inplace x+=1", lambda: add.infer(out, 1),
         lambda k=add.kernels["cpu"]: k([out, 1], [out], [OpReq.WRITE_INPLACE]),
         lambda: np.add(out, 1, out=out)),
        ("less(array, array)", lambda: less.infer(a, b),
         lambda k=less.kernels["cpu"]: k([a, b], [outb], W), lambda: np.less(a, b, out=outb)),
        ("exp(array)", lambda: exp.infer(a),
         lambda k=exp.kernels["cpu"]: k([a], [out], W), lambda: np.exp(a, out=out)),
        ("where(c, a, b)", lambda: where.infer(cond, a, b),
         lambda k=where.kernels["cpu"]: k([cond, a, b], [out], W),
         lambda: np.copyto(out, np.where(cond, a, b))),
        ("clip(a, 0.2, 0.8)", lambda: clip.infer(a, a_min=0.2, a_max=0.8),
         lambda k=clip.kernels["cpu"]: k([a], [out], W, a_min=0.2, a_max=0.8),
         lambda: np.clip(a, 0.2, 0.8, out=out)),
        ("sum(array)", lambda: sm.infer(a),
         lambda k=sm.kernels["cpu"]: k([a], [out0], W), lambda: np.sum(a, out=out0)),
        ("sum(array, axis=0)", lambda: sm.infer(a, axis=0),
         lambda k=sm.kernels["cpu"]: k([a], [out0], W, axis=0),
         lambda: np.sum(a, axis=0, out=out0)),
        ("copy", lambda: cp.infer(a),
         lambda k=cp.kernels["cpu"]: k([a], [out], W), lambda: np.copyto(out, a)),
        ("fill", lambda: fill.infer(value=1.0, shape=(n,), dtype=np.float32),
         lambda k=fill.kernels["cpu"]: k([], [out], W, value=1.0, shape=(n,), dtype=np.float32),
         lambda: out.fill(1.0)),
    ]


def best_us(fn, repeat, clock):
    timer = timeit.Timer(fn, timer=clock)
    number, _ = timer.autorange()
    number = max(1, number)
    return min(timer.repeat(repeat, number)) / number * 1e6


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 1 << 20])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--json")
    args = parser.parse_args()
    results = {}
    for n in args.sizes:
        print(f"\nn = {n}")
        print(f"{'op':22s} {'infer':>9s} {'kernel':>9s} {'numpy':>9s}   (µs)")
        for name, infer, kernel, numpy_call in cases(n):
            infer(), kernel(), numpy_call()  # compile / warm up
            clock = time.thread_time if n < PARALLEL_MIN_SIZE else time.perf_counter
            row = [best_us(f, args.repeat, clock) for f in (infer, kernel, numpy_call)]
            results[f"{name} @{n}"] = row
            print(f"{name:22s} {row[0]:9.2f} {row[1]:9.2f} {row[2]:9.2f}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)


if __name__ == "__main__":
    main()
