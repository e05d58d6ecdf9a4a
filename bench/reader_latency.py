"""Read latency with a concurrent writer: one thread loops ``x += 1`` on a large float64 array
while the main thread reads it (``x.asnumpy()``, ``pickle.dumps(x)``), for each engine kind.

    python bench/reader_latency.py [--elements 1048576] [--rounds 20] [--kinds ...] [--quick]

A read waits for the writes queued before it, and only for those. Each read counts them: the
value it returns is the number of writes before it (each adds 1), less the writes the engine had
run when the read was called (counted by a run hook). The lower bound beside it is what NumPy
takes for that work: as many in-place adds on an array of the same size, plus the read itself
(a copy; for pickle, a pickle round trip of the NumPy array), timed in the same rounds (interleaved, so a slow spell of the machine hits both). A fused window runs
its adds in one pass, so a read can beat that bound; a read that waits much longer than it
waited for work that was not its own. The writer's rate is printed too: back-pressure bounds the
queued work without starving the writer.
"""
import argparse
import pickle
import statistics
import threading
import time

import numpy as np

import ndengine as nd
from common import KINDS, header, use_engine

NUMPY_ADDS = 16  # in-place adds timed per round for the NumPy bound


class Writer:
    """A thread looping ``x += 1``; ``completed``: the writes the engine ran (a run hook)."""

    def __init__(self, eng, x):
        x.wait_to_read()  # its fill is not a write to count
        self.x = x
        self.completed = 0
        self.stop = threading.Event()
        self._var = x.engine_var
        eng.set_run_hook(self._count)
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _count(self, name, ctx, reads, writes, info, start, end, failed):
        if self._var in writes:  # a window of n writes (its "ops"): n ran
            members = info().get("ops") if callable(info) else None
            self.completed += len(members) if members else 1

    def _loop(self):
        x = self.x
        while not self.stop.is_set():
            x += 1

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc_info):
        self.stop.set()
        self.thread.join()
        nd.waitall()


def read(writer, how):
    """(seconds, writes waited for) of one read of the writer's array."""
    completed = writer.completed
    start = time.perf_counter()
    if how == "asnumpy":
        first = writer.x.asnumpy()[0]
    else:
        first = pickle.loads(pickle.dumps(writer.x)).asnumpy()[0]
    return time.perf_counter() - start, max(0, int(first) - completed)


def numpy_costs(values, how):
    """NumPy's (seconds per in-place add, seconds per read) on ``values``."""
    start = time.perf_counter()
    for _ in range(NUMPY_ADDS):
        values += 1
    middle = time.perf_counter()
    if how == "asnumpy":
        np.array(values, copy=True)
    else:
        pickle.loads(pickle.dumps(values))
    return (middle - start) / NUMPY_ADDS, time.perf_counter() - middle


def measure(kind, elements, rounds):
    """Per read kind: lists of latencies, NumPy bounds and writes waited for; and the
    writer's rate (writes run per second)."""
    eng = use_engine(kind)
    x = nd.zeros(elements)
    values = np.zeros(elements)
    results = {how: {"latency": [], "bound": [], "waited": []} for how in ("asnumpy", "pickle")}
    with Writer(eng, x) as writer:
        time.sleep(0.5)  # the writer's first windows: programs built, queue at its level
        began, done_at_start = time.perf_counter(), writer.completed
        for _ in range(rounds):
            for how, result in results.items():
                add, own_read = numpy_costs(values, how)
                latency, waited = read(writer, how)
                result["latency"].append(latency)
                result["waited"].append(waited)
                result["bound"].append(waited * add + own_read)
                time.sleep(0.02)
        rate = (writer.completed - done_at_start) / (time.perf_counter() - began)
    eng.set_run_hook(None)
    return results, rate


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=int, default=1 << 20)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    parser.add_argument("--quick", action="store_true", help="5 rounds")
    args = parser.parse_args()
    rounds = 5 if args.quick else args.rounds
    header(f"reader latency: x.asnumpy() / pickle.dumps(x) while a thread loops x += 1, "
           f"{args.elements} float64, {rounds} rounds")
    print(f"{'engine':<26}{'read':<9}{'median ms':>10}{'max ms':>9}{'NumPy ms':>10}"
          f"{'x bound':>9}{'waited':>8}{'writes/s':>10}")
    for kind in args.kinds:
        results, rate = measure(kind, args.elements, rounds)
        for how, result in results.items():
            latency = statistics.median(result["latency"]) * 1e3
            bound = statistics.median(result["bound"]) * 1e3
            print(f"{kind:<26}{how:<9}{latency:>10.2f}{max(result['latency']) * 1e3:>9.2f}"
                  f"{bound:>10.2f}{latency / bound:>9.2f}"
                  f"{statistics.median(result['waited']):>8.0f}{rate:>10.0f}")
    print("median ms: read latency; NumPy ms: NumPy's time for the writes the read waited for "
          "(median 'waited') and the read; x bound: their ratio")


if __name__ == "__main__":
    main()
