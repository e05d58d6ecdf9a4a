"""KVStore transfer cost: the 'dask' KVStore's push, pull and pushpull of one value, beside a
plain dask round trip of the same bytes (``client.scatter`` then ``client.gather``), on a
LocalCluster in this machine.

    python bench/kv.py [--sizes 1 100] [--repeat 5] [--quick]

Each row times one operation until its array is ready (``asnumpy``-free: ``wait_to_read``),
from a client process that is the store's only worker (rank 0 of 1), so that no other worker's
skew is measured; the server runs on the scheduler, which a LocalCluster keeps in this process
(the values still cross TCP and dask's serialization; scatter+gather goes to a worker process). Latency is the best of --repeat runs after
a warm-up run (med/best shows the noise); throughput is bytes / best time. The ratio column is
the time over the scatter+gather round trip's: a push or a pull moves the value once, a
pushpull twice, as scatter+gather does.
"""
import argparse
import sys
import time

import numpy as np

import ndengine as nd
from common import best_of, header


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1, 100],
                        help="value sizes in MB")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="sizes 0.01 and 1 MB, 2 repeats")
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.repeat = [0.01, 1], 2
    from distributed import Client, LocalCluster

    header("KVStore 'dask': push / pull / pushpull vs scatter+gather")
    with LocalCluster(n_workers=1, processes=True, threads_per_worker=1,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        kv = nd.kv.create("dask", client=client, rank=0, num_workers=1, name="bench",
                          timeout=120)
        print(f"{'operation':26s} {'MB':>8s} {'ms':>9s} {'MB/s':>9s} {'x s+g':>7s} "
              f"{'med/best':>9s}")
        for mb in args.sizes:
            n = max(1, int(mb * 1e6 / 8))
            values = np.random.default_rng(0).random(n)
            key = f"v{n}"
            kv.init(key, nd.array(values))
            grad, out = nd.array(values), nd.zeros(n)

            def round_trip():
                future = client.scatter(values, direct=False, hash=False)
                client.gather(future)
                future.release()

            def push():
                kv.push(key, grad)
                kv.pull(key, out=out)  # the push is over once a pull after it is
                out.wait_to_read()

            def pull():
                kv.pull(key, out=out)
                out.wait_to_read()

            def pushpull():
                kv.pushpull(key, grad, out=out)
                out.wait_to_read()

            base = best_of(round_trip, args.repeat)
            rows = [("scatter+gather", base), ("push+pull", best_of(push, args.repeat)),
                    ("pull", best_of(pull, args.repeat)),
                    ("pushpull", best_of(pushpull, args.repeat))]
            np.testing.assert_array_equal(out.asnumpy(), values)  # the last value pulled
            for label, timing in rows:
                print(f"{label:26s} {n * 8 / 1e6:8.2f} {timing.best * 1e3:9.2f} "
                      f"{n * 8 / 1e6 / timing.best:9.1f} {timing.best / base.best:7.2f} "
                      f"{timing.spread:9.2f}")
        start = time.perf_counter()
        futures = []
        for i in range(50):  # overlap: many keys in flight at once
            kv.init(f"small{i}", nd.zeros(16))
            kv.push(f"small{i}", nd.ones(16))
            futures.append(nd.zeros(16))
            kv.pull(f"small{i}", out=futures[-1])
        nd.waitall()
        print(f"50 small keys pushed and pulled together: "
              f"{(time.perf_counter() - start) * 1e3:.1f} ms")
        kv.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
