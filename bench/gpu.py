"""GPU benchmarks (issue 15), each a ratio to CuPy measured in the same run, in interleaved
rounds. Needs CuPy and a GPU; prints what it skips otherwise.

    python bench/gpu.py [--quick] [--kind ThreadedEnginePerDevice]

1. tiny op: ``x = x + 1`` on 16 float32 on gpu(0), --ops in a row then one wait: ndengine's
   time per op / CuPy's (target <= 2x CuPy's launch cost).
2. two independent chains of ``exp(sin(x))`` on 256K float32 each (too small to fill the GPU
   alone), written one line after the other: ndengine runs them on two workers' streams; CuPy
   runs them on its one current stream. The figure: each one's time for two chains over its
   time for one chain (2.0: no overlap; 1.0: full overlap), and the fraction of the ndengine
   run in which both workers had ops on their streams (from the profiler's timeline).
3. copies: host-to-device (``nd.array(host, ctx=gpu(0))``) and device-to-host (``asnumpy``)
   of 256 MiB, as a fraction of CuPy's pinned-memory bandwidth (``ndarray.set``/``get`` with
   pinned host buffers) (target >= 80%), alone and while a compute chain runs.
4. the quickstart demo's program (two chains of exp(sin(x)), 8M float32, 8 steps) with its
   arrays on gpu(0), against NumPy on the CPU (target: faster).
"""
import argparse
import sys

import numpy as np

import ndengine as nd
from common import best_of_interleaved, header, verdict


def cupy_or_exit():
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() == 0:
            raise RuntimeError("no GPU")
        return cupy
    except Exception as exc:  # noqa: BLE001 - any reason means: no GPU to measure
        print(f"skipped: no usable GPU ({exc})")
        sys.exit(0)


def tiny_op(cupy, ops, repeat):
    ctx = nd.gpu(0)

    def nd_run():
        x = nd.zeros(16, dtype=np.float32, ctx=ctx)
        for _ in range(ops):
            x = x + 1
        x.wait_to_read()
        nd.waitall()

    def cupy_run():
        x = cupy.zeros(16, dtype=np.float32)
        for _ in range(ops):
            x = x + 1
        cupy.cuda.get_current_stream().synchronize()

    t = best_of_interleaved({"cupy": cupy_run, "ndengine": nd_run}, repeat)
    per_op = {k: v.best / ops * 1e6 for k, v in t.items()}
    ratio = per_op["ndengine"] / per_op["cupy"]
    print(f"1. tiny op x = x + 1 (16 float32): CuPy {per_op['cupy']:.1f} us/op, ndengine "
          f"{per_op['ndengine']:.1f} us/op: {ratio:.2f}x CuPy (target <= 2x) {verdict(ratio <= 2)}")


def program(xp, a, b, steps):
    for _ in range(steps):
        a = xp.exp(xp.sin(a))
        b = xp.exp(xp.sin(b))
    return a, b


def one_chain(xp, a, steps):
    for _ in range(steps):
        a = xp.exp(xp.sin(a))
    return a


def overlap_fraction(records):
    """The fraction of the busy time in which ops of two GPU compute workers ran at once
    (host side: each op's span, from the start of its waits to its event's record)."""
    spans = {}
    for r in records:
        if r.worker.startswith("ndengine-gpu0-") and "copy" not in r.worker:
            spans.setdefault(r.worker, []).append((r.start_ns, r.end_ns))
    if len(spans) < 2:
        return 0.0
    first, second = list(spans.values())[:2]
    both = sum(max(0, min(a1, b1) - max(a0, b0)) for a0, a1 in first for b0, b1 in second)
    busy = sum(b - a for span in spans.values() for a, b in span)
    return 2 * both / busy if busy else 0.0


def two_chains(cupy, steps, repeat):
    n = 1 << 18
    host = np.random.default_rng(0).random((2, n), dtype=np.float32)
    ga, gb = cupy.asarray(host[0]), cupy.asarray(host[1])
    na, nb = nd.array(host[0], ctx=nd.gpu(0)), nd.array(host[1], ctx=nd.gpu(0))
    nd.waitall()
    sync = cupy.cuda.get_current_stream().synchronize

    def nd_two():
        a, b = program(nd, na, nb, steps)
        nd.waitall()

    def nd_one():
        one_chain(nd, na, steps)
        nd.waitall()

    def cupy_two():
        program(cupy, ga, gb, steps)
        sync()

    def cupy_one():
        one_chain(cupy, ga, steps)
        sync()

    t = best_of_interleaved({"nd2": nd_two, "nd1": nd_one, "cp2": cupy_two,
                             "cp1": cupy_one}, repeat)
    nd_factor = t["nd2"].best / t["nd1"].best
    cp_factor = t["cp2"].best / t["cp1"].best
    from ndengine import profiler
    profiler.reset()
    with profiler.scope():
        nd_two()
    fraction = overlap_fraction(profiler.records())
    a, b = program(nd, na, nb, steps)
    want = program(np, host[0], host[1], steps)
    np.testing.assert_allclose(a.asnumpy(), want[0], rtol=1e-5)
    print(f"2. two chains of exp(sin(x)) on {n:,} float32, {steps} steps: ndengine "
          f"{t['nd2'].best * 1e3:.2f} ms (x{nd_factor:.2f} one chain's), CuPy one stream "
          f"{t['cp2'].best * 1e3:.2f} ms (x{cp_factor:.2f}); ndengine/CuPy "
          f"{t['nd2'].best / t['cp2'].best:.2f}x; launch spans of the two workers overlap "
          f"{fraction:.0%} {verdict(nd_factor < cp_factor)}")


