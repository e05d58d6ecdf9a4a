"""nan-reductions, any/all, ptp, count_nonzero, medians, and sum & co. with NumPy's where=,
initial=, mean=, correction=, against NumPy: one body run with xp=numpy and xp=ndengine."""
import inspect

import numpy as np
import pytest
from hypothesis import given, strategies as st

import ndengine as nd

from ndarray_helpers import FLOATS, INTS, run_xp, values
from stats_helpers import any_axis, arrays_of, with_nans

pytestmark = [pytest.mark.usefixtures("nd_engine"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]  # NumPy's, on NaN slices

AXIS_REDUCTIONS = ["nansum", "nanprod", "nanmean", "nanstd", "nanvar", "nanmin", "nanmax",
                   "any", "all", "ptp", "count_nonzero", "median", "nanmedian"]
_CLOSE = ("nanmean", "nanstd", "nanvar", "median", "nanmedian")


def _reduce(name, a, axis, keepdims, extra=None):
    def body(xp):
        kwargs = dict(extra or {})
        if keepdims is not None:
            kwargs["keepdims"] = keepdims
        return getattr(xp, name)(xp.array(a), axis=axis, **kwargs)
    return body


@given(data=st.data())
@pytest.mark.parametrize("name", AXIS_REDUCTIONS)
def test_axis_reductions(name, data):
    a = data.draw(st.one_of(arrays_of(), with_nans()) if name.startswith("nan")
                  else arrays_of())
    axis = data.draw(any_axis(a.ndim))
    keepdims = data.draw(st.sampled_from([None, False, True]))
    if name == "count_nonzero" and keepdims is None:
        keepdims = False
    run_xp(_reduce(name, a, axis, keepdims), tol="close" if name in _CLOSE else "exact")


@given(data=st.data())
@pytest.mark.parametrize("name", ["nanargmin", "nanargmax"])
def test_nan_arg_reductions(name, data):
    a = data.draw(st.one_of(with_nans(), arrays_of([np.dtype("int16"), np.dtype(bool)])))
    axis = data.draw(st.one_of(st.none(), st.integers(-a.ndim - 1, a.ndim)))
    keepdims = data.draw(st.sampled_from([None, True]))
    run_xp(_reduce(name, a, axis, keepdims))


@given(data=st.data())
@pytest.mark.parametrize("name", ["nansum", "nanprod", "nanmean", "nanstd", "nanvar"])
def test_nan_reduction_dtype(name, data):
    a = data.draw(arrays_of(INTS + FLOATS + [np.dtype(bool)], lo=-20, hi=20))
    dtype = data.draw(st.sampled_from([None, "int8", "int64", "float32", "float64"]))
    run_xp(lambda xp: [getattr(xp, name)(xp.array(a), dtype=dtype),
                       getattr(xp, name)(xp.array(a), axis=-1 if a.ndim else None,
                                         dtype=dtype, ddof=1)
                       if name in ("nanstd", "nanvar") else xp.array(0)], tol="close")


# ---------------------------------------------------------------- where= and initial=
WHERE = {"sum": True, "prod": True, "max": True, "min": True, "nansum": True, "nanprod": True,
         "nanmin": True, "nanmax": True, "mean": False, "std": False, "var": False,
         "nanmean": False, "nanstd": False, "nanvar": False, "any": False, "all": False}


@given(data=st.data())
@pytest.mark.parametrize("name", sorted(WHERE))
def test_where_and_initial(name, data):
    a = data.draw(st.one_of(arrays_of(min_dims=1, lo=-30, hi=30), with_nans(min_dims=1)))
    # a mask of a's shape, or of its trailing axes (broadcast), or (now and then) a mismatch
    mask_shape = data.draw(st.sampled_from([a.shape, a.shape[1:], (1,) + a.shape[1:],
                                            a.shape[:-1] + (a.shape[-1] + 1,)]))
    where = data.draw(values(np.dtype(bool), mask_shape))
    axis = data.draw(any_axis(a.ndim, bad=False))
    kwargs = {"where": where}
    if WHERE[name] and data.draw(st.booleans()):
        kwargs["initial"] = data.draw(st.sampled_from([0, 1, -5, 2.5, True]))
    keepdims = data.draw(st.booleans())
    run_xp(lambda xp: getattr(xp, name)(xp.array(a), axis=axis, keepdims=keepdims,
                                        **{**kwargs, "where": xp.array(where)}),
           tol="close")


def test_initial_without_where_and_scalar_where():
    a = np.array([[3, -1, 7], [2, 8, -4]], np.int16)
    run_xp(lambda xp: [xp.sum(xp.array(a), initial=10), xp.max(xp.array(a), axis=0, initial=5),
                       xp.min(xp.array(a), initial=-9), xp.prod(xp.array(a), 1, initial=2),
                       xp.sum(xp.array(a), where=False), xp.mean(xp.array(a), where=True),
                       xp.nanmax(xp.array(a.astype(float)), initial=100.0),
                       xp.array(a).sum(initial=1), xp.array(a).max(axis=1, initial=6)])
    run_xp(lambda xp: xp.max(xp.array(a), where=xp.array([False, True, False])))  # no initial
    run_xp(lambda xp: xp.mean(xp.array(a), initial=1))  # mean takes no initial
    run_xp(lambda xp: xp.sum(xp.array(a), where=xp.array([1, 0, 1])))  # an int mask


def test_std_var_mean_and_correction():
    a = np.array([[1.5, 2.0, 7.25], [3.0, -4.5, 0.5]])
    means = a.mean(axis=1, keepdims=True)
    for name in ("std", "var", "nanstd", "nanvar"):
        run_xp(lambda xp: [getattr(xp, name)(xp.array(a), axis=1, mean=xp.array(means)),
                           getattr(xp, name)(xp.array(a), correction=1),
                           getattr(xp, name)(xp.array(a), axis=0, correction=0.5,
                                             keepdims=True)], tol="close")
        run_xp(lambda xp: getattr(xp, name)(xp.array(a), ddof=1, correction=1))  # ValueError


def test_where_is_an_input_read_when_the_op_runs():
    a = nd.array(np.arange(6.0))
    mask = nd.array(np.array([True, False] * 3))
    total = nd.sum(a, where=mask)
    mask[:] = False  # a later write: the sum above still reads the mask as it was
    assert total.item() == 6.0
    assert nd.sum(a, where=mask).item() == 0.0


# ---------------------------------------------------------------- out=
@pytest.mark.parametrize("name", ["nansum", "nanmean", "nanmax", "nanargmin", "any", "all",
                                  "ptp", "median", "nanmedian", "sum", "max", "std"])
@pytest.mark.parametrize("out_dtype", ["float64", "float32", "int64", "int8", "bool"])
def test_out(name, out_dtype):
    a = np.array([[1.5, np.nan, 7.25, 2.0], [3.0, -4.5, 0.5, 9.0], [1.0, 2.0, 3.0, 4.0]])
    if not name.startswith("nan"):
        a = np.nan_to_num(a)
    extra = {"where": np.array([True, False, True, True])} if name in ("sum", "max") else {}

    def body(xp):
        out = xp.zeros(4, dtype=out_dtype)
        if "where" in extra:
            extra["where"] = xp.array(extra["where"])
            if name == "max":
                extra["initial"] = -10
        result = getattr(xp, name)(xp.array(a), axis=0, out=out, **extra)
        assert result is out
        return out
    run_xp(body, tol="close")


def test_out_of_the_wrong_shape_or_kind():
    run_xp(lambda xp: xp.nansum(xp.ones((2, 3)), axis=0, out=xp.zeros(2)))
    run_xp(lambda xp: xp.nanargmax(xp.ones((2, 3)), axis=0, out=xp.zeros(3)))
    with pytest.raises(TypeError):
        nd.nansum(nd.ones(3), out=np.zeros(()))  # out= must be an NDArray


# ---------------------------------------------------------------- methods and signatures
def test_methods():
    a = np.array([[0.0, 2.5, -1.0], [4.0, 0.0, 3.0]])
    run_xp(lambda xp: [xp.array(a).any(), xp.array(a).all(axis=0), xp.array(a).any(1, keepdims=True),
                       xp.array(a).all(where=xp.array([True, False, True])),
                       xp.array(a).sum(where=xp.array([[True], [False]])),
                       xp.array(a).mean(axis=1, where=xp.array([True, True, False])),
                       xp.array(a).std(where=xp.array([False, True, True]))], tol="close")


def test_numpy_functions_reach_the_methods():
    a = np.array([[0.0, 2.5, -1.0], [4.0, 0.0, 3.0]])
    x = nd.array(a)
    assert isinstance(np.any(x, axis=0), nd.NDArray)
    np.testing.assert_array_equal(np.all(x, axis=1, where=nd.array([True, False, True])),
                                  np.all(a, axis=1, where=[True, False, True]))
    assert np.sum(x, initial=1, where=nd.array([[True], [False]])).item() == \
        np.sum(a, initial=1, where=[[True], [False]])


@pytest.mark.parametrize("name", sorted(nd.ndarray.statistics.FUNCTIONS))
def test_signatures_are_numpys(name):
    ours = inspect.signature(getattr(nd, name))
    theirs = inspect.signature(getattr(np, name))
    assert str(ours) == str(theirs), name


def test_unknown_keyword_raises_naming_it():
    for call in (lambda: nd.nansum(nd.ones(3), bogus=1), lambda: nd.median(nd.ones(3), bogus=1),
                 lambda: nd.ones(3).any(bogus=1), lambda: nd.sum(nd.ones(3), bogus=1)):
        with pytest.raises(TypeError, match="bogus"):
            call()


# ---------------------------------------------------------------- NumPy's examples
NAN = np.nan
EXAMPLES = [
    lambda xp: xp.nansum(xp.array([1, NAN])),
    lambda xp: xp.nansum(xp.array([[1, 1], [1, NAN]]), axis=0),
    lambda xp: xp.nansum(xp.array([[1, 1], [1, NAN]]), axis=0, keepdims=True),
    lambda xp: xp.nanprod(xp.array([[1, 2], [3, NAN]]), axis=0),
    lambda xp: xp.nanmean(xp.array([[1, NAN], [3, 4]]), axis=1),
    lambda xp: xp.nanstd(xp.array([[1, NAN], [3, 4]]), axis=0),
    lambda xp: xp.nanvar(xp.array([[1, NAN], [3, 4]]), axis=1),
    lambda xp: xp.nanmin(xp.array([1, 2, NAN, -np.inf])),
    lambda xp: xp.nanmax(xp.array([[1, 2], [3, NAN]]), axis=1),
    lambda xp: xp.nanargmin(xp.array([[NAN, 4], [2, 3]]), axis=0),
    lambda xp: xp.nanargmax(xp.array([[NAN, 4], [2, 3]]), axis=1),
    lambda xp: xp.any(xp.array([[True, False], [True, True]])),
    lambda xp: xp.any(xp.array([[True, False, True], [False, False, False]]), axis=0),
    lambda xp: xp.any(xp.array([-1, 0, 5])),
    lambda xp: xp.any(xp.array([[NAN], [np.inf]]), axis=1, keepdims=True),
    lambda xp: xp.any(xp.array([[True, False], [False, False]]),
                      where=xp.array([[False], [True]])),
    lambda xp: xp.all(xp.array([[True, False], [True, True]]), axis=0),
    lambda xp: xp.all(xp.array([1.0, NAN])),
    lambda xp: xp.all(xp.array([[True, True], [False, True]]),
                      where=xp.array([[True], [False]])),
    lambda xp: xp.ptp(xp.array([[4, 9, 2, 10], [6, 9, 7, 12]]), axis=1),
    lambda xp: xp.ptp(xp.array([[1, 127], [0, 127], [-1, 127], [-2, 127]], dtype=np.int8),
                      axis=1),
    lambda xp: xp.count_nonzero(xp.eye(4)),
    lambda xp: xp.count_nonzero(xp.array([[0, 1, 7, 0], [3, 0, 2, 19]]), axis=1,
                                keepdims=True),
    lambda xp: xp.median(xp.array([[10, 7, 4], [3, 2, 1]])),
    lambda xp: xp.median(xp.array([[10, 7, 4], [3, 2, 1]]), axis=0),
    lambda xp: xp.median(xp.array([[10, 7, 4], [3, 2, 1]]), axis=1, keepdims=True),
    lambda xp: xp.nanmedian(xp.array([[10.0, NAN, 4], [3, 2, 1]]), axis=0),
    lambda xp: xp.sum(xp.array([[0.0, 1.0], [NAN, 5.0]]), where=xp.array([False, True]),
                      axis=1),
    lambda xp: xp.sum(xp.array([10]), initial=5),
    lambda xp: xp.max(xp.arange(4).reshape((2, 2)), where=xp.array([False, True]),
                      initial=-1, axis=0),
    lambda xp: xp.max(xp.array([[-50], [10]]), axis=-1, initial=0),
    lambda xp: xp.mean(xp.array([[5, 9, 13], [14, 10, 12], [11, 15, 19]]),
                       where=xp.array([[True], [True], [False]])),
    lambda xp: xp.std(xp.array([[14, 8, 11, 10], [7, 9, 10, 11], [10, 15, 5, 10]]),
                      where=xp.array([[True], [True], [False]])),
]


@pytest.mark.parametrize("case", range(len(EXAMPLES)))
def test_numpy_examples(case):
    run_xp(EXAMPLES[case], tol="close")
