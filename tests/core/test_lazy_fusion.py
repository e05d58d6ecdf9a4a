"""Automatic fusion (core/lazy.py): element-wise ops on large arrays recorded per thread and
pushed as one fused op.

Every test runs under all three engines; the NaiveEngine records nothing (each op runs at its
push, its debugging contract), and the same values and errors must come out. Exact window
states are asserted where the engine records.
"""
import os
import threading

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ndengine as nd
from ndengine import ops
from ndengine.core import lazy, segment, storage
from ndengine.engine.errors import NOTE_PREFIX
from ndarray_helpers import drain_errors

pytestmark = [pytest.mark.usefixtures("nd_engine"), pytest.mark.cpu_only]  # CPU fusion internals (GPU windows: test_gpu_arrays.py)

N = 1 << 14  # float64: 128 KiB, a large array (not a SmallChunk)


@pytest.fixture(autouse=True)
def fuse_test_sizes(monkeypatch):
    """The tests' arrays are smaller than FUSE_MIN_ELEMENTS: fuse them anyway (the op by op
    run of small windows has its own test); ops NumPy's loops compute too."""
    monkeypatch.setattr(lazy, "FUSE_MIN_ELEMENTS", 0)
    monkeypatch.setattr(lazy, "FUSE_MIN_NUMPY_ELEMENTS", 0)


def records():
    return nd.engine.get().bulk_size > 1 and lazy.ENABLED


def window_of(x):
    window = x._chunk.window
    return window if window is not None and window.open else None


def ramp(n=N, dtype=np.float64):
    return (np.arange(n) % 97).astype(dtype) / 7


@ops.register("test_lazy_fail", num_inputs=1, kind="unary", replace=True,
              infer=lambda x: [(x.shape, x.dtype)])
def _fail(inputs, outputs, req):
    raise ZeroDivisionError("test_lazy_fail raised on purpose")


# ---------------------------------------------------------------- recording and values
def chain_of_ten(a):
    x = a
    for _ in range(10):
        x = x * 1.0001 + 0.5
    return x


def test_a_chain_is_one_window_and_its_temporaries_are_never_allocated():
    a0 = ramp()
    a = nd.array(a0)
    chain_of_ten(a).wait_to_read()  # its structure is seen once: then it is built (lazy.py)
    before = storage.stats()
    x = chain_of_ten(a)
    expected = a0
    for _ in range(10):
        expected = expected * 1.0001 + 0.5
    if records():
        window = window_of(x)
        assert window is not None and len(window.nodes) == 20
        assert window.leaves == [a]  # one leaf; every other array is the window's own
    np.testing.assert_array_equal(x.asnumpy(), expected)
    after = storage.stats()
    taken = (after["allocs"] + after["reuses"]) - (before["allocs"] + before["reuses"])
    assert taken == (1 if records() else 20)  # fused: only the result gets memory


def test_in_place_ops_write_the_last_value_into_the_array():
    a0 = ramp()
    a = nd.array(a0)
    b = nd.array(a0[::-1].copy())
    a += b
    a *= 2
    c = a - 1  # reads the value of a *= 2
    a -= b
    if records():
        window = window_of(a)
        assert window is not None and len(window.nodes) == 4
        (seal_writes, reads) = window.seal().writes, window.seal().reads
        assert set(seal_writes) == {a._chunk.var, c._chunk.var}
        assert reads == (b._chunk.var,)
    e = (a0 + a0[::-1]) * 2
    np.testing.assert_array_equal(c.asnumpy(), e - 1)
    np.testing.assert_array_equal(a.asnumpy(), e - a0[::-1])


def test_a_stencil_with_overlapping_views_equals_numpy():
    u0 = ramp()
    u, un = nd.array(u0), u0.copy()
    for _ in range(6):
        u[1:-1] += 0.1 * (u[2:] - 2 * u[1:-1] + u[:-2])
        un[1:-1] += 0.1 * (un[2:] - 2 * un[1:-1] + un[:-2])
    np.testing.assert_array_equal(u.asnumpy(), un)


def test_where_clip_astype_and_comparisons_fuse():
    a0 = ramp() - 6  # (its bool results are small arrays: recorded too)
    a = nd.array(a0)
    y = nd.where(a > 0, nd.clip(a, -2.0, 3.0), (a * 2).astype(np.float32))
    z = (a >= 1) & (a < 4)
    if records():
        assert window_of(y) is window_of(z) is not None
    np.testing.assert_array_equal(
        y.asnumpy(), np.where(a0 > 0, np.clip(a0, -2.0, 3.0), (a0 * 2).astype(np.float32)))
    np.testing.assert_array_equal(z.asnumpy(), (a0 >= 1) & (a0 < 4))


