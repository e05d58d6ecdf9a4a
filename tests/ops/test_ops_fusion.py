"""Fused programs, blocked evaluator: random DAGs against the same ops run one by one."""
import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from ndengine.ops.fusion import kernel as fusion, blocks as fusion_blocks
from ndengine.ops.fusion.kernel import Const, NotFusible, ProgramBuilder, run_unfused

from fusion_helpers import assert_identical, output_arrays, programs

DAGS = settings(max_examples=int(os.environ.get("NDENGINE_FUSION_EXAMPLES", "40")),
                deadline=None)


@pytest.fixture(params=[(None, 1 << 18), (7, 64), (160, 64)], ids=["default", "tiny", "small"])
def block_size(request, monkeypatch):
    """Block and parallel thresholds: tiny blocks run every blocking path on small arrays."""
    block, parallel = request.param
    monkeypatch.setattr(fusion_blocks, "BLOCK_ELEMENTS", block)
    monkeypatch.setattr(fusion_blocks, "PARALLEL_MIN_ELEMENTS", parallel)
    return block


def fused_vs_unfused(program, arrays, in_place, **options):
    expected = run_unfused(program, [a.copy() for a in arrays])
    outs = output_arrays(program, arrays, in_place)
    got = fusion.kernel_for(program)(arrays, outputs=outs, **options)
    for k, (g, w) in enumerate(zip(got, expected)):
        reduced = program.reduction is not None and k == len(got) - 1
        assert_identical(g, w, zero_sign=not (reduced and program.reduction.name in ("max", "min")))
    return got


@DAGS
@given(case=programs())
def test_random_programs_blocked_equal_the_unfused_ops(block_size, case):
    program, arrays, in_place = case
    with np.errstate(all="ignore"):
        fused_vs_unfused(program, arrays, in_place, evaluator="blocked", threads=2)


@settings(max_examples=25, deadline=None)
@given(case=programs(max_ops=3, max_ndim=2, reductions=False), threads=st.sampled_from([1, 2]))
def test_auto_evaluator_on_small_programs(case, threads):
    program, arrays, in_place = case
    with np.errstate(all="ignore"):
        fused_vs_unfused(program, arrays, in_place, threads=threads)


def build_chain(a):
    b = ProgramBuilder()
    x = b.array(a)
    y = b.apply("multiply", x, 1.0001)
    z = b.apply("add", y, 0.5)
    return b.build(outputs=[z])


def test_matches_numpy_expressions_directly():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((300, 70)).astype(np.float32)
    c = rng.standard_normal(70).astype(np.float32)
    b = ProgramBuilder()
    x, y = b.array(a), b.array(c)
    t = b.apply("multiply", x, 2.5)
    u = b.apply("subtract", t, y)
    v = b.apply("where", b.apply("greater", u, 0.0), u, np.float64(-1))
    w = b.apply("clip", v, a_min=-3, a_max=3.0)
    program = b.build(outputs=[w], reduction=("sum", w, 1, True))
    out, total = fusion.run(program, [a, c], evaluator="blocked")
    expected = np.clip(np.where(a * 2.5 - c > 0.0, a * 2.5 - c, np.float64(-1)), -3, 3.0)
    assert_identical(out, expected)
    assert_identical(total, expected.sum(1, keepdims=True))


# (x's shape, the bounds' shapes; None: a scalar) whose bounds NumPy's clip ufunc takes as
# constants (x kept on a tie of signed zeros) or as arrays (the bound wins): a block of one
# element must keep the whole call's rule, and equal structures of either rule share no kernel
CLIP_BOUND_SHAPES = [((), (), ()), ((), None, None), ((1,), (), None), ((1,), (1,), (1,)),
                     ((9,), (1,), None), ((9,), (), (1,)), ((9,), (9,), None), ((3, 4), (3, 1), ()),
                     ((1, 1), (1,), (1, 1)), ((1, 1), (), (1, 1))]


