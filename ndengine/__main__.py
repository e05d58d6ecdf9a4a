"""The quickstart demo, ``python -m ndengine``: the two things ndengine does, each timed against
the very same lines run with NumPy, each with its profile and timeline picture.

1. The engine: two independent chains ``p = tanh(p - p.mean(axis=1, keepdims=True))`` (and q),
   written one line after the other. A reduction along an axis is not fused, so each step
   pushes its own ops (the mean, then the fused subtract and tanh); the chains share no data,
   so the engine runs them side by side on its workers. Writes profile.json and timeline.png.
   (Not a matrix product: NumPy's BLAS already runs one on every core, so two side by side
   gain nothing on a few cores.)
2. Fusion: one element-wise chain ``x = exp(sin(x))`` ending in ``sum``. The whole chain is
   recorded and pushed as ONE op (``fused N ops``) that reads x once and writes nothing but the
   sum. Writes fusion_profile.json and fusion_timeline.png.

Honest timing: there is no separate warm-up. The first ndengine run of each part is timed and
reported apart: it prepares the kernels of these shapes (compiles them, or loads them from the
on-disk cache; the seconds compiled are printed). The steady state is the best of the later
runs, each profiled (the pictures show the last). NumPy's first run and best are reported the
same way. ``python -m ndengine --out docs`` redraws
the pictures of the README. Design rule: every option is checked (``--ctx`` included, by
making an array there) before any benchmark runs.
"""
import argparse
import math
import os
import sys
import time

import numpy as np

DESCRIPTION = """\
The ndengine demo: the same lines of NumPy-style code run with NumPy and with ndengine.
Part 1 (the engine) runs two independent chains of
p = tanh(p - p.mean(axis=1, keepdims=True)) on --matrix x --matrix float32 side by side
on the engine's workers. Part 2 (fusion) runs one element-wise chain x = exp(sin(x)) of
--size float32 elements, ending in a sum, as one fused op. Each part prints NumPy's and
ndengine's times (the first run, and the best of the later runs) and writes its profile
(JSON, for chrome://tracing or Perfetto) and its timeline picture (PNG, needs matplotlib)
to --out."""

EPILOG = ("Example: python -m ndengine --out docs   (redraws the README's pictures, "
          "docs/timeline.png and docs/fusion_timeline.png)")


def chains(xp, p, q, steps):
    """Part 1, plain serial code (``xp`` is numpy or ndengine): two chains that share no data."""
    for _ in range(steps):
        p = xp.tanh(p - p.mean(axis=1, keepdims=True))  # chain 1
        q = xp.tanh(q - q.mean(axis=1, keepdims=True))  # chain 2: independent of chain 1
    return (p * p + q * q).sum()


def elementwise_chain(xp, x, steps):
    """Part 2: element-wise ops only, so ndengine fuses the whole chain and its sum."""
    for _ in range(steps):
        x = xp.exp(xp.sin(x))
    return x.sum()


def _positive(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text}")
    return value


def _parser():
    from . import __version__
    parser = argparse.ArgumentParser(prog="python -m ndengine", description=DESCRIPTION,
                                     epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"ndengine {__version__}")
    parser.add_argument("--out", default=".", help="folder for the profiles and pictures "
                        "(default: the current folder)")
    parser.add_argument("--matrix", type=_positive, default=2000,
                        help="side of part 1's square matrices (default: 2000)")
    parser.add_argument("--size", type=_positive, default=8_000_000,
                        help="elements of part 2's array; fusion needs at least "
                             "NDENGINE_FUSION_MIN_ELEMENTS (default: 8000000)")
    parser.add_argument("--steps", type=_positive, default=8,
                        help="steps of each chain (default: 8)")
    parser.add_argument("--repeat", type=_positive, default=3,
                        help="runs after the first; the best counts (default: 3)")
    parser.add_argument("--ctx", default="cpu(0)",
                        help="where ndengine's arrays live: cpu(0), or gpu(0) with CuPy "
                             "(default: cpu(0))")
    return parser


def _context(nd, parser, text):
    """``cpu(0)`` / ``gpu(1)`` as a Context, checked by making an array there."""
    kind, _, rest = text.partition("(")
    index = rest[:-1] if rest.endswith(")") else ""
    if kind not in ("cpu", "gpu") or not index.isdigit():
        parser.error(f"--ctx must look like cpu(0) or gpu(0), got {text!r}")
    ctx = nd.Context(kind, int(index))
    try:
        nd.array(np.zeros(1, np.float32), ctx=ctx).wait_to_read()
    except (RuntimeError, ValueError) as exc:
        parser.error(f"--ctx {text}: {exc}")
    return ctx


def _say(message=""):
    print(message, flush=True)


def _timed(run):
    """(seconds, value) of one call of ``run``, which returns a scalar array."""
    start = time.perf_counter()
    value = float(run())
    return time.perf_counter() - start, value


def _time_numpy(run, repeat):
    first, expected = _timed(run)
    best = min(_timed(run)[0] for _ in range(repeat))
    return first, best, expected


