"""Module functions, methods and NumPy ufuncs on NDArrays: NumPy's parameters, out=, dtype=,
the ufunc methods, clip's bounds and the power shortcuts, differential against NumPy."""
import inspect
import os
import time

import numpy as np
import pytest

import ndengine as nd
from ndengine.ops import registry
from ndarray_helpers import DTYPES, FLOATS, INTS, raises_anywhere, run_xp

pytestmark = pytest.mark.usefixtures("nd_engine")


def _values(dtype, shape=(2, 3), lo=-5, hi=9):
    dtype = np.dtype(dtype)
    if dtype == bool:
        return (np.arange(np.prod(shape)) % 3 == 0).reshape(shape)
    if dtype.kind == "u":
        lo = 0
    return np.linspace(lo, hi, int(np.prod(shape))).astype(dtype).reshape(shape)


# ------------------------------------------------------------------------------- out=
def test_ufunc_out_is_written_and_returned():
    def body(xp):
        x = xp.array(_values("float64"))
        y = xp.zeros((2, 3))
        results = [xp.exp(x, out=x) is x, xp.add(y, 1, out=y) is y,
                   xp.multiply(x, y, out=(y,)) is y]
        z = xp.zeros((2, 3))
        assert np.exp(x, out=z) is z  # NumPy's ufunc with an NDArray out, via __array_ufunc__
        w = xp.zeros((2, 3), dtype=np.float32)
        assert np.add(x, 1.5, out=(w,)) is w
        assert all(results)
        return [x, y, z, w]
    run_xp(body, tol="close")


def test_ufunc_out_follows_numpy_casting_and_broadcasting():
    def computes_in_input_dtype(xp):  # int8 + int8 wraps, then is cast into float64
        out = xp.zeros(2)
        xp.add(xp.array(np.int8([100, -100])), xp.array(np.int8([100, -100])), out=out)
        return out
    run_xp(computes_in_input_dtype)

    def broadcasts_inputs_to_out(xp):
        out = xp.zeros((2, 3))
        return xp.exp(xp.array([0.0, 1.0, 2.0]), out=out)
    run_xp(broadcasts_inputs_to_out, tol="close")

    def unsafe_cast(xp):
        return xp.exp(xp.array([1.0]), out=xp.zeros(1, dtype=np.int64))
    run_xp(unsafe_cast)

    def smaller_out(xp):
        return xp.add(xp.ones((2, 3)), 1, out=xp.zeros(3))
    run_xp(smaller_out)

    def two_outs(xp):
        out = xp.zeros(3)
        return xp.negative(xp.ones(3), out=(out, out))
    run_xp(two_outs)


def test_ufunc_out_is_a_pushed_write():
    x = nd.array(np.arange(4.0))
    before = x + 0  # pushed before the write: must see the old values
    nd.multiply(x, 10, out=x)
    after = x + 0
    np.testing.assert_array_equal(before.asnumpy(), np.arange(4.0))
    np.testing.assert_array_equal(after.asnumpy(), np.arange(4.0) * 10)


@pytest.mark.parametrize("call", [
    lambda xp, x, o: xp.sum(x, axis=0, out=o), lambda xp, x, o: x.sum(0, out=o),
    lambda xp, x, o: np.sum(x, axis=0, out=o), lambda xp, x, o: xp.mean(x, axis=0, out=o),
    lambda xp, x, o: x.max(axis=0, out=o), lambda xp, x, o: xp.prod(x, 0, None, o),
    lambda xp, x, o: x.std(axis=0, out=o), lambda xp, x, o: x.argmax(axis=0, out=o)])
@pytest.mark.parametrize("out_dtype", ["float64", "int64", "int8", "float32"])
def test_reduction_out(call, out_dtype):
    def body(xp):
        x = xp.array(_values("float64", (3, 4)) * 1.7)
        out = xp.zeros(4, dtype=out_dtype)
        assert call(xp, x, out) is out
        return out
    run_xp(body, tol="close")


def test_reduction_out_accumulates_as_numpy():
    def int8_wraps(xp):
        out = xp.zeros((), dtype=np.int8)
        return xp.sum(xp.ones(128, dtype=np.int8), out=out)
    assert run_xp(int8_wraps) == -128

    def float_into_int(xp):  # NumPy sums in float64, then casts: 5, not 3
        return xp.sum(xp.array([1.7, 1.7, 1.7]), out=xp.zeros((), dtype=np.int64))
    assert run_xp(float_into_int) == 5

    def wrong_ndim(xp):
        return xp.sum(xp.ones((2, 3)), axis=0, out=xp.zeros((1, 3)))
    run_xp(wrong_ndim)


