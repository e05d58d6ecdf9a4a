"""Element-wise results bit for bit NumPy's once the deferred Numba loop runs.

An element-wise signature runs NumPy's ufunc loop for its first ``jit_after()`` calls, then
its Numba loop (ops/runtime/deferred_loops.py). Here the count is 1, so each body's first call runs
NumPy's loop and the later ones Numba's; every call must give NumPy's bits: the sign of a
zero (which operand a tie of 0.0 and -0.0 gives), which operand's NaN comes out (payload
and sign bit), infinities, denormals, integer extremes, mixed-dtype promotion, arrays and
scalars on either side. Every op that defers to a Numba loop is enumerated from the op
tables, and clip with array bounds (a Numba loop from its first call, built on maximum and
minimum). NaN payloads are compared with what NumPy's own loops give on this machine (the
payload an operation without a NaN operand creates is the platform's).
"""
import itertools

import numpy as np
import pytest

import ndengine as nd
from fidelity_helpers import assert_same_bits
from ndengine.ops.runtime import compile_queue, deferred_loops
from ndengine.ops.elementwise import operators as elementwise

pytestmark = pytest.mark.usefixtures("nd_engine")

CALLS = 3  # NumPy's loop, NumPy's loop queueing the compile, Numba's loop
_DEFERRING = sorted(name for name, spec in elementwise._SPECS.items() if spec.defers_compile)
_UNARY = [name for name in _DEFERRING if elementwise.spec(name).arity == 1]
_BINARY = [name for name in _DEFERRING if elementwise.spec(name).arity == 2]
_SAME_DTYPES = [np.dtype(d) for d in ("float64", "float32", "int8", "int64", "uint8",
                                      "uint64", "bool")]
# (first, second) operand dtypes whose computation dtype is neither's: promotion casts
_MIXED_DTYPES = [(np.dtype("int8"), np.dtype("uint8")), (np.dtype("int64"), np.dtype("float32")),
                 (np.dtype("uint8"), np.dtype("float64"))]


@pytest.fixture
def numba_after_one_call():
    previous = deferred_loops.set_jit_after(1)
    yield
    deferred_loops.set_jit_after(previous)


def _nan_with_payload(dtype, bits32, bits64):
    bits = bits32 if dtype.itemsize == 4 else bits64
    return np.array([bits], f"u{dtype.itemsize}").view(dtype)[0]


def edge_values(dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return np.array([False, True])
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        values = [0, 1, 2, 3, 7, info.max, info.max - 1, info.min]
        if dtype.kind == "i":
            values += [-1, -2, -7, info.min + 1]
        return np.array(values, dtype)
    info = np.finfo(dtype)
    return np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, np.inf, -np.inf, np.nan,
                     _nan_with_payload(dtype, 0x7FC00001, 0x7FF8000000000001),
                     _nan_with_payload(dtype, 0xFFC00002, 0xFFF8000000000002),
                     info.max, -info.max, info.tiny, info.smallest_subnormal,
                     -info.smallest_subnormal, 1e-3], dtype)


def check_calls(body, what):
    """body(xp) with xp=numpy once and xp=ndengine CALLS times: NumPy's bits every time, or
    NumPy's error type."""
    with np.errstate(all="ignore"):
        try:
            expected = body(np)
        except TypeError:
            with pytest.raises(TypeError):
                body(nd)
            return
        for call in range(CALLS):
            assert_same_bits(expected, body(nd), f"{what}, call {call + 1}")
            compile_queue.drain()  # the compile a call queued is done before the next call


def _pairs(first, second):
    """Every pairing of the two dtypes' edge values, as two arrays."""
    a, b = zip(*itertools.product(edge_values(first), edge_values(second)))
    return np.array(a, first), np.array(b, second)


@pytest.mark.usefixtures("numba_after_one_call")
@pytest.mark.parametrize("name", _UNARY)
def test_unary_op_gives_numpys_bits_after_the_swap(name):
    for dtype in _SAME_DTYPES:
        # repeated so that the array is longer than NumPy's SIMD blocks
        values = np.tile(edge_values(dtype), 5)
        check_calls(lambda xp: getattr(xp, name)(xp.asarray(values)), f"{name}({dtype})")


@pytest.mark.usefixtures("numba_after_one_call")
@pytest.mark.parametrize("name", _BINARY)
def test_binary_op_gives_numpys_bits_after_the_swap(name):
    for first, second in [(d, d) for d in _SAME_DTYPES] + _MIXED_DTYPES:
        a, b = _pairs(first, second)
        check_calls(lambda xp: getattr(xp, name)(xp.asarray(a), xp.asarray(b)),
                    f"{name}({first}, {second})")


@pytest.mark.usefixtures("numba_after_one_call")
@pytest.mark.parametrize("name", _BINARY)
def test_binary_op_with_a_scalar_gives_numpys_bits_after_the_swap(name):
    for dtype in (np.dtype("float64"), np.dtype("float32"), np.dtype("int8")):
        values = np.tile(edge_values(dtype), 5)
        for scalar in edge_values(dtype)[:11]:  # zeros, ones, infinities, NaNs
            check_calls(lambda xp: getattr(xp, name)(xp.asarray(values), scalar),
                        f"{name}(array of {dtype}, {scalar!r})")
            check_calls(lambda xp: getattr(xp, name)(scalar, xp.asarray(values)),
                        f"{name}({scalar!r}, array of {dtype})")
        # a weak Python float meeting an integer array: the float64 loop
        check_calls(lambda xp: getattr(xp, name)(xp.asarray(values.astype(np.uint8)), -0.0),
                    f"{name}(uint8 array, -0.0)")