@pytest.mark.parametrize("evaluator", ["blocked", "numba"])
@pytest.mark.parametrize("shapes", CLIP_BOUND_SHAPES)
def test_clip_with_bound_arrays_follows_numpys_loop_for_the_bounds_shapes(block_size, evaluator,
                                                                          shapes):
    x_shape, low_shape, high_shape = shapes
    for x_value, low_value, high_value in [(0.0, 0.0, -0.0), (-0.0, -0.0, 0.0), (0.0, -0.0, -0.0),
                                           (np.nan, 0.0, 1.0), (2.0, 0.0, np.nan)]:
        x = np.full(x_shape, x_value)
        b = ProgramBuilder()
        args, arrays = [b.array(x)], [x]
        for shape, value in ((low_shape, low_value), (high_shape, high_value)):
            if shape is None:
                args.append(b.scalar(value))
            else:
                arrays.append(np.full(shape, value))
                args.append(b.array(arrays[-1]))
        program = b.build(outputs=[b.apply("clip_arrays", *args)])
        expected = np.clip(*[a for a in arrays[:1]], *[
            low_value if low_shape is None else arrays[1],
            high_value if high_shape is None else arrays[-1]])
        with np.errstate(invalid="ignore"):
            (got,) = fusion.kernel_for(program)(arrays, evaluator=evaluator, threads=2)
        assert_identical(got, expected)
        assert_identical(run_unfused(program, arrays)[0], expected)


def test_scalar_values_are_arguments_not_structure():
    a = np.arange(10, dtype=np.float32)
    p1, p2 = build_chain(a), build_chain(a[:5])
    assert p1.key == p2.key  # sizes are not part of the key
    k = fusion.kernel_for(p1)
    assert k.entry is fusion.kernel_for(p2).entry
    (out,) = k([a], scalars=(3.0, -1.0))
    assert_identical(out, a * np.float32(3.0) + np.float32(-1.0))
    with pytest.raises(TypeError, match="scalar"):
        k([a], scalars=(3, -1.0))  # an int where a float was recorded: another structure


def test_weak_and_strong_scalars_follow_numpy_promotion():
    a = np.arange(6, dtype=np.int8)
    b = ProgramBuilder()
    x = b.array(a)
    weak = b.apply("add", x, Const(3))          # stays int8
    strong = b.apply("add", x, np.int16(3))     # int16
    floats = b.apply("multiply", x, 0.5)        # weak float: float64 for int8 (NumPy 2)
    f32 = b.apply("multiply", b.apply("copy", x, dtype=np.float32), 0.5)  # stays float32
    program = b.build(outputs=[weak, strong, floats, f32])
    got = fusion.run(program, [a], evaluator="blocked")
    for g, w in zip(got, [a + 3, a + np.int16(3), a * 0.5, a.astype(np.float32) * 0.5]):
        assert_identical(g, w)


def test_in_place_and_overlapping_outputs():
    rng = np.random.default_rng(2)
    a = rng.standard_normal(1000)
    y = rng.standard_normal(1000)
    b = ProgramBuilder()
    x, yy = b.array(a), b.array(y)
    program = b.build(outputs=[b.apply("add", x, b.apply("multiply", yy, 2.0))])
    expected = a + y * 2.0
    fusion.run(program, [a, y], outputs=[a], evaluator="blocked")  # x += 2 * y
    assert_identical(a, expected)
    # an input overlapping the output other than as its very view is read first
    data = np.arange(20.0)
    b = ProgramBuilder()
    x, rev = b.array(data), b.array(data[::-1])
    program = b.build(outputs=[b.apply("add", x, rev)])
    expected = data + data[::-1]
    fusion.run(program, [data, data[::-1]], outputs=[data], evaluator="blocked")
    assert_identical(data, expected)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # prod, in threads
@pytest.mark.parametrize("name", ["sum", "mean", "prod", "max", "min"])
@pytest.mark.parametrize("shape, axis", [((100003,), None), ((3, 70001), 1), ((70001, 3), 0),
                                         ((5, 40000, 2), 1), ((2, 9000, 7), None)])
