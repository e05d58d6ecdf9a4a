"""The kernel cache: one entry per program structure, its compiled variants, its statistics.

The key is the program's structure (op names, static params, argument ids, dtypes, scalar
*types*, outputs, the reduction, ndim) plus what each destination stores; a compiled
variant is further keyed by layout (``("flat", leaf classes)`` or ``("nd", ndim)``) and
serial/parallel.  Sizes, strides and scalar values are arguments: one compile per
structure and layout.

Compiling runs on the compile thread (``compile_queue``), so a new expression never stalls
its caller: until its kernel is ready the caller runs the blocked evaluator.  ``request`` queues a variant; ``wait`` blocks (tests, benchmarks); ``load_now`` compiles or loads in
the caller (a kernel that an evaluator record says wins, ``evaluator_records``, is loaded
from disk on the first call rather than after blocked runs).

Statistics (``stats()``): per key the calls (hits), when it was first seen (a miss), each
variant's compile or load time and whether Numba loaded it from its disk cache, and the
best time per element measured for each evaluator.
"""
from __future__ import annotations

import os
import threading
import time

from ..runtime import compile_log, compile_queue
from .codegen import kernel_source, load_kernel, scalar_slots
from .evaluators import BlockedEvaluator
from ..families.row_reductions import warm as warm_rows

__all__ = ["KernelEntry", "entry_for", "request", "wait", "load_now", "stats", "entry_stats",
           "reset_stats", "MEASURE_MIN_ELEMENTS"]

MEASURE_MIN_ELEMENTS = 1 << 16  # calls this large are measured (smaller ones time overheads)


class KernelEntry:
    """Everything cached for one program structure and destination set."""

    def __init__(self, key, program, dests):
        self.key = key
        self.program = program          # the first program of this structure (for codegen)
        self.dests = dests              # ((node id, dtype), ...)
        self.member_names = program.member_names
        self.blocked = BlockedEvaluator(program, [node for node, _ in dests])
        self.slots = [(program.nodes[i].index, dtype, how)
                      for i, dtype, how in scalar_slots(program)]
        self.calls = 0
        self.last_slots = (None, None)  # (key of the scalar values, their kernel arguments)
        self.variants = {}              # (layout, parallel) -> Numba dispatcher
        self.events = {}                # (layout, parallel) -> Event set once tried
        self.failed = {}                # (layout, parallel) -> why
        self.compile_seconds = {}       # (layout, parallel) -> seconds
        self.loaded_from_disk = {}      # (layout, parallel) -> bool
        self.best_ns = {}               # evaluator -> best ns per element measured
        self.runs = {}                  # evaluator -> calls
        self.kept = {}                  # (layout, parallel) -> evaluator recorded on disk, or
        # None (looked up once per process, ``evaluator_records``)

    def record(self, evaluator, seconds, size) -> None:
        self.runs[evaluator] = self.runs.get(evaluator, 0) + 1
        if size >= MEASURE_MIN_ELEMENTS:
            ns = seconds * 1e9 / size
            if ns < self.best_ns.get(evaluator, float("inf")):
                self.best_ns[evaluator] = ns


_entries: dict = {}
_lock = threading.Lock()
_counters = {"hits": 0, "misses": 0}
ENTRY_LIMIT = 1024  # entries kept; the cache is cleared when full


def entry_for(program, dests) -> KernelEntry:
    key = (program.key, dests)
    entry = _entries.get(key)
    if entry is not None:
        _counters["hits"] += 1
        return entry
    with _lock:
        entry = _entries.get(key)
        if entry is None:
            if len(_entries) >= ENTRY_LIMIT:
                _entries.clear()
            entry = _entries[key] = KernelEntry(key, program, dests)
            _counters["misses"] += 1
        else:
            _counters["hits"] += 1
    return entry


# ------------------------------------------------------------------ background compiles

def request(entry, variant) -> threading.Event:
    """Queue ``variant`` = (layout, parallel) of ``entry`` for compiling, once; returns the
    event set when it is ready or failed."""
    with _lock:
        event = entry.events.get(variant)
        if event is None:
            event = entry.events[variant] = threading.Event()
            compile_queue.submit(lambda: _compile(entry, variant), event)
    return event


