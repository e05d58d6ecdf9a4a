"""sinc, ediff1d, trapezoid, geomspace, vander, cross (compositions of pushed ops) and
convolve, correlate, interp, cov, corrcoef, gradient, unravel_index, ravel_multi_index
(NumPy-run ops) against NumPy: one body run with xp=numpy and xp=ndengine; NumPy's
signatures, values, dtypes and errors."""
import inspect
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import ndengine as nd
from ndengine import autograd

from ndarray_helpers import run_xp
from stats_helpers import arrays_of

pytestmark = pytest.mark.usefixtures("nd_engine")

COMPOSED = ["sinc", "ediff1d", "trapezoid", "geomspace", "vander", "cross"]
NUMPY_RUN = ["convolve", "correlate", "interp", "cov", "corrcoef", "gradient",
             "unravel_index", "ravel_multi_index"]
NUMERIC = [np.dtype(d) for d in ("bool", "int8", "uint8", "int64", "float32", "float64")]
REAL = [np.dtype(d) for d in ("int16", "int64", "float32", "float64")]


@pytest.mark.parametrize("name", COMPOSED + NUMPY_RUN)
def test_signature_is_numpys(name):
    assert inspect.signature(getattr(nd, name)) == inspect.signature(getattr(np, name))
    assert name in nd.__all__


# ---------------------------------------------------------------- compositions
@given(a=arrays_of(NUMERIC, lo=-4, hi=4))
def test_sinc(a):
    run_xp(lambda xp: xp.sinc(xp.array(a)), tol="close")


def test_sinc_of_zero_and_scalars():
    run_xp(lambda xp: xp.sinc(xp.array([0.0, -0.0, 1.0, 0.5], dtype=xp.float32)), tol="close")
    run_xp(lambda xp: xp.sinc(0), tol="close")


@given(a=arrays_of(NUMERIC, lo=-9, hi=9), data=st.data())
def test_ediff1d(a, data):
    begin = data.draw(st.sampled_from([None, -1, 2.5, [7, 8], np.array([1], np.uint8)]))
    end = data.draw(st.sampled_from([None, 3, [True]]))
    run_xp(lambda xp: xp.ediff1d(xp.array(a), to_end=end, to_begin=begin))


def test_ediff1d_refuses_an_unsafe_edge():
    run_xp(lambda xp: xp.ediff1d(xp.array([1, 2, 4]), to_begin=0.5))
    run_xp(lambda xp: xp.ediff1d(xp.array([1.0, 2.0]), to_end=xp.array([1j])))


@given(y=arrays_of(REAL, min_dims=1, max_dims=3, lo=-9, hi=9), data=st.data())
def test_trapezoid(y, data):
    axis = data.draw(st.integers(-y.ndim, y.ndim - 1))
    dx = data.draw(st.sampled_from([1.0, 0.5, 3]))
    run_xp(lambda xp: xp.trapezoid(xp.array(y), dx=dx, axis=axis), tol="close")
    x = np.cumsum(np.arange(1.0, y.shape[axis] + 1))
    run_xp(lambda xp: xp.trapezoid(xp.array(y), x=xp.array(x), axis=axis), tol="close")


def test_trapezoid_with_a_grid_of_x():
    y = np.arange(12.0).reshape(3, 4) ** 2
    run_xp(lambda xp: xp.trapezoid(xp.array(y), x=xp.array(y / 3), axis=0), tol="close")
    run_xp(lambda xp: xp.trapezoid(xp.array(y), axis=2))


@pytest.mark.parametrize("start, stop, kwargs", [
    (1, 1000, {"num": 4}), (-1, -1000, {"num": 4, "endpoint": False}),
    (1, 256, {"num": 9, "dtype": int}), (2.0, 0.5, {"num": 5, "dtype": "float32"}),
    ([1.0, 2.0], [10.0, -3.0], {"num": 3, "axis": 1}), ([1.0, -2.0], 8.0, {"num": 0}),
    (0, 10, {}), (1, [3, 0], {}), (1, 10, {"num": -1}), (1, 10, {"num": 3, "axis": 2})])
def test_geomspace(start, stop, kwargs):
    run_xp(lambda xp: xp.geomspace(xp.array(start), xp.array(stop), **kwargs), tol="close")
    run_xp(lambda xp: xp.geomspace(start, stop, **kwargs), tol="close")