def test_out_of_the_other_functions():
    def body(xp):
        a, b = xp.array(_values("float64")), xp.array(_values("float64") * 2)
        outs = [xp.zeros((4, 3)), xp.zeros((2, 2, 3)), xp.zeros((2, 2)), xp.zeros((2, 3)),
                xp.zeros((2, 3)), xp.zeros((2, 2))]
        results = [xp.concatenate([a, b], out=outs[0]), xp.stack([a, b], 0, outs[1]),
                   xp.dot(a, b.T, out=outs[2]), xp.round(a, 1, out=outs[3]),
                   a.round(out=outs[4]), xp.matmul(a, b.T, out=(outs[5],))]
        assert all(r is o for r, o in zip(results, outs))
        return outs
    run_xp(body, tol="close")

    def dot_wrong_dtype(xp):
        return xp.dot(xp.ones((2, 2)), xp.ones((2, 2)), out=xp.zeros((2, 2), dtype=np.float32))
    run_xp(dot_wrong_dtype)


def test_numpy_functions_reach_the_methods():
    def body(xp):
        x = xp.array(_values("float64") * 1.37)
        out = xp.zeros(3)
        return [np.round(x, 1), np.clip(x, 1, 3), np.clip(x, min=2), np.mean(x, axis=0),
                np.sum(x, 1, np.float32), np.std(x, axis=0, out=out)]
    run_xp(body, tol="close")


def test_a_users_op_keeps_its_parameters():
    from ndengine import ops

    @ops.register("test_scaled_copy", num_inputs=1, kind="unary", replace=True,
                  infer=lambda x, scale=1: [(x.shape, x.dtype)])
    def scaled_copy(inputs, outputs, req, scale=1):
        outputs[0][...] = inputs[0] * scale

    assert nd.test_scaled_copy(nd.array([1.0, 2.0]), scale=3).tolist() == [3.0, 6.0]


# ------------------------------------------------------------------ keywords, signatures
@pytest.mark.parametrize("call", [
    lambda x: nd.exp(x, bogus=5), lambda x: nd.add(x, 1, bogus=5),
    lambda x: nd.sum(x, bogus=5), lambda x: x.sum(bogus=5), lambda x: nd.clip(x, 0, 1, bogus=5),
    lambda x: nd.maximum(x, x, bogus=5), lambda x: nd.where(x > 0, x, 0, bogus=5),
    lambda x: nd.round(x, bogus=5), lambda x: x.clip(0, bogus=5), lambda x: nd.dot(x, x, bogus=5),
    lambda x: nd.concatenate([x, x], bogus=5), lambda x: nd.std(x, bogus=5)])
def test_unknown_keyword_raises_naming_it(call):
    with pytest.raises(TypeError, match="bogus"):
        call(nd.ones(3))


def test_signatures_are_numpys():
    assert str(inspect.signature(nd.exp)) == \
        "(x, /, out=None, *, casting='same_kind', dtype=None)"
    assert str(inspect.signature(nd.add)) == \
        "(x1, x2, /, out=None, *, casting='same_kind', dtype=None)"
    assert str(inspect.signature(nd.ones(1).sum)) == \
        "(axis=None, dtype=None, out=None, keepdims=<no value>, initial=<no value>, " \
        "where=<no value>)"
    for name, function in nd.ndarray.FUNCTIONS.items():
        ours = inspect.signature(function).parameters
        if not hasattr(np, name):
            continue
        numpys = inspect.signature(getattr(np, name)).parameters
        takes_more = any(p.kind is p.VAR_KEYWORD for p in numpys.values())
        for param in ours:
            assert param in numpys or takes_more, (name, param, list(numpys))
            if param in numpys:
                assert ours[param].kind == numpys[param].kind, (name, param)


