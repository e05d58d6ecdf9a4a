"""A profile of fused windows busier than the demo's (README.md's fusion section): two chains
of ten `a*1.0001+0.5` on 4M float32 each, then a stencil step, run twice (a structure's first
sight runs op by op), profiled.

    python bench/fusion_profile.py [OUT_DIR]   # writes OUT_DIR/fusion_timeline.png (default:
                                               # the current directory), prints the table
"""
import os
import sys

import numpy as np

import ndengine as nd
from ndengine import profiler


def work(a, b, u):
    for _ in range(10):
        a = a * 1.0001 + 0.5
        b = b * 1.0001 + 0.5
    u[1:-1] += 0.1 * (u[2:] - 2 * u[1:-1] + u[:-2])
    return a.sum(), b


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.getcwd()
    rng = np.random.default_rng(0)
    a, b = nd.array(rng.random(4_000_000, np.float32)), nd.array(rng.random(4_000_000, np.float32))
    u = nd.array(rng.random(4_000_000))
    work(a, b, u)
    nd.waitall()
    with profiler.scope():
        for _ in range(2):
            work(a, b, u)
    print(profiler.dumps())
    for record in profiler.records():
        if record.name.startswith("fused") or record.name in ("add", "multiply"):
            print(record.name, record.info)
    profiler.timeline(os.path.join(out, "fusion_timeline.png"))


if __name__ == "__main__":
    main()
