"""Random fused programs for the fusion tests, and the comparisons they need."""
import numpy as np
from hypothesis import assume, strategies as st

from ndengine.ops.fusion.kernel import Const, NotFusible, ProgramBuilder

DTYPES = [np.dtype(d) for d in ("bool", "int8", "uint8", "int32", "int64", "float32",
                                "float64")]
UNARY = ["negative", "positive", "abs", "square", "sign", "floor", "ceil", "invert",
         "logical_not", "relu", "round", "sqrt", "exp", "sin", "tanh", "sigmoid", "log1p"]
BINARY = ["add", "subtract", "multiply", "true_divide", "floor_divide", "mod", "maximum",
          "minimum", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
          "bitwise_and", "bitwise_or", "bitwise_xor", "power"]
OTHER = ["where", "clip", "clip_arrays", "copy"]
REDUCTIONS = ["sum", "mean", "max", "min", "prod"]
SPECIAL_FLOATS = [0.0, -0.0, np.nan, np.inf, -np.inf, 1.5, -2.5, 1e30, 3.0]


def random_array(rng, shape, dtype):
    return np.asarray(_random_values(rng, shape, dtype), dtype)


def _random_values(rng, shape, dtype):
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        wide = rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
        small = rng.integers(max(info.min, -4), 5, size=shape).astype(dtype)
        return np.where(rng.random(shape) < 0.7, small, wide)
    values = rng.normal(0, 3, size=shape).astype(dtype)
    special = np.array(SPECIAL_FLOATS, dtype)[rng.integers(0, len(SPECIAL_FLOATS), size=shape)]
    return np.where(rng.random(shape) < 0.15, special, values)


@st.composite
def scalars(draw):
    kind = draw(st.sampled_from(["int", "float", "bool", "numpy"]))
    if kind == "int":
        return Const(draw(st.sampled_from([0, 1, 2, 3, -1, -7, 100, 300, 2 ** 40])))
    if kind == "float":
        return draw(st.sampled_from([0.5, -1.25, 2.0, 0.0, -0.0, 1e300, float("nan")]))
    if kind == "bool":
        return draw(st.booleans())
    dtype = draw(st.sampled_from(DTYPES))
    return dtype.type(draw(st.sampled_from([0, 1, 2, 5])))


