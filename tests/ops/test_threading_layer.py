"""Numba's threading layer: TBB loaded from the ``tbb`` wheel (never GNU OpenMP, which breaks
forked children and spins against the engine's workers), the workqueue with a warning when
TBB is missing, and large kernels sharing the cores between concurrent callers."""
import sys
import threading
import time

import numba
import numpy as np
import pytest

import ndengine as nd
from ndengine.ops.runtime import parallel
from venv_helpers import PURE, check_probe, make_venv, probe, run, tbb_expected


def _tbb_installed() -> bool:
    from importlib import metadata
    try:
        metadata.distribution("tbb")
    except metadata.PackageNotFoundError:
        return False
    return True


def test_numba_is_asked_for_tbb_then_workqueue_never_omp_first():
    priority = list(numba.config.THREADING_LAYER_PRIORITY)
    if parallel._USER_LAYER:
        pytest.skip("the user chose a Numba threading layer (NUMBA_THREADING_LAYER*)")
    assert priority.index("workqueue") < priority.index("omp"), priority
    assert priority[0] == "tbb"


def test_large_op_runs_on_tbb_when_the_tbb_package_is_installed():
    if not _tbb_installed() or parallel._USER_LAYER:
        pytest.skip("no 'tbb' distribution here, or a layer chosen by NUMBA_THREADING_LAYER*")
    assert parallel.tbb_status.startswith("ok"), parallel.tbb_status
    x = nd.array(np.ones(parallel.PARALLEL_MIN_SIZE * 2))
    np.testing.assert_array_equal((x + x).asnumpy(), 2.0)
    assert numba.threading_layer() == "tbb"
    assert parallel.parallel_enabled()


def test_tbb_is_found_among_the_tbb_distributions_files():
    if not _tbb_installed():
        pytest.skip("no 'tbb' distribution here")
    found = parallel._tbb_candidates()
    assert found and all(p.endswith(parallel._TBB_SONAME) for p in found), found


def _concurrency(calls, body):
    """Runs ``body(i)`` in ``calls`` threads started together; returns their results."""
    barrier = threading.Barrier(calls)
    results = [None] * calls

    def worker(i):
        barrier.wait()
        results[i] = body(i)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return results


def test_split_run_keeps_concurrent_callers_within_the_core_count():
    """As many engine workers as cores, each in a large NumPy-backed op at once: no more
    chunks run at any moment than there are cores."""
    cores = parallel._CPU_COUNT
    if cores == 1:
        pytest.skip("one core: nothing is split")
    size = 2 * parallel.PARALLEL_MIN_SIZE
    lock = threading.Lock()
    running, peak = [0], [0]

    def chunk(x, out):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        try:
            out[:] = x + 1
            time.sleep(0.05)
        finally:
            with lock:
                running[0] -= 1

    def body(i):
        x = np.arange(size, dtype=np.float64)
        out = np.empty_like(x)
        parallel.split_run(chunk, (x, out))
        return bool(np.array_equal(out, x + 1))

    assert all(_concurrency(cores, body))
    assert peak[0] <= cores, f"{peak[0]} chunks ran at once on {cores} cores"
    assert parallel.active_parallel_calls() == 0
    peak[0] = 0
    assert body(0) and peak[0] == cores  # alone: every core


def test_fused_blocks_and_split_chunks_share_one_group_of_helper_threads():
    """A fused program's blocks and a split NumPy call's chunks run on the same helper
    threads: together never more than ``cpu_count() - 1`` besides their callers, each item
    under its caller's NumPy error state."""
    from ndengine.ops.fusion.blocks import run_tasks
    cores = parallel.cpu_count()
    if cores == 1:
        pytest.skip("one core: no helper threads")
    callers, helpers = {threading.get_ident()}, set()
    lock = threading.Lock()

    def note(divide_state):
        with lock:
            if threading.get_ident() not in callers:
                helpers.add(threading.get_ident())
        assert np.geterr()["divide"] == divide_state
        time.sleep(0.02)  # long enough for every helper to take an item

    def chunk(x, out):
        note("raise")
        out[:] = x

    size = cores * parallel.PARALLEL_MIN_SIZE
    for _ in range(3):
        with np.errstate(divide="warn"):
            run_tasks([lambda ws: note("warn")] * (4 * cores), cores)
        with np.errstate(divide="raise"):
            x = np.ones(size)
            out = np.empty_like(x)
            parallel.split_run(chunk, (x, out))
        assert np.array_equal(out, x)
    assert helpers and len(helpers) <= cores - 1, f"{len(helpers)} helpers on {cores} cores"


def test_run_parallel_gives_each_concurrent_caller_its_share_of_numba_threads():
    total = parallel._NUMBA_THREADS
    if total == 1:
        pytest.skip("Numba has one thread")
    assert parallel.run_parallel(numba.get_num_threads) == total  # alone: every core
    assert parallel.share_cores(numba.get_num_threads)() == total
    both_inside = threading.Barrier(2, timeout=30)
    first_inside = threading.Event()

    def body(i):
        def kernel():
            if i == 0:
                first_inside.set()
            else:
                first_inside.wait(30)
            threads = numba.get_num_threads()
            both_inside.wait()
            return threads

        if i == 1:
            first_inside.wait(30)
        return parallel.run_parallel(kernel)

    alone, second = _concurrency(2, body)
    assert alone == total and second == max(1, total // 2)
    assert parallel.active_parallel_calls() == 0


def test_a_nested_split_run_keeps_the_outer_share():
    def kernel():
        return parallel._enter(parallel._CPU_COUNT), parallel.active_parallel_calls()

    try:
        share, active = parallel.run_parallel(kernel)
    finally:
        parallel._leave()
    assert share == parallel._CPU_COUNT and active == 1
    assert parallel.active_parallel_calls() == 0


def test_fresh_venv_uses_tbb_and_fork_and_spawn_pools_work(tmp_path):
    """``pip install`` into a plain venv; a large op, then multiprocessing fork and spawn
    Pools whose workers run large ops. Without the tbb wheel: the workqueue and a warning
    (checked where the base interpreter has no libtbb of its own)."""
    python = make_venv(sys.executable, tmp_path, build_core=False)  # not what is tested here
    venv_dir = tmp_path / "venv"
    report = probe(python, tmp_path, env=PURE)
    if tbb_expected():
        check_probe(report, venv_dir, "tbb")
        assert report["tbb_status"].startswith("ok"), report
        assert not report["warnings"], report
        run([python, "-m", "pip", "uninstall", "--quiet", "--yes", "tbb"], timeout=120,
            cwd=tmp_path, what="pip uninstall tbb")
        report = probe(python, tmp_path, env=PURE)
    if report["tbb_status"].startswith("ok"):
        return  # this interpreter's own lib/ has a libtbb: the fallback cannot be shown here
    check_probe(report, venv_dir, "workqueue")
    assert any("TBBUnavailableWarning" in w and "pip install 'tbb" in w
               for w in report["warnings"]), report