# ---------------------------------------------------------------------------- dtype=
@pytest.mark.parametrize("name", ["sum", "prod", "mean", "std", "var"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("to", [None, "int8", "uint32", "int64", "float32", "float64"])
def test_reduction_dtype(name, dtype, to):
    def body(xp):
        x = xp.array(_values(dtype, (3, 5), -40, 90))
        return [getattr(xp, name)(x, dtype=to), getattr(x, name)(axis=1, dtype=to)]
    run_xp(body, tol="close")


def test_reduction_dtype_accumulates_in_it():
    def body(xp):
        return [xp.ones(128, dtype=np.int8).sum(dtype=np.int8),
                xp.sum(xp.array(np.full(3, 200, np.uint8)), dtype=np.uint32)]
    run_xp(body)


@pytest.mark.parametrize("name", ["exp", "sqrt", "negative", "add", "multiply", "power",
                                  "less", "maximum", "floor_divide"])
@pytest.mark.parametrize("dtype", ["int8", "uint8", "float32", "float64"])
@pytest.mark.parametrize("to", ["float64", "float32", "int32", "bool"])
def test_ufunc_dtype(name, dtype, to):
    def body(xp):
        x = xp.array(_values(dtype, (2, 3), 1, 9))
        fn = getattr(xp, name)
        return fn(x, dtype=to) if name in ("exp", "sqrt", "negative") else fn(x, x, dtype=to)
    run_xp(body, tol="close")


def test_ufunc_dtype_through_numpy_ufunc():
    def body(xp):
        x = xp.array(np.int8([100, 27]))
        return np.add(x, x, dtype=np.float64)
    assert run_xp(body).tolist() == [200.0, 54.0]


# ------------------------------------------------------------------------ ufunc methods
def test_ufunc_at_writes_in_place_in_order():
    def body(xp):
        x = xp.zeros(5)
        index = np.array([0, 0, 1, 4, 4, 4])
        before = x + 0
        np.add.at(x, index, 1)
        index[:] = 2  # NumPy used the index as it was at the call
        np.multiply.at(x, [4], xp.array([3.0]))
        np.negative.at(x, (slice(0, 2),))
        return [before, x]
    run_xp(body)


def test_ufunc_at_snapshots_an_ndarray_index_and_checks_at_the_call():
    x = nd.zeros(4, dtype=np.int64)
    index = nd.array([1, 1, 3])
    np.add.at(x, index, 5)
    index[:] = 0
    assert x.tolist() == [0, 10, 0, 5]
    with pytest.raises(IndexError):
        np.add.at(x, [9], 1)


def test_ufunc_at_casts_values_as_numpy():
    def body(xp):
        x = xp.zeros(4, dtype=np.int8)
        np.add.at(x, [0, 0], 1.5)
        np.add.at(x, [1], xp.array([2.7]))
        np.subtract.at(x, [2, 3], xp.array([200, 3], dtype=np.int16))
        return x
    run_xp(body)


def test_ufunc_at_into_a_numpy_target():
    target = np.zeros(3)
    np.add.at(target, [0, 0], nd.array([1.0, 2.0]))
    assert target.tolist() == [3.0, 0.0, 0.0]


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int64", "float32", "float64", "bool"])
def test_ufunc_reduce_accumulate_outer_reduceat(dtype):
    def body(xp):
        x = xp.array(_values(dtype, (3, 4), -20, 50))
        return [np.add.reduce(x), np.add.reduce(x, axis=1, keepdims=True),
                np.multiply.reduce(x, axis=None), np.maximum.reduce(x, axis=(0, 1)),
                np.add.reduce(x, axis=0, dtype=np.float64), np.add.reduce(x, initial=5),
                np.add.accumulate(x), np.multiply.accumulate(x, axis=1),
                np.subtract.outer(x[0], x[:, 1]), np.add.outer(x[0], 2),
                np.add.reduceat(x, [0, 2, 1], axis=1), np.maximum.reduceat(x, [0, 2])]
    run_xp(body, tol="close")


def test_ufunc_methods_out_and_errors():
    def reduce_out(xp):
        out = xp.zeros(4, dtype=np.int8)
        assert np.add.reduce(xp.array(np.full((3, 4), 100, np.int8)), out=out) is out
        return out
    run_xp(reduce_out)

    def empty_without_identity(xp):
        return np.maximum.reduce(xp.zeros((0, 3)))
    run_xp(empty_without_identity)

    def bad_axis(xp):
        return np.add.accumulate(xp.ones((2, 2)), axis=2)
    run_xp(bad_axis)

    def bad_indices(xp):
        return np.add.reduceat(xp.ones(4), [0, 7])
    run_xp(bad_indices)


def test_ufunc_methods_of_numpy_ufuncs_run_ndengines_kernels():
    x, i, values = nd.ones(3), nd.array([4, 6, 8]), np.array([4, 6, 8])
    np.ldexp.at(x, [0], 1)
    np.testing.assert_array_equal(x.asnumpy(), [2.0, 1.0, 1.0])
    assert int(np.gcd.reduce(i)) == np.gcd.reduce(values)
    np.testing.assert_array_equal(np.lcm.accumulate(i).asnumpy(), np.lcm.accumulate(values))
    with pytest.raises(TypeError, match="where"):  # an argument ndengine does not take
        np.add.reduce(x, where=True)


def test_numpy_ufunc_with_other_kwargs_into_ndarray_raises():
    x = nd.ones(3)
    with pytest.raises(TypeError, match="where"):
        np.exp(x, out=nd.zeros(3), where=np.array([True, False, True]))


# -------------------------------------------------------------------------------- clip
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "float32", "float64"])
def test_clip_keywords_and_array_bounds(dtype):
    def body(xp):
        x = xp.array(_values(dtype, (2, 4), -20, 60))
        low = xp.array(_values(dtype, (4,), 0, 10))
        return [xp.clip(x, min=3), xp.clip(x, max=7), xp.clip(x, min=2, max=30),
                xp.clip(x, low, 40), xp.clip(x, [[1], [5]], None), xp.clip(x, None, low),
                x.clip(min=3), x.clip(max=low), x.clip(2, 30), x.clip(low),
                xp.clip(x, np.array([1], np.int16), 9), xp.clip(x, 1.5, 4),
                xp.clip(x, low, xp.array([[50], [9]])), xp.clip(x, 2, 30, dtype=np.float64)]
    run_xp(body)


