"""The evaluator kept for a compiled kernel, recorded on disk beside the kernel, so that a new
process runs the kept evaluator from its first call instead of measuring them again.

A process measures which evaluator runs a program structure faster (``kernel``: the blocked
evaluator's runs while the kernel compiles, then ``MEASURE_RUNS`` runs of the kernel).  Once
that settles, ``save`` writes the result as a small JSON file in the kernels' directory
(``codegen.writable_dir``), named after

* the kernel's module (``codegen.kernel_name``: a hash of its source, hence of the program
  structure, layout and serial/parallel, and of what compiled code depends on: codegen
  version, Numba, NumPy and Python versions, the processor architecture, the inlined
  modules' source), so the record goes stale with the kernel; and
* a hash of what the measurement depends on besides (``measurement_key``): the processor
  model (LLVM's host CPU name), the cores and Numba's threads, the source of the code that
  runs each evaluator, and ``RECORD_VERSION`` (bumped when the choosing rule changes).

Numba's first load in a process costs about 0.3 s (its code generator starts), which a
recorded kernel's first call still pays: starting it at import instead would cost every
process that never fuses, and would compile on another thread while the user's first ops run.

The file repeats the whole key; ``load`` ignores a record that cannot be read, is not the
JSON it wrote, carries another key, or names an unknown evaluator (logged at debug level):
a record only ever saves time and never fails a call.  Writes replace the file atomically
(concurrent processes write the same content or the later measurement wins).

State: ``_measurement_key`` (computed once per process).
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile

import llvmlite.binding as _llvm
import numba

from . import blocks, codegen, drivers, evaluators
from ..elementwise.loops import source_digest
from ..runtime.parallel import cpu_count

__all__ = ["load", "save", "record_path", "measurement_key", "EVALUATORS", "RECORD_VERSION"]

RECORD_VERSION = "1"
EVALUATORS = ("blocked", "numba")  # what a record may name
_log = logging.getLogger(__name__)
_measurement_key = None


def measurement_key() -> str:
    """What a measured choice depends on besides the kernel (see the module docstring)."""
    global _measurement_key
    if _measurement_key is None:
        _measurement_key = "|".join((
            RECORD_VERSION, _llvm.get_host_cpu_name(), str(cpu_count()),
            str(numba.config.NUMBA_NUM_THREADS), source_digest(evaluators, drivers, blocks)))
    return _measurement_key


def _locate(entry, variant) -> tuple:
    """(the record's full key, its kernel's module name, the record's file)."""
    layout, parallel = variant
    name = codegen.kernel_name(codegen.kernel_source(entry.program, layout, entry.dests,
                                                     parallel))
    key = f"{name}|{measurement_key()}"
    machine = hashlib.sha256(key.encode()).hexdigest()[:16]
    return key, name, os.path.join(codegen.writable_dir(), f"{name}.{machine}.evaluator.json")


def record_path(entry, variant) -> str:
    """The file of the record of ``entry``'s ``variant`` = (layout, parallel)."""
    return _locate(entry, variant)[2]


def load(entry, variant):
    """The evaluator recorded for ``variant`` of ``entry`` ("blocked" or "numba"), or None
    when there is no usable record (a "numba" record also needs its kernel's module file)."""
    try:
        key, name, path = _locate(entry, variant)
        with open(path, encoding="utf-8") as fh:
            record = json.load(fh)
        if not isinstance(record, dict) or record.get("key") != key:
            raise ValueError("not a record of this kernel on this machine")
        evaluator = record.get("evaluator")
        if evaluator not in EVALUATORS:
            raise ValueError(f"unknown evaluator {evaluator!r}")
        if evaluator == "numba" and not os.path.exists(
                os.path.join(os.path.dirname(path), name + ".py")):
            raise ValueError("its kernel is no longer in the cache")
    except FileNotFoundError:
        return None
    except Exception as exc:  # noqa: BLE001 - a bad record is ignored, never fails a call
        _log.debug("ignoring the evaluator record of %s: %s", entry.member_names, exc)
        return None
    return evaluator


def save(entry, variant, evaluator, best_ns) -> bool:
    """Record ``evaluator`` for ``variant`` of ``entry`` (``best_ns``: the measurements, kept
    for whoever reads the file); whether it was written."""
    if evaluator not in EVALUATORS:
        raise ValueError(f"evaluator must be one of {EVALUATORS}, got {evaluator!r}")
    tmp = None
    try:
        key, _, path = _locate(entry, variant)
        text = json.dumps({"key": key, "evaluator": evaluator,
                           "best_ns_per_element": {k: round(v, 4) for k, v in best_ns.items()}})
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:  # an unwritable cache: the next process measures again
        _log.debug("cannot record the evaluator of %s: %s", entry.member_names, exc)
        return False
    finally:
        if tmp is not None:
            os.unlink(tmp)
    return True
