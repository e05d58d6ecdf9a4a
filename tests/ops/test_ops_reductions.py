"""Reductions against NumPy: shapes, dtypes, values, empty inputs, axis errors."""
import os
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp
from numpy.exceptions import AxisError

import ndengine.ops as ops
from ndengine.ops import OpReq

FAST = settings(max_examples=int(os.environ.get("NDENGINE_HYPOTHESIS_EXAMPLES", "15")),
                deadline=None)
DTYPES = [np.dtype(d) for d in ops.SUPPORTED_DTYPES]
NAMES = ["sum", "mean", "max", "min", "prod", "argmax", "argmin", "std", "var"]


def numpy_reduce(name, x, axis, keepdims, ddof=0):
    fn = getattr(np, name)
    extra = {"ddof": ddof} if name in ("std", "var") else {}
    with np.errstate(all="ignore"), _quiet():
        return np.asarray(fn(x, axis=axis, keepdims=keepdims, **extra))


def warning_messages(fn, *args, **kwargs) -> set:
    """The warnings ``fn`` emits (NumPy's default errstate: floating-point errors warn)."""
    with np.errstate(all="warn"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fn(*args, **kwargs)
        except ValueError:
            pass
    # NumPy says "scalar divide" for 0-d results, "divide" when writing into out=
    return {f"{w.category.__name__}: {w.message}".replace(" scalar ", " ") for w in caught}


class _quiet:
    def __enter__(self):
        import warnings
        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)


@st.composite
def axis_for(draw, ndim, single):
    choices = [st.none()]
    if ndim:
        choices.append(st.integers(-ndim, ndim - 1))
        if not single:
            choices.append(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim).map(tuple))
    return draw(st.one_of(*choices))


@pytest.mark.parametrize("name", NAMES)
@FAST
@given(data=st.data())
def test_reduction_matches_numpy(name, data):
    dtype = data.draw(st.sampled_from(DTYPES))
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    bound = 1e6 if dtype.itemsize > 2 else 6e4  # float16 tops out at 65504
    elements = st.floats(-bound, bound, width=dtype.itemsize * 8) if dtype.kind == "f" else None
    x = data.draw(hnp.arrays(dtype, shape, elements=elements))
    axis = data.draw(axis_for(x.ndim, single=name.startswith("arg")))
    keepdims = data.draw(st.booleans())
    ddof = data.draw(st.integers(0, 1))
    params = dict(axis=axis, keepdims=keepdims)
    if name in ("std", "var"):
        params["ddof"] = ddof
    op = ops.get(name)
    try:
        expected = numpy_reduce(name, x, axis, keepdims, ddof)
    except ValueError as error:
        with pytest.raises(ValueError, match=str(error)[:20]):
            op.infer(x, **params)
        return
    [(shape_out, dtype_out)] = op.infer(x, **params)
    assert (shape_out, dtype_out) == (expected.shape, expected.dtype)
    out = np.empty(shape_out, dtype_out)
    # The kernel may warn as NumPy does (std/var with ddof >= the count: "Degrees of freedom
    # <= 0", "invalid value encountered in divide"), and only so.
    kernel_warnings = warning_messages(op.kernels["cpu"], [x], [out], [OpReq.WRITE_TO], **params)
    assert kernel_warnings <= warning_messages(getattr(np, name), x, axis=axis, keepdims=keepdims,
                                               **({"ddof": ddof} if "ddof" in params else {}))
    if dtype_out.kind == "f":
        np.testing.assert_allclose(out, expected, rtol=1e-5, equal_nan=True)
    else:
        np.testing.assert_array_equal(out, expected)


def test_bad_axis_raises_numpy_axis_error():
    with pytest.raises(AxisError, match="axis 2 is out of bounds for array of dimension 2"):
        ops.get("sum").infer(np.ones((2, 3)), axis=2)
    with pytest.raises(AxisError):
        ops.get("argmax").infer(np.ones((2, 3)), axis=-3)
    with pytest.raises(TypeError):
        ops.get("argmax").infer(np.ones((2, 3)), axis=(0, 1))


def test_empty_reductions():
    empty = np.ones((0, 3), np.int32)
    assert ops.get("sum").apply(empty)[0] == 0
    assert ops.get("prod").apply(empty, axis=0)[0].tolist() == [1, 1, 1]
    assert np.isnan(ops.get("mean").apply(empty)[0])
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        ops.get("max").infer(empty)
    with pytest.raises(ValueError, match="argmin of an empty sequence"):
        ops.get("argmin").infer(empty, axis=0)
    assert ops.get("argmax").apply(empty, axis=1)[0].shape == (0,)


def test_reduction_dtypes():
    assert ops.get("sum").infer(np.ones(3, np.int32))[0][1] == np.int64
    assert ops.get("sum").infer(np.ones(3, bool))[0][1] == np.int64
    assert ops.get("mean").infer(np.ones(3, np.int8))[0][1] == np.float64
    assert ops.get("var").infer(np.ones(3, np.float32))[0][1] == np.float32
    assert ops.get("argmax").infer(np.ones(3, np.float32))[0][1] == np.int64