def test_geomspace_ends_are_the_bounds_exactly():
    got = nd.geomspace(3.0, 7.0, num=5).asnumpy()
    assert got[0] == 3.0 and got[-1] == 7.0


@given(x=arrays_of(NUMERIC, min_dims=1, max_dims=1, lo=-5, hi=5), data=st.data())
def test_vander(x, data):
    n = data.draw(st.sampled_from([None, 0, 1, 3, 5]))
    increasing = data.draw(st.booleans())
    run_xp(lambda xp: xp.vander(xp.array(x), n, increasing))


def test_vander_errors():
    run_xp(lambda xp: xp.vander(xp.ones((2, 2))))
    run_xp(lambda xp: xp.vander(xp.ones(2), -1))


@given(data=st.data())
def test_cross(data):
    rng = np.random.default_rng(data.draw(st.integers(0, 99)))
    width_a, width_b = data.draw(st.sampled_from([3, 2])), data.draw(st.sampled_from([3, 2]))
    dtype = data.draw(st.sampled_from(["int64", "float32", "float64", "uint8"]))
    a = (rng.integers(-5, 6, (4, width_a)) if dtype != "uint8"
         else rng.integers(0, 6, (4, width_a))).astype(dtype)
    b = rng.integers(0, 6, (1, width_b)).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # NumPy's for 2-vectors
        run_xp(lambda xp: xp.cross(xp.array(a), xp.array(b)))
        run_xp(lambda xp: xp.cross(xp.array(a.T), xp.array(b), axisa=0, axisc=0))
        run_xp(lambda xp: xp.cross(xp.array(a.T), xp.array(b.T), axis=0))


def test_cross_errors_and_warning():
    run_xp(lambda xp: xp.cross(xp.ones(4), xp.ones(3)))
    run_xp(lambda xp: xp.cross(xp.ones(()), xp.ones(3)))
    run_xp(lambda xp: xp.cross(xp.ones(3), xp.ones(3), axisc=1))
    run_xp(lambda xp: xp.cross(xp.ones(3, dtype=bool), xp.ones(3, dtype=bool)))
    run_xp(lambda xp: xp.cross(xp.ones((2, 3)), xp.ones(3), axisa=2))
    with pytest.warns(DeprecationWarning, match="2-dimensional vectors"):
        nd.cross(nd.array([1.0, 2.0]), nd.array([3.0, 4.0]))


def test_compositions_are_differentiable():
    x = nd.array([0.3, 1.2, 2.0, 2.5])
    x.attach_grad()
    with autograd.record():
        y = nd.trapezoid(nd.sinc(x) * 2) + nd.cross(x[:3], nd.array([1.0, 0.0, 0.0])).sum()
    y.backward()
    pi_x = np.pi * x.asnumpy()
    dsinc = (np.cos(pi_x) * pi_x - np.sin(pi_x)) / (pi_x * x.asnumpy())
    expected = 2 * dsinc * np.array([0.5, 1.0, 1.0, 0.5]) + np.array([0.0, -1.0, 1.0, 0.0])
    np.testing.assert_allclose(x.grad.asnumpy(), expected, rtol=1e-10)


# ---------------------------------------------------------------- NumPy-run ops
@given(a=arrays_of(REAL, max_dims=1, lo=-9, hi=9), v=arrays_of(REAL, max_dims=1, lo=-9, hi=9),
       mode=st.sampled_from(["full", "same", "valid", 0, 1, 2]),
       name=st.sampled_from(["convolve", "correlate"]))
def test_convolve_and_correlate(a, v, mode, name):
    run_xp(lambda xp: getattr(xp, name)(xp.array(a), xp.array(v), mode))


def test_convolve_errors():
    run_xp(lambda xp: xp.convolve(xp.ones(3), xp.ones((2, 2))))
    run_xp(lambda xp: xp.convolve(xp.ones(3), xp.ones(0)))
    run_xp(lambda xp: xp.correlate(xp.ones(3), xp.ones(2), "bogus"))
    run_xp(lambda xp: xp.convolve([1, 2, 3], 2))