def copies(cupy, repeat, mib=256):
    n = mib * (1 << 20) // 4
    host = np.random.default_rng(1).random(n, dtype=np.float32)
    import cupyx
    pinned = cupyx.empty_pinned(n, np.float32)
    pinned[...] = host
    pinned_out = cupyx.empty_pinned(n, np.float32)
    device = cupy.empty(n, np.float32)
    stream = cupy.cuda.Stream(non_blocking=True)

    def cupy_h2d():
        device.set(pinned, stream=stream)
        stream.synchronize()

    def cupy_d2h():
        device.get(stream=stream, out=pinned_out)
        stream.synchronize()

    x = nd.array(host, ctx=nd.gpu(0))
    nd.waitall()

    def nd_h2d():
        nd.array(host, ctx=nd.gpu(0)).wait_to_read()

    def nd_d2h():
        x.asnumpy()

    t = best_of_interleaved({"cp_h2d": cupy_h2d, "nd_h2d": nd_h2d, "cp_d2h": cupy_d2h,
                             "nd_d2h": nd_d2h}, repeat)
    gb = n * 4 / 1e9
    for way in ("h2d", "d2h"):
        cp, mine = gb / t[f"cp_{way}"].best, gb / t[f"nd_{way}"].best
        print(f"3. {way}: {mib} MiB: CuPy pinned {cp:.1f} GB/s, ndengine {mine:.1f} GB/s: "
              f"{mine / cp:.0%} (target >= 80%) {verdict(mine / cp >= 0.8)}")
    # overlap: a copy while a compute chain runs on the compute stream
    small = nd.array(host[: 1 << 20], ctx=nd.gpu(0))
    nd.waitall()

    def chain_alone():
        one_chain(nd, small, 200)
        nd.waitall()

    def copy_alone():
        nd_d2h()

    def both():
        one_chain(nd, small, 200)
        x.asnumpy()
        nd.waitall()

    t = best_of_interleaved({"chain": chain_alone, "copy": copy_alone, "both": both}, repeat)
    serial = t["chain"].best + t["copy"].best
    print(f"   copy during compute: chain {t['chain'].best * 1e3:.1f} ms, copy "
          f"{t['copy'].best * 1e3:.1f} ms, together {t['both'].best * 1e3:.1f} ms "
          f"({t['both'].best / serial:.0%} of their sum) "
          f"{verdict(t['both'].best < 0.9 * serial)}")


def demo(repeat, size=8_000_000, steps=8):
    rng = np.random.default_rng(0)
    a_np, b_np = rng.random(size, dtype=np.float32), rng.random(size, dtype=np.float32)
    a, b = nd.array(a_np, ctx=nd.gpu(0)), nd.array(b_np, ctx=nd.gpu(0))
    nd.waitall()

    def numpy_run():
        x, y = program(np, a_np, b_np, steps)
        return (x + y).sum()

    def nd_run():
        x, y = program(nd, a, b, steps)
        return (x + y).sum().item()

    t = best_of_interleaved({"numpy": numpy_run, "ndengine": nd_run}, repeat)
    assert np.isclose(nd_run(), numpy_run(), rtol=1e-3)
    speed = t["numpy"].best / t["ndengine"].best
    print(f"4. quickstart program on gpu(0): NumPy (CPU) {t['numpy'].best * 1e3:.1f} ms, "
          f"ndengine gpu(0) {t['ndengine'].best * 1e3:.1f} ms: {speed:.1f}x faster "
          f"{verdict(speed > 1)}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--kind", default=None, help="engine kind (default: the default)")
    args = parser.parse_args(argv)
    cupy = cupy_or_exit()
    if args.kind:
        nd.engine.set_engine(nd.engine.create(args.kind))
    header(f"GPU benchmarks on {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}, "
           f"{nd.engine.get().kind}")
    repeat = 3 if args.quick else 7
    tiny_op(cupy, 500 if args.quick else 3000, repeat)
    two_chains(cupy, 20 if args.quick else 100, repeat)
    copies(cupy, repeat, 64 if args.quick else 256)
    demo(repeat)


if __name__ == "__main__":
    main()
