"""Helpers shared by the NDArray benchmarks: timing, engine switching, the optional dask peer,
and a peak-RSS sampler. Nothing here is a benchmark itself.

Timing rule, for every script: a warm-up run first (Numba compiles or loads its cache, pools
start, the buffer pool fills), then the compiles it queued are waited for and the warm-up runs
once more (``settle``: an element-wise op's Numba loop compiles in the background while NumPy's
loop stands in, so without the wait the timed runs would measure the stand-in, or the switch),
then ``repeat`` timed runs; the figure used is the best, and the
spread (median / best) is printed so the noise is visible. Where runs are short, the
implementations are timed in interleaved rounds (``best_of_interleaved``), so a slow spell of
the machine hits them all alike.
"""
import os
import platform
import statistics
import threading
import time

import numpy as np

import ndengine as nd
from ndengine import engine
from ndengine.ops.runtime import compile_queue

KINDS = ("NaiveEngine", "ThreadedEnginePooled", "ThreadedEnginePerDevice")


class Timing:
    """Best and median wall time, in seconds, of the timed runs."""

    def __init__(self, times):
        self.times = list(times)
        self.best = min(self.times)
        self.median = statistics.median(self.times)

    @property
    def spread(self):
        """median / best: 1.00 means quiet; above ~1.10 the figure is noisy."""
        return self.median / self.best

    def __repr__(self):
        return f"Timing(best={self.best:.4f}s, median={self.median:.4f}s)"


def settle(fns):
    """Wait for the compiles the warm-up queued, then run each of ``fns`` once more (its calls
    now take the compiled loops): the runs after this are the steady state."""
    if compile_queue.drain(timeout=300):
        for fn in fns:
            fn()


def best_of(fn, repeat, warmup=1, setup=None):
    """Time ``fn()`` ``repeat`` times after ``warmup`` untimed runs (and ``settle``, when
    there was a warm-up); ``setup()`` (untimed) runs before each call."""
    for _ in range(warmup):
        if setup is not None:
            setup()
        fn()
    if warmup:
        if setup is not None:
            setup()
        settle([fn])
    times = []
    for _ in range(repeat):
        if setup is not None:
            setup()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return Timing(times)


def best_of_interleaved(fns, repeat, warmup=1):
    """Like best_of for several implementations ({name: fn}), timed in rounds: each round runs
    every one once. The speed of this machine drifts by up to ~1.5x over seconds; in rounds,
    every implementation sees the same drift, so their ratios stay honest."""
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    if warmup:
        settle(fns.values())
    times = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: Timing(t) for name, t in times.items()}


def on_engine(eng, fn):
    """``fn`` run with ``eng`` as the process-wide engine (for interleaved timing)."""
    def run():
        engine.set_engine(eng)
        fn()
    return run


def use_engine(kind, workers=None):
    """Make a fresh engine of ``kind`` the process-wide one; the previous one is drained and
    its worker threads stopped, so engines measured one after another do not compete."""
    new = engine.create(kind, num_cpu_workers=workers)
    previous = engine.set_engine(new)
    if previous is not None and previous is not new:
        previous.notify_shutdown()
    return new


def dask_array():
    """``dask.array`` if dask is installed, else None (dask is an optional peer)."""
    try:
        import dask
        import dask.array as da
    except ImportError:
        return None
    dask.config.set(scheduler="threads")
    return da


def header(title):
    import numba
    layer = "?"
    try:
        from ndengine.ops.runtime.parallel import parallel_enabled
        if parallel_enabled():
            layer = numba.threading_layer()
        else:
            layer = "serial"
    except Exception:  # noqa: BLE001 - informational only
        pass
    print(f"== {title}")
    print(f"   Python {platform.python_version()}, NumPy {np.__version__}, "
          f"Numba {numba.__version__} (layer {layer}, {numba.config.NUMBA_NUM_THREADS} threads), "
          f"ndengine {nd.__version__}, {os.cpu_count()} cores")
    core = nd.engine.compiled.STATE
    print(f"   per-op core: {core['core']} ({core['reason']})")
    load = os.getloadavg()[0]
    note = "  (other processes are busy: expect noise)" if load > 0.5 else ""
    print(f"   load average (1 min) at start: {load:.2f}{note}")


