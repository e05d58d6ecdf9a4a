"""divmod, fix, nan_to_num, isclose, allclose, array_equal, the shift and divmod operators,
NumPy's ufuncs (and their methods) on NDArrays, and large arrays; differential against
NumPy (the ufuncs' gradients: tests/autograd/test_autograd_rules.py)."""
import operator

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import ndengine as nd
from ndengine.ops.runtime import parallel
from ndarray_helpers import DTYPES, INTS, python_scalars, run_xp, shapes, values

pytestmark = pytest.mark.usefixtures("nd_engine")

dtypes = st.sampled_from(DTYPES)


# ------------------------------------------------------------------------- divmod
@given(data=st.data())
def test_divmod_function_and_operator(data):
    a_shape, b_shape = data.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=4)).input_shapes
    a = data.draw(values(data.draw(dtypes), a_shape))
    b = data.draw(values(data.draw(dtypes), b_shape))
    s = data.draw(python_scalars())
    run_xp(lambda xp: xp.divmod(xp.array(a), xp.array(b)))
    run_xp(lambda xp: divmod(xp.array(a), xp.array(b)))
    run_xp(lambda xp: divmod(xp.array(a), s))
    run_xp(lambda xp: divmod(s, xp.array(b)))


def test_divmod_out_and_errors():
    x, y = np.array([7, -7, 5, 0], np.int32), np.array([2, 3, 0, -4], np.int32)

    def into_both(xp):
        q, r = xp.zeros(4, dtype=np.int64), xp.zeros((2, 4))
        got = xp.divmod(xp.array(x), xp.array(y), out=(q, r))
        assert got[0] is q and got[1] is r
        return [q, r]

    def into_one(xp):
        r = xp.zeros(4)
        q, r2 = xp.divmod(xp.array(x), 3, out=(None, r))
        assert r2 is r
        return [q, r]

    def into_its_input(xp):
        a = xp.array(x)
        xp.divmod(a, xp.array(y), out=(a, None))  # both results come from a's old values
        return a

    run_xp(into_both)
    run_xp(into_one)
    run_xp(into_its_input)
    run_xp(lambda xp: xp.divmod(xp.array(x), 2, dtype=np.float64))
    run_xp(lambda xp: xp.divmod(xp.array(x), 2, out=(xp.zeros(4, dtype=np.int8), None)))
    run_xp(lambda xp: xp.divmod(xp.array(x), 2, out=(xp.zeros(3, dtype=np.int64), None)))
    run_xp(lambda xp: xp.divmod(xp.array(x), 2, out=(xp.zeros(4, dtype=np.int64),)))
    run_xp(lambda xp: xp.divmod(xp.array(x.astype(np.float32)), 2,
                                out=(None, xp.zeros(4, dtype=np.int32))))
    run_xp(lambda xp: xp.divmod(xp.array(x), 2 ** 40))  # int32 meets 2**40: OverflowError
    run_xp(lambda xp: xp.divmod(xp.array(x), xp.ones(3)))


# ---------------------------------------------------------------- shift operators
@given(data=st.data(), in_place=st.booleans())
@pytest.mark.parametrize("op", ["<<", ">>"])
def test_shift_operators(op, data, in_place):
    forward = {"<<": operator.lshift, ">>": operator.rshift}[op]
    fn = {"<<": operator.ilshift, ">>": operator.irshift}[op] if in_place else forward
    a = data.draw(values(data.draw(st.sampled_from(INTS + DTYPES[:1])), data.draw(shapes())))
    b = data.draw(st.one_of(st.integers(-3, 70), values(data.draw(dtypes),
                                                        data.draw(shapes(max_dims=1)))))
    run_xp(lambda xp: fn(xp.array(a), b if isinstance(b, int) else xp.array(b)))
    if isinstance(b, int):
        run_xp(lambda xp: forward(b, xp.array(a)))  # reflected


@pytest.mark.parametrize("fn", [operator.irshift, operator.iadd, operator.isub])
def test_in_place_cast_is_checked_before_broadcasting(fn):
    # NumPy's order for a ufunc with out=: the result dtype (int16) must cast to the
    # target's (uint8) before the shapes ((2,) and (0,)) are looked at
    a, b = np.array([1, 2], np.uint8), np.array([], np.int8)
    run_xp(lambda xp: fn(xp.array(a), xp.array(b)))
    run_xp(lambda xp: fn(xp.array(a), xp.array(np.array([1, 2, 3], np.int8))))
    run_xp(lambda xp: fn(xp.array(a), xp.array(np.array([1, 2, 3], np.uint8))))  # shape error


