"""The quickstart demo: ``python -m ndengine [--out DIR] [--size N] [--steps K]``.

The same few lines of serial NumPy-style code run once with NumPy and once with ndengine. The
two chains below share no data, so the engine runs them side by side on the CPU workers, though
the code is written one line after the other. It prints both wall times and the speed-up, and
writes the engine's profile (profile.json, for chrome://tracing or Perfetto) and a timeline
picture (timeline.png) of what each worker did.
"""
import argparse
import os
import sys
import time

import numpy as np


def program(xp, a, b, steps):
    """Plain serial code; ``xp`` is numpy or ndengine."""
    for _ in range(steps):
        a = xp.exp(xp.sin(a))  # chain 1
        b = xp.exp(xp.sin(b))  # chain 2: independent of chain 1
    return (a + b).sum()


def _context(nd, text):
    """``cpu(0)`` / ``gpu(1)`` as a Context."""
    kind, _, rest = text.partition("(")
    if kind not in ("cpu", "gpu") or not rest.rstrip(")").isdigit():
        raise SystemExit(f"--ctx must look like cpu(0) or gpu(0), got {text!r}")
    return nd.Context(kind, int(rest.rstrip(")")))


def _say(message):
    print(message, flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m ndengine", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=".", help="where profile.json and timeline.png go")
    parser.add_argument("--size", type=int, default=8_000_000, help="elements per array")
    parser.add_argument("--steps", type=int, default=8, help="steps per chain")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each; the best counts")
    parser.add_argument("--ctx", default="cpu(0)",
                        help="where ndengine's arrays live: cpu(0), or gpu(0) with CuPy")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)

    import ndengine as nd
    from ndengine import profiler

    eng = nd.engine.get()
    _say(f"ndengine {nd.__version__}: {eng.kind}, {eng.num_cpu_workers} CPU workers, "
         f"{os.cpu_count()} cores")
    rng = np.random.default_rng(0)
    a_np = rng.random(args.size, dtype=np.float32)
    b_np = rng.random(args.size, dtype=np.float32)

    _say("[1/4] compiling kernels (cached after the first run) ...")
    program(nd, nd.array(a_np[:1000]), nd.array(b_np[:1000]), 1).wait_to_read()

    _say(f"[2/4] NumPy: 2 chains x {args.steps} steps of exp(sin(x)) on "
         f"{args.size:,} float32, best of {args.repeat} ...")
    numpy_s = float("inf")
    for _ in range(args.repeat):
        start = time.perf_counter()
        expected = program(np, a_np, b_np, args.steps)
        numpy_s = min(numpy_s, time.perf_counter() - start)

    _say(f"[3/4] ndengine: the same code, best of {args.repeat}, profiling the last run ...")
    ctx = _context(nd, args.ctx)
    a, b = nd.array(a_np, ctx=ctx), nd.array(b_np, ctx=ctx)
    nd.waitall()
    profiler.set_config(filename=os.path.join(args.out, "profile.json"))
    nd_s = float("inf")
    for _ in range(args.repeat):
        profiler.reset()
        start = time.perf_counter()
        with profiler.scope():
            result = program(nd, a, b, args.steps)
            pushed_s = time.perf_counter() - start
            value = result.item()  # the first (and only) wait
        nd_s = min(nd_s, time.perf_counter() - start)
    if not np.isclose(value, expected, rtol=1e-4):
        _say(f"results differ: NumPy {expected}, ndengine {value}")
        return 1

    _say("[4/4] writing the profile ...")
    trace = profiler.dump()
    _say(f"  Chrome trace:  {os.path.abspath(trace)} (open in chrome://tracing or Perfetto)")
    try:
        picture = profiler.timeline(os.path.join(args.out, "timeline.png"))
        _say(f"  timeline:      {os.path.abspath(picture)}")
    except ImportError as exc:
        _say(f"  timeline:      skipped ({exc})")
    _say("")
    _say(profiler.dumps())
    _say(f"NumPy     {numpy_s:7.3f} s")
    where = (f"{eng.num_cpu_workers} workers" if ctx.device_type == "cpu"
             else f"{ctx}, {eng.num_gpu_workers} workers")
    _say(f"ndengine  {nd_s:7.3f} s   (all ops pushed after {pushed_s * 1e3:.1f} ms; "
         f"speed-up {numpy_s / nd_s:.2f}x on {where})")
    _say(f"result    {value:.6g} (NumPy {float(expected):.6g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