@given(data=st.data())
def test_interp(data):
    xp_values = np.unique(data.draw(arrays_of(REAL, min_dims=1, max_dims=1, min_side=1,
                                              lo=-9, hi=9)))
    fp = np.arange(len(xp_values), dtype=data.draw(st.sampled_from(REAL))) * 1.5 - 2
    x = data.draw(arrays_of(REAL, max_dims=2, lo=-12, hi=12))
    left, right = data.draw(st.sampled_from([(None, None), (-1.0, 99), (0.5, None)]))
    run_xp(lambda xp: xp.interp(xp.array(x), xp.array(xp_values), xp.array(fp), left, right))
    run_xp(lambda xp: xp.interp(xp.array(x), xp.array(xp_values), xp.array(fp), period=7.0))


def test_interp_errors_and_complex():
    run_xp(lambda xp: xp.interp(xp.ones(2), xp.arange(3.0), xp.arange(2.0)))
    run_xp(lambda xp: xp.interp(xp.ones(2), xp.arange(3.0), xp.arange(3.0), period=0))
    run_xp(lambda xp: xp.interp(xp.ones(2), xp.arange(0.0), xp.arange(0.0)))
    run_xp(lambda xp: xp.interp(1.5, [1.0, 2.0], xp.array([1 + 1j, 2 - 1j])))


@given(m=arrays_of(REAL, min_dims=1, max_dims=2, min_side=1, lo=-9, hi=9), data=st.data())
def test_cov_and_corrcoef(m, data):
    rowvar, bias = data.draw(st.booleans()), data.draw(st.booleans())
    ddof = data.draw(st.sampled_from([None, 0, 2]))
    run_xp(lambda xp: xp.cov(xp.array(m), rowvar=rowvar, bias=bias, ddof=ddof))
    run_xp(lambda xp: xp.cov(xp.array(m), xp.array(m[::-1]), rowvar=rowvar))
    run_xp(lambda xp: xp.corrcoef(xp.array(m), rowvar=rowvar))
    run_xp(lambda xp: xp.corrcoef(xp.array(m), xp.array(m) * 2 + 1, rowvar=rowvar,
                                  dtype=xp.float32))


@pytest.mark.parametrize("shape", [(1, 2), (2, 1), (1, 1), (3,), (1, 3), (0, 2), (2, 0)])
@pytest.mark.parametrize("rowvar", [True, False])
def test_cov_and_corrcoef_shapes_of_one_row_or_column(shape, rowvar):
    """NumPy transposes ``m`` for ``rowvar=False`` unless it is 1-d (one row included) and
    ``y`` unless it has one row; the result is squeezed."""
    m = np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape) ** 1.5
    run_xp(lambda xp: xp.cov(xp.array(m), rowvar=rowvar))
    run_xp(lambda xp: xp.cov(xp.array(m), xp.array(m + 1), rowvar=rowvar))
    run_xp(lambda xp: xp.corrcoef(xp.array(m), rowvar=rowvar))


def test_cov_weights_and_errors():
    m = np.arange(12.0).reshape(3, 4) ** 1.5
    run_xp(lambda xp: xp.cov(xp.array(m), fweights=xp.array([1, 2, 1, 3]),
                             aweights=xp.array([0.5, 1.0, 2.0, 1.0])))
    for xp in (np, nd):  # NumPy's RuntimeError, at the call
        with pytest.raises(RuntimeError, match="incompatible numbers of samples"):
            xp.cov(xp.array(m), fweights=[1, 2])
    run_xp(lambda xp: xp.cov(xp.array(m), fweights=xp.array([1.5, 2, 1, 1])))
    run_xp(lambda xp: xp.cov(xp.ones((2, 2, 2))))
    run_xp(lambda xp: xp.cov(xp.array(m), ddof=1.5))
    run_xp(lambda xp: xp.cov(xp.array(m), xp.ones((2, 3))))


@given(f=arrays_of(REAL, min_dims=1, max_dims=3, min_side=2, lo=-9, hi=9), data=st.data())
def test_gradient(f, data):
    edge_order = data.draw(st.sampled_from([1, 2]))
    axis = data.draw(st.sampled_from([None, 0, -1, (0, -1)]))
    run_xp(lambda xp: xp.gradient(xp.array(f), edge_order=edge_order, axis=axis), tol="close")
    run_xp(lambda xp: xp.gradient(xp.array(f), 0.5, axis=axis), tol="close")
    coordinates = np.cumsum(np.arange(1.0, f.shape[0] + 1)) ** 1.5
    run_xp(lambda xp: xp.gradient(xp.array(f), xp.array(coordinates), axis=0,
                                  edge_order=edge_order), tol="close")