# ------------------------------------------------------------------------------ fix
def test_fix():
    x = np.array([2.1, 2.9, -2.1, -2.9, -0.5, np.nan, np.inf, -0.0])
    run_xp(lambda xp: xp.fix(xp.array(x)))
    for dtype in DTYPES:
        run_xp(lambda xp: xp.fix(xp.array(np.array([1, 0, 3], dtype))))
    run_xp(lambda xp: xp.fix(3.5))
    run_xp(lambda xp: xp.fix(-3))

    def into_out(xp):
        out = xp.zeros((2, 8))
        assert xp.fix(xp.array(x), out) is out
        return out
    run_xp(into_out)
    run_xp(lambda xp: xp.fix(xp.array(x), out=xp.zeros(8, dtype=np.int64)))  # same_kind
    with pytest.raises(TypeError):
        nd.fix(nd.array(x), dtype=np.float32)  # numpy.fix takes no dtype


# ----------------------------------------------------------------------- nan_to_num
@given(data=st.data())
def test_nan_to_num(data):
    dtype = data.draw(dtypes)
    x = data.draw(values(dtype, data.draw(shapes())))
    replacement = st.one_of(st.none(), python_scalars())
    nan, posinf, neginf = (data.draw(st.one_of(python_scalars(), st.just(0.0))),
                           data.draw(replacement), data.draw(replacement))
    run_xp(lambda xp: xp.nan_to_num(xp.array(x), nan=nan, posinf=posinf, neginf=neginf))

    def in_place(xp):
        a = xp.array(x)
        got = xp.nan_to_num(a, copy=False, nan=nan, posinf=posinf, neginf=neginf)
        assert got is a or (xp is np and a.ndim == 0)  # NumPy: a 0-d array gives a scalar
        return a
    run_xp(in_place)


def test_nan_to_num_copies_and_errors():
    x = np.array([np.inf, -np.inf, np.nan, -128, 128], np.float32)

    def copy(xp):
        a = xp.array(x)
        b = xp.nan_to_num(a)
        return [a, b]

    def ints_copy(xp):
        a = xp.array([1, 2])
        b = xp.nan_to_num(a)
        assert b is not a
        b += 1
        return [a, b]

    run_xp(copy)
    run_xp(ints_copy)
    run_xp(lambda xp: xp.nan_to_num(np.nan))
    run_xp(lambda xp: xp.nan_to_num(xp.array(x), nan="a"))
    run_xp(lambda xp: xp.nan_to_num(xp.array(x), posinf=None, neginf=1j))
    run_xp(lambda xp: xp.nan_to_num(xp.array(x), nan=10 ** 400))
    run_xp(lambda xp: xp.nan_to_num([1.0, np.nan], copy=False))  # NumPy's ValueError
    a = nd.array(x)
    assert nd.nan_to_num(a, copy=None) is a  # no copy needed: in place, as NumPy
    np.testing.assert_array_equal(a.asnumpy(), np.nan_to_num(x))
    with pytest.raises(TypeError):  # NumPy would write into the NumPy array
        nd.nan_to_num(x.copy(), copy=False)


# ----------------------------------------------------------- isclose and friends
@given(data=st.data(), equal_nan=st.booleans())
def test_isclose_allclose_array_equal(data, equal_nan):
    a_shape, b_shape = data.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=4)).input_shapes
    a = data.draw(values(data.draw(dtypes), a_shape))
    if data.draw(st.booleans()):
        b_shape = a_shape
    b = data.draw(values(data.draw(dtypes), b_shape))
    if data.draw(st.booleans()) and a.shape == b.shape:
        with np.errstate(invalid="ignore"):  # inf/nan cast to an int dtype: NumPy's value
            b = (a * (1 + 1e-9)).astype(b.dtype) if a.dtype.kind == "f" else a.copy()
    rtol, atol = data.draw(st.sampled_from([(1e-5, 1e-8), (0.0, 0.0), (1e-3, 1), (2, 0)]))
    run_xp(lambda xp: xp.isclose(xp.array(a), xp.array(b), rtol, atol, equal_nan=equal_nan))
    s = data.draw(python_scalars())
    run_xp(lambda xp: xp.isclose(xp.array(a), s, atol=atol, equal_nan=equal_nan))
    assert_same_bool(lambda xp: xp.allclose(xp.array(a), xp.array(b), rtol, atol, equal_nan))
    assert_same_bool(lambda xp: xp.array_equal(xp.array(a), xp.array(b), equal_nan))
    assert_same_bool(lambda xp: xp.array_equal(xp.array(a), xp.array(a), equal_nan=equal_nan))


def assert_same_bool(body):
    """allclose and array_equal return Python bools (ndengine waits for them): the same, or
    the same kind of error."""
    try:
        expected = body(np)
    except Exception as exc:  # noqa: BLE001 - the oracle's error is the expectation
        with pytest.raises(type(exc)):
            body(nd)
        return
    got = body(nd)
    assert type(got) is bool and got == expected, (got, expected)


