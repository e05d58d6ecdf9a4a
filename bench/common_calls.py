"""Everyday calls on small arrays, each in a loop the way scripts write them (element after
element, a sliding window, a fresh index array per step), beside NumPy in the same run: where
a call costs far more than NumPy's, a loop around it is where a script loses.

    python bench/common_calls.py [--calls 2000] [--repeat 5] [--only SUBSTRING]

Each figure is the best of --repeat runs of --calls calls (after a warm-up run and the
compiles it queued), ndengine and NumPy timed in interleaved rounds; rows are sorted by the
ratio, worst first. The loop variable ``i`` changes the call each time where a script's would
(an index, a window's start, a shift), so a call that plans anew per value shows here. No
target: this is the map of what is left, not a pass/fail benchmark (the small-array targets
are tiny_ops.py, scalar_chain.py, sgd_step.py and realistic_scripts.py).
"""
import argparse

import numpy as np

import ndengine as nd
from common import best_of_interleaved

# label: the call, with ``xp`` the module, ``i`` the loop's index; arrays: ``v`` 20,000 float64,
# ``a`` (64, 64) float32, ``b`` its twin, ``m`` a boolean (64, 64), ``k`` an int64 index (32,)
CALLS = {
    "float(v[i])": "float(v[i])",
    "v[i]": "v[i]",
    "v[i] = 1.5": "v.__setitem__(i, 1.5)",
    "v[i] += 1.0": "v.__setitem__(i, v[i] + 1.0)",
    "a[i % 64, (7 * i) % 64]": "a[i % 64, (7 * i) % 64]",
    "a[i % 64]": "a[i % 64]",
    "a[:, i % 64]": "a[:, i % 64]",
    "v[i:i + 16]": "v[i:i + 16]",
    "v[i:i + 16].sum()": "v[i:i + 16].sum()",
    "v[i:i + 16] = 0.0": "v.__setitem__(slice(i, i + 16), 0.0)",
    "a + b": "a + b",
    "a * 2.0": "a * 2.0",
    "xp.exp(a)": "xp.exp(a)",
    "a > 0.5": "a > 0.5",
    "xp.where(m, a, b)": "xp.where(m, a, b)",
    "a.sum()": "a.sum()",
    "a.sum(axis=0)": "a.sum(axis=0)",
    "a.max()": "a.max()",
    "a.mean()": "a.mean()",
    "a.any()": "a.any()",
    "xp.argmax(a, axis=1)": "xp.argmax(a, axis=1)",
    "a @ b": "a @ b",
    "a.T": "a.T",
    "a.reshape(-1)": "a.reshape(-1)",
    "a.ravel()": "a.ravel()",
    "a.copy()": "a.copy()",
    "a.astype(np.float64)": "a.astype(np.float64)",
    "a[k]": "a[k]",
    "a[k, k]": "a[k, k]",
    "a[m]": "a[m]",
    "xp.take(v, k)": "xp.take(v, k)",
    "xp.zeros(256)": "xp.zeros(256)",
    "xp.ones((64, 64))": "xp.ones((64, 64))",
    "xp.empty(256)": "xp.empty(256)",
    "xp.arange(256)": "xp.arange(256)",
    "xp.linspace(0, 1, 64)": "xp.linspace(0, 1, 64)",
    "xp.concatenate([a, b])": "xp.concatenate([a, b])",
    "xp.stack([a, b])": "xp.stack([a, b])",
    "xp.roll(v[:64], i)": "xp.roll(v[:64], i)",
    "xp.sort(v[:256])": "xp.sort(v[:256])",
    "xp.cumsum(v[:256])": "xp.cumsum(v[:256])",
    "xp.unique(k)": "xp.unique(k)",
    "xp.bincount(k)": "xp.bincount(k)",
    "xp.nonzero(m)": "xp.nonzero(m)",
    "xp.count_nonzero(m)": "xp.count_nonzero(m)",
    "xp.clip(a, 0.2, 0.8)": "xp.clip(a, 0.2, 0.8)",
    "xp.dot(v[:64], v[:64])": "xp.dot(v[:64], v[:64])",
    "xp.linalg.norm(v[:64])": "xp.linalg.norm(v[:64])",
    "bool((a > 2).any())": "bool((a > 2).any())",
    "a.tolist()": "a.tolist()",
}


V_LENGTH = 20_000  # ``v``: long enough for the runs' indices to be new ones


def arrays(xp, rng):
    a = rng.random((64, 64)).astype(np.float32)
    data = {"v": rng.random(V_LENGTH), "a": a, "b": a[::-1].copy(), "m": a > 0.5,
            "k": rng.integers(0, 64, 32)}
    if xp is nd:  # index arrays stay NumPy's, as a script's usually are
        data.update({name: nd.array(value) for name, value in data.items() if name != "k"})
    return data


def looped(source, xp, data, calls):
    """The loop as a function; each run goes on where the last stopped (``i`` from ``start``):
    a script walking a long array meets each index once, and so does this loop (a memo of
    every index seen would otherwise hide a call that plans anew per index)."""
    code = compile(f"for i in range(start, start + {calls}):\n    {source}\n", "<call>",
                   "exec")
    scope = {"xp": xp, "np": np, "start": 0, **data}

    def run():
        exec(code, scope)
        scope["start"] = (scope["start"] + calls) % (V_LENGTH - calls - 16)
        if xp is nd:
            nd.waitall()
    return run


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default=None, help="rows whose label holds this")
    args = parser.parse_args(argv)
    rows = []
    for label, source in CALLS.items():
        if args.only and args.only not in label:
            continue
        fns = {xp.__name__: looped(source, xp, arrays(xp, np.random.default_rng(0)),
                                   args.calls) for xp in (np, nd)}
        timings = best_of_interleaved(fns, args.repeat)
        numpy_us, nd_us = (timings[name].best / args.calls * 1e6 for name in fns)
        rows.append((nd_us / numpy_us, label, numpy_us, nd_us))
    print(f"{'call (in a loop over i)':28s} {'NumPy us':>9s} {'ndengine us':>12s} "
          f"{'x NumPy':>8s}")
    for ratio, label, numpy_us, nd_us in sorted(rows, reverse=True):
        print(f"{label:28s} {numpy_us:9.2f} {nd_us:12.2f} {ratio:8.1f}")
    if rows:
        ratios = [row[0] for row in rows]
        print(f"geometric mean over {len(rows)} calls: "
              f"{float(np.exp(np.mean(np.log(ratios)))):.1f} x NumPy")


if __name__ == "__main__":
    main()
