"""Quantiles, average, cumulative sums and products, diff, histogram, bincount and digitize
against NumPy: one body run with xp=numpy and xp=ndengine."""
import numpy as np
import pytest
from hypothesis import assume, given, strategies as st

import ndengine as nd

from ndarray_helpers import DTYPES, FLOATS, INTS, run_xp, values
from stats_helpers import any_axis, arrays_of, with_nans

pytestmark = [pytest.mark.usefixtures("nd_engine"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]  # NumPy's, on NaN slices

METHODS = ["linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf",
           "median_unbiased", "weibull"]


@given(data=st.data())
@pytest.mark.parametrize("name", ["quantile", "percentile", "nanquantile", "nanpercentile"])
def test_quantiles(name, data):
    a = data.draw(st.one_of(with_nans(), arrays_of(INTS + [np.dtype(bool)], lo=-50, hi=50)))
    scale = 100 if "percentile" in name else 1
    q = data.draw(st.one_of(st.floats(0, 1), st.lists(st.floats(0, 1), max_size=3),
                            st.just(1.5), st.just([0.5, -0.1])))
    q = np.asarray(q) * scale if isinstance(q, list) else q * scale
    # (a 0-d q array is left out: NumPy's result dtype then depends on whether a has NaNs)
    q_kind = data.draw(st.sampled_from(["value", "ndarray"] if np.ndim(q) else ["value"]))
    # NumPy's nan-quantiles of float32 data with a q array give float32 where the first
    # slice is all NaN (else float64): a dtype only the values tell; ndengine gives float64
    assume(not (name.startswith("nan") and a.dtype == np.float32 and np.ndim(q)
                and np.isnan(a).any()))
    axis = data.draw(any_axis(a.ndim))
    method = data.draw(st.sampled_from(METHODS))
    keepdims = data.draw(st.booleans())

    def body(xp):
        qq = xp.array(q) if q_kind == "ndarray" else q
        return getattr(xp, name)(xp.array(a), qq, axis=axis, method=method, keepdims=keepdims)
    # q as an NDArray is checked when the op runs: a bad q and a bad a at once may give a's
    # error first (NumPy checks q first)
    run_xp(body, tol="close", any_error=q_kind == "ndarray")


def test_nan_quantile_dtype_is_that_of_numbers():
    """NumPy's nanquantile of float32 data whose first slice is all NaN gives float32 for
    a q array, else float64: ndengine, which knows no values at the call, gives float64."""
    q = np.array([0.5])
    assert nd.nanquantile(nd.array(np.float32([np.nan])), q).dtype == \
        np.nanquantile(np.float32([1.0]), q).dtype == np.float64


def test_quantile_q_as_an_ndarray_is_checked_when_the_op_runs():
    q = nd.array([0.5, 2.0])  # out of range: NumPy's ValueError, from the op
    with pytest.raises(ValueError):
        nd.quantile(nd.arange(5.0), q).asnumpy()
    nd.waitall()


def test_quantile_weights_and_out():
    a = np.array([[1.0, 5.0, 2.0, 8.0], [3.0, 3.0, 9.0, 0.5]])
    w = np.array([1.0, 2.0, 0.5, 3.0])

    def body(xp):
        out = xp.zeros((2, 2), dtype=np.float32)
        r = xp.quantile(xp.array(a), [0.25, 0.75], axis=1, out=out, method="inverted_cdf",
                        weights=xp.array(np.broadcast_to(w, a.shape)))
        assert r is out
        return [out, xp.percentile(xp.array(a), 40, axis=1, method="inverted_cdf",
                                   weights=xp.array(w))]
    run_xp(body, tol="close")
    run_xp(lambda xp: xp.quantile(xp.array(a), 0.5, weights=xp.array(w)))  # linear: refused
    run_xp(lambda xp: xp.median(xp.array(a), axis=1, out=xp.zeros(2, dtype=np.int64)))


@given(data=st.data())
def test_average(data):
    a = data.draw(arrays_of(INTS + FLOATS + [np.dtype(bool)], min_dims=1, lo=-20, hi=20))
    axis = data.draw(st.one_of(st.none(), st.integers(-a.ndim, a.ndim - 1)))
    kind = data.draw(st.sampled_from(["none", "same", "axis", "wrong"]))
    if kind == "same":
        weights = data.draw(values(np.dtype("float64"), a.shape, lo=0, hi=4))
    elif kind == "axis" and axis is not None:
        weights = data.draw(values(np.dtype("int32"), (a.shape[axis],), lo=0, hi=4))
    elif kind == "wrong":
        weights = np.ones(a.shape[-1] + 1)
    else:
        weights = None
    returned = data.draw(st.booleans())
    keepdims = data.draw(st.sampled_from([None, True]))

    def body(xp):
        kwargs = {} if keepdims is None else {"keepdims": keepdims}
        w = None if weights is None else xp.array(weights)
        return xp.average(xp.array(a), axis=axis, weights=w, returned=returned, **kwargs)
    run_xp(body, tol="close")


ACCUMULATIONS = ["cumsum", "cumprod", "nancumsum", "nancumprod"]


@given(data=st.data())
@pytest.mark.parametrize("name", ACCUMULATIONS)
def test_accumulations(name, data):
    a = data.draw(st.one_of(arrays_of(lo=-3, hi=3), with_nans()))
    axis = data.draw(st.one_of(st.none(), st.integers(-a.ndim - 1, a.ndim)))
    dtype = data.draw(st.sampled_from([None, "int8", "int64", "float32", "float64"]))
    run_xp(lambda xp: getattr(xp, name)(xp.array(a), axis=axis, dtype=dtype), tol="close")


@given(data=st.data())
@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
def test_cumulative(name, data):
    a = data.draw(arrays_of(lo=-3, hi=3, max_dims=2))
    axis = data.draw(st.one_of(st.none(), st.integers(-a.ndim - 1, a.ndim)))
    include_initial = data.draw(st.booleans())
    run_xp(lambda xp: getattr(xp, name)(xp.array(a), axis=axis,
                                        include_initial=include_initial))


def test_accumulation_out_and_methods():
    a = np.array([[1, 2, 3], [4, 5, 6]], np.int8)

    def body(xp):
        out = xp.zeros(6, dtype=np.float32)
        out2 = xp.zeros((2, 3), dtype=np.int8)
        assert xp.cumsum(xp.array(a), out=out) is out
        assert xp.array(a).cumprod(axis=1, out=out2) is out2
        return [out, out2, xp.array(a).cumsum(), xp.array(a).cumprod(0, np.float64)]
    run_xp(body)
    run_xp(lambda xp: xp.cumsum(xp.array(a), out=xp.zeros(5)))


@given(data=st.data())
def test_diff(data):
    a = data.draw(arrays_of(max_dims=3, lo=-100, hi=100))
    n = data.draw(st.integers(-1, 4))
    axis = data.draw(st.integers(-a.ndim - 1, max(a.ndim, 1)))
    kwargs = {}
    for side in ("prepend", "append"):
        kind = data.draw(st.sampled_from(["none", "scalar", "array"]))
        if kind == "scalar":
            kwargs[side] = data.draw(st.sampled_from([0, 1.5, True]))
        elif kind == "array" and a.ndim:
            shape = list(a.shape)
            shape[axis % a.ndim if -a.ndim <= axis < a.ndim else 0] = data.draw(
                st.integers(0, 2))
            kwargs[side] = data.draw(values(data.draw(st.sampled_from(DTYPES)), tuple(shape),
                                            lo=-5, hi=5))

    def body(xp):
        given = {k: v if np.ndim(v) == 0 else xp.array(v) for k, v in kwargs.items()}
        return xp.diff(xp.array(a), n=n, axis=axis, **given)
    run_xp(body)


@given(data=st.data())
def test_histogram(data):
    a = data.draw(arrays_of(INTS + FLOATS, max_dims=2, lo=-20, hi=20))
    if a.dtype.kind == "f":  # a grid of 1/8: nearly equal values would ask NumPy itself
        a = (np.round(a * 8) / 8).astype(a.dtype)  # for billions of "fd" bins
    bins = data.draw(st.one_of(st.integers(1, 12), st.just(0),
                               st.lists(st.floats(-25, 25), min_size=1, max_size=6)
                               .map(sorted),
                               st.sampled_from(["auto", "fd", "sturges", "sqrt"])))
    bins_as = data.draw(st.sampled_from(["value", "ndarray"]))
    hist_range = data.draw(st.sampled_from([None, (-5, 5), (0.5, 3.25), (3, 1)]))
    density = data.draw(st.sampled_from([None, True, False]))
    weighted = data.draw(st.booleans()) and not isinstance(bins, str)

    def body(xp):
        b = xp.array(bins) if bins_as == "ndarray" and isinstance(bins, list) else bins
        w = xp.array(np.linspace(0, 2, a.size).reshape(a.shape)) if weighted else None
        return xp.histogram(xp.array(a), bins=b, range=hist_range, density=density,
                            weights=w)
    run_xp(body, tol="close")


def test_histogram_of_nan_is_numpys_error():
    run_xp(lambda xp: xp.histogram(xp.array([1.0, np.nan])))


@given(data=st.data())
def test_bincount(data):
    dtype = data.draw(st.sampled_from(INTS + [np.dtype(bool), np.dtype("float64")]))
    x = data.draw(values(dtype, st.tuples(st.integers(0, 12)), lo=-1 if data.draw(
        st.booleans()) else 0, hi=20))
    weighted = data.draw(st.sampled_from([None, "float32", "int64", "wrong"]))
    minlength = data.draw(st.sampled_from([0, 3, 25, -1]))

    def body(xp):
        w = None
        if weighted == "wrong":
            w = xp.ones(len(x) + 1)
        elif weighted is not None:
            w = xp.array(np.arange(len(x), dtype=weighted))
        return xp.bincount(xp.array(x), weights=w, minlength=minlength)
    run_xp(body)


@given(data=st.data())
def test_digitize(data):
    x = data.draw(arrays_of(INTS + FLOATS, max_dims=2, lo=-10, hi=10))
    bins = np.array(sorted(data.draw(st.lists(st.floats(-12, 12), max_size=5))))
    order = data.draw(st.sampled_from(["increasing", "decreasing", "unordered"]))
    if order == "decreasing":
        bins = bins[::-1]
    elif order == "unordered" and len(bins) > 2:
        bins = bins[[1, 0, 2]]
    right = data.draw(st.booleans())
    bins_as = data.draw(st.sampled_from(["value", "ndarray"]))
    run_xp(lambda xp: xp.digitize(xp.array(x), xp.array(bins) if bins_as == "ndarray"
                                  else bins, right=right))


# ---------------------------------------------------------------- NumPy's examples
NAN = np.nan
EXAMPLES = [
    lambda xp: xp.percentile(xp.array([[10, 7, 4], [3, 2, 1]]), 50),
    lambda xp: xp.percentile(xp.array([[10, 7, 4], [3, 2, 1]]), 50, axis=0),
    lambda xp: xp.percentile(xp.array([[10, 7, 4], [3, 2, 1]]), 50, axis=1, keepdims=True),
    lambda xp: xp.quantile(xp.array([[10, 7, 4], [3, 2, 1]]), 0.5, axis=1),
    lambda xp: xp.quantile(xp.array([[10, 7, 4], [3, 2, 1]]), [0.25, 0.5], method="nearest"),
    lambda xp: xp.nanpercentile(xp.array([[10.0, NAN, 4], [3, 2, 1]]), 50, axis=0),
    lambda xp: xp.nanquantile(xp.array([[10.0, NAN, 4], [3, 2, 1]]), 0.5, axis=1),
    lambda xp: xp.average(xp.arange(1, 5)),
    lambda xp: xp.average(xp.arange(1, 11), weights=xp.arange(10, 0, -1)),
    lambda xp: xp.average(xp.arange(6).reshape((3, 2)), axis=1, weights=[1. / 4, 3. / 4]),
    lambda xp: xp.average(xp.arange(6).reshape((3, 2)), weights=[1. / 4, 3. / 4]),
    lambda xp: xp.average(xp.arange(8).reshape((2, 2, 2)), axis=(0, 1),
                          weights=[[1. / 4, 3. / 4], [1., 1. / 2]]),
    lambda xp: xp.average(xp.arange(6).reshape((3, 2)), axis=1, keepdims=True),
    lambda xp: xp.average(xp.ones(5), weights=xp.zeros(5)),  # ZeroDivisionError
    lambda xp: xp.cumsum(xp.array([[1, 2, 3], [4, 5, 6]]), dtype=float),
    lambda xp: xp.cumsum(xp.array([[1, 2, 3], [4, 5, 6]]), axis=0),
    lambda xp: xp.cumprod(xp.array([[1, 2, 3], [4, 5, 6]]), axis=1),
    lambda xp: xp.nancumsum(xp.array([[1, 2], [3, NAN]]), axis=0),
    lambda xp: xp.nancumprod(xp.array([[1, 2], [3, NAN]]), axis=1),
    lambda xp: xp.nancumsum(1),
    lambda xp: xp.cumulative_sum(xp.array([1, 2, 3, 4, 5, 6]), include_initial=True),
    lambda xp: xp.diff(xp.array([1, 2, 4, 7, 0])),
    lambda xp: xp.diff(xp.array([1, 2, 4, 7, 0]), n=2),
    lambda xp: xp.diff(xp.array([[1, 3, 6, 10], [0, 5, 6, 8]]), axis=0),
    lambda xp: xp.diff(xp.array([1, 0], dtype=np.uint8)),
    lambda xp: xp.diff(xp.array([1, 0], dtype=np.uint8).astype(np.int16)),
    lambda xp: xp.diff(xp.array([True, False, False])),
    lambda xp: xp.diff(xp.array(5)),
    lambda xp: xp.histogram(xp.array([1, 2, 1]), bins=[0, 1, 2, 3]),
    lambda xp: xp.histogram(xp.arange(4), bins=xp.arange(5), density=True),
    lambda xp: xp.histogram(xp.array([[1, 2, 1], [1, 0, 1]]), bins=[0, 1, 2, 3]),
    lambda xp: xp.histogram(xp.arange(5), density=True),
    lambda xp: xp.histogram(xp.arange(5), bins="auto"),
    lambda xp: xp.histogram(xp.arange(5), bins=[0, 3, 1]),  # not increasing
    lambda xp: xp.histogram(xp.arange(5), bins=2.5),
    lambda xp: xp.bincount(xp.arange(5)),
    lambda xp: xp.bincount(xp.array([0, 1, 1, 3, 2, 1, 7])),
    lambda xp: xp.bincount(xp.arange(5, dtype=float)),
    lambda xp: xp.bincount(xp.array([0, 1, 1, 2, 2, 2]),
                           weights=xp.array([0.3, 0.5, 0.2, 0.7, 1., -0.6])),
    lambda xp: xp.bincount(xp.array([[0, 1]])),
    lambda xp: xp.digitize(xp.array([0.2, 6.4, 3.0, 1.6]), xp.array([0.0, 1.0, 2.5, 4.0, 10.0])),
    lambda xp: xp.digitize(xp.array([1.2, 10.0, 12.4, 15.5, 20.]),
                           xp.array([0, 5, 10, 15, 20]), right=True),
    lambda xp: xp.digitize(xp.array([1.2, 10.0, 12.4, 15.5, 20.]), [0, 5, 10, 15, 20]),
]


@pytest.mark.parametrize("case", range(len(EXAMPLES)))
def test_numpy_examples(case):
    run_xp(EXAMPLES[case], tol="close")