def test_isclose_errors_and_lists():
    run_xp(lambda xp: xp.isclose(xp.ones(3), xp.ones(2)))
    run_xp(lambda xp: xp.isclose([1.0, 2.0], [1.0, 2.1], atol=xp.array([0.0, 0.2])))
    run_xp(lambda xp: xp.isclose(xp.ones(3), 10 ** 400))
    assert_same_bool(lambda xp: xp.allclose(xp.ones(3), xp.ones(2)))
    assert_same_bool(lambda xp: xp.array_equal(xp.ones(3), xp.ones(2)))  # False, no error
    assert_same_bool(lambda xp: xp.array_equal([1, 2], [1, 2]))
    assert_same_bool(lambda xp: xp.array_equal([1, 2], [[1, 2]]))


# ----------------------------------------------------- NumPy's ufuncs on NDArrays
def test_numpy_ufuncs_are_pushed_ops():
    x, y = nd.array([1.5, -2.0, 3.0]), nd.array([2.0, 2.0, -1.0])
    for ufunc in (np.hypot, np.arctan2, np.fmod, np.logaddexp, np.copysign, np.fmax,
                  np.heaviside, np.float_power, np.logical_xor, np.nextafter):
        got = ufunc(x, y)
        assert isinstance(got, nd.NDArray), ufunc
        np.testing.assert_array_equal(got.asnumpy(), ufunc(x.asnumpy(), y.asnumpy()))
    for ufunc in (np.log2, np.cbrt, np.signbit, np.isfinite, np.trunc, np.degrees,
                  np.conjugate, np.bitwise_not, np.absolute):
        if ufunc is np.bitwise_not:
            x = nd.array([1, -2, 3])
        assert isinstance(ufunc(x), nd.NDArray), ufunc
    q, r = np.divmod(x, 2)
    assert isinstance(q, nd.NDArray) and isinstance(r, nd.NDArray)
    out = nd.zeros(3)
    assert np.divmod(x, 2, out=(None, out))[1] is out
    np.testing.assert_array_equal(out.asnumpy(), np.array([1, 0, 1]))


def test_ufunc_methods_of_the_new_ufuncs():
    def body(xp):
        x = xp.array(np.array([1.5, -2.0, 3.0, 0.5]))
        i = xp.array(np.array([5, 12, -7, 3]))
        return [np.hypot.reduce(x), np.logaddexp.accumulate(x), np.fmax.outer(x, x),
                np.arctan2.reduce(x), np.left_shift.accumulate(i % 4)]
    run_xp(body, tol="close")

    def at(xp):
        x = xp.array(np.array([5.0, -7.0, 3.0]))
        np.fmod.at(x, [0, 1, 0], 2)
        return x
    run_xp(at)


# --------------------------------------------------------------- large arrays
LARGE = parallel.PARALLEL_MIN_SIZE + 1027


@pytest.mark.parametrize("name", ["arctan2", "logaddexp", "hypot", "fmod", "left_shift",
                                  "logical_and", "float_power", "copysign"])
def test_large_arrays_split_over_the_cores(name):
    rng = np.random.default_rng(3)
    dtype = np.int32 if name == "left_shift" else np.float32
    x = (rng.standard_normal(LARGE) * 40).astype(dtype)
    y = (rng.standard_normal(LARGE) * 3).astype(dtype)
    fn = getattr(nd, name)
    with np.errstate(all="ignore"):
        for args, expected in (((x, y), getattr(np, name)(x, y)),
                               ((x, y[7]), getattr(np, name)(x, y[7])),
                               ((x[3], y), getattr(np, name)(x[3], y))):
            got = fn(*[nd.array(a) if isinstance(a, np.ndarray) else a for a in args])
            np.testing.assert_array_equal(got.asnumpy(), expected, err_msg=name)
        q, r = nd.divmod(nd.array(x), nd.array(y))
        np.testing.assert_array_equal(q.asnumpy(), np.floor_divide(x, y))
        np.testing.assert_array_equal(r.asnumpy(), np.remainder(x, y))


# ------------------------------------------------------------------ isposinf / isneginf
@given(data=st.data())
@pytest.mark.parametrize("name", ["isposinf", "isneginf"])
def test_signed_infinities(name, data):
    x = data.draw(values(data.draw(dtypes), data.draw(shapes())))
    run_xp(lambda xp: getattr(xp, name)(xp.array(x)))
    special = np.array([np.inf, -np.inf, 0.0, -0.0, np.nan, -np.nan, 1e308, -5.0])
    run_xp(lambda xp: getattr(xp, name)(xp.array(special)))

    def into_out(xp):
        out = xp.ones(special.shape, dtype=bool)
        assert getattr(xp, name)(xp.array(special), out=out) is out
        return out
    run_xp(into_out)
