"""Independent medium ops: ``sum(sqrt(x*x + 1))`` on 64k float32, --ops of them (each on one
of --inputs arrays, round-robin, no op depending on another) then one wait, per engine kind,
beside NumPy (and PyTorch eager on the CPU, where torch is importable) in the same run.

    python bench/medium_ops.py [--ops 1000] [--repeat 7] [--workers N] [--quick] [--no-torch]
                               [--torch-threads N]

Each medium op is four pushed ops on ndengine (multiply, add, sqrt, sum); independent chains
may run on different workers at once. Target (issue 10): not slower than NumPy, on every
engine. Each figure is the best of --repeat runs after a warm-up run, all implementations
timed in interleaved rounds; the median/best column shows the noise.
"""
import argparse
import sys

import numpy as np

import ndengine as nd
from common import (KINDS, best_of_interleaved, check_close, header, on_engine, ratio_line,
                    ratio_table, torch_module)
from ndengine import engine

N = 1 << 16
TARGET_RATIO = 1.0  # x NumPy: not slower


def numpy_run(inputs, ops):
    width = len(inputs)
    return np.array([np.sum(np.sqrt(inputs[i % width] * inputs[i % width] + 1))
                     for i in range(ops)])


def ndengine_run(inputs, ops):
    width = len(inputs)
    results = [nd.sum(nd.sqrt(inputs[i % width] * inputs[i % width] + 1)) for i in range(ops)]
    nd.waitall()  # every result computed, and the dropped temporaries deleted
    return results


def torch_run(torch, inputs, ops):
    width = len(inputs)
    return [torch.sum(torch.sqrt(inputs[i % width] * inputs[i % width] + 1))
            for i in range(ops)]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=1000)
    parser.add_argument("--inputs", type=int, default=16, help="distinct input arrays")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--workers", type=int, default=None, help="CPU workers (default: cores)")
    parser.add_argument("--kinds", nargs="+", default=list(KINDS), choices=KINDS)
    parser.add_argument("--quick", action="store_true", help="50 ops, 2 repeats")
    parser.add_argument("--no-torch", action="store_true", help="skip PyTorch even if installed")
    parser.add_argument("--torch-threads", type=int, default=1,
                        help="PyTorch's intra-op threads (0: its own default, one per core)")
    args = parser.parse_args(argv)
    if args.quick:
        args.ops, args.repeat = 50, 2

    header(f"medium ops: sum(sqrt(x*x + 1)) on {N} float32, {args.ops} independent, then wait")
    rng = np.random.default_rng(0)
    host = [rng.standard_normal(N).astype(np.float32) for _ in range(args.inputs)]
    want = numpy_run(host, args.ops)
    fns = {"NumPy": lambda: numpy_run(host, args.ops)}
    engines = {kind: engine.create(kind, num_cpu_workers=args.workers) for kind in args.kinds}
    for kind, eng in engines.items():
        engine.set_engine(eng)
        inputs = [nd.array(a) for a in host]
        got = [r.item() for r in ndengine_run(inputs, args.ops)]
        check_close(kind, got, want, rtol=1e-4)  # float32 sums: the order of adds differs
        fns[kind] = on_engine(eng, lambda inputs=inputs: ndengine_run(inputs, args.ops))
    torch = None if args.no_torch else torch_module(args.torch_threads)
    if torch is not None:
        tensors = [torch.from_numpy(a.copy()) for a in host]
        check_close("PyTorch", [r.item() for r in torch_run(torch, tensors, args.ops)], want,
                    rtol=1e-4)
        fns["PyTorch"] = lambda: torch_run(torch, tensors, args.ops)
    timings = best_of_interleaved(fns, args.repeat)
    worst = ratio_table(timings, torch, [("ms/run", lambda s: s * 1e3), ("us/op", lambda s: s / args.ops * 1e6)])
    for eng in engines.values():
        eng.notify_shutdown()
    print(ratio_line("worst ndengine engine, issue 10", worst, TARGET_RATIO))
    return 0


if __name__ == "__main__":
    sys.exit(main())