def test_gradient_results_and_errors():
    f = np.arange(20.0).reshape(4, 5) ** 2
    assert isinstance(nd.gradient(nd.array(f)), tuple)
    assert isinstance(nd.gradient(nd.array(f), axis=1), nd.NDArray)
    run_xp(lambda xp: xp.gradient(xp.array(f), 2.0, xp.arange(5.0) ** 2, edge_order=2))
    run_xp(lambda xp: xp.gradient(xp.array(f), xp.arange(3.0), axis=0))
    run_xp(lambda xp: xp.gradient(xp.arange(2.0), edge_order=2))
    run_xp(lambda xp: xp.gradient(xp.array(f), 1.0, 2.0, 3.0))
    run_xp(lambda xp: xp.gradient(xp.array(f), edge_order=3))
    run_xp(lambda xp: xp.gradient(xp.array(f), axis=2))
    run_xp(lambda xp: xp.gradient(xp.array(f), xp.ones((4, 5))))
    run_xp(lambda xp: xp.gradient(xp.arange(6)))


@given(data=st.data())
def test_unravel_and_ravel_multi_index(data):
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    order = data.draw(st.sampled_from(["C", "F"]))
    flat = np.array(data.draw(st.lists(st.integers(0, int(np.prod(shape)) - 1), max_size=6)),
                    dtype=data.draw(st.sampled_from(["int64", "int32", "uint8"])))
    run_xp(lambda xp: list(xp.unravel_index(xp.array(flat), shape, order)))
    coordinates = [np.array(c) for c in np.unravel_index(flat, shape, order)]
    run_xp(lambda xp: xp.ravel_multi_index(tuple(xp.array(c) for c in coordinates), shape,
                                           order=order))
    mode = data.draw(st.sampled_from(["clip", "wrap", ("clip", "wrap", "raise")[:len(shape)]]))
    run_xp(lambda xp: xp.ravel_multi_index(tuple(xp.array(c) + 2 for c in coordinates), shape,
                                           mode=mode))


def test_index_conversion_errors():
    run_xp(lambda xp: xp.unravel_index(xp.array([1.5]), (2, 3)))
    run_xp(lambda xp: xp.unravel_index(xp.array([1]), (2, 3), order="X"))
    run_xp(lambda xp: xp.ravel_multi_index((xp.array([0, 1]),), (2, 3)))
    run_xp(lambda xp: xp.ravel_multi_index((xp.array([0]), xp.array([1])), (2, 3),
                                           mode="bogus"))
    run_xp(lambda xp: list(xp.unravel_index(7, xp.array([3, 4]))))
    with pytest.raises(ValueError, match="out of bounds"):
        nd.unravel_index(nd.array([6]), (2, 3))[0].asnumpy()  # a value error, when it runs
    with pytest.raises(ValueError, match="one index array per dimension"):
        nd.ravel_multi_index((), (2, 3))


def test_pushed_ops_see_pending_writes():
    x = nd.zeros(4)
    x[1:] = 2.0
    assert nd.convolve(x, [1.0, 1.0]).tolist() == [0.0, 2.0, 4.0, 4.0, 2.0]
    assert nd.interp(nd.array([1.5]), [0.0, 1.0, 2.0, 3.0], x).tolist() == [2.0]


def test_interp_and_gradient_have_no_gradient_rule():
    x = nd.array([0.5, 1.5, 2.5])
    x.attach_grad()
    for make in (lambda: nd.interp(x, [0.0, 1.0, 3.0], [1.0, 2.0, 0.0]),
                 lambda: nd.gradient(x)):
        with autograd.record():
            y = make().sum()
        with pytest.raises(TypeError, match="has no gradient rule"):
            y.backward()


def test_cov_with_weights_refuses_a_gradient():
    m = nd.array(np.arange(8.0).reshape(2, 4) ** 2)
    m.attach_grad()
    with autograd.record():
        y = nd.cov(m, fweights=[1, 2, 1, 1]).sum()
    with pytest.raises(NotImplementedError, match="fweights or aweights"):
        y.backward()
