"""Where the time of one tiny op goes: ``x = x + 1`` on 16 float32 on the default engine.

    python bench/tiny_op_profile.py [--ops 500] [--repeat 101] [--quick]

Three views, for docs/tiny_op_breakdown.md:

1. counts per op, deterministic: Python calls and C calls (``sys.setprofile``) and bytecodes
   executed (``sys.settrace`` with opcode tracing), per function;
2. cProfile: each function's own time per op (cProfile inflates small functions; read the
   shares, not the absolute figures);
3. stage timers: each stage of the op timed alone with ``time.perf_counter_ns`` over --ops
   iterations, in --repeat interleaved rounds; the median and the best round per iteration;
   what the stages do not cover (the operator dispatch, invoke's own lines, the list and
   tuple building) is the remainder.

A diagnostic, not a benchmark: it calls ndengine's internals (``core.new_array``,
``runs.BoundRun``, ``segment.append``, the plan's run) one at a time, as ``x + 1`` does.
The stages of the op are indented under the gather (which includes them) so that the
remainder is what no stage covers.
"""
import argparse
import cProfile
import gc
import pstats
import statistics
import sys
import time
from collections import Counter

import numpy as np

import ndengine as nd
from ndengine import engine as engine_mod
from ndengine import ops
from ndengine.engine import FnProperty
from ndengine import core
from ndengine.core import fp_errors as core_fp_errors
from ndengine.core import runs as core_runs
from ndengine.core import segment as core_segment
from ndengine.ops import OpReq

N = 16


def tiny_chain(ops_count):
    x = nd.zeros(N, dtype=np.float32)
    for _ in range(ops_count):
        x = x + 1
    nd.waitall()
    return x


# ------------------------------------------------------------------ 1. deterministic counts
def _label(code):
    module = code.co_filename.rsplit("/", 1)[-1]
    return f"{module}:{code.co_firstlineno}({code.co_name})"


def call_counts(ops_count):
    x = nd.zeros(N, dtype=np.float32)
    x = x + 1
    nd.waitall()
    py, c = Counter(), Counter()

    def profiler(frame, event, arg):
        if event == "call":
            py[_label(frame.f_code)] += 1
        elif event == "c_call":
            c[getattr(arg, "__qualname__", repr(arg))] += 1

    sys.setprofile(profiler)
    for _ in range(ops_count):
        x = x + 1
    sys.setprofile(None)
    nd.waitall()
    return py, c


def opcode_counts(ops_count):
    x = nd.zeros(N, dtype=np.float32)
    x = x + 1
    nd.waitall()
    counts = Counter()

    def tracer(frame, event, arg):
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        if event == "opcode":
            counts[_label(frame.f_code)] += 1
        return tracer

    here = sys._getframe()
    here.f_trace_opcodes = True
    sys.settrace(tracer)
    here.f_trace = tracer
    for _ in range(ops_count):
        x = x + 1
    sys.settrace(None)
    here.f_trace = None
    nd.waitall()
    return counts


# ------------------------------------------------------------------ 3. stage timers
class Stages:
    """Stage bodies timed in interleaved rounds (each round times every stage once), so a
    slow spell of the loaded machine hits them all alike; per stage, the median and the best
    batch, in ns per iteration."""

    def __init__(self):
        self.bodies = {}

    def add(self, name, body, setup=None):
        """``body(arg)`` timed, ``arg = setup(iterations)`` untimed (or the iteration count)."""
        self.bodies[name] = (body, setup)

    def run(self, iterations, repeat):
        times = {name: [] for name in self.bodies}
        for round_ in range(repeat + 1):  # the first round is a warm-up
            for name, (body, setup) in self.bodies.items():
                arg = setup(iterations) if setup is not None else iterations
                start = time.perf_counter_ns()
                body(arg)
                elapsed = (time.perf_counter_ns() - start) / iterations
                if round_:
                    times[name].append(elapsed)
        return {name: (statistics.median(t), min(t)) for name, t in times.items()}


