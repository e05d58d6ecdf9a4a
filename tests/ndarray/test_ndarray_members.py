"""Array creation and NDArray members (attributes, conversions, copies, views, repr)."""
import numpy as np
import pytest

import ndengine as nd

from ndarray_helpers import DTYPES, run_xp

pytestmark = pytest.mark.usefixtures("nd_engine")


def check(x, expected):
    assert isinstance(x, nd.NDArray)
    expected = np.asarray(expected)
    got = x.asnumpy()
    assert got.shape == expected.shape and got.dtype == expected.dtype, \
        (got.shape, got.dtype, expected.shape, expected.dtype)
    np.testing.assert_array_equal(got, expected)


# ---------------------------------------------------------------- creation
@pytest.mark.parametrize("obj", [[1, 2, 3], [[1.5, 2], [3, 4]], 3.0, 7, True, [True, False],
                                 [[[1]], [[2]]], [], [1.5], [[1, 2], [3, 4.0]]])
def test_array_from_python(obj):
    check(nd.array(obj), np.array(obj))


def test_array_python_float_is_float64():
    assert nd.array([1.5]).dtype == np.float64
    assert nd.array(2.0).shape == ()
    assert nd.array([1, 2]).dtype == np.array([1, 2]).dtype


@pytest.mark.parametrize("dtype", DTYPES)
def test_array_from_numpy_each_dtype(dtype):
    values = (np.arange(12) % 5).astype(dtype).reshape(3, 4)
    x = nd.array(values)
    check(x, values)
    values[0, 0] = 1  # a private copy: later changes to the source do not show
    assert x.asnumpy()[0, 0] == 0
    check(nd.array(values[:, ::-2]), values[:, ::-2])  # non-contiguous source


@pytest.mark.parametrize("dtype", ["float32", np.int16, np.dtype("uint8"), bool, float, int])
def test_array_dtype_argument(dtype):
    check(nd.array([1, 0, 2], dtype=dtype), np.array([1, 0, 2], dtype=dtype))
    check(nd.array(nd.array([1.7, 2.2]), dtype=dtype), np.array([1.7, 2.2]).astype(dtype))


def test_array_of_ndarray_is_a_copy():
    x = nd.array([1, 2, 3])
    y = nd.array(x)
    y += 1
    check(x, [1, 2, 3])
    check(y, [2, 3, 4])


@pytest.mark.parametrize("dtype", ["float16", "complex64", "complex128"])
def test_float16_and_complex_arrays_are_made_and_cast(dtype):
    values = [1.5, -2.25] if dtype == "float16" else [1 + 2j, -0.5j]
    for made in (nd.array(values, dtype=dtype), nd.array(np.array(values, dtype=dtype))):
        assert made.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(made.asnumpy(), np.array(values, dtype=dtype), strict=True)
    np.testing.assert_array_equal(nd.zeros(3, dtype=dtype).asnumpy(), np.zeros(3, dtype),
                                  strict=True)
    np.testing.assert_array_equal(nd.array([1, 2]).astype(dtype).asnumpy(),
                                  np.array([1, 2]).astype(dtype), strict=True)


@pytest.mark.parametrize("dtype", [object, "U3", "S2", "datetime64[s]"])
def test_unsupported_dtypes_raise_at_call(dtype):
    with pytest.raises(TypeError, match="support|understand"):
        nd.array([1, 2], dtype=dtype)
    with pytest.raises(TypeError, match="support|understand"):
        nd.zeros(3, dtype=dtype)
    with pytest.raises(TypeError, match="support|understand"):
        nd.array(np.ones(2, dtype=dtype))
    with pytest.raises(TypeError, match="support|understand"):
        nd.array([1, 2]).astype(dtype)


@pytest.mark.parametrize("dtype", [None, np.float32, np.int8, bool])
@pytest.mark.parametrize("shape", [(), 0, 3, (2, 0), (2, 3, 1)])
def test_zeros_ones_full_empty(shape, dtype):
    kw = {} if dtype is None else {"dtype": dtype}
    check(nd.zeros(shape, **kw), np.zeros(shape, **kw))
    check(nd.ones(shape, **kw), np.ones(shape, **kw))
    check(nd.full(shape, 7, **kw), np.full(shape, 7, **kw))
    e = nd.empty(shape, **kw)
    ref = np.empty(shape, **kw)
    assert e.shape == ref.shape and e.dtype == ref.dtype
    assert e.asnumpy().shape == ref.shape


def test_full_infers_dtype_from_value():
    check(nd.full((2,), 1.5), np.full((2,), 1.5))
    check(nd.full((2,), 3), np.full((2,), 3))
    check(nd.full((2,), True), np.full((2,), True))
    check(nd.full((2,), nd.array(2.5)), np.full((2,), 2.5))