# ---------------------------------------------------------------- flush rules
def test_waits_and_value_reads_flush():
    a = nd.array(ramp())
    for read in (lambda x: x.wait_to_read(), lambda x: x.asnumpy(), lambda x: float(x.sum()),
                 lambda x: x.engine_var, lambda x: nd.waitall()):
        x = a + 1
        window = window_of(x)
        assert (window is not None) == records()
        read(x)
        assert window_of(x) is None
        assert window is None or not window.open


def test_an_op_that_is_not_element_wise_flushes_first():
    a = nd.array(ramp())
    x = a * 3
    window = window_of(x)
    s = nd.cumsum(x)  # after the window (gathered into a segment window, or pushed alone)
    assert window is None or not window.open
    assert window is None or window_of(x) is not window
    np.testing.assert_array_equal(s.asnumpy(), np.cumsum(ramp() * 3))


def test_a_view_conflict_flushes_first():
    u0 = ramp()
    u = nd.array(u0)
    tail = u[1:]
    tail += 1.0  # writes u through the view u[1:]
    window = window_of(u)
    v = u[:-1] * 2  # reads u through another view: the window goes first
    if records():
        assert not window.open and window_of(v) is not None and window_of(v) is not window
    e = u0.copy()
    e[1:] += 1.0
    np.testing.assert_array_equal(v.asnumpy(), e[:-1] * 2)


def test_another_shape_flushes_first():
    a, b = nd.array(ramp()), nd.array(ramp(2 * N))
    x = a + 1
    window = window_of(x)
    y = b + 1
    if records():
        assert not window.open and window_of(y) is not None
    np.testing.assert_array_equal(x.asnumpy(), ramp() + 1)
    np.testing.assert_array_equal(y.asnumpy(), ramp(2 * N) + 1)


def test_the_length_cap_flushes(monkeypatch):
    monkeypatch.setattr(lazy, "MAX_OPS", 4)
    x = nd.array(ramp())
    windows = []
    for _ in range(9):
        x = x + 1
        windows.append(window_of(x))
    if records():
        assert len({id(w) for w in windows if w is not None}) == 3
        assert windows[3] is None and windows[7] is None  # the 4th and 8th ops pushed
    expected = ramp()
    for _ in range(9):
        expected = expected + 1
    np.testing.assert_array_equal(x.asnumpy(), expected)


def test_another_thread_touching_the_arrays_flushes_the_window():
    a = nd.array(ramp())
    x = a * 2
    window = window_of(x)
    out = {}

    def other():
        out["y"] = x + 1  # this thread's op on x: the owner's window is pushed first
        out["window"] = window_of(out["y"])
    t = threading.Thread(target=other)
    t.start()
    t.join()
    if records():
        assert not window.open and out["window"] is not None and out["window"] is not window
    np.testing.assert_array_equal(out["y"].asnumpy(), ramp() * 2 + 1)


