"""Fused programs, generated Numba kernels: exactness, the disk cache across processes,
background compiles.  Few distinct structures (each costs a compile)."""
import json
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from hypothesis import event, given, settings

from ndengine.ops.fusion import kernel as fusion, kernel_cache as fusion_kernels
from ndengine.ops.fusion.kernel import Const, ProgramBuilder, run_unfused

from fusion_helpers import (BINARY, OTHER, UNARY, assert_identical, output_arrays, programs,
                            random_array, ulps)

EXACT_OPS = [n for n in UNARY if n not in ("exp", "sin", "tanh", "sigmoid", "log1p")] + BINARY + OTHER
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
F32, F64 = np.dtype(np.float32), np.dtype(np.float64)


def float_program(x, y):
    """Arithmetic, comparisons, where, clip and casts on floats with NaN, inf and zeros."""
    b = ProgramBuilder()
    xs, ys = b.array(x), b.array(y)
    t1 = b.apply("add", xs, ys)
    t2 = b.apply("multiply", t1, 1.0001)
    t3 = b.apply("true_divide", t2, ys)
    t4 = b.apply("floor_divide", xs, ys)
    t5 = b.apply("mod", xs, ys)
    t6 = b.apply("minimum", b.apply("maximum", t3, t4), t5)
    t7 = b.apply("where", b.apply("greater", t6, 0.5), t6, xs)
    t8 = b.apply("clip", t7, a_min=-2.0, a_max=2.0)
    t9 = b.apply("sqrt", b.apply("abs", t8))
    t10 = b.apply("relu", b.apply("round", b.apply("sign", b.apply("negative", t9))))
    t11 = b.apply("subtract", b.apply("power", b.apply("ceil", t2), -1.0), np.float64(0.25))
    t12 = b.apply("copy", b.apply("floor", t11), dtype=F32)
    t13 = b.apply("clip_arrays", b.apply("clip", xs, a_min=0.0), b.apply("clip", ys, a_max=-0.0), t1)
    t14 = b.apply("logical_not", b.apply("less_equal", t12, t13))
    t15 = b.apply("not_equal", b.apply("copy", t14, dtype=F32), t10)
    fma = b.apply("add", b.apply("multiply", xs, ys), t2)  # no contraction to an FMA
    return b.build(outputs=[t7, t8, t10, t11, t13, t15, fma])


def int_program(x, y, u, w):
    """Wrapping arithmetic, division by zero, powers, bitwise ops and casts on integers."""
    b = ProgramBuilder()
    xs, ys, us, ws = b.array(x), b.array(y), b.array(u), b.array(w)
    a1 = b.apply("multiply", b.apply("add", xs, Const(3)), ys)
    a2 = b.apply("floor_divide", a1, ys)
    a3 = b.apply("power", b.apply("mod", a1, ys), Const(3))
    a4 = b.apply("invert", b.apply("bitwise_xor", a3, ys))
    a5 = b.apply("maximum", b.apply("abs", xs), b.apply("sign", a2))
    a6 = b.apply("bitwise_or", b.apply("negative", us), b.apply("where", b.apply(
        "greater", xs, Const(0)), us, Const(-1)))
    a7 = b.apply("add", b.apply("copy", ws, dtype=np.int8), b.apply("clip", xs, a_min=-3, a_max=100))
    a8 = b.apply("true_divide", a7, ys)
    a9 = b.apply("less", us, Const(100))
    a10 = b.apply("bitwise_and", b.apply("square", b.apply("relu", a5)), b.apply("round", a4))
    a11 = b.apply("subtract", b.apply("copy", ws, dtype=F32), b.apply("minimum", ws, Const(7)))
    return b.build(outputs=[a2, a4, a6, a8, a9, a10, a11])


def bool_program(p, q):
    b = ProgramBuilder()
    ps, qs = b.array(p), b.array(q)
    c1 = b.apply("add", ps, qs)  # logical or
    c2 = b.apply("multiply", c1, b.apply("logical_not", qs))
    c3 = b.apply("bitwise_xor", b.apply("invert", c2), b.apply("maximum", ps, True))
    c4 = b.apply("where", c3, b.apply("copy", ps, dtype=np.int8), Const(-1))
    c5 = b.apply("equal", c4, b.apply("bitwise_and", ps, qs))
    return b.build(outputs=[c3, c4, c5])