@pytest.mark.parametrize("args,kw", [((5,), {}), ((1, 7, 2), {}), ((0, 1, 0.25), {}),
                                     ((5, 0, -1), {}), ((3,), {"dtype": np.float32}),
                                     ((2.5,), {}), ((0,), {}), ((1, 2, 0.1), {})])
def test_arange(args, kw):
    run_xp(lambda xp: xp.arange(*args, **kw))


def test_arange_zero_step_raises():
    with pytest.raises(ZeroDivisionError):  # as NumPy
        nd.arange(0, 5, 0)


@pytest.mark.parametrize("args,kw", [((0, 1), {}), ((0, 1, 5), {}), ((1, 0, 7), {}),
                                     ((0, 10, 4), {"endpoint": False}),
                                     ((0, 1, 3), {"dtype": np.float32}), ((0, 1, 0), {}),
                                     ((2, 3, 1), {}), ((0, 10, 6), {"dtype": np.int32})])
def test_linspace(args, kw):
    run_xp(lambda xp: xp.linspace(*args, **kw), tol="close")


@pytest.mark.parametrize("args,kw", [((3,), {}), ((2, 4), {}), ((3,), {"k": 1}),
                                     ((4, 3), {"k": -2}), ((3,), {"dtype": np.int32}),
                                     ((0,), {})])
def test_eye(args, kw):
    run_xp(lambda xp: xp.eye(*args, **kw))


def test_like_functions():
    proto = nd.array(np.ones((2, 3), np.int16))
    check(nd.zeros_like(proto), np.zeros((2, 3), np.int16))
    check(nd.ones_like(proto, dtype=np.float32), np.ones((2, 3), np.float32))
    check(nd.full_like(proto, 5), np.full((2, 3), 5, np.int16))
    check(nd.full_like(proto, 2.7), np.full_like(np.ones((2, 3), np.int16), 2.7))
    assert nd.zeros_like(proto, ctx=nd.cpu(1)).context == nd.cpu(1)
    assert nd.ones_like(nd.zeros(2, ctx=nd.cpu(2))).context == nd.cpu(2)


@pytest.mark.cpu_only
def test_default_context():
    assert nd.current_context() == nd.cpu(0)
    assert nd.zeros(2).context == nd.cpu(0)
    with nd.cpu(1):
        assert nd.current_context() == nd.cpu(1)
        for x in (nd.zeros(2), nd.ones(2), nd.array([1]), nd.arange(3), nd.eye(2),
                  nd.linspace(0, 1, 3), nd.full(2, 1), nd.empty(2), nd.random.uniform(shape=2)):
            assert x.context == nd.cpu(1) and x.ctx == nd.cpu(1)
        y = nd.zeros(2) + 1  # ops follow their inputs
        assert y.context == nd.cpu(1)
        with nd.cpu(2):
            assert nd.current_context() == nd.cpu(2)
        assert nd.current_context() == nd.cpu(1)
    assert nd.current_context() == nd.cpu(0)
    assert nd.zeros(2, ctx=nd.cpu(3)).context == nd.cpu(3)
    check(y, [1.0, 1.0])


# ---------------------------------------------------------------- attributes and values
@pytest.mark.cpu_only
def test_attributes():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = nd.array(a)
    assert x.shape == (2, 3, 4) and x.dtype == np.float32 and x.ndim == 3 and x.size == 24
    assert x.context == nd.cpu(0) and x.ctx == nd.cpu(0)
    assert len(x) == 2
    check(x.T, a.T)
    assert x.T.shape == (4, 3, 2)
    assert nd.array(5).ndim == 0 and nd.array(5).size == 1
    assert nd.zeros((3, 0)).size == 0


def test_waits_return_self_and_values():
    x = nd.arange(10) * 2
    assert x.wait_to_read() is x
    assert x.wait_to_write() is x
    check(x, np.arange(10) * 2)


