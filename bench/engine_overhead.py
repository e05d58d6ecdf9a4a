"""Engine overhead: push-and-run cost of a no-op sync op, per engine, against NumPy's
``x = x + 1`` on 16 elements measured in the same run.

    python bench/engine_overhead.py [--ops 10000] [--repeat 7] [--profiling] [--quick]

(a) a dependent chain: every op writes the same var; (b) the same number of ops spread
round-robin over 100 independent vars. Each figure is the best of --repeat runs, in µs per op,
from the first push to the end of wait_for_all; NumPy and every engine are timed in interleaved
rounds. Target: at most 5 µs per op with profiling off; and (issue 10) at most 4x NumPy's
tiny op from the same run, on every engine, chain and independent alike (the last line).
"""
import argparse

import numpy as np

from common import best_of_interleaved, ratio_line, verdict
from ndengine import engine

KINDS = ("NaiveEngine", "ThreadedEnginePooled", "ThreadedEnginePerDevice")
TARGET_US = 5.0  # per op, on every engine, profiling off
TARGET_RATIO = 4.0  # issue 10: x NumPy's x = x + 1, every engine, chain and independent


def _noop(run_ctx):
    pass


def numpy_tiny_op(ops):
    x = np.zeros(16, dtype=np.float32)
    for _ in range(ops):
        x = x + 1
    return x


def engine_chain(eng, ops):
    var, ctx, push = eng.new_variable(), engine.cpu(), eng.push_sync
    writes = (var,)
    for _ in range(ops):
        push(_noop, ctx, (), writes)
    eng.wait_for_all()


def engine_independent(eng, ops, width=100):
    ctx, push = engine.cpu(), eng.push_sync
    writes = [(eng.new_variable(),) for _ in range(width)]
    for i in range(ops):
        push(_noop, ctx, (), writes[i % width])
    eng.wait_for_all()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--workers", type=int, default=None, help="CPU workers (default: cores)")
    parser.add_argument("--profiling", action="store_true",
                        help="run with a recording run hook installed (what the profiler does)")
    parser.add_argument("--quick", action="store_true", help="2,000 ops, 3 repeats")
    args = parser.parse_args(argv)
    if args.quick:
        args.ops, args.repeat = 2000, 3

    engines = {kind: engine.create(kind, num_cpu_workers=args.workers) for kind in KINDS}
    fns = {"NumPy": lambda: numpy_tiny_op(args.ops)}
    for kind, eng in engines.items():
        eng.set_run_hook(engine.Recorder() if args.profiling else None)
        engine_chain(eng, 1000)  # start the pools before timing
        fns[kind, "chain"] = lambda eng=eng: engine_chain(eng, args.ops)
        fns[kind, "indep"] = lambda eng=eng: engine_independent(eng, args.ops)
    # interleaved rounds: the machine's slow spells hit every engine alike
    timings = best_of_interleaved(fns, args.repeat)
    us = {name: timing.best / args.ops * 1e6 for name, timing in timings.items()}
    numpy_us = us["NumPy"]
    print(f"NumPy x = x + 1 (16 float32): {numpy_us:6.2f} us/op")
    print(f"{'engine':26s} {'chain us/op':>12s} {'x NumPy':>8s} {'indep us/op':>12s} "
          f"{'x NumPy':>8s}  target <= {TARGET_US:g} us/op")
    for kind, eng in engines.items():
        eng.set_run_hook(None)
        eng.notify_shutdown()
        chain, indep = us[kind, "chain"], us[kind, "indep"]
        print(f"{kind:26s} {chain:12.2f} {chain / numpy_us:8.1f} {indep:12.2f} "
              f"{indep / numpy_us:8.1f}  "
              f"{'(profiling on)' if args.profiling else verdict(max(chain, indep) <= TARGET_US)}")
    worst = max(us[kind, shape] for kind in engines for shape in ("chain", "indep"))
    line = ratio_line("worst engine push-and-run, issue 10", worst / numpy_us, TARGET_RATIO)
    print(line + ("  (profiling on)" if args.profiling else ""))


if __name__ == "__main__":
    main()
