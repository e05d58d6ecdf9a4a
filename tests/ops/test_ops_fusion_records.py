"""The evaluator kept per compiled kernel on disk (``fusion/evaluator_records``): written once a
process's measurement settles, used by a new process from its first call without trying the
evaluators, invalidated by a change of what it depends on, ignored when unusable."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import numba
import pytest

from ndengine.ops.fusion import codegen, evaluator_records as records
from ndengine.ops.fusion import kernel as fusion, kernel_cache as fusion_kernels
from ndengine.ops.fusion.drivers import coalesced_views, prepare_call
from ndengine.ops.fusion.kernel import ProgramBuilder, run_unfused
from ndengine.ops.runtime.parallel import cpu_count

from fusion_helpers import assert_identical

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TIMEOUT = 300
SIZE = 1 << 17  # measured (MEASURE_MIN_ELEMENTS) and compiled on its first call


def chain(a, length):
    """``length`` x (x*1.0001 - 0.25): a structure of its own per length."""
    b = ProgramBuilder()
    x = b.array(a)
    for _ in range(length):
        x = b.apply("subtract", b.apply("multiply", x, np.float32(1.0001)), np.float32(0.25))
    return b.build(outputs=[x])


def variant_of(kernel, arrays):
    """The compiled variant an "auto" call of ``kernel`` on ``arrays`` uses."""
    program = kernel.program
    outputs = [np.empty(shape, dtype) for shape, dtype in program.output_specs]
    call = prepare_call(program, arrays, outputs, cpu_count())
    return kernel._variant(call, coalesced_views(call), "auto", program.scalar_values)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NDENGINE_CACHE_DIR", str(tmp_path))
    return tmp_path


# Runs one structure CALLS times ("auto"); in a process that finds no kernel it waits for the
# compile its first call requests, so the kernel is measured MEASURE_RUNS times.
SUBPROCESS = textwrap.dedent("""
    import json
    import numpy as np
    from ndengine.ops.fusion import kernel as fusion, kernel_cache
    a = np.linspace(-1, 1, {size}, dtype=np.float32)
    b = fusion.ProgramBuilder()
    x = b.array(a)
    for _ in range(13):
        x = b.apply("subtract", b.apply("multiply", x, np.float32(1.0001)), np.float32(0.25))
    program = b.build(outputs=[x])
    kernel = fusion.kernel_for(program)
    expected = fusion.run_unfused(program, [a])[0]
    for call in range({calls}):
        (out,) = kernel([a])
        assert (out == expected).all()
        if call == 0 and kernel.entry.runs.get("blocked"):
            (variant,) = kernel.entry.events
            kernel_cache.wait(kernel.entry, variant, {timeout})
    entry = kernel.entry
    print(json.dumps({{"runs": entry.runs, "best_ns": entry.best_ns,
                      "loaded": list(entry.loaded_from_disk.values())}}))
