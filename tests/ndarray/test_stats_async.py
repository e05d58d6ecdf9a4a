"""The statistics, sorting and searching functions return at once: pushed behind an op that
holds their input, they return before it finishes, and their results then hold the values
written meanwhile. Only the functions whose result size depends on the values wait."""
import threading
import time

import numpy as np
import pytest

import ndengine as nd
from ndengine import engine as _engine
from ndengine.engine import FnProperty

from ndarray_helpers import assert_same, to_nd_result, to_numpy_result

pytestmark = [pytest.mark.usefixtures("nd_engine"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]

OLD = np.array([[4.0, -1.0, 2.5, 0.0], [7.0, 3.0, -2.0, 1.0], [0.5, 6.0, 6.0, -3.0]])
NEW = np.array([[1.0, np.nan, 2.0, 8.0], [-4.0, 0.0, 5.0, 5.0], [3.0, 2.0, -1.0, 9.0]])
MASK = np.array([True, False, True, True])

# every function whose result size is known at the call
CALLS = {
    "nansum": lambda xp, x: xp.nansum(x, axis=0), "nanprod": lambda xp, x: xp.nanprod(x),
    "nanmean": lambda xp, x: xp.nanmean(x, axis=1), "nanstd": lambda xp, x: xp.nanstd(x),
    "nanvar": lambda xp, x: xp.nanvar(x, axis=0, ddof=1),
    "nanmin": lambda xp, x: xp.nanmin(x, axis=1), "nanmax": lambda xp, x: xp.nanmax(x),
    "nanargmin": lambda xp, x: xp.nanargmin(x, axis=1),
    "nanargmax": lambda xp, x: xp.nanargmax(x),
    "any": lambda xp, x: xp.any(x > 7, axis=0), "all": lambda xp, x: x.all(),
    "ptp": lambda xp, x: xp.ptp(x, axis=1), "count_nonzero": lambda xp, x: xp.count_nonzero(x),
    "median": lambda xp, x: xp.median(x, axis=0),
    "nanmedian": lambda xp, x: xp.nanmedian(x, axis=1),
    "quantile": lambda xp, x: xp.quantile(x, [0.25, 0.5], axis=0),
    "percentile": lambda xp, x: xp.percentile(x, 30),
    "nanquantile": lambda xp, x: xp.nanquantile(x, 0.5, axis=1),
    "nanpercentile": lambda xp, x: xp.nanpercentile(x, [10, 90]),
    "average": lambda xp, x: xp.average(x, axis=1, weights=xp.array([1.0, 2.0, 3.0, 4.0]),
                                        returned=True),
    "cumsum": lambda xp, x: xp.cumsum(x, axis=0), "cumprod": lambda xp, x: x.cumprod(),
    "nancumsum": lambda xp, x: xp.nancumsum(x), "nancumprod": lambda xp, x: xp.nancumprod(x, 1),
    "cumulative_sum": lambda xp, x: xp.cumulative_sum(x, axis=1, include_initial=True),
    "cumulative_prod": lambda xp, x: xp.cumulative_prod(x, axis=0),
    "diff": lambda xp, x: xp.diff(x, n=2, prepend=0),
    "histogram": lambda xp, x: xp.histogram(x, bins=4, range=(-5, 10)),
    "histogram edges": lambda xp, x: xp.histogram(x, bins=[-5, 0, 1, 10], density=True),
    "digitize": lambda xp, x: xp.digitize(x, [-1.0, 0.0, 2.5, 6.0]),
    "sort": lambda xp, x: xp.sort(x, axis=0), "argsort": lambda xp, x: x.argsort(),
    "partition": lambda xp, x: xp.partition(x, 1, axis=None),
    "argpartition": lambda xp, x: xp.argpartition(x, (0, 2)),
    "searchsorted": lambda xp, x: xp.searchsorted(xp.array([-2.0, 0.0, 2.0, 5.0]), x),
    "searchsorted of x": lambda xp, x: xp.searchsorted(x[0], 1.0),
    "lexsort": lambda xp, x: xp.lexsort((x[0], x[1])),
    "sum where": lambda xp, x: xp.sum(x, axis=0, where=xp.array(MASK)),
    "max initial": lambda xp, x: x.max(axis=1, initial=100.0),
    "mean where": lambda xp, x: xp.mean(x, where=x > 0),
    "std where": lambda xp, x: xp.std(x, where=xp.array(MASK)),
    "nansum where": lambda xp, x: xp.nansum(x, where=xp.array(MASK), initial=1.0),
}


def _sort_method(xp, x):
    y = x + 0  # a pushed copy
    y.sort(axis=0)
    z = x + 0
    z.partition(2, axis=1)
    return [y, z]


CALLS["sort and partition methods"] = _sort_method


def _hold(x, seconds):
    """Blocking ops on x's var and on every worker, released by the returned event (or
    after ``seconds``: a function that waited for x then returns late, and the test says
    so); NaiveEngine runs ops at their push, so nothing is held there."""
    release = threading.Event()
    eng = _engine.get()
    if type(eng).__name__ == "NaiveEngine":
        release.set()
        return release
    timer = threading.Timer(seconds, release.set)
    timer.daemon = True
    timer.start()
    ctx = nd.cpu(0)
    for var in [x.engine_var] + [eng.new_variable() for _ in range(4)]:
        eng.push_sync(lambda run_ctx: release.wait(30), ctx, (), (var,), FnProperty.NORMAL)
    return release


def test_functions_return_before_their_input_is_ready():
    x = nd.array(OLD)
    release = _hold(x, seconds=20)
    held = not release.is_set()
    started = time.perf_counter()
    x[...] = nd.array(NEW)  # queued behind the hold: every call below must see NEW
    results = {name: call(nd, x) for name, call in CALLS.items()}
    elapsed = time.perf_counter() - started
    if held:
        assert not release.is_set() and elapsed < 10, \
            f"a function waited for its input ({elapsed:.1f} s)"
    release.set()
    with np.errstate(all="ignore"):
        for name, call in CALLS.items():
            expected = to_numpy_result(call(np, NEW.copy()))
            try:
                assert_same(expected, to_nd_result(results[name]), tol="close")
            except AssertionError as exc:
                raise AssertionError(f"{name}: {exc}") from None


SIZED = {
    "nonzero": lambda xp, x: xp.nonzero(x), "argwhere": lambda xp, x: xp.argwhere(x),
    "flatnonzero": lambda xp, x: xp.flatnonzero(x), "where": lambda xp, x: xp.where(x),
    "unique": lambda xp, x: xp.unique(x, return_counts=True),
    "bincount": lambda xp, x: xp.bincount(x.astype(np.int64)),
    "histogram auto": lambda xp, x: xp.histogram(x, bins="auto"),
}


@pytest.mark.parametrize("name", sorted(SIZED))
def test_value_sized_functions_wait_and_see_pending_writes(name):
    x = nd.array(np.zeros(8))
    release = _hold(x, seconds=0.3)
    held = not release.is_set()
    x[3:6] = nd.array([2.0, 5.0, 2.0])  # queued behind the hold
    started = time.perf_counter()
    result = SIZED[name](nd, x)
    if held:
        assert time.perf_counter() - started > 0.2, "it did not wait for its input"
    release.set()
    values = np.zeros(8)
    values[3:6] = [2.0, 5.0, 2.0]
    assert_same(to_numpy_result(SIZED[name](np, values)), to_nd_result(result), tol="close")
