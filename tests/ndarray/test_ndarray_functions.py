"""Module functions (ndengine.exp, ndengine.where, ndengine.sum, ...) and reduction methods
against NumPy."""
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import ndengine as nd

from ndarray_helpers import DTYPES, FLOATS, INTS, run_xp, shapes, values

pytestmark = pytest.mark.usefixtures("nd_engine")


def _sigmoid(x):
    x = np.asarray(x)
    return 1 / (1 + np.exp(-x.astype(np.exp(np.zeros(1, x.dtype)).dtype)))


class _NumpyFunctions:
    """The NumPy oracle under ndengine's names (ndengine has sigmoid and relu)."""

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def sigmoid(x):
        return _sigmoid(x)

    @staticmethod
    def relu(x):
        return np.maximum(x, 0)


NPX = _NumpyFunctions()


def run_fn(body, *args, **kwargs):
    """run_xp with the oracle namespace that knows sigmoid and relu."""
    def wrapped(xp, *a):
        return body(NPX if xp is np else xp, *a)
    return run_xp(wrapped, *args, **kwargs)


TRANSCENDENTAL = ["exp", "log", "log1p", "expm1", "sqrt", "sin", "cos", "tan", "tanh",
                  "arcsin", "arccos", "arctan", "sigmoid"]
EXACT_UNARY = ["square", "relu", "sign", "floor", "ceil", "round", "abs", "negative"]


@given(data=st.data())
@pytest.mark.parametrize("name", TRANSCENDENTAL + EXACT_UNARY)
def test_unary_function(name, data):
    dtype = data.draw(st.sampled_from(DTYPES))
    a = data.draw(values(dtype, shapes()))
    # relu is maximum(x, 0), whose zero for -0.0 differs between NumPy's own loops
    run_fn(lambda xp, a: getattr(xp, name)(xp.array(a)), a,
           tol="close" if name in TRANSCENDENTAL else "exact", zero_sign=name != "relu")


def test_unary_function_on_python_scalars_and_lists():
    run_fn(lambda xp: xp.exp(xp.array(1.5)), tol="close")
    run_fn(lambda xp: xp.sqrt(xp.array([4.0, 9.0])), tol="close")
    r = nd.exp([0.0, 1.0])  # a list becomes an array
    assert isinstance(r, nd.NDArray)
    np.testing.assert_allclose(r.asnumpy(), np.exp([0.0, 1.0]))


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8"])
def test_transcendental_of_small_ints_is_float16_as_numpys(dtype):
    """NumPy computes np.exp(int8) in float16 (its float32 loop, rounded): so does ndengine."""
    x = np.arange(-3, 4).astype(dtype)
    run_fn(lambda xp: xp.exp(xp.array(x)))
    run_fn(lambda xp: xp.sin(xp.array(x)) * 2 + xp.array(x))


def test_round_decimals():
    a = np.array([0.5, 1.5, 2.5, -0.5, 1.2345, 123.456])
    run_fn(lambda xp: xp.round(xp.array(a)))
    run_fn(lambda xp: xp.round(xp.array(a), 2), tol="close")
    run_fn(lambda xp: xp.round(xp.array(a), decimals=-1), tol="close")
    run_fn(lambda xp: xp.round(xp.array(np.array([15, 25, -35])), -1))


@given(data=st.data())
@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_minimum(name, data):
    in_shapes = data.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=4)).input_shapes
    dt_a, dt_b = data.draw(st.sampled_from(DTYPES)), data.draw(st.sampled_from(DTYPES))
    a, b = data.draw(values(dt_a, in_shapes[0])), data.draw(values(dt_b, in_shapes[1]))
    # which zero of (0.0, -0.0) they return differs between NumPy's own loops
    run_fn(lambda xp, a, b: getattr(xp, name)(xp.array(a), xp.array(b)), a, b, zero_sign=False)
    run_fn(lambda xp, a: getattr(xp, name)(xp.array(a), 1), a)
    run_fn(lambda xp, a: getattr(xp, name)(2.5, xp.array(a)), a)