def test_threads_record_their_own_windows():
    a0 = ramp()
    a = nd.array(a0)
    results = {}

    def chain(k):
        x = a
        for _ in range(5):
            x = x * k + 1
        results[k] = x
    threads = [threading.Thread(target=chain, args=(k,)) for k in (2, 3, 4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    nd.waitall()  # flushes every thread's window
    for k, x in results.items():
        e = a0
        for _ in range(5):
            e = e * k + 1
        np.testing.assert_array_equal(x.asnumpy(), e)


def test_a_window_of_dead_results_pushes_nothing(nd_engine):
    if not records():
        pytest.skip("nothing is recorded")
    pushed = []
    real = nd_engine.push_sync
    a = nd.array(ramp())
    nd.waitall()

    def counting(fn, *args, **kwargs):
        pushed.append(fn)
        return real(fn, *args, **kwargs)
    nd_engine.push_sync = counting
    try:
        (a + 1) * 2  # noqa: B018 - dropped at once
        segment.flush_own()
    finally:
        del nd_engine.push_sync
    assert pushed == []


# ---------------------------------------------------------------- errors
def test_a_failed_input_fails_only_the_outputs_that_read_it():
    if nd.engine.get().bulk_size == 1:
        pytest.skip("the NaiveEngine raises at the push (test_engine_errors.py)")
    bad = nd.core.invoke(ops.get("test_lazy_fail"), [nd.array(ramp())])[0]
    with pytest.raises(ZeroDivisionError):
        bad.wait_to_read()
    drain_errors()
    good = nd.array(ramp()) + 1
    worse = bad * 2 + 1
    if records():
        assert window_of(good) is window_of(worse) is not None
    np.testing.assert_array_equal(good.asnumpy(), ramp() + 1)
    with pytest.raises(ZeroDivisionError):
        worse.asnumpy()
    drain_errors()


def test_an_op_raising_inside_a_window_is_attributed_to_its_op_and_line():
    if nd.engine.get().bulk_size == 1:
        pytest.skip("the NaiveEngine raises at the push (test_engine_errors.py)")
    base = nd.array(np.full(N, 3, np.int64))
    exponent = nd.array(-(np.arange(N) % 2))  # integers to negative powers: NumPy raises
    fine = base + 1
    bad = base ** exponent  # the failing line
    worse = bad + 1
    if records():
        assert window_of(fine) is window_of(worse) is not None
    np.testing.assert_array_equal(fine.asnumpy(), np.full(N, 4))
    with pytest.raises(ValueError, match="negative integer powers") as info:
        worse.asnumpy()
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert NOTE_PREFIX + "power" in notes
    assert f"{os.path.basename(__file__)}:" in notes
    drain_errors()


# ---------------------------------------------------------------- fusion off, profiler
OPS = [lambda x, y: x + y, lambda x, y: x * y - 1, lambda x, y: (x - y) * 0.5,
       lambda x, y: x / (abs(y) + 1), lambda x, y: nd_or_np(x).maximum(x, y),
       lambda x, y: -x + 2 * y, lambda x, y: nd_or_np(x).where(x > y, x, y)]


def nd_or_np(x):
    return np if isinstance(x, np.ndarray) else nd


@settings(max_examples=int(os.environ.get("NDENGINE_LAZY_EXAMPLES", "25")), deadline=None)
@given(chain=st.lists(st.tuples(st.integers(0, len(OPS) - 1), st.booleans()), min_size=1,
                      max_size=8),
       dtype=st.sampled_from([np.float64, np.float32, np.int64]),
       broadcast=st.booleans())
def test_fused_chains_equal_numpy_bit_for_bit(chain, dtype, broadcast):
    """Integer and basic float arithmetic are NumPy's exactly, fused or not."""
    shape = (N // 64, 64)
    a0 = ramp(N, dtype).reshape(shape)
    b0 = (ramp(64, dtype) + 1)[None, :] if broadcast else ramp(N, dtype).reshape(shape)[::-1]
    x, xn = nd.array(a0), a0
    y, yn = nd.array(b0), b0
    for which, in_place in chain:
        if in_place and xn.dtype == OPS[which](xn, yn).dtype:
            x += OPS[which](x, y)
            xn = xn.copy()
            xn += OPS[which](xn, yn)
        else:
            x, xn = OPS[which](x, y), OPS[which](xn, yn)
    np.testing.assert_array_equal(x.asnumpy(), xn)


def test_fusion_off_gives_identical_results(monkeypatch):
    a0 = ramp(N, np.float32)

    def body():
        a = nd.array(a0)
        x = nd.exp(nd.sin(a)) * 0.25 + nd.sqrt(a)
        a += x
        return np.concatenate([x.asnumpy(), a.asnumpy()])
    fused = body()
    monkeypatch.setattr(lazy, "ENABLED", False)
    plain = body()
    np.testing.assert_array_equal(fused, plain)


def test_the_profiler_shows_a_window_as_one_fused_event(nd_engine):
    if not records():
        pytest.skip("nothing is recorded")
    seen = []
    a = nd.array(ramp())
    ((a + 1) * 3).wait_to_read()  # first sight of the structure: op by op (lazy.py)
    previous = nd_engine.set_run_hook(lambda name, ctx, reads, writes, info, start, end, failed:
                                      seen.append((name, info() if callable(info) else info)))
    try:
        x = (a + 1) * 3
        x.wait_to_read()
    finally:
        nd_engine.set_run_hook(previous)
    (event,) = [info for name, info in seen if name == "fused 2 ops"]
    assert event["ops"] == ["add", "multiply"] and event["ran"] == "fused"
    assert set(event["programs"]) == {"hits", "misses", "unfusible", "cached"}
    kernel = event["kernel"]  # the cache entry's evaluators and compiled variants
    assert kernel["calls"] >= 1 and sum(kernel["runs"].values()) == kernel["calls"]
    for variant in kernel["variants"].values():
        assert {"ready", "pending"} <= set(variant)
        assert variant["pending"] or "seconds" in variant or "failed" in variant


# ---------------------------------------------------------------- tail reductions
@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("axis, keepdims", [(None, False), (1, False), (0, True), (-1, True)])
def test_a_reduction_closes_the_window_as_its_tail(name, axis, keepdims):
    a0 = ramp().reshape(128, 128) / 50 + 0.5
    a = nd.array(a0)
    for attempt in range(2):  # the first sight of a structure runs op by op, then fused
        nd.waitall()
        before = storage.stats()
        got = getattr(nd.sqrt(a * a * 1e-4 + 1), name)(axis=axis, keepdims=keepdims)
        if records():  # one window: the element-wise ops and their reduction
            assert window_of(a) is window_of(got) is not None
            assert len(window_of(got).nodes) == 5
        want = getattr(np.sqrt(a0 * a0 * 1e-4 + 1), name)(axis=axis, keepdims=keepdims)
        np.testing.assert_array_equal(got.asnumpy(), want)
        nd.waitall()
        after = storage.stats()
        if records() and attempt == 1:  # fused: the element-wise values never got memory
            assert (after["allocs"] + after["reuses"]) - (before["allocs"] + before["reuses"]) \
                == (0 if got.nbytes <= (1 << 16) else 1)


def test_a_tail_of_an_array_made_outside_the_window_is_pushed_alone():
    a = nd.array(ramp())
    b = a + 1
    b.wait_to_read()  # b's window is gone: its sum is an ordinary op
    assert b.sum().item() == pytest.approx((ramp() + 1).sum())


# ---------------------------------------------------------------- lifecycle
def test_fork_child_sees_the_recorded_values():
    if not hasattr(os, "fork"):
        pytest.skip("no fork")
    a = nd.array(ramp())
    x = (a + 1) * 6  # recorded, not pushed, at the fork: pushed before it
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            y = x * 2 + 1  # the child records and fuses too
            code = 0 if np.array_equal(y.asnumpy(), ((ramp() + 1) * 6) * 2 + 1) else 3
        except BaseException:  # noqa: B902
            code = 4
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    np.testing.assert_array_equal(x.asnumpy(), (ramp() + 1) * 6)


EXIT_SCRIPT = """
import numpy as np, ndengine as nd
a = nd.array(np.arange(1 << 15, dtype=np.float64))
x = a * 2 + 1
x.asnumpy().tofile({path!r})  # a value read: flushed and waited
y = x - 1  # still recorded at exit: pushed and run by the exit flush, no hang
"""


def test_interpreter_exit_with_a_recorded_window(tmp_path):
    import subprocess
    import sys
    path = str(tmp_path / "x.bin")
    result = subprocess.run([sys.executable, "-c", EXIT_SCRIPT.format(path=path)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    np.testing.assert_array_equal(np.fromfile(path), np.arange(1 << 15) * 2.0 + 1)


def _ops_and_threads(nd_engine, body):
    """body()'s value, and (op name, ran in the main thread) for every op run meanwhile."""
    seen = []

    def hook(name, ctx, reads, writes, info, start, end, failed):
        seen.append((name, threading.current_thread() is threading.main_thread()))
    previous = nd_engine.set_run_hook(hook)
    try:
        return body(), seen
    finally:
        nd_engine.set_run_hook(previous)


def test_ops_under_the_fusion_size_are_gathered_and_run_inline(nd_engine, monkeypatch):
    # below FUSE_MIN_ELEMENTS recording costs more than it saves: each op is bound to its
    # arrays' pool buffers at the push and gathered into the thread's segment window, as small
    # ops are (under INLINE_ELEMENTS), and the window runs in the pushing thread when ready
    monkeypatch.setattr(lazy, "FUSE_MIN_ELEMENTS", 10 * N)
    names = ["multiply", "add", "sqrt", "subtract"]
    gathering = nd_engine.bulk_size > 1

    def body():
        a = nd.array(ramp())
        x = nd.sqrt(a * 3 + 1) - a
        window = window_of(x)
        if gathering:
            assert type(window) is segment.Window and [n.name for n in window.nodes] == names
        else:
            assert window is None
        return x.asnumpy()
    got, seen = _ops_and_threads(nd_engine, body)
    np.testing.assert_array_equal(got, np.sqrt(ramp() * 3 + 1) - ramp())
    ops = [entry for entry in seen if entry[0] not in ("delete_variable", "asnumpy")]
    assert ops == ([("bulk of 4", True)] if gathering else [(name, True) for name in names])


def test_ops_on_arrays_over_the_inline_size_go_to_the_workers(nd_engine, monkeypatch):
    monkeypatch.setattr(lazy, "FUSE_MIN_ELEMENTS", 10 * N)
    monkeypatch.setattr(lazy, "INLINE_ELEMENTS", N)  # the test's arrays are not under it
    got, seen = _ops_and_threads(nd_engine, lambda: (nd.array(ramp()) * 3).asnumpy())
    np.testing.assert_array_equal(got, ramp() * 3)
    naive = type(nd_engine).__name__ == "NaiveEngine"  # runs every op at its push
    assert [entry for entry in seen if entry[0] == "multiply"] == [("multiply", naive)]


def test_an_augmented_assignment_to_a_slice_stays_in_the_window():
    # `u[1:-1] += v` ends with u.__setitem__(slice, the very view just written): no copy is
    # pushed, so the window is not flushed by it
    u0 = ramp()
    u = nd.array(u0)
    u[1:-1] += 1.0
    if records():
        window = window_of(u)
        assert window is not None and [node.name for node in window.nodes] == ["add"]
    expected = u0.copy()
    expected[1:-1] += 1.0
    np.testing.assert_array_equal(u.asnumpy(), expected)