def stage_timers(iterations, repeat):
    eng = engine_mod.get()
    op = ops.get("add")
    x = nd.zeros(N, dtype=np.float32)
    x = x + 1
    nd.waitall()
    ctx, shape, dtype = x.context, x.shape, x.dtype
    inputs, params = [x, 1], {}
    stages = Stages()

    def numpy_op(n):
        a = np.zeros(N, np.float32)
        for _ in range(n):
            a = a + 1
    stages.add("NumPy x = x + 1 (reference)", numpy_op)

    def whole(n):
        y = nd.zeros(N, dtype=np.float32)
        y.wait_to_read()  # the chain starts on a ready array: every op can run inline
        for _ in range(n):
            y = y + 1
        nd.waitall()
    stages.add("whole op: x = x + 1", whole)

    def whole_queued(n):
        y = nd.zeros(N, dtype=np.float32)
        y = y + 1  # pushed while zeros may still be queued: then so is every op after it
        for _ in range(n):
            y = y + 1
        nd.waitall()
    stages.add("whole op, chain started behind a queued op", whole_queued)

    def empty_loop(n):
        for _ in range(n):
            pass
    stages.add("empty loop", empty_loop)

    def lookup(n):
        get = ops.get
        for _ in range(n):
            get("add")
    stages.add("ops.get('add') (operator glue)", lookup)

    key = (x.dtype, x.shape, None, int, None, None)  # invoke's signature of x + 1

    def plan_hit(n):
        get = op.plans.get
        for _ in range(n):
            get(key)
    stages.add("plan: the memo's dict lookup (invoke builds the key)", plan_hit)

    plan = op.plans[key]

    def plan_check(n):
        check = plan.check
        for _ in range(n):
            check(inputs, params)
    stages.add("plan's value check (a weak Python int's range)", plan_check)

    view, out_view, req = x._data(), np.empty(N, np.float32), [OpReq.WRITE_TO]
    chunk = x._chunk

    def gather(n):
        def nothing(args, outs, req, params):
            pass
        bound, append, bulk = core_runs.BoundRun, core_segment.append, eng.bulk_size
        for _ in range(n):
            y = core.new_array(shape, dtype, ctx)
            run = bound(nothing, [view, 1], [y._data()], req, params, [chunk], [y._chunk],
                        "add", core_fp_errors.state_at_push())
            append(eng, ctx, run, (y,), True, bulk)
        core_segment.flush_own()
        eng.wait_for_all()
    stages.add("gather: new_array + BoundRun + segment.append of a no-op, its window's push "
               "and run included", gather)

    def new_arrays(n):
        new = core.new_array
        return [new(shape, dtype, ctx) for _ in range(n)]
    stages.add("  of which the output array + chunk, its NumPy memory (core.new_array; no var)",
               new_arrays)

    def new_variable(n):
        new = eng.new_variable
        keep = [new() for _ in range(n)]
        return keep
    stages.add("    for scale: engine.new_variable (made only for an array that outlives its "
               "window)", new_variable)

    def origin(n):
        def invoke_like():
            return engine_mod.caller_origin(2)

        def append_like():
            return invoke_like()
        for _ in range(n):
            append_like()
    stages.add("  of which the user's line: caller_origin(2) (code object, offset)", origin)


    def bound_runs(n):
        bound = core_runs.BoundRun
        for _ in range(n):
            bound(plan.run, [view, 1], [out_view], req, params, [chunk], [chunk], "add",
                  core_fp_errors.state_at_push())
    stages.add("  of which the BoundRun(...) object", bound_runs)

    def kernel_only(n):
        a, out = x.asnumpy(), [np.empty(N, np.float32)]
        args = [a, 1]
        run = plan.run
        for _ in range(n):
            run(args, out, req, params)
    stages.add("kernel: the plan's run on NumPy arrays", kernel_only)

    def numba_loop_only(n):
        a, out = x.asnumpy(), np.empty(N, np.float32)
        operand = np.ones(1, np.float32)  # the scalar as the loop takes it
        loop = ops.elementwise.operators.spec("add").numba_loops.serial_array_scalar
        for _ in range(n):
            loop(a, operand, out)
    stages.add("  of which the Numba loop's call (serial_array_scalar)", numba_loop_only)

    def numpy_ufunc_out(n):
        a, out = x.asnumpy(), np.empty(N, np.float32)
        for _ in range(n):
            np.add(a, 1, out=out)
    stages.add("  for scale: NumPy np.add(a, 1, out=out), no allocation", numpy_ufunc_out)

    def push_noop(n):
        push, var = eng.push_sync, eng.new_variable()
        reads, writes = [eng.new_variable()], [var]
        async_ = FnProperty.ASYNC
        for _ in range(n):
            push(lambda run_ctx: None, ctx, reads, writes, async_, 0, "add", None)
        eng.wait_for_all()
    stages.add("  for scale: engine.push_sync of a no-op, inline (an op pushed alone)",
               push_noop)
    return stages.run(iterations, repeat)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=101)
    parser.add_argument("--quick", action="store_true", help="200 ops, 5 repeats")
    args = parser.parse_args(argv)
    if args.quick:
        args.ops, args.repeat = 200, 5
    eng = engine_mod.get()
    print(f"== tiny op profile: x = x + 1 on {N} float32, engine {type(eng).__name__}")
    tiny_chain(1000)  # warm: kernels compiled, pools started, buffer pool filled
    gc.disable()  # the cyclic GC's passes would land on random stages

    py, c = call_counts(args.ops)
    print(f"\n-- 1. calls per op (sys.setprofile, {args.ops} ops): "
          f"{sum(py.values()) / args.ops:.1f} Python calls, {sum(c.values()) / args.ops:.1f} "
          "C calls")
    for name, count in py.most_common():
        print(f"   py {count / args.ops:6.2f}  {name}")
    for name, count in c.most_common():
        print(f"   C  {count / args.ops:6.2f}  {name}")
    codes = opcode_counts(args.ops)
    print(f"\n-- bytecodes per op (sys.settrace opcodes): {sum(codes.values()) / args.ops:.1f}")
    for name, count in codes.most_common():
        print(f"   {count / args.ops:7.1f}  {name}")

    profiled_ops = 10_000 if not args.quick else 1000
    profiler = cProfile.Profile()
    profiler.enable()
    tiny_chain(profiled_ops)
    profiler.disable()
    stats = pstats.Stats(profiler)
    total = sum(row[2] for row in stats.stats.values())
    print(f"\n-- 2. cProfile, {profiled_ops} ops: own time per op (inflated by cProfile), share")
    rows = sorted(stats.stats.items(), key=lambda item: -item[1][2])
    for (filename, line, func), (cc, nc, tt, ct, callers) in rows[:18]:
        where = f"{filename.rsplit('/', 1)[-1]}:{line}({func})"
        print(f"   {tt / (profiled_ops) * 1e6:6.2f} us  {tt / total * 100:5.1f}%  "
              f"{nc / (profiled_ops):5.2f} calls/op  {where}")

    stages = stage_timers(args.ops, args.repeat)
    loop_med, loop_min = stages.pop("empty loop")
    print(f"\n-- 3. stage timers: {args.repeat} interleaved rounds of {args.ops} iterations, "
          f"ns per op, median and best round (the empty loop, {loop_med:.0f} ns, is "
          "subtracted from the stages)")
    print(f"   {'median':>8s} {'best':>8s}")
    covered_med = covered_min = 0.0
    for name, (med, best) in stages.items():
        if not name.startswith(("NumPy", "whole")):
            med, best = med - loop_med, best - loop_min
            if not name.startswith("  "):
                covered_med, covered_min = covered_med + med, covered_min + best
        print(f"   {med:8.0f} {best:8.0f}  {name}")
    whole_med, whole_min = stages["whole op: x = x + 1"]
    print(f"   {whole_med - covered_med:8.0f} {whole_min - covered_min:8.0f}  remainder of the "
          "whole op: the operator method, invoke's own lines (the key, lists, checks), "
          "the window's bookkeeping of a real op")
    gc.enable()
    return 0


if __name__ == "__main__":
    sys.exit(main())