def check_numba(program, arrays, **options):
    expected = run_unfused(program, arrays)
    kernel = fusion.kernel_for(program)
    got = kernel(arrays, evaluator="numba", **options)
    for g, w in zip(got, expected):
        assert_identical(g, w)
    return kernel


def float_data(shape, layout, rng):
    x = random_array(rng, shape, F32)
    y = random_array(rng, shape, F32)
    y[::7] = 0.0
    if layout == "nd":  # a strided view and a broadcast row
        x = np.repeat(x, 2, axis=-1)[..., ::2]
        y = y[:1]
    return x, y


@pytest.mark.parametrize("layout", ["flat", "nd"])
def test_float_kernel_equals_the_unfused_ops(layout):
    rng = np.random.default_rng(0)
    x, y = float_data((37, 29), layout, rng)
    with np.errstate(all="ignore"):
        kernel = check_numba(float_program(x, y), [x, y])
    assert any(v[0][0] == layout for v in kernel.entry.variants)


def test_int_kernel_equals_the_unfused_ops_and_falls_back_for_values_beyond_range():
    rng = np.random.default_rng(1)
    n = 1000
    x, y = random_array(rng, n, np.dtype(np.int8)), random_array(rng, n, np.dtype(np.int8))
    y[::5] = 0
    y[1::9] = -1
    x[::11] = -128
    u, w = random_array(rng, n, np.dtype(np.uint8)), random_array(rng, n, np.dtype(np.int64))
    program = int_program(x, y, u, w)
    with np.errstate(all="ignore"):
        kernel = check_numba(program, [x, y, u, w])
        # a Python int beyond uint8 in a comparison: the registered op's constant, not a cast
        values = list(program.scalar_values)
        values[len(values) - 1 - values[::-1].index(100)] = 300  # less's, not clip's bound
        runs = dict(kernel.entry.runs)
        got = kernel([x, y, u, w], scalars=values)
        expected = run_unfused(program, [x, y, u, w], scalars=values)
    for g, e in zip(got, expected):
        assert_identical(g, e)
    assert kernel.entry.runs["blocked"] == runs.get("blocked", 0) + 1


def test_bool_kernel_equals_the_unfused_ops():
    rng = np.random.default_rng(2)
    p, q = rng.random(500) < 0.5, rng.random(500) < 0.3
    check_numba(bool_program(p, q), [p, q])


@pytest.mark.parametrize("name", ["sum", "max"])
def test_kmeans_distance_reduction(name):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((3000, 8)).astype(np.float32)
    C = rng.standard_normal((16, 8)).astype(np.float32)
    b = ProgramBuilder()
    d = b.apply("subtract", b.array(X[:, None, :]), b.array(C[None]))
    program = b.build(reduction=(name, b.apply("power", d, 2.0), 2, False))  # d ** 2
    check_numba(program, [X[:, None, :], C[None]])
    (got,) = fusion.run(program, [X[:, None, :], C[None]], evaluator="numba")
    assert_identical(got, getattr(np, name)((X[:, None, :] - C[None]) ** 2, axis=2))


@pytest.mark.parametrize("dtype, bound", [(F32, 4), (F64, 4)])
def test_transcendentals_in_the_kernel_stay_within_the_ulp_bound(dtype, bound):
    rng = np.random.default_rng(4)
    x = (rng.standard_normal(20000) * 3).astype(dtype)
    b = ProgramBuilder()
    xs = b.array(x)
    e = b.apply("exp", b.apply("sin", xs))
    t = b.apply("tanh", b.apply("multiply", xs, 0.5))
    s = b.apply("sigmoid", xs)
    lg = b.apply("log1p", b.apply("abs", xs))
    p = b.apply("power", b.apply("abs", xs), 0.75)
    program = b.build(outputs=[e, t, s, lg, p])
    assert not program.exact_with(program.scalar_values)
    expected = run_unfused(program, [x])
    kernel = fusion.kernel_for(program, allow_inexact=True)
    got = kernel([x], evaluator="numba")
    worst = [ulps(g, w) for g, w in zip(got, expected)]
    assert max(worst) <= bound, worst
    # by default such a program runs the blocked evaluator: NumPy's own loops, exact
    for g, w in zip(fusion.kernel_for(program)([x]), expected):
        assert_identical(g, w)