def test_scalar_conversions():
    x = nd.array([2.5])
    assert x.item() == 2.5 and isinstance(x.item(), float)
    assert x.asscalar() == 2.5
    assert float(x[0]) == 2.5 and int(x[0]) == 2
    with pytest.raises(TypeError, match="0-dimensional"):  # NumPy 2.4: size 1 is not enough
        float(x)
    assert bool(nd.array([1])) is True and bool(nd.array(0)) is False
    assert isinstance(nd.array(np.int32(3)).item(), int)
    assert nd.array([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert nd.array(7).tolist() == 7
    assert [1, 2, 3][nd.array(1)] == 2  # __index__
    for bad in (nd.array([1, 2]), nd.zeros(0)):
        with pytest.raises(ValueError):
            bad.item()
        with pytest.raises(ValueError, match="ambiguous"):
            bool(bad)
        with pytest.raises((TypeError, ValueError)):
            float(bad)


def test_len_iter():
    a = np.arange(6).reshape(3, 2)
    x = nd.array(a)
    assert len(x) == 3
    rows = list(x)
    assert len(rows) == 3 and all(isinstance(r, nd.NDArray) for r in rows)
    for r, e in zip(rows, a):
        check(r, e)
    assert [v.item() for v in nd.array([4, 5])] == [4, 5]
    with pytest.raises(TypeError):
        len(nd.array(1))
    with pytest.raises(TypeError):
        iter(nd.array(1)).__next__()
    assert list(nd.zeros((0, 2))) == []


def test_array_protocol():
    a = np.arange(6.0).reshape(2, 3)
    x = nd.array(a) * 1
    b = np.asarray(x)
    assert isinstance(b, np.ndarray)
    np.testing.assert_array_equal(b, a)
    np.testing.assert_array_equal(np.asarray(x, dtype=np.int32), a.astype(np.int32))
    assert np.asarray(x, dtype=np.int32).dtype == np.int32
    np.testing.assert_array_equal(np.array(x), a)
    b[0, 0] = 100  # a copy: writing it does not touch x
    assert x.asnumpy()[0, 0] == 0


@pytest.mark.cpu_only
def test_repr_and_str():
    x = nd.array(np.arange(6.0).reshape(2, 3)) + 0.5
    text = repr(x)
    assert text.startswith("NDArray(") and "cpu(0)" in text
    assert "5.5" in text and "0.5" in text
    inner = repr(np.arange(6.0).reshape(2, 3) + 0.5)[len("array("):-1]
    assert inner in text
    assert str(x) == str(np.arange(6.0).reshape(2, 3) + 0.5)
    y = nd.array([1, 2], ctx=nd.cpu(3)).astype(np.int8)
    assert "cpu(3)" in repr(y) and "int8" in repr(y)
    assert "cpu(0)" in repr(nd.array(3.0)) and "3." in repr(nd.array(3.0))


@pytest.mark.cpu_only
def test_repr_html():
    x = nd.array([[1, 2], [3, 4]]) * 10
    html = x._repr_html_()
    assert "<table>" in html and "ctx=cpu(0)" in html and "(2, 2)" in html
    for v in ("10", "20", "30", "40"):
        assert f"<td>{v}</td>" in html
    assert "<table>" in nd.arange(3)._repr_html_()
    assert "7" in nd.array(7)._repr_html_()
    big = nd.zeros((30, 30))._repr_html_()
    assert big.count("<tr>") <= 22 and "…" in big
    assert "0." in nd.zeros((2, 2, 2))._repr_html_()


# ---------------------------------------------------------------- copies and contexts
def test_engine_var_is_shared_by_views():
    x = nd.arange(6)
    assert x[1:].engine_var is x.engine_var
    assert x.copy().engine_var is not x.engine_var


def test_var_method_is_variance():
    run_xp(lambda xp: xp.array(np.arange(6.0)).var(), tol="close")


def test_copy_is_independent():
    x = nd.array([1.0, 2.0])
    y = x.copy()
    assert y._chunk.var is not x._chunk.var
    y += 1
    check(x, [1.0, 2.0])
    check(y, [2.0, 3.0])


@pytest.mark.cpu_only
def test_copyto_context_and_ndarray():
    x = nd.array(np.arange(4.0)) * 2
    y = x.copyto(nd.cpu(1))
    assert y.context == nd.cpu(1) and y is not x
    check(y, np.arange(4.0) * 2)
    z = nd.zeros(4, dtype=np.int32, ctx=nd.cpu(2))
    assert x.copyto(z) is z
    check(z, (np.arange(4.0) * 2).astype(np.int32))  # cast to the target's dtype
    w = nd.zeros(4)
    x.copyto(w)
    x += 1  # ordered after the copy
    check(w, np.arange(4.0) * 2)
    with pytest.raises(ValueError, match=r"\(4,\).*\(3,\)"):
        x.copyto(nd.zeros(3))
    with pytest.raises(TypeError):
        x.copyto("cpu(1)")
    back = y.copyto(nd.cpu(0))
    check(back + x, np.arange(4.0) * 4 + 1)


@pytest.mark.cpu_only
def test_as_in_context():
    x = nd.array([1, 2])
    assert x.as_in_context(nd.cpu(0)) is x
    y = x.as_in_context(nd.cpu(1))
    assert y.context == nd.cpu(1)
    check(y, [1, 2])


@pytest.mark.parametrize("dtype", DTYPES)
def test_astype(dtype):
    a = np.array([-1.5, 0.0, 2.7, 100.0])
    run_xp(lambda xp: xp.array(a).astype(dtype))
    x = nd.array(np.ones(2, dtype))
    assert x.astype(dtype, copy=False) is x
    assert x.astype(dtype) is not x


# ---------------------------------------------------------------- views
def test_reshape_view_shares_memory():
    x = nd.array(np.arange(12.0))
    y = x.reshape(3, 4)
    assert y._chunk.var is x._chunk.var
    y[1, 1] = -1  # writes through the view reach the parent
    expected = np.arange(12.0)
    expected[5] = -1
    check(x, expected)
    x += 1  # and the parent's writes reach the view
    check(y, (expected + 1).reshape(3, 4))
    for shape in ((4, 3), (2, -1), ((2, 6),), (-1,), ((12,),)):
        run_xp(lambda xp: xp.array(np.arange(12)).reshape(*shape))
    check(x.reshape(shape=(6, 2)), (expected + 1).reshape(6, 2))


def test_reshape_copy_when_not_contiguous():
    a = np.arange(12.0).reshape(3, 4)
    x = nd.array(a)
    t = x.T.reshape(12)  # needs a copy
    assert t._chunk.var is not x._chunk.var
    check(t, a.T.reshape(12))
    t[0] = 100
    check(x, a)
    run_xp(lambda xp: xp.array(a)[:, ::2].reshape(-1))
    with pytest.raises(ValueError):
        x.reshape(5)
    run_xp(lambda xp: xp.array(a).reshape(12, order="F"))  # a copy in Fortran order
    run_xp(lambda xp: xp.array(a).T.reshape((2, 6), order="F"))  # a view


def test_transpose_flatten_squeeze_expand_dims():
    a = np.arange(24).reshape(2, 1, 3, 4)
    run_xp(lambda xp: xp.array(a).transpose())
    run_xp(lambda xp: xp.array(a).transpose(3, 0, 2, 1))
    run_xp(lambda xp: xp.array(a).transpose((1, 0, 3, 2)))
    run_xp(lambda xp: xp.array(a).T)
    run_xp(lambda xp: xp.array(a).flatten())
    run_xp(lambda xp: xp.array(a).squeeze())
    run_xp(lambda xp: xp.array(a).squeeze(1))
    run_xp(lambda xp: xp.array(a).squeeze(axis=0))  # both raise: axis 0 has length 2
    run_xp(lambda xp: xp.expand_dims(xp.array(a), 0) if xp is np else xp.array(a).expand_dims(0))
    run_xp(lambda xp: np.expand_dims(a, -1) if xp is np else xp.array(a).expand_dims(-1))
    x = nd.array(a)
    assert x.transpose()._chunk.var is x._chunk.var and x.squeeze()._chunk.var is x._chunk.var
    assert x.expand_dims(0)._chunk.var is x._chunk.var
    f = x.flatten()
    assert f._chunk.var is not x._chunk.var  # always a copy, as in NumPy
    f[0] = 99
    assert x.asnumpy().flat[0] == 0
    tr = x.transpose(3, 0, 2, 1)
    tr[1, 0, 0, 0] = -5  # a transposed view writes through too
    assert x.asnumpy()[0, 0, 0, 1] == -5


# ---------------------------------------------------------------- __setitem__ values
@pytest.mark.parametrize("key", [Ellipsis, 0, (1, 2), slice(None, None, 2), (slice(None), 1),
                                 (Ellipsis, None)])
@pytest.mark.parametrize("kind", ["int", "float", "bool", "numpy", "ndarray", "broadcast",
                                  "list"])
def test_setitem_values(key, kind):
    base = np.arange(12, dtype=np.float32).reshape(3, 4)

    def body(xp):
        x = xp.array(base)
        target_shape = np.asarray(base[key]).shape
        value = {"int": 7, "float": 2.5, "bool": True,
                 "numpy": np.full(target_shape, -3.0),
                 "ndarray": xp.array(np.full(target_shape, 4.5, np.float64)),
                 "broadcast": xp.array(np.arange(target_shape[-1] if target_shape else 1,
                                                 dtype=np.int16)),
                 "list": np.full(target_shape, 9).tolist()}[kind]
        x[key] = value
        return x
    run_xp(body)


def test_setitem_errors():
    x = nd.zeros((2, 3))
    with pytest.raises(ValueError):
        x[0] = nd.ones(4)
    with pytest.raises(ValueError):  # NumPy's: could not convert string to float
        x[0] = "abc"
    with pytest.raises(TypeError):
        x[0] = object()
    i = nd.zeros(2, dtype=np.int32)
    i[0] = 1.7  # setitem casts like NumPy (unsafe)
    i[1] = nd.array(-2.9)
    check(i, np.array([1.7, -2.9]).astype(np.int32))
