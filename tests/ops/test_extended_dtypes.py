"""float16, complex64 and complex128, differential against NumPy: every op that computes them
(``Operator.extended_dtypes``: NumPy's own loops and functions) over generated shapes,
broadcasting, values (NaN, inf, signed zeros) and Python complex scalars; every op that does
not yet refuses them at the call with a TypeError naming the op and the dtype."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import ndengine as nd
from ndengine import ops
from ndarray_helpers import EXTENDED, REAL_DTYPES as DTYPES, run_xp, shapes, values

pytestmark = pytest.mark.usefixtures("nd_engine")

ELEMENTWISE = sorted(name for name in ops.names()
                     if ops.get(name).kind in ("unary", "binary") and hasattr(np, name))
COMPUTED = [name for name in ELEMENTWISE if ops.get(name).extended_dtypes]
REFUSED = [name for name in ELEMENTWISE if not ops.get(name).extended_dtypes]
extended = st.sampled_from(EXTENDED)
any_dtype = st.sampled_from(EXTENDED + DTYPES)


def test_the_arithmetic_and_math_ufuncs_compute_them():
    for name in ("add", "subtract", "multiply", "true_divide", "negative", "absolute", "sqrt",
                 "exp", "log", "sin", "cos", "tanh", "square", "equal", "less", "maximum",
                 "isnan", "isfinite", "conjugate", "sign", "floor", "rint", "arctan2", "hypot"):
        assert name not in ELEMENTWISE or name in COMPUTED, name


@given(data=st.data())
@pytest.mark.parametrize("name", [n for n in COMPUTED if ops.get(n).kind == "unary"])
def test_unary(name, data):
    x = data.draw(values(data.draw(extended), data.draw(shapes())))
    run_xp(lambda xp, x: getattr(xp, name)(xp.array(x)), x)


@given(data=st.data())
@pytest.mark.parametrize("name", [n for n in COMPUTED if ops.get(n).kind == "binary"])
def test_binary_broadcasting(name, data):
    a_shape, b_shape = data.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=4)).input_shapes
    first = data.draw(extended)
    a = data.draw(values(first, a_shape))
    b = data.draw(values(data.draw(st.sampled_from([first, first] + EXTENDED + DTYPES)),
                         b_shape))
    if data.draw(st.booleans()):
        a, b = b, a
    # which zero of (0.0, -0.0) maximum & co. return differs between NumPy's own loops, and
    # so do the last bits of complex products (its SIMD loops fuse multiply-adds, its scalar
    # loops do not: (c+ci)*(c+ci) has the real part 0 in one, -8e-22 in the other)
    complex_result = "c" in (a.dtype.kind, b.dtype.kind)
    run_xp(lambda xp, a, b: getattr(xp, name)(xp.array(a), xp.array(b)), a, b,
           tol="close" if complex_result else "exact",
           zero_sign=name not in ("maximum", "minimum", "fmax", "fmin"))


@given(data=st.data())
@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "true_divide", "power",
                                  "equal", "not_equal"])
def test_python_complex_and_float_scalars_are_weak(name, data):
    x = data.draw(values(data.draw(any_dtype), data.draw(shapes()), finite=True, hi=1e3))
    scalar = data.draw(st.one_of(st.complex_numbers(max_magnitude=1e3), st.floats(-1e3, 1e3)))
    run_xp(lambda xp, x: getattr(xp, name)(xp.array(x), scalar), x)
    run_xp(lambda xp, x: getattr(xp, name)(scalar, xp.array(x)), x)


@pytest.mark.parametrize("name", REFUSED)
def test_the_others_refuse_them_at_the_call(name):
    arity = ops.get(name).num_inputs
    for dtype in EXTENDED:
        x = nd.zeros(3, dtype=dtype)
        with pytest.raises(TypeError, match=f"{name} does not support dtype {dtype}|"
                                            f"not supported for the input types"):
            getattr(nd, name)(*[x] * arity)


REDUCTIONS = ["sum", "prod", "mean", "std", "var", "max", "min", "argmax", "argmin",
              "cumsum", "cumprod", "any", "all", "count_nonzero", "nansum", "nanmean"]


@given(data=st.data())
@pytest.mark.parametrize("name", REDUCTIONS)
def test_reductions(name, data):
    dtype = data.draw(extended)
    x = data.draw(values(dtype, data.draw(shapes(min_dims=1, min_side=1)), finite=True,
                         hi=100))
    axis = data.draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1)))
    close = "close" if name in ("sum", "prod", "mean", "std", "var", "cumsum", "cumprod",
                                "nansum", "nanmean") else "exact"
    run_xp(lambda xp, x: getattr(xp, name)(xp.array(x), axis=axis), x, tol=close)


@given(data=st.data())
def test_moving_indexing_sorting_and_casting(data):
    dtype = data.draw(extended)
    x = data.draw(values(dtype, (3, 4), finite=True, hi=100))
    y = data.draw(values(data.draw(any_dtype), (3, 4), finite=True, hi=100))
    run_xp(lambda xp, x, y: xp.concatenate([xp.array(x), xp.array(y)]), x, y)
    run_xp(lambda xp, x: xp.stack([xp.array(x), xp.array(x)], axis=1), x)
    run_xp(lambda xp, x: xp.array(x).T.reshape(2, 6)[1, ::2], x)
    run_xp(lambda xp, x: xp.take(xp.array(x), [2, 0], axis=1), x)
    run_xp(lambda xp, x: xp.sort(xp.array(x), axis=0), x)
    run_xp(lambda xp, x: xp.argsort(xp.array(x), axis=1, kind="stable"), x)
    run_xp(lambda xp, x: xp.where(xp.array(x) != 0, xp.array(x), 1j), x)
    run_xp(lambda xp, x: xp.flip(xp.roll(xp.array(x), 1, axis=1), axis=0), x)
    for target in EXTENDED + [np.dtype("float64"), np.dtype("int32")]:
        if not (dtype.kind == "c" and target.kind != "c"):  # NumPy warns: imaginary dropped
            run_xp(lambda xp, x: xp.array(x).astype(target), x)

    def assign(xp, x, y):
        a = xp.array(x)
        a[1:, ::2] = xp.array(y)[:2, :2]
        a[0] += 1j if dtype.kind == "c" else 1
        return a
    if not (dtype.kind != "c" and y.dtype.kind == "c"):
        run_xp(assign, x, y)


@given(data=st.data())
def test_matmul_and_linalg(data):
    dtype = data.draw(st.sampled_from(EXTENDED[1:]))  # NumPy's linalg has no float16
    a = data.draw(values(dtype, (3, 3), finite=True, hi=10)) + 4 * np.eye(3, dtype=dtype)
    b = data.draw(values(dtype, (3, 2), finite=True, hi=10))
    run_xp(lambda xp, a, b: xp.array(a) @ xp.array(b), a, b, tol="close")
    run_xp(lambda xp, a, b: xp.dot(xp.array(a), xp.array(b)), a, b, tol="close")
    run_xp(lambda xp, a: xp.linalg.norm(xp.array(a)), a, tol="close")
    run_xp(lambda xp, a: xp.linalg.det(xp.array(a)), a, tol="close")
    hermitian = a + a.conj().T
    run_xp(lambda xp, h: xp.linalg.eigvalsh(xp.array(h)), hermitian, tol="close")


@pytest.mark.cpu_only
def test_printing_and_scalars():
    values = np.array([1 + 2j, -0.5j], dtype=np.complex64)
    z = nd.array(values)
    assert str(z) == str(values)
    assert repr(z) == repr(values).replace("array(", "NDArray(").replace(
        "dtype=complex64)", "dtype=complex64, ctx=cpu(0))")
    assert nd.sum(z).item() == complex(np.sum(values))
    h = nd.array([0.1, 65504], dtype=np.float16)
    assert str(h) == str(np.array([0.1, 65504], dtype=np.float16))
    with np.errstate(over="ignore"):
        assert (h * 2).asnumpy()[1] == np.inf  # float16 overflow, as NumPy's


@pytest.mark.parametrize("dtype", EXTENDED)
def test_chains_on_large_arrays_run_op_by_op_in_the_window(dtype):
    """Fusion does not take float16 or complex (NumPy's loops compute them): the lazy window
    runs their ops one by one, with NumPy's results."""
    n = 1 << 18
    x = (np.arange(n) % 7).astype(dtype) / 3
    if dtype.kind == "c":
        x = x * (1 - 2j)
    a = nd.array(x)
    got = ((a * 2 + 1) * a - a / 4).asnumpy()
    np.testing.assert_array_equal(got, (x * 2 + 1) * x - x / 4, strict=True)


@given(data=st.data())
def test_complex_parts_are_views_and_functions(data):
    dtype = data.draw(st.sampled_from(EXTENDED + DTYPES))
    x = data.draw(values(dtype, data.draw(shapes()), finite=True, hi=1e3))
    for name in ("real", "imag", "iscomplex", "isreal"):
        run_xp(lambda xp, x: getattr(xp, name)(xp.array(x)), x)
    run_xp(lambda xp, x: xp.array(x).real, x)
    run_xp(lambda xp, x: xp.array(x).conj(), x)
    run_xp(lambda xp, x: xp.angle(xp.array(x), deg=True), x, tol="close")
    assert nd.iscomplexobj(nd.array(x)) == np.iscomplexobj(x)
    assert nd.isrealobj(nd.array(x)) == np.isrealobj(x)

    def write_parts(xp, x):
        a = xp.array(x)
        a.real = 2
        if dtype.kind == "c":
            a.imag[...] = a.real + 1
        return a
    run_xp(write_parts, x)


def test_complex_of_a_0d_array_only():
    assert complex(nd.array(1.5 - 2j)) == 1.5 - 2j
    assert complex(nd.array(3)) == 3 + 0j
    with pytest.raises(TypeError, match="0-dimensional"):
        complex(nd.array([1j]))
    with pytest.raises(TypeError, match="imaginary part"):
        nd.array([1.0]).imag = 2


@pytest.mark.parametrize("name", ["mean", "std", "var", "nanmean", "nanstd", "nanvar"])
def test_float16_statistics_compute_in_float32_as_numpys(name):
    """NumPy computes a float16 mean/std/var in float32 (without out=): 683 three times has
    the mean 683.0, where float16 accumulation would give 682.5 (or overflow)."""
    for values in ([683.0] * 3, [2.184e4] * 3, [0.1, 0.2, 65000.0, -65000.0]):
        x = np.array(values, np.float16)
        run_xp(lambda xp: getattr(xp, name)(xp.array(x)))
        run_xp(lambda xp: getattr(xp, name)(xp.array(np.stack([x, x])), axis=1))