@given(data=st.data())
def test_where(data):
    in_shapes = data.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=3, min_dims=0, max_dims=3, min_side=0, max_side=4)).input_shapes
    c = data.draw(values(bool, in_shapes[0]))
    dt_x, dt_y = data.draw(st.sampled_from(DTYPES)), data.draw(st.sampled_from(DTYPES))
    x, y = data.draw(values(dt_x, in_shapes[1])), data.draw(values(dt_y, in_shapes[2]))
    run_fn(lambda xp, c, x, y: xp.where(xp.array(c), xp.array(x), xp.array(y)), c, x, y)
    run_fn(lambda xp, c, x: xp.where(xp.array(c), xp.array(x), 0), c, x)
    run_fn(lambda xp, c, y: xp.where(xp.array(c), 1.5, xp.array(y)), c, y)


def test_where_with_comparison_condition():
    a = np.arange(-3, 4, dtype=np.float32)
    run_fn(lambda xp: xp.where(xp.array(a) > 0, xp.array(a), -xp.array(a)))


@given(data=st.data())
def test_clip(data):
    dtype = data.draw(st.sampled_from(INTS + FLOATS))
    a = data.draw(values(dtype, shapes()))
    lo = data.draw(st.one_of(st.none(), st.integers(-5, 5), st.floats(-5, 5)))
    hi = data.draw(st.one_of(st.none(), st.integers(-5, 10), st.floats(-5, 10)))
    if dtype.kind == "u" and isinstance(lo, int):
        lo = abs(lo)
    if dtype.kind == "u" and isinstance(hi, int):
        hi = abs(hi)
    if lo is None and hi is None:
        lo = 0
    run_fn(lambda xp, a: xp.clip(xp.array(a), lo, hi), a)
    run_fn(lambda xp, a: xp.array(a).clip(lo, hi), a)


@given(data=st.data())
def test_dot_and_matmul(data):
    dtype = data.draw(st.sampled_from([np.dtype(np.int32), np.dtype(np.int64)] + FLOATS))
    n, k, m = (data.draw(st.integers(0, 4)) for _ in range(3))
    form = data.draw(st.sampled_from(["mm", "mv", "vm", "vv", "nd1"]))
    sa = {"mm": (n, k), "mv": (n, k), "vm": (k,), "vv": (k,), "nd1": (2, n, k)}[form]
    sb = {"mm": (k, m), "mv": (k,), "vm": (k, m), "vv": (k,), "nd1": (k,)}[form]
    a = data.draw(values(dtype, sa, lo=-10, hi=10))
    b = data.draw(values(dtype, sb, lo=-10, hi=10))
    run_fn(lambda xp, a, b: xp.dot(xp.array(a), xp.array(b)), a, b, tol="close")
    run_fn(lambda xp, a, b: xp.matmul(xp.array(a), xp.array(b)), a, b, tol="close")
    run_fn(lambda xp, a, b: xp.array(a).dot(xp.array(b)), a, b, tol="close")


def test_dot_mixed_dtypes_and_mismatch():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    b = np.linspace(0, 1, 3, dtype=np.float32)
    run_fn(lambda xp: xp.dot(xp.array(a), xp.array(b)), tol="close")
    run_fn(lambda xp: xp.dot(xp.array(a), xp.array(a)))  # both raise
    run_fn(lambda xp: xp.matmul(xp.array(a), xp.array(a)))