def test_large_programs_run_in_parallel_with_a_thread_budget():
    rng = np.random.default_rng(5)
    x, y = float_data((1 << 18) + 3, "flat", rng)
    b = ProgramBuilder()
    xs, ys = b.array(x), b.array(y)
    node = b.apply("where", b.apply("greater", xs, 0.0), b.apply("multiply", xs, 2.0),
                   b.apply("subtract", ys, 1.5))
    program = b.build(outputs=[node])
    with np.errstate(all="ignore"):
        kernel = check_numba(program, [x, y], threads=2)
        check_numba(program, [x, y], threads=1)
        check_numba(program, [x, y])
        expected = run_unfused(program, [x, y])
        for g, w in zip(kernel([x, y], evaluator="blocked", threads=2), expected):
            assert_identical(g, w)
    assert any(parallel for _, parallel in kernel.entry.variants)


def test_a_new_expression_compiles_in_the_background(tmp_path, monkeypatch):
    monkeypatch.setenv("NDENGINE_CACHE_DIR", str(tmp_path))  # a real compile, not a load
    a = np.linspace(-3, 3, fusion.COMPILE_MIN_ELEMENTS, dtype=F64)
    b = ProgramBuilder()
    node = b.apply("true_divide", b.apply("subtract", b.array(a), 0.25), np.float64(3))
    program = b.build(outputs=[node])
    kernel = fusion.kernel_for(program)
    start = time.perf_counter()
    (first,) = kernel([a])
    returned = time.perf_counter() - start
    (event,) = kernel.entry.events.values()
    assert not event.is_set()  # the call did not wait for the compile it asked for
    assert kernel.entry.runs == {"blocked": 1}
    assert event.wait(60) and not kernel.entry.failed
    assert returned < 0.2 + kernel.entry.compile_seconds[next(iter(kernel.entry.events))] / 2
    (second,) = kernel([a])
    assert kernel.entry.runs.get("numba") == 1
    assert_identical(first, second)
    assert_identical(second, (a - 0.25) / 3)


SUBPROCESS = textwrap.dedent("""
    import json, numpy as np
    from ndengine.ops.fusion import kernel as fusion
    a = np.arange(1000, dtype=np.float32)
    b = fusion.ProgramBuilder()
    node = b.apply("maximum", b.apply("multiply", b.array(a), 0.5), np.float32(100))
    (out,) = fusion.run(b.build(outputs=[node]), [a], evaluator="numba")
    assert (out == np.maximum(a * np.float32(0.5), np.float32(100))).all()
    s = fusion.stats()
    print(json.dumps({"compiles": s["compiles"], "disk_loads": s["disk_loads"]}))
""")


def test_a_second_process_compiles_nothing(tmp_path):
    env = dict(os.environ, NDENGINE_CACHE_DIR=str(tmp_path), PYTHONPATH=ROOT)
    runs = []
    for _ in range(2):
        result = subprocess.run([sys.executable, "-c", SUBPROCESS], env=env, capture_output=True,
                                text=True, timeout=300)
        assert result.returncode == 0, result.stderr
        runs.append(json.loads(result.stdout.strip().splitlines()[-1]))
    assert runs[0] == {"compiles": 1, "disk_loads": 0}
    assert runs[1] == {"compiles": 0, "disk_loads": 1}
    assert len(list((tmp_path / "fusion").glob("ndengine_fused_*.py"))) == 1