def test_long_reductions_follow_numpy_summation_order(name, shape, axis):
    rng = np.random.default_rng(3)
    a = (rng.standard_normal(shape) * 1000).astype(np.float32)
    if name == "prod":
        a = (1 + a / 1e6).astype(np.float32)
    b = ProgramBuilder()
    x = b.array(a)
    node = b.apply("multiply", x, 1.5)
    program = b.build(reduction=(name, node, axis, False))
    with np.errstate(all="ignore"):  # prod overflows to inf
        (got,) = fusion.run(program, [a], evaluator="blocked")
        expected = getattr(np, name)(a * np.float32(1.5), axis=axis)
    assert_identical(got, expected, zero_sign=name not in ("max", "min"))


def test_mean_of_wide_ints_runs_unfused():
    a = np.arange(-50, 50, dtype=np.int64) * (1 << 55)
    b = ProgramBuilder()
    program = b.build(reduction=("mean", b.apply("add", b.array(a), Const(1)), None, False))
    (got,) = fusion.run(program, [a])
    assert_identical(got, np.asarray(np.mean(a + 1)))


def test_checks_raise_numpys_errors_naming_the_node():
    a = np.arange(5, dtype=np.int8)
    b = ProgramBuilder()
    x = b.array(a)
    with pytest.raises(OverflowError) as info:
        b.apply("add", x, Const(300))  # NumPy: Python integer 300 out of bounds for int8
    assert info.value.fusion_op == "add"
    program = b.build(outputs=[b.apply("power", b.apply("add", x, Const(1)), Const(2))])
    kernel = fusion.kernel_for(program)
    with pytest.raises(OverflowError) as info:
        kernel([a], scalars=(300, 2))
    assert info.value.fusion_node == 2  # leaf, scalar, add
    with pytest.raises(ValueError, match="negative integer powers") as info:
        kernel([a], scalars=(1, -1))
    assert info.value.fusion_op == "power"


def test_find_failing_node_reruns_op_by_op():
    a = np.arange(5, dtype=np.int8)
    b = ProgramBuilder()
    program = b.build(outputs=[b.apply("power", b.apply("add", b.array(a), Const(1)), Const(2))])
    assert fusion.find_failing_node(program, [a]) is None
    node, exc = fusion.find_failing_node(program, [a], scalars=(1, -2))
    assert isinstance(exc, ValueError) and program.nodes[node].name == "power"


def test_refuses_what_it_cannot_fuse_exactly():
    a = np.arange(5, dtype=np.int64)
    b = ProgramBuilder()
    x = b.array(a)
    with pytest.raises(NotFusible):
        b.apply("power", x, x)  # NumPy's negative-exponent error needs the data
    with pytest.raises(NotFusible):
        b.apply("matmul", x, x)
    with pytest.raises(NotFusible):
        b.build(reduction=("std", b.apply("negative", x), None, False))
    small = b.apply("negative", b.array(np.arange(5.0)[:1]))
    with pytest.raises(NotFusible):
        b.build(outputs=[small, b.apply("add", small, x)])  # outputs of different shapes
    with pytest.raises(ValueError):  # the op's own error: shapes do not broadcast
        b.apply("add", x, b.array(np.zeros(3)))


def test_member_names_and_stats():
    a = np.ones(10, np.float32)
    program = build_chain(a)
    assert program.member_names == ("multiply", "add")
    before = fusion.stats()
    fusion.run(program, [a])
    after = fusion.stats()
    assert after["hits"] + after["misses"] > before["hits"] + before["misses"]
    assert any(k.startswith("multiply+add") for k in after["kernels"])


def test_empty_and_zero_d_programs():
    for a in (np.zeros((0, 3), np.float32), np.array(2.5, np.float32)):
        b = ProgramBuilder()
        node = b.apply("multiply", b.array(a), 2.0)
        program = b.build(outputs=[node], reduction=("sum", node, None, False))
        out, total = fusion.run(program, [a])
        assert_identical(out, a * np.float32(2.0))
        assert_identical(total, np.asarray(np.sum(a * np.float32(2.0))))


def stencil_program(n, dtype, shifts, target_at):
    """``u[t:t+n] = (sum of u[s:s+n] * (k+1) over shifts) + u[t:t+n]`` on one buffer."""
    b = ProgramBuilder()
    ids = [b.array(np.zeros(n, dtype)) for _ in shifts]
    own = b.array(np.zeros(n, dtype))
    total = own
    for k, leaf in enumerate(ids):
        total = b.apply("add", total, b.apply("multiply", leaf, dtype.type(k + 1)))
    return b.build(outputs=[total])


