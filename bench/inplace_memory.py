"""In-place memory: --steps x ``w += g`` on two float32 arrays of --size elements, pushed without
waiting, then one wait: the peak memory used beyond the two arrays, for NumPy and each ndengine
engine kind.

    python bench/inplace_memory.py [--size 50000000] [--steps 100] [--quick]

Every variant runs in a fresh subprocess (so earlier variants leave no pooled buffers, freed
pages or high-water mark behind). In it: warm-up on small arrays (kernels compiled or loaded),
``w`` and ``g`` made in place (no temporary copies), baseline RSS taken, then the loop runs
while a thread samples /proc/self/statm every ~1 ms. Reported: peak sampled RSS minus the
baseline, and getrusage's ru_maxrss minus the baseline (the kernel's own high-water mark,
which catches spikes between samples), in MB and in buffers of one array's size.

An in-place add needs no new memory, so NumPy's extra is ~0. Target for ndengine: at most one
buffer (one array's size, 200 MB at the default size) extra.
"""
import argparse
import json
import os
import subprocess
import sys
import time

KINDS = ("NaiveEngine", "ThreadedEnginePooled", "ThreadedEnginePerDevice")
VARIANTS = ("NumPy",) + KINDS


def child(variant, size, steps):
    import gc
    import resource

    import numpy as np

    from common import PeakRSS, rss_bytes, use_engine

    if variant == "NumPy":
        w, g = np.ones(1 << 20, np.float32), np.full(1 << 20, 1e-3, np.float32)
        w += g
        del w, g
        w = np.ones(size, np.float32)
        g = np.full(size, 1e-3, np.float32)

        def loop():
            nonlocal w
            for _ in range(steps):
                w += g

        def result():
            return w[[0, size // 2, size - 1]]
    else:
        import ndengine as nd
        use_engine(variant)
        w, g = nd.ones(1 << 20, np.float32), nd.full(1 << 20, 1e-3, np.float32)
        for _ in range(3):
            w += g
        nd.waitall()
        del w, g
        nd.waitall()
        nd.storage.release_all()
        w = nd.ones(size, np.float32)
        g = nd.full(size, 1e-3, np.float32)
        nd.waitall()

        def loop():
            nonlocal w
            for _ in range(steps):
                w += g
            w.wait_to_read()
            nd.waitall()

        def result():
            return w.asnumpy()[[0, size // 2, size - 1]]
    gc.collect()
    baseline = rss_bytes()
    maxrss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    with PeakRSS(0.001) as sampler:
        start = time.perf_counter()
        loop()
        seconds = time.perf_counter() - start
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    got = result()
    want = np.float32(1)
    for _ in range(steps):
        want = np.float32(want + np.float32(1e-3))
    info = {"variant": variant, "baseline": baseline, "peak": sampler.peak,
            "maxrss": maxrss, "maxrss_before": maxrss_before, "samples": sampler.samples,
            "seconds": seconds, "ok": bool(np.allclose(got, want, rtol=1e-4))}
    if variant != "NumPy":
        import ndengine as nd
        info["storage"] = nd.storage.stats()
    print(json.dumps(info))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=50_000_000, help="elements per array")
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    parser.add_argument("--quick", action="store_true", help="10M elements, 50 steps")
    parser.add_argument("--child", choices=VARIANTS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.size, args.steps = 10_000_000, 50
    if args.child:
        child(args.child, args.size, args.steps)
        return 0

    from common import header
    buf = args.size * 4
    header(f"in-place memory: {args.steps} x w += g on {args.size:,} float32 "
           f"({buf / 1e6:.0f} MB each), no wait until the end")
    print(f"{'implementation':34s} {'extra MB':>9s} {'buffers':>8s} {'maxrss MB':>10s} "
          f"{'ms/op':>7s}  target <= 1 buffer")
    here = os.path.dirname(os.path.abspath(__file__))
    worst = 0.0
    for variant in args.variants:
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", variant,
                              "--size", str(args.size), "--steps", str(args.steps)],
                             cwd=here, capture_output=True, text=True, check=False)
        if out.returncode != 0:
            print(f"{variant}: child failed\n{out.stderr}")
            continue
        info = json.loads(out.stdout.strip().splitlines()[-1])
        extra = info["peak"] - info["baseline"]
        extra_max = max(info["maxrss"], info["maxrss_before"]) - info["baseline"]
        label = variant if variant == "NumPy" else f"ndengine {variant}"
        line = (f"{label:34s} {extra / 1e6:9.1f} {extra / buf:8.2f} {extra_max / 1e6:10.1f} "
                f"{info['seconds'] / args.steps * 1e3:7.2f}")
        if variant != "NumPy":
            buffers = max(extra, extra_max) / buf
            worst = max(worst, buffers)
            line += f"  {'PASS' if buffers <= 1.0 else 'MISS'}"
        if not info["ok"]:
            line += "  WRONG RESULT"
        print(line)
        if "storage" in info:
            print(f"   storage: {info['storage']}; {info['samples']} RSS samples")
    print(f"worst ndengine: {worst:.2f} buffers extra (target <= 1): "
          f"{'PASS' if worst <= 1.0 else 'MISS'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