@given(data=st.data())
def test_concatenate_and_stack(data):
    base = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3))
    axis = data.draw(st.integers(-len(base), len(base) - 1))
    count = data.draw(st.integers(1, 3))
    arrays = []
    for _ in range(count):
        shape = list(base)
        shape[axis] = data.draw(st.integers(0, 3))
        arrays.append(data.draw(values(data.draw(st.sampled_from(DTYPES)), tuple(shape))))
    run_fn(lambda xp, *arrs: xp.concatenate([xp.array(x) for x in arrs], axis=axis), *arrays)
    run_fn(lambda xp, *arrs: xp.concatenate(tuple(xp.array(x) for x in arrs), axis), *arrays)
    same = [data.draw(values(arrays[0].dtype, base)) for _ in range(count)]
    stack_axis = data.draw(st.integers(-len(base) - 1, len(base)))
    run_fn(lambda xp, *arrs: xp.stack([xp.array(x) for x in arrs], axis=stack_axis), *same)
    run_fn(lambda xp, *arrs: xp.stack([xp.array(x) for x in arrs]), *same)


def test_concatenate_stack_errors():
    a, b = np.zeros((2, 3)), np.zeros((3, 2))
    run_fn(lambda xp: xp.concatenate([xp.array(a), xp.array(b)], axis=0))
    run_fn(lambda xp: xp.stack([xp.array(a), xp.array(b)]))
    run_fn(lambda xp: xp.concatenate([xp.array(a), xp.array(a)], axis=2))
    run_fn(lambda xp: xp.concatenate([xp.array(np.float64(1)), xp.array(np.float64(2))]))


@given(data=st.data())
def test_split(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=6))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    a = data.draw(values(np.int32, shape))
    n = shape[axis]
    if data.draw(st.booleans()):
        sections = data.draw(st.sampled_from([d for d in range(1, 7) if n % d == 0]))
    else:
        sections = sorted(data.draw(st.lists(st.integers(0, n + 1), max_size=3)))
    run_fn(lambda xp, a: xp.split(xp.array(a), sections, axis=axis), a)
    run_fn(lambda xp, a: xp.split(xp.array(a), sections, axis), a)


def test_split_uneven_raises_like_numpy():
    run_fn(lambda xp: xp.split(xp.array(np.arange(5)), 2))


def test_split_pieces_are_views_of_the_array():
    # NumPy's split returns views: a write to a piece shows in the array and in nothing else
    x = nd.array(np.arange(6.0))
    left, right = nd.split(x, 2)
    left += 100
    np.testing.assert_array_equal(x.asnumpy(), [100.0, 101.0, 102.0, 3.0, 4.0, 5.0])
    np.testing.assert_array_equal(right.asnumpy(), [3.0, 4.0, 5.0])


@given(data=st.data())
def test_broadcast_to(data):
    target = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    shape = data.draw(hnp.broadcastable_shapes(target, min_dims=0, max_dims=len(target),
                                               min_side=0, max_side=4))
    a = data.draw(values(data.draw(st.sampled_from(DTYPES)), shape))
    # NumPy's result is a read-only view; ndengine's a copy: compare values
    run_fn(lambda xp, a: xp.broadcast_to(xp.array(a), target) if xp is nd
           else np.array(np.broadcast_to(a, target)), a)


def test_broadcast_to_is_a_copy_and_checks_shapes():
    x = nd.array([1, 2, 3])
    y = nd.broadcast_to(x, (2, 3))
    y[0, 0] = 100
    np.testing.assert_array_equal(x.asnumpy(), [1, 2, 3])
    np.testing.assert_array_equal(y.asnumpy(), [[100, 2, 3], [1, 2, 3]])
    with pytest.raises(ValueError, match=r"\(3,\).*\(2, 4\)|\(2, 4\).*\(3,\)"):
        nd.broadcast_to(x, (2, 4))
    np.testing.assert_array_equal(nd.broadcast_to(x, 3).asnumpy(), [1, 2, 3])


# ---------------------------------------------------------------- reductions
REDUCTIONS = ["sum", "mean", "max", "min", "prod", "argmax", "argmin", "std", "var"]