def test_reduction_into_strided_output_and_add_to():
    x = np.arange(24.0).reshape(2, 3, 4)
    out = np.zeros((4, 6))[:, ::2].T       # (3, 4), non-contiguous
    ops.get("sum").kernels["cpu"]([x], [out], [OpReq.WRITE_TO], axis=0)
    np.testing.assert_array_equal(out, x.sum(axis=0))
    acc = np.ones(4)
    ops.get("max").kernels["cpu"]([x], [acc], [OpReq.ADD_TO], axis=(0, 1))
    np.testing.assert_array_equal(acc, 1 + x.max(axis=(0, 1)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_short_row_and_column_sums_run_the_loops_with_numpys_bits(dtype, monkeypatch):
    """``x.sum(axis=-1)`` over C-contiguous rows of at most MAX_ROW elements, and
    ``x.sum(axis=0)`` over two columns or more (``mean`` too), run row_reductions' loops once
    compiled (NumPy's reduce before): NumPy's sums, bit for bit, at every length; longer rows
    and strided input stay NumPy's."""
    import ndengine as nd
    from ndengine.ops.families import row_reductions
    from ndengine.ops.runtime import compile_queue, deferred_loops
    monkeypatch.setattr(deferred_loops, "_jit_after", 0)
    rng = np.random.default_rng(7)
    for length in (1, 2, 7, 8, 9, 15, 16, 17, 31, 64, 100, 127, 128, 129, 300):
        a = (rng.standard_normal((6, length)) * 1e4).astype(dtype)
        x = nd.array(a)
        for keepdims in (False, True):
            for axis in (-1, 1):
                got = x.sum(axis=axis, keepdims=keepdims).asnumpy()
                np.testing.assert_array_equal(got, a.sum(axis=axis, keepdims=keepdims))
                assert got.dtype == dtype
        np.testing.assert_array_equal(x[:, ::2].sum(axis=-1).asnumpy(), a[:, ::2].sum(axis=-1))
        for axis in (0, -1):  # the column loop (two columns or more), the row loop
            for name in ("sum", "mean"):
                got = getattr(x, name)(axis=axis).asnumpy()
                np.testing.assert_array_equal(got, getattr(a, name)(axis=axis))
        assert compile_queue.drain(60)
    reduce = row_reductions.row_reducer("sum", np.dtype(dtype), numpy_first=True)
    a = rng.standard_normal((3, 2, 40)).astype(dtype)
    out = np.empty(6, dtype)
    reduce(a.reshape(6, 40), out)  # compiled by now: the loop itself
    np.testing.assert_array_equal(out, a.sum(axis=-1).reshape(6))
    for loop in (row_reductions.add_rows, row_reductions.add_columns):
        state, _ = deferred_loops.state_of(loop, (np.dtype(dtype),))
        assert state == deferred_loops.READY


def test_row_maxima_keep_the_later_of_equal_values_as_numpys_scalar_loop():
    """maximum(0.0, -0.0) is -0.0 in NumPy (the later of two equal values): fusion's row loops
    keep the same one (rows shorter than a SIMD vector, where NumPy's loop is scalar)."""
    from ndengine.ops.families import row_reductions
    rows = np.array([[0.0, -0.0], [-0.0, 0.0], [np.nan, 0.0], [0.0, np.nan]])
    for larger, ufunc in ((1.0, np.maximum), (0.0, np.minimum)):
        out = np.empty(4)
        row_reductions.extreme_rows(rows, out, larger)
        want = ufunc.reduce(rows, axis=1)
        np.testing.assert_array_equal(np.signbit(out), np.signbit(want))
        np.testing.assert_array_equal(np.isnan(out), np.isnan(want))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_column_reductions_give_numpys_signed_zeros_and_nans(dtype, monkeypatch):
    """Over axis 0, sum starts from NumPy's identity (columns of -0.0 sum to 0.0), max and min
    from the first row, keeping the later of equal values, NaN kept: NumPy's bits, signs
    included, from the NumPy stand-in and from the compiled column loops."""
    import ndengine as nd
    from ndengine.ops.runtime import compile_queue, deferred_loops
    monkeypatch.setattr(deferred_loops, "_jit_after", 0)
    rng = np.random.default_rng(11)
    values = np.array([0.0, -0.0, 1.0, -1.0, np.nan, 2.5], dtype)
    for round in range(2):
        for shape in ((1, 3), (3, 4, 5), (40, 7), (2, 2)):
            a = rng.choice(values, size=shape)
            x = nd.array(a)
            for name in ("sum", "max", "min", "mean"):
                got, want = getattr(x, name)(axis=0).asnumpy(), getattr(a, name)(axis=0)
                np.testing.assert_array_equal(got, want)
                np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
        assert compile_queue.drain(60)
    x = nd.array(np.full((3, 2), -0.0, dtype))
    assert not np.signbit(x.sum(axis=0).asnumpy()).any()
    assert np.signbit(x.max(axis=0).asnumpy()).all()


def test_each_row_loop_s_numpy_stand_in_computes_what_the_loop_computes():
    """A loop's deferred record, and so its NumPy stand-in (run until the loop is compiled),
    is shared by the names that call it: max and min share ``extreme_*``, told apart by the
    loop's third argument, which the stand-in reads too."""
    from ndengine.ops.families import row_reductions as rows
    values = np.random.default_rng(5).standard_normal((9, 6))
    for name, (loop, third) in rows._ROWS.items():
        want, got = np.empty(6 if name.endswith("_columns") else 9), None
        loop(values, want, values.dtype.type(third))
        got = np.empty_like(want)
        rows._numpy_stand_in(loop)(values, got, values.dtype.type(third))
        np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=name)