def test_clip_out_and_argument_errors():
    def body(xp):
        x = xp.array([0.0, 5.0, 9.0])
        out = xp.zeros(3)
        assert xp.clip(x, xp.array([1.0, 6.0, 2.0]), 8, out=out) is out
        return out
    run_xp(body)
    run_xp(lambda xp: xp.clip(xp.ones(3), 1, min=2))
    run_xp(lambda xp: xp.clip(xp.ones(3), 1, 2, min=0))
    run_xp(lambda xp: xp.clip(xp.ones(3), xp.ones(4), 2))


# ------------------------------------------------------------------------------- power
_SPECIAL = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, -2.5, 1e-30, 3e30])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("exponent", [2, 0.5, -1, 1, 0, 2.0, -1.0, 0.0, 3, -0.5, 1.7])
@pytest.mark.parametrize("size", [9, 70_000])
def test_power_is_bit_identical_to_numpy(dtype, exponent, size):
    values = np.random.default_rng(size).standard_normal(size) * 30
    values[:len(_SPECIAL)] = _SPECIAL
    x = values.astype(dtype)
    with np.errstate(all="ignore"):
        expected = {"op": x ** exponent, "ufunc": np.power(x, exponent)}
    got = {"op": nd.array(x) ** exponent, "ufunc": nd.power(nd.array(x), exponent)}
    got_numpy_ufunc = np.power(nd.array(x), exponent)
    for key, value in [*got.items(), ("numpy ufunc", got_numpy_ufunc)]:
        want = expected["ufunc" if key != "op" else "op"]
        value = value.asnumpy()
        assert value.dtype == want.dtype, key
        assert value.tobytes() == want.tobytes(), (key, value[:8], want[:8])


@pytest.mark.parametrize("dtype", FLOATS)
def test_power_with_array_exponents_is_bit_identical(dtype):
    rng = np.random.default_rng(1)
    x = (rng.random(1000) * 5).astype(dtype)
    y = (rng.standard_normal(1000) * 3).astype(dtype)
    with np.errstate(all="ignore"):
        assert (nd.array(x) ** nd.array(y)).asnumpy().tobytes() == (x ** y).tobytes()
        assert (2.5 ** nd.array(y)).asnumpy().tobytes() == (2.5 ** y).tobytes()
        column = y[:10].reshape(10, 1)
        want = np.power(x[:30].reshape(1, 30), column)
        got = nd.power(nd.array(x[:30].reshape(1, 30)), nd.array(column)).asnumpy()
        assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("exponent", [2, 1, 0, 3, -1, 0.5])
def test_power_operator_dtypes(dtype, exponent):
    run_xp(lambda xp: xp.array(_values(dtype, (5,), 1, 6)) ** exponent, tol="close")


def test_negative_int_exponent_still_raises():
    raises_anywhere(ValueError, lambda: nd.array(np.arange(3)) ** -1)


# --------------------------------------------------------------------- fork safety
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_registry_lock_is_fresh_in_a_forked_child():
    lock = registry._registry_lock
    lock.acquire()  # as if another thread held it while this one forks
    try:
        pid = os.fork()
        if pid == 0:  # the child: register one op, then leave at once
            try:
                registry.add_operator(registry.Operator("fork_probe", infer=None))
                os._exit(0)
            except BaseException:  # noqa: B902
                os._exit(1)
    finally:
        lock.release()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.05)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    pytest.fail("the forked child hung on the registry lock")