def axes_for(data, ndim, single_only=False):
    options = [st.none()]
    if ndim:
        options.append(st.integers(-ndim, ndim - 1))
        if not single_only:
            options.append(st.lists(st.integers(-ndim, ndim - 1), unique_by=lambda i: i % ndim,
                                    max_size=ndim).map(tuple))
    return data.draw(st.one_of(*options))


@given(data=st.data(), keepdims=st.booleans(), as_method=st.booleans())
@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduction(name, data, keepdims, as_method):
    dtype = data.draw(st.sampled_from(DTYPES))
    a = data.draw(values(dtype, shapes(max_side=5)))
    axis = axes_for(data, a.ndim, single_only=name in ("argmax", "argmin"))
    kwargs = {"axis": axis, "keepdims": keepdims}
    if as_method or name in ("argmax", "argmin"):
        body = lambda xp, a: getattr(xp.array(a), name)(**kwargs)  # noqa: E731
    else:
        body = lambda xp, a: getattr(xp, name)(xp.array(a), **kwargs)  # noqa: E731
    run_fn(numpy_quiet_on_empty_slices(body), a, tol="close")


def numpy_quiet_on_empty_slices(body):
    """``body`` with NumPy's warnings for mean/std/var of empty slices ignored when xp is
    NumPy (the oracle); ndengine's side runs unfiltered."""
    def run(xp, *args):
        if xp is nd:
            return body(xp, *args)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "Mean of empty slice|Degrees of freedom <= 0",
                                    RuntimeWarning)
            return body(xp, *args)
    return run


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min"])
def test_reduction_positional_axis(name):
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    run_fn(lambda xp: getattr(xp, name)(xp.array(a), 1), tol="close")
    run_fn(lambda xp: getattr(xp, name)(xp.array(a), -1, keepdims=True), tol="close")
    run_fn(lambda xp: getattr(xp.array(a), name)((0, 2)), tol="close")


@pytest.mark.parametrize("name", ["std", "var"])
def test_std_var_ddof(name):
    a = np.arange(12, dtype=np.float64).reshape(3, 4) ** 1.5
    run_fn(lambda xp: getattr(xp.array(a), name)(ddof=1), tol="close")
    run_fn(lambda xp: getattr(xp.array(a), name)(axis=0, ddof=1), tol="close")


@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduction_bad_axis_raises(name):
    a = np.ones((2, 3))
    run_fn(lambda xp: getattr(xp.array(a), name)(axis=2))
    run_fn(lambda xp: getattr(xp.array(a), name)(axis=-3))
    if name not in ("argmax", "argmin"):
        run_fn(lambda xp: getattr(xp.array(a), name)(axis=(0, 0)))


def test_reduction_of_views():
    a = np.arange(60, dtype=np.float64).reshape(3, 4, 5)
    run_fn(lambda xp: xp.array(a)[:, ::2, ::-1].sum(axis=(0, 2)), tol="close")
    run_fn(lambda xp: xp.array(a).T.max(axis=1))
    run_fn(lambda xp: xp.array(a)[1].argmin(axis=0))


def test_a_ufunc_of_scalars_only_into_a_larger_out_keeps_them_weak():
    """NumPy broadcasts a ufunc's scalar inputs to out's shape without making them strong:
    ``add(2, 2, out=float64[3], dtype='uint8')`` is 4.0 everywhere (an int64 array of 2 would
    refuse the uint8 loop). A hypothesis run of test_bad_argument_combinations found it."""
    for args, kwargs, dtype in [((2, 2), {"dtype": "uint8"}, "float64"),
                                ((2, 3), {}, "float64"), ((2.5, 1), {}, "float32"),
                                ((3, 2), {"dtype": "float32"}, "float64"),
                                ((7, 2), {}, "int16")]:
        got, want = nd.zeros(3, dtype=dtype), np.zeros(3, dtype=dtype)
        assert nd.add(*args, out=got, **kwargs) is got
        np.add(*args, out=want, **kwargs)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.asnumpy(), want)
