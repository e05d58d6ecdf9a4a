"""Random differential programs (issue 9): short straight-line programs over a few small
arrays run on NumPy and on ndengine in lockstep, under every engine, from one thread and from
four threads at once (each running its own program on the shared engine).

The programs are drawn in reliability_helpers.py and compared in reliability_replay.py. A
failure prints the program as code: run its lines with ``xp = numpy`` and with
``xp = ndengine`` (and ``v = []``) to reproduce it. The default run is bounded and reports
the first failing program unshrunk; ``-m slow`` runs many more programs and shrinks a failing
one-thread program to a minimal one (NDENGINE_RELIABILITY_PROGRAMS sets how many per test).
``FOUND`` keeps the minimal programs found so far as fixed cases. The session's totals
(programs, steps, comparisons, matching errors) are printed at the end of the module.
"""
import os
import threading

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import ndengine as nd

from reliability_helpers import Mismatch, program_source, programs, summary
from reliability_replay import replay

DEFAULT_PROGRAMS = int(os.environ.get("NDENGINE_RELIABILITY_PROGRAMS", 30))
SLOW_PROGRAMS = int(os.environ.get("NDENGINE_RELIABILITY_PROGRAMS", 400))
THREADS = 4
THREAD_TIMEOUT = 60  # seconds for four programs; only reached when something hangs
# Shrinking a failing program to a minimal one takes minutes: the default run reports the
# first failing program as found; the long (slow) one-thread run shrinks it.
NO_SHRINK = [Phase.explicit, Phase.reuse, Phase.generate]


@pytest.fixture(scope="module", autouse=True)
def print_counts(request):
    yield
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():  # shown without -s
            reporter.write_line("\n" + summary())


def drain():
    """Forget errors of steps that failed inside a kernel on purpose (checked already)."""
    try:
        nd.waitall()
    except Exception:  # noqa: BLE001
        pass


def check_program(lines, compare_each):
    try:
        replay(lines, compare_each)
    except Mismatch as exc:
        raise AssertionError(f"{exc}\n--- program (xp = numpy / ndengine, v = []):\n"
                             f"{program_source(lines)}") from None


def check_concurrent(all_lines, compare_each):
    """Each thread replays its own program; every thread's result is checked."""
    failures = [None] * len(all_lines)

    def run(k):
        try:
            check_program(all_lines[k], compare_each)
        except BaseException as exc:  # noqa: B902 - reported below
            failures[k] = exc

    threads = [threading.Thread(target=run, args=(k,), daemon=True, name=f"program-{k}")
               for k in range(len(all_lines))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(THREAD_TIMEOUT)
    hung = [t.name for t in threads if t.is_alive()]
    assert not hung, f"{hung} did not finish within {THREAD_TIMEOUT}s (deadlock?)"
    for k, exc in enumerate(failures):
        if exc is not None:
            raise AssertionError(f"thread {k} of {len(all_lines)}: {exc}") from None


# Minimal programs the random search found (each a NumPy difference on today's code),
# kept as fixed cases: the search finds them only now and then.
FOUND = {
    "fancy_set_int_out_of_range": ["v.append(xp.zeros(3, dtype='int8'))",
                                   "v[0][np.array([0])] = 300"],
    "mask_set_nan_into_int": ["v.append(xp.zeros(3, dtype='int32'))", "v[0][v[0] == 0] = nan"],
    "slice_set_int_out_of_range": ["v.append(xp.zeros(3, dtype='int32'))",
                                   "v[0][:] = -9223372036854775808"],
    "slice_set_float_out_of_range": ["v.append(xp.zeros(3, dtype='int8'))",
                                     "v[0][0:1] = 10000000000.0"],
    "slice_set_negative_float_into_uint": ["v.append(xp.zeros(3, dtype='uint64'))",
                                           "v[0][:] = -1.5"],
    "slice_set_nan_into_int": ["v.append(xp.zeros(3, dtype='int16'))", "v[0][...] = nan"],
    "empty_slice_set_float_out_of_range": ["v.append(xp.zeros(3, dtype='int8'))",
                                           "v[0][0:0] = 10000000000.0"],
    "sum_0d_axis_0": ["v.append(xp.array(np.array(2.0)))", "v.append(v[0].sum(axis=0))"],
    "max_0d_axis_0": ["v.append(xp.array(np.array(2)))", "v.append(xp.max(v[0], axis=0))"],
    "argmax_0d_axis_0": ["v.append(xp.array(np.array(2.0)))",
                         "v.append(v[0].argmax(axis=0))"],
    "slice_set_leading_unit_dims": ["v.append(xp.zeros(3))", "v.append(xp.ones((1, 3)))",
                                    "v[0][:] = v[1]"],
    "mask_set_2d_value": ["v.append(xp.zeros((1, 2, 3)))", "v.append(xp.ones((1, 3)))",
                          "v[0][v[0] == 0] = v[1]"],
    "mask_set_wrong_count": ["v.append(xp.zeros((2, 3)))", "v.append(xp.ones(4))",
                             "v[0][v[0] == 0] = v[1]"],
    "fancy_set_leading_unit_dims": ["v.append(xp.zeros(3))", "v.append(xp.ones((1, 3)))",
                                    "v[0][np.array([0, 1, 2])] = v[1]"],
}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_found_program(nd_engine, name):
    try:
        check_program([(line, False) for line in FOUND[name]], compare_each=True)
    finally:
        drain()


@settings(max_examples=DEFAULT_PROGRAMS, deadline=None, phases=NO_SHRINK)
@given(lines=programs(), compare_each=st.booleans())
def test_random_program(nd_engine, lines, compare_each):
    try:
        check_program(lines, compare_each)
    finally:
        drain()


@settings(max_examples=max(DEFAULT_PROGRAMS // 4, 3), deadline=None, phases=NO_SHRINK)
@given(all_lines=st.lists(programs(), min_size=THREADS, max_size=THREADS),
       compare_each=st.booleans())
def test_random_programs_in_four_threads(nd_engine, all_lines, compare_each):
    try:
        check_concurrent(all_lines, compare_each)
    finally:
        drain()


@pytest.mark.slow
@settings(max_examples=SLOW_PROGRAMS, deadline=None)
@given(lines=programs(max_steps=40), compare_each=st.booleans())
def test_random_program_long(nd_engine, lines, compare_each):
    try:
        check_program(lines, compare_each)
    finally:
        drain()


@pytest.mark.slow
@settings(max_examples=max(SLOW_PROGRAMS // 4, 3), deadline=None, phases=NO_SHRINK)
@given(all_lines=st.lists(programs(max_steps=40), min_size=THREADS, max_size=THREADS),
       compare_each=st.booleans())
def test_random_programs_in_four_threads_long(nd_engine, all_lines, compare_each):
    try:
        check_concurrent(all_lines, compare_each)
    finally:
        drain()