""")


def _run_process(cache_dir, calls):
    code = SUBPROCESS.format(size=SIZE, calls=calls, timeout=TIMEOUT / 2)
    env = dict(os.environ, NDENGINE_CACHE_DIR=str(cache_dir), PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_new_process_runs_the_recorded_evaluator_from_its_first_call(tmp_path):
    calls = fusion.MEASURE_RUNS + 3
    first = _run_process(tmp_path, calls)
    assert first["runs"] == {"blocked": 1, "numba": calls - 1}  # tried both
    (path,) = (tmp_path / "fusion").glob("*.evaluator.json")
    recorded = json.loads(path.read_text())["evaluator"]
    blocked, compiled = first["best_ns"]["blocked"], first["best_ns"]["numba"]
    assert recorded == ("blocked" if blocked < 0.9 * compiled else "numba")
    second = _run_process(tmp_path, calls)
    assert second["runs"] == {recorded: calls}  # no try of the other evaluator
    if recorded == "numba":
        assert second["loaded"] == [True]  # from disk, on the first call
    else:
        assert second["loaded"] == []  # nothing compiled or loaded before the first retry


def test_a_kernel_that_clearly_wins_is_recorded_before_it_is_measured_in_full(tmp_path):
    """A script that ends after one run of the kernel (before MEASURE_RUNS) still leaves the
    record when the kernel beat the blocked evaluator by EARLY_MARGIN: its next process loads
    the kernel at the first call."""
    first = _run_process(tmp_path, 2)
    assert first["runs"] == {"blocked": 1, "numba": 1}
    blocked, compiled = first["best_ns"]["blocked"], first["best_ns"]["numba"]
    records = list((tmp_path / "fusion").glob("*.evaluator.json"))
    if compiled * fusion.EARLY_MARGIN <= blocked:
        (path,) = records
        assert json.loads(path.read_text())["evaluator"] == "numba"
        second = _run_process(tmp_path, 2)
        assert second["runs"] == {"numba": 2} and second["loaded"] == [True]
    else:
        assert records == []


def test_a_recorded_blocked_choice_requests_no_compile(cache):
    a = np.linspace(-1, 1, SIZE, dtype=np.float32)
    kernel = fusion.kernel_for(chain(a, 3))
    assert records.save(kernel.entry, variant_of(kernel, [a]), "blocked", {})
    expected = run_unfused(kernel.program, [a])[0]
    for _ in range(3):
        assert_identical(kernel([a])[0], expected)
    assert kernel.entry.runs == {"blocked": 3}
    assert kernel.entry.events == {}  # without the record its first call requests a compile


@pytest.mark.parametrize("change", ["cores", "numba version", "codegen"])
def test_a_change_of_what_the_record_depends_on_invalidates_it(cache, monkeypatch, change):
    a = np.linspace(-1, 1, SIZE, dtype=np.float32)
    kernel = fusion.kernel_for(chain(a, 4))
    variant = variant_of(kernel, [a])
    assert records.save(kernel.entry, variant, "blocked", {})
    assert records.load(kernel.entry, variant) == "blocked"
    monkeypatch.setattr(records, "_measurement_key", None)
    monkeypatch.setattr(codegen, "_DEPENDENCIES", None)
    if change == "cores":
        monkeypatch.setattr(records, "cpu_count", lambda: cpu_count() + 1)
    elif change == "numba version":
        monkeypatch.setattr(numba, "__version__", numba.__version__ + ".other")
    else:
        monkeypatch.setattr(codegen, "CODEGEN_VERSION", codegen.CODEGEN_VERSION + ".other")
    assert records.load(kernel.entry, variant) is None


def _corrupt(path, how):
    """Replace the record at ``path`` by an unusable one."""
    record = json.loads(path.read_text())
    path.unlink()
    if how == "unreadable":
        path.mkdir()  # opening it fails: IsADirectoryError
    elif how == "another key":
        path.write_text(json.dumps({"key": "something else", "evaluator": "blocked"}))
    elif how == "unknown evaluator":
        path.write_text(json.dumps(dict(record, evaluator="fastest")))
    elif how == "not a record":
        path.write_text("[1, 2]")
    else:
        path.write_bytes(b"\x00\xff{not json")


@pytest.mark.parametrize("length, how", [(5, "unreadable"), (6, "another key"),
                                         (7, "unknown evaluator"), (8, "not a record"),
                                         (9, "garbage")])
def test_a_corrupt_record_is_ignored(cache, length, how):
    a = np.linspace(-1, 1, SIZE, dtype=np.float32)
    kernel = fusion.kernel_for(chain(a, length))
    variant = variant_of(kernel, [a])
    assert records.save(kernel.entry, variant, "blocked", {})
    _corrupt(type(cache)(records.record_path(kernel.entry, variant)), how)
    assert records.load(kernel.entry, variant) is None
    (out,) = kernel([a])  # measures as without a record
    assert_identical(out, run_unfused(kernel.program, [a])[0])
    assert kernel.entry.runs == {"blocked": 1} and variant in kernel.entry.events
    fusion_kernels.wait(kernel.entry, variant, TIMEOUT)  # compiled while the cache is ``cache``


def test_a_record_needs_its_kernel_in_the_cache(cache):
    a = np.linspace(-1, 1, SIZE, dtype=np.float32)
    kernel = fusion.kernel_for(chain(a, 10))
    variant = variant_of(kernel, [a])
    assert records.save(kernel.entry, variant, "numba", {})
    assert records.load(kernel.entry, variant) is None  # its module was never written here
    kernel([a], evaluator="numba")
    assert records.load(kernel.entry, variant) == "numba"