@st.composite
def programs(draw, max_ops=8, max_ndim=3, reductions=True, ops=None):
    """(program, arrays, outputs spec) with ``outputs`` a list of "fresh" or a leaf index
    (that input array is the output: in place)."""
    ops = ops or UNARY + BINARY + OTHER
    ndim = draw(st.integers(0, max_ndim))
    shape = tuple(draw(st.lists(st.integers(1, 9), min_size=ndim, max_size=ndim)))
    if ndim and draw(st.integers(0, 2)):  # a long axis: several blocks
        axis = draw(st.integers(0, ndim - 1))
        shape = shape[:axis] + (draw(st.integers(20, 300)),) + shape[axis + 1:]
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    b = ProgramBuilder()
    arrays, array_nodes = [], []
    for _ in range(draw(st.integers(1, 3))):
        dims = ndim if draw(st.integers(0, 2)) else draw(st.integers(0, ndim))
        leaf_shape = tuple(n if draw(st.integers(0, 3)) else 1 for n in shape[ndim - dims:])
        dtype = draw(st.sampled_from(DTYPES))
        array = random_array(rng, leaf_shape, dtype)
        if array.ndim and draw(st.integers(0, 4)) == 0:  # a strided view
            array = np.repeat(array, 2, axis=-1)[..., ::2]
        arrays.append(array)
        array_nodes.append(b.array(array))
    made, target = 0, draw(st.integers(1, max_ops))
    for _ in range(3 * target):
        if made == target:
            break
        name = draw(st.sampled_from(ops))
        count = {"where": 3, "clip_arrays": 3, "clip": 1, "copy": 1}.get(
            name, 1 if name in UNARY else 2)
        recent = array_nodes[-2:]  # mostly chains: deep programs
        args = [draw(st.sampled_from(recent if draw(st.integers(0, 3)) else array_nodes))
                if i == 0 or draw(st.integers(0, 2)) else draw(scalars()) for i in range(count)]
        params = {}
        if name == "clip":
            params = {"a_min": draw(st.one_of(st.none(), scalars())),
                      "a_max": draw(st.one_of(st.none(), scalars()))}
            params = {k: v.value if isinstance(v, Const) else v for k, v in params.items()}
        elif name == "copy":
            params = {"dtype": draw(st.sampled_from(DTYPES))}
        elif name == "round" and draw(st.integers(0, 3)) == 0:
            params = {"decimals": draw(st.sampled_from([1, -1]))}
        try:
            node = b.apply(name, *args, **params)
        except (TypeError, ValueError, OverflowError, NotFusible):
            continue
        array_nodes.append(node)
        made += 1
    assume(made)
    final = array_nodes[-1]
    node = b.nodes[final]
    outputs = [final]
    extra = [i for i in array_nodes[len(arrays):-1] if b.nodes[i].shape == node.shape
             and b.nodes[i].dtype != node.dtype]
    if extra and draw(st.booleans()):
        outputs.insert(0, draw(st.sampled_from(extra)))
    reduction = None
    if reductions and draw(st.integers(0, 2)) == 0:
        name = draw(st.sampled_from(REDUCTIONS))
        axis = draw(st.one_of(st.none(), st.integers(-len(node.shape), len(node.shape) - 1))
                    if node.shape else st.none())
        reduction = (name, final, axis, draw(st.booleans()))
        if draw(st.booleans()):
            outputs = outputs[:-1]
    try:
        program = b.build(outputs=outputs, reduction=reduction)
    except (ValueError, TypeError, NotFusible):
        program = b.build(outputs=outputs)
    in_place = []
    for out_shape, out_dtype in program.output_specs[:len(program.outputs)]:
        same = [i for i, a in enumerate(arrays)
                if a.shape == out_shape and a.dtype == out_dtype and i not in in_place]
        in_place.append(draw(st.sampled_from(same)) if same and draw(st.booleans()) else None)
    return program, arrays, in_place


def output_arrays(program, arrays, in_place):
    outs = [np.empty(shape, dtype) for shape, dtype in program.output_specs]
    for k, leaf in enumerate(in_place):
        if leaf is not None:
            outs[k] = arrays[leaf]
    return outs


def assert_identical(got, want, zero_sign=True):
    """Same shape, dtype and values bit for bit: NaN where NaN (the sign and payload of a NaN
    are not NumPy's to promise: they depend on which of its loops ran), the sign of zeros
    too unless ``zero_sign`` is False."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype,
                                                                  want.shape, want.dtype)
    assert np.array_equal(got, want, equal_nan=want.dtype.kind == "f"), (got, want)
    if zero_sign and want.dtype.kind == "f":
        numbers = ~np.isnan(want)
        np.testing.assert_array_equal(np.signbit(got)[numbers], np.signbit(want)[numbers])


def ulps(got, want):
    """Largest distance in units of the last place (NaN and inf must agree exactly)."""
    got, want = np.asarray(got), np.asarray(want)
    same_special = (np.isnan(got) == np.isnan(want)).all() and (
        got[np.isinf(want)] == want[np.isinf(want)]).all()
    assert same_special, (got, want)
    finite = np.isfinite(want) & np.isfinite(got)
    if not finite.any():
        return 0
    ints = {4: np.int32, 8: np.int64}[want.dtype.itemsize]

    def ordered(x):
        bits = x[finite].view(ints).astype(np.int64)
        return np.where(bits < 0, np.iinfo(ints).min - bits, bits)
    return int(np.abs(ordered(got) - ordered(want)).max())