def _time_ndengine(nd, profiler, run, repeat):
    """The first run, then ``repeat`` profiled runs: (first, best, value, seconds compiled). The
    compiles the first run asked for run in the background: they are waited for before the
    later runs, so those measure the steady state. The profiler keeps the last run's records."""
    from .ops.runtime import compile_log, compile_queue
    compiled_before = compile_log.totals()["seconds"]
    first, value = _timed(lambda: run().item())
    compile_queue.drain(timeout=300)
    best = math.inf
    for _ in range(repeat):
        profiler.reset()
        with profiler.scope():
            seconds, value = _timed(lambda: run().item())
        best = min(best, seconds)
    return first, best, value, compile_log.totals()["seconds"] - compiled_before


def _report_times(numpy_times, nd_times, where):
    (np_first, np_best, _), (nd_first, nd_best, _, compiled) = numpy_times, nd_times
    _say(f"  NumPy     first run {np_first:7.3f} s   best {np_best:7.3f} s")
    _say(f"  ndengine  first run {nd_first:7.3f} s   best {nd_best:7.3f} s   on {where}")
    _say(f"  speed-up  {np_best / nd_best:.2f}x steady state, {np_first / nd_first:.2f}x first run")
    how = (f"{compiled:.1f} s compiling, partly in the background" if compiled >= 0.05
           else "this time no compile was needed")
    _say(f"            (ndengine's first run prepares the kernels of these shapes; {how})")


def _write_profile(profiler, out, trace_name, picture_name):
    """Dump the profiler's records and draw them; print where they went and what they show."""
    records = profiler.records()
    trace = profiler.dump(os.path.join(out, trace_name))
    workers = {(r.ctx, r.worker) for r in records}
    _say(f"  profile   {os.path.abspath(trace)}: {len(records)} ops on {len(workers)} "
         f"worker rows (chrome://tracing or Perfetto)")
    try:
        picture = profiler.timeline(os.path.join(out, picture_name), records=records)
        _say(f"  timeline  {os.path.abspath(picture)}")
    except ImportError as exc:
        _say(f"  timeline  skipped ({exc})")
    _say(profiler.dumps())


def _agrees(name, value, expected):
    if np.isclose(value, expected, rtol=1e-4):
        return True
    _say(f"{name}: results differ: NumPy {expected}, ndengine {value}")
    return False


def part_engine(nd, profiler, args, ctx, where):
    n, steps = args.matrix, args.steps
    _say(f"[1/2] The engine: 2 independent chains x {steps} steps of "
         f"p = tanh(p - p.mean(axis=1, keepdims=True)) on {n}x{n} float32,")
    _say("      written one line after the other; the engine runs them side by side.")
    rng = np.random.default_rng(1)
    p_np, q_np = (rng.random((n, n), dtype=np.float32) for _ in range(2))
    numpy_times = _time_numpy(lambda: chains(np, p_np, q_np, steps), args.repeat)
    p, q = nd.array(p_np, ctx=ctx), nd.array(q_np, ctx=ctx)
    nd.waitall()
    nd_times = _time_ndengine(nd, profiler, lambda: chains(nd, p, q, steps), args.repeat)
    _report_times(numpy_times, nd_times, where)
    _write_profile(profiler, args.out, "profile.json", "timeline.png")
    return _agrees("part 1", nd_times[2], numpy_times[2])


def part_fusion(nd, profiler, args, ctx, where):
    size, steps = args.size, args.steps
    _say(f"[2/2] Fusion: 1 chain x {steps} steps of x = exp(sin(x)), then x.sum(), on "
         f"{size:,} float32:")
    _say("      NumPy makes a pass over memory per op; ndengine pushes one fused op.")
    x_np = np.random.default_rng(0).random(size, dtype=np.float32)
    numpy_times = _time_numpy(lambda: elementwise_chain(np, x_np, steps), args.repeat)
    x = nd.array(x_np, ctx=ctx)
    nd.waitall()
    nd_times = _time_ndengine(nd, profiler, lambda: elementwise_chain(nd, x, steps), args.repeat)
    _report_times(numpy_times, nd_times, where)
    _write_profile(profiler, args.out, "fusion_profile.json", "fusion_timeline.png")
    return _agrees("part 2", nd_times[2], numpy_times[2])


def main(argv=None):
    parser = _parser()
    args = parser.parse_args(argv)
    import ndengine as nd  # the demo sits above the package: it uses what a user imports
    from ndengine import profiler

    ctx = _context(nd, parser, args.ctx)
    os.makedirs(args.out, exist_ok=True)
    eng = nd.engine.get()
    where = (f"{eng.num_cpu_workers} CPU workers" if ctx.device_type == "cpu"
             else f"{ctx}, {eng.num_gpu_workers} workers")
    _say(f"ndengine {nd.__version__}: {eng.kind}, {where}, {os.cpu_count()} cores")
    _say()
    agree = part_engine(nd, profiler, args, ctx, where)
    agree = part_fusion(nd, profiler, args, ctx, where) and agree
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