@pytest.mark.usefixtures("numba_after_one_call")
def test_clip_with_array_bounds_gives_numpys_bits():
    for dtype in (np.dtype("float64"), np.dtype("float32"), np.dtype("int16")):
        edges = edge_values(dtype)
        x, low, high = (np.array(v, dtype) for v in zip(*itertools.product(edges, repeat=3)))
        check_calls(lambda xp: xp.clip(xp.asarray(x), xp.asarray(low), xp.asarray(high)),
                    f"clip({dtype} arrays)")


@pytest.mark.usefixtures("numba_after_one_call")
@pytest.mark.parametrize("bound_shape", [(), (1,)])
def test_clip_with_broadcast_bounds_gives_numpys_bits(bound_shape):
    """Two bounds that broadcast run NumPy's loop for constant bounds, whose choice on a tie
    of signed zeros or of two NaNs is not its loop's for bound arrays."""
    for dtype in (np.dtype("float64"), np.dtype("float32")):
        values = np.tile(edge_values(dtype), 3)
        for low, high in itertools.product(edge_values(dtype)[[0, 1, 3, 9]], repeat=2):
            low, high = np.full(bound_shape, low, dtype), np.full(bound_shape, high, dtype)
            check_calls(lambda xp: xp.clip(xp.asarray(values), xp.asarray(low),
                                           xp.asarray(high)),
                        f"clip({dtype} array, {low!r}, {high!r})")


@pytest.mark.usefixtures("numba_after_one_call")
@pytest.mark.parametrize("x_shape", [(), (1,), (5,), (3, 4)])
@pytest.mark.parametrize("bounds", ["int array, float", "float, float array", "int arrays",
                                    "float32 array, float64 array"])
def test_clip_with_constant_bounds_to_cast_gives_numpys_bits(x_shape, bounds):
    """Constant bounds (one element each) that need a cast, or a Python scalar beside a
    bound array, still run NumPy's rule for constant bounds (x kept on a tie of signed
    zeros: clip(zeros, int 0-d 0, -0.0) is 0.0, not the bound arrays' -0.0); the general
    run's buffered chunks would otherwise hand NumPy repeated bounds (its other loop)."""
    low_value, high_value = {"int array, float": (np.array(0), -0.0),
                             "float, float array": (0.0, np.array(-0.0)),
                             "int arrays": (np.array(0, np.int8), np.array(0, np.int16)),
                             "float32 array, float64 array": (np.array(-0.0, np.float32),
                                                              np.array(0.0))}[bounds]
    for x_dtype in (np.dtype("int64"), np.dtype("float64"), np.dtype("float32")):
        for fill in (0.0, -0.0, 1.0, np.nan):
            with np.errstate(invalid="ignore"):  # NaN to int64
                x = np.full(x_shape, fill).astype(x_dtype)
            check_calls(lambda xp: xp.clip(
                xp.asarray(x), *[xp.asarray(b) if isinstance(b, np.ndarray) else b
                                 for b in (low_value, high_value)]),
                f"clip({x_dtype} {x_shape} of {fill}, {bounds})")
            check_calls(lambda xp: xp.clip(
                xp.asarray(x), *[xp.asarray(b) if isinstance(b, np.ndarray) else b
                                 for b in (high_value, low_value)]),
                f"clip({x_dtype} {x_shape} of {fill}, {bounds} swapped)")


@pytest.mark.usefixtures("numba_after_one_call")
@pytest.mark.parametrize("size", [1, 4, 7, 37, 100, 5000])
def test_signed_zero_ties_of_max_and_min_after_the_swap(size):
    """The reported cases: 1 / fmin(uint8 zeros, -0.0) and 1 / maximum(zeros, -0.0) are
    NumPy's -inf (its loop gives -0.0 there), after as before the swap."""
    zeros_uint8 = np.zeros(size, np.uint8)
    check_calls(lambda xp: 1.0 / xp.fmin(xp.asarray(zeros_uint8), -0.0), "1 / fmin")
    check_calls(lambda xp: 1.0 / xp.maximum(xp.zeros(size), -0.0), "1 / maximum")
    check_calls(lambda xp: 1.0 / xp.minimum(-0.0, xp.zeros(size)), "1 / minimum")


# One-element operands: NumPy runs its scalar loop for a scalar, a 0-d array or a broadcast
# one (stride 0) and its array loop for two arrays of the output's shape; float fmax/fmin
# answer a tie of zeros differently in the two (found by the random programs: a 0-d
# fmin(0.0, -0.0) gave 0.0 where NumPy gives -0.0).
_ONE_ELEMENT_PAIRS = [((), ()), ((), "scalar"), ((1,), "scalar"), ((1,), (1,)), ((1, 1), (1, 1)),
                      ((1, 1), (1,)), ((1,), (1, 1)), ((3,), ()), ((), (3,))]


@pytest.mark.usefixtures("numba_after_one_call")
@pytest.mark.parametrize("name", ["fmax", "fmin", "maximum", "minimum"])
@pytest.mark.parametrize("shapes", _ONE_ELEMENT_PAIRS, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_one_element_operands_give_numpys_zero_signs(name, shapes, dtype):
    first_shape, second_shape = shapes
    x = np.zeros(first_shape, dtype)
    y = -0.0 if second_shape == "scalar" else -np.zeros(second_shape, dtype)
    for xp in (np, nd):
        for a, b in ((x, y), (y, x)):
            want = getattr(np, name)(a, b)
            operands = [v if np.ndim(v) == 0 and not isinstance(v, np.ndarray) else xp.asarray(v)
                        for v in (a, b)]
            for _ in range(CALLS):
                got = getattr(xp, name)(*operands)
                assert_same_bits(got if xp is np else got.asnumpy(), want)