def wait(entry, variant, timeout=None):
    """The compiled variant, compiling it now if needed (None if it failed)."""
    request(entry, variant).wait(timeout)
    return entry.variants.get(variant)


def load_now(entry, variant):
    """The compiled variant, compiled or loaded in the calling thread unless already
    requested (then waited for); None if it failed."""
    with _lock:
        event = entry.events.get(variant)
        mine = event is None
        if mine:
            event = entry.events[variant] = threading.Event()
    if mine:
        try:
            _compile(entry, variant)
        finally:
            event.set()
    else:
        event.wait()
    return entry.variants.get(variant)


def _compile(entry, variant):
    layout, parallel = variant
    start = time.perf_counter()
    try:
        source = kernel_source(entry.program, layout, entry.dests, parallel)
        kernel, loaded = load_kernel(source)
        reduction = entry.program.reduction
        if reduction is not None:  # its row loop, so that no caller ever compiles it
            warm_rows(reduction.name, reduction.dtype)
    except Exception as exc:  # noqa: BLE001 - the blocked evaluator stays in use
        entry.failed[variant] = f"{type(exc).__name__}: {exc}"
        entry.compile_seconds[variant] = time.perf_counter() - start
        compile_log.record(_description(entry, variant), entry.compile_seconds[variant], exc,
                           "the blocked evaluator runs instead")
    else:
        entry.variants[variant] = kernel
        entry.loaded_from_disk[variant] = loaded
        entry.compile_seconds[variant] = time.perf_counter() - start
        compile_log.record(_description(entry, variant, loaded), entry.compile_seconds[variant])


def _description(entry, variant, loaded=False) -> str:
    """What a compile log record names: the fused ops and the variant."""
    return (f"fused kernel {'+'.join(entry.member_names)} [{_variant_name(variant)}]"
            + (" (loaded from the disk cache)" if loaded else ""))


def _reset_in_child():
    # a forked child has none of the parent's threads: compiles queued or under way there
    # never finish here, so forget them (they are requested again when needed)
    global _lock
    _lock = threading.Lock()
    for entry in list(_entries.values()):
        for variant, event in list(entry.events.items()):
            if not event.is_set():
                del entry.events[variant]


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_in_child)


# ------------------------------------------------------------------ statistics

def _variant_name(variant) -> str:
    layout, parallel = variant
    shape = f"flat[{','.join(layout[1])}]" if layout[0] == "flat" else f"nd{layout[1]}"
    return f"{shape}/{'parallel' if parallel else 'serial'}"


def stats() -> dict:
    """Cache counters and, per program structure, its calls, compiles and timings."""
    kernels = {}
    compiles = loads = 0
    seconds = 0.0
    for entry in list(_entries.values()):
        report = entry_stats(entry)
        for info in report["variants"].values():
            seconds += info.get("seconds", 0.0)
            if "loaded_from_disk" in info:
                loads += info["loaded_from_disk"]
                compiles += not info["loaded_from_disk"]
        kernels["+".join(entry.member_names) + f" #{id(entry):x}"] = report
    return {"hits": _counters["hits"], "misses": _counters["misses"], "entries": len(kernels),
            "compiles": compiles, "disk_loads": loads, "compile_seconds": round(seconds, 4),
            "kernels": kernels}


def entry_stats(entry) -> dict:
    """One structure's calls, runs per evaluator, best ns per element, and per compiled
    variant: ready, pending, compile or load seconds, loaded from disk, why it failed."""
    variants = {}
    for variant, event in list(entry.events.items()):
        info = {"ready": variant in entry.variants, "pending": not event.is_set()}
        if variant in entry.compile_seconds:
            info["seconds"] = round(entry.compile_seconds[variant], 4)
        if variant in entry.loaded_from_disk:
            info["loaded_from_disk"] = entry.loaded_from_disk[variant]
        if variant in entry.failed:
            info["failed"] = entry.failed[variant]
        variants[_variant_name(variant)] = info
    return {"calls": entry.calls, "runs": dict(entry.runs),
            "best_ns_per_element": {k: round(v, 3) for k, v in entry.best_ns.items()},
            "variants": variants}


def reset_stats(clear_cache=False) -> None:
    """Zero the counters (and forget every entry with ``clear_cache``)."""
    with _lock:
        _counters["hits"] = _counters["misses"] = 0
        if clear_cache:
            _entries.clear()