def verdict(ok):
    return "PASS" if ok else "MISS"


def check_close(name, got, want, rtol=1e-5):
    """Every implementation must compute the same numbers, or its timing means nothing."""
    got = np.asarray(got)
    if not np.allclose(got, want, rtol=rtol, atol=0):
        worst = np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-30))
        raise AssertionError(f"{name}: result differs from NumPy (max rel error {worst:.3g})")


# ------------------------------------------------------------------ memory
_PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_bytes():
    """Current resident set size, from /proc/self/statm."""
    with open("/proc/self/statm", "rb") as fh:
        return int(fh.read().split()[1]) * _PAGE


class PeakRSS:
    """A thread sampling the RSS every ``interval`` seconds; ``peak`` is the highest seen.

    with PeakRSS() as sampler: ...; sampler.peak
    """

    def __init__(self, interval=0.001):
        self.interval = interval
        self.peak = 0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)

    def _run(self):
        fd = os.open("/proc/self/statm", os.O_RDONLY)
        try:
            while not self._stop.is_set():
                rss = int(os.pread(fd, 128, 0).split()[1]) * _PAGE
                if rss > self.peak:
                    self.peak = rss
                self.samples += 1
                time.sleep(self.interval)
        finally:
            os.close(fd)

    def __enter__(self):
        self.peak = rss_bytes()
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_bytes())
        return False


# ------------------------------------------------------------------ peers and ratios
def torch_module(threads=1):
    """``torch`` if PyTorch is importable, else None (PyTorch eager on the CPU is an optional
    peer: never a dependency of the project), set to ``threads`` intra-op threads (0: its own
    default, one per core). One by default: its pool's threads spin after every op and slow
    down whatever runs next in the same rounds (measured on 2 loaded cores: NumPy's MLP step
    18 ms interleaved with 2-thread PyTorch, 1.6 ms beside 1-thread PyTorch)."""
    try:
        import torch
    except Exception:  # noqa: BLE001 - not installed, or an install that does not load
        return None
    if threads:
        torch.set_num_threads(threads)
    return torch


def torch_label(torch):
    """The row label of the PyTorch peer, with its version and intra-op thread count."""
    return f"PyTorch {torch.__version__} eager, {torch.get_num_threads()} thr"


def ratio_line(label, ratio, target, what="x NumPy"):
    """The verdict line of a ratio target: ``label: 2.31 x NumPy (target <= 4): PASS``."""
    return f"{label}: {ratio:.2f} {what} (target <= {target:g}): {verdict(ratio <= target)}"


def ratio_table(timings, torch, columns):
    """Print one row per implementation against NumPy's ("NumPy" in ``timings``) and return
    the worst ndengine ratio. ``columns`` is a list of (heading, seconds -> figure)."""
    timings = dict(timings)
    base = timings.pop("NumPy")
    head = "".join(f" {title:>8s}" for title, _ in columns)
    print(f"{'implementation':34s}{head} {'x NumPy':>8s} {'med/best':>9s}")

    def row(label, timing, ratio):
        figures = "".join(f" {fn(timing.best):8.2f}" for _, fn in columns)
        print(f"{label:34s}{figures} {ratio:8.2f} {timing.spread:9.2f}")

    row("NumPy", base, 1.0)
    worst = 0.0
    for name, timing in timings.items():
        ratio = timing.best / base.best
        if name == "PyTorch":
            row(torch_label(torch), timing, ratio)
        else:
            worst = max(worst, ratio)
            row(f"ndengine {name}", timing, ratio)
    return worst