def test_stats_report_compiles_per_structure():
    x = np.arange(8, dtype=np.float32)
    kernel = fusion.kernel_for(float_program(x, x + 1))
    kernel([x, x + 1], evaluator="numba")
    report = fusion_kernels.stats()
    entry = next(v for k, v in report["kernels"].items() if k.endswith(f"#{id(kernel.entry):x}"))
    (variant,) = [v for k, v in entry["variants"].items() if k.startswith("flat")]
    assert variant["ready"] and "seconds" in variant and "loaded_from_disk" in variant


@pytest.mark.slow
@settings(max_examples=int(os.environ.get("NDENGINE_FUSION_EXAMPLES", "60")), deadline=None)
@given(case=programs(max_ops=6, ops=EXACT_OPS))
def test_random_programs_numba_equal_the_unfused_ops(case):
    """Every program the kernel computes exactly (one compile each: slow)."""
    program, arrays, in_place = case
    if not program.exact_with(program.scalar_values):
        return
    event("compiled")
    with np.errstate(all="ignore"):
        expected = run_unfused(program, [a.copy() for a in arrays])
        got = fusion.kernel_for(program)(arrays, outputs=output_arrays(program, arrays, in_place),
                                         evaluator="numba")
    for k, (g, w) in enumerate(zip(got, expected)):
        reduced = program.reduction is not None and k == len(got) - 1
        assert_identical(g, w, zero_sign=not (reduced and program.reduction.name in ("max", "min")))


@pytest.mark.parametrize("name, dtype", [("sum", F32), ("mean", F32), ("prod", F32),
                                         ("max", F32), ("min", F32), ("sum", np.dtype(np.int8)),
                                         ("max", F64)])
def test_row_reductions_of_every_length_equal_numpys(name, dtype):
    rng = np.random.default_rng(6)
    for length in (1, 3, 7, 8, 9, 15, 16, 17, 100, 128, 129, 300):
        x = random_array(rng, (37, length), dtype)
        if name == "prod" and dtype.kind == "f":
            x = (1 + x / 1e3).astype(dtype)
        b = ProgramBuilder()
        node = b.apply("maximum", b.array(x), b.array(x[:1]))
        program = b.build(reduction=(name, node, 1, False))
        with np.errstate(all="ignore"):
            expected = run_unfused(program, [x, x[:1]])
            got = fusion.run(program, [x, x[:1]], evaluator="numba")
        assert_identical(got[0], expected[0], zero_sign=name not in ("max", "min"))


def test_kernel_arguments_follow_each_calls_scalar_values():
    x = np.full(50, -0.0, F64)
    b = ProgramBuilder()
    program = b.build(outputs=[b.apply("add", b.apply("multiply", b.array(x), 2.0), -0.0)])
    kernel = fusion.kernel_for(program)
    for values in [(2.0, -0.0), (2.0, 0.0), (2.0, -0.0), (np.nan, 1.0), (3.0, 1.0)]:
        (got,) = kernel([x], scalars=values, evaluator="numba")
        assert_identical(got, x * values[0] + values[1])


def test_one_slow_first_call_does_not_lock_the_compiled_kernel_out(monkeypatch):
    """The compiled kernel's first call pays its dispatch; the blocked evaluator may win only
    once the kernel was measured MEASURE_RUNS times, and the loser is retried now and then."""
    a = np.linspace(-3, 3, 1 << 16, dtype=F32)
    b = ProgramBuilder()
    x = b.array(a)
    program = b.build(outputs=[b.apply("add", b.apply("multiply", x, x), np.float32(1))])
    kernel = fusion.kernel_for(program)
    kernel([a], evaluator="numba")  # compiled (or loaded) now
    entry = kernel.entry
    entry.best_ns = {"numba": 50.0, "blocked": 1.0}  # as after one slow first call
    entry.runs = {"numba": 1, "blocked": 1}
    kernel([a])
    assert entry.runs["numba"] == 2  # measured again, not locked out
    kernel([a])
    entry.best_ns = {"numba": 50.0, "blocked": 1.0}  # three measurements: blocked is faster
    entry.calls = 1
    kernel([a])
    assert entry.runs == {"numba": 3, "blocked": 2}
    entry.calls = fusion.RETRY_EVERY - 1  # the next call is a retry of the loser
    kernel([a])
    assert entry.runs == {"numba": 4, "blocked": 2}