@pytest.mark.parametrize("evaluator", ["blocked", "numba"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shifts", [(1, -1), (2, 0, -2), (-3,), (5,), (64, -64), (65, -1),
                                    (200, -200)], ids=str)
def test_shifted_leaves_read_the_values_before_the_write(monkeypatch, evaluator, threads,
                                                         shifts):
    """``u[1:-1] += f(u[2:], u[:-2])``: leaves that are shifts of the output are read block
    by block (a copy per block behind, directly ahead; a shift beyond a block is copied
    whole), with NumPy's result: every input read before anything is written."""
    monkeypatch.setattr(fusion_blocks, "BLOCK_ELEMENTS", 64)
    monkeypatch.setattr(fusion_blocks, "PARALLEL_MIN_ELEMENTS", 64)
    dtype = np.dtype(np.float64)
    pad, n = 200, 1003
    program = stencil_program(n, dtype, shifts, pad)
    base = np.random.default_rng(3).standard_normal(n + 2 * pad)
    views = [base[pad + s:pad + s + n] for s in shifts] + [base[pad:pad + n]]
    expected = run_unfused(program, [v.copy() for v in views])[0]
    kernel = fusion.kernel_for(program)
    kernel(views, outputs=[base[pad:pad + n]], evaluator=evaluator, threads=threads)
    assert_identical(base[pad:pad + n], expected)
    untouched = np.random.default_rng(3).standard_normal(n + 2 * pad)
    assert_identical(base[:pad], untouched[:pad])
    assert_identical(base[pad + n:], untouched[pad + n:])


@pytest.mark.parametrize("evaluator", ["blocked", "numba"])
def test_shifted_rows_of_a_2d_array_are_copied_whole(monkeypatch, evaluator):
    """A shift that is not one run of memory in the coalesced views (rows of a 2-D array,
    ``u[1:-1, 1:-1] += u[2:, 1:-1] + u[:-2, 1:-1]``): the leaves are copied whole."""
    monkeypatch.setattr(fusion_blocks, "BLOCK_ELEMENTS", 64)
    u = np.random.default_rng(4).standard_normal((40, 50))
    b = ProgramBuilder()
    down, up, own = (b.array(np.zeros((38, 48))) for _ in range(3))
    program = b.build(outputs=[b.apply("add", own, b.apply("add", down, up))])
    views = [u[2:, 1:-1], u[:-2, 1:-1], u[1:-1, 1:-1]]
    expected = u[1:-1, 1:-1] + (u[2:, 1:-1] + u[:-2, 1:-1])
    fusion.kernel_for(program)(views, outputs=[u[1:-1, 1:-1]], evaluator=evaluator)
    assert_identical(u[1:-1, 1:-1], expected)


def test_blocked_evaluator_never_writes_an_op_over_its_own_operand():
    """A chain's scratch buffers are reused, but never as the output of the op that reads
    them: an in-place Numba loop is not vectorised (3.5x slower), so the blocked evaluator
    keeps each op's output apart from its operands, and still gives NumPy's values."""
    from ndengine.ops.fusion.evaluators import BlockedEvaluator
    from ndengine.ops.fusion.program import OpNode
    a = np.linspace(-1, 1, 1000, dtype=np.float32)
    b = ProgramBuilder()
    x = b.array(a)
    for _ in range(6):
        x = b.apply("add", b.apply("multiply", x, -0.5), 0.1)
    program = b.build(outputs=[x])
    evaluator = BlockedEvaluator(program, [program.outputs[0]])
    nodes = program.nodes
    slots = evaluator.slot
    for i, node in enumerate(nodes):
        if isinstance(node, OpNode):
            assert all(slots.get(arg) != slots[i] for arg in node.args), (i, node.args)
    assert len(set(slots.values())) <= 3  # and the buffers are still reused along the chain
    (out,) = fusion.run(program, [a], evaluator="blocked")
    expected = a
    for _ in range(6):
        expected = expected * np.float32(-0.5) + np.float32(0.1)
    assert_identical(out, expected)
