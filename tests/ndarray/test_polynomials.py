"""poly, polyadd, polysub, polymul, polydiv, polyder, polyint, polyfit, polyval, roots and
poly1d against NumPy: one body run with xp=numpy and xp=ndengine; NumPy's signatures,
values, dtypes and errors, and NumPy's documentation examples."""
import inspect
import warnings

import numpy as np
import pytest
from hypothesis import example, given, strategies as st

import ndengine as nd
from ndengine import autograd

from ndarray_helpers import run_xp
from numpy_doc_examples import run_doc_examples
from stats_helpers import arrays_of

pytestmark = pytest.mark.usefixtures("nd_engine")

PUSHED = ["poly", "polyadd", "polysub", "polyder", "polyint", "polyval", "polyfit"]
AT_CALL = ["polymul", "polydiv", "roots"]
REAL = [np.dtype(d) for d in ("int8", "uint8", "int64", "float32", "float64")]
COEFFICIENTS = arrays_of(REAL, min_dims=1, max_dims=1, min_side=1, lo=-5, hi=5)


@pytest.mark.parametrize("name", PUSHED + AT_CALL)
def test_signature_is_numpys(name):
    assert inspect.signature(getattr(nd, name)) == inspect.signature(getattr(np, name))
    assert name in nd.__all__


def test_pushed_ones_return_at_once():
    """polyval on a pending array returns an NDArray before the array is written."""
    x = nd.zeros(3)
    x[1:] = 2.0
    y = nd.polyval(nd.array([1.0, 0.0, -1.0]), x)
    assert isinstance(y, nd.NDArray) and y.tolist() == [-1.0, 3.0, 3.0]


def test_pushed_ones_never_wait(no_waits):
    calls = [lambda xp, p, x: xp.poly(p), lambda xp, p, x: xp.polyadd(p, x),
             lambda xp, p, x: xp.polysub(p, x), lambda xp, p, x: xp.polyder(p, 2),
             lambda xp, p, x: xp.polyint(p, k=1.0), lambda xp, p, x: xp.polyval(p, x),
             lambda xp, p, x: xp.polyfit(x, x ** 2, 2),
             lambda xp, p, x: xp.polyfit(x, x, 1, w=x + 1, cov=True)]
    p, x = np.array([1.0, -2.0, 3.0]), np.linspace(0.0, 1.0, 6)
    results = [call(nd, nd.array(p), nd.array(x)) for call in calls]
    no_waits.undo()
    for call, got in zip(calls, results):
        run_xp(lambda xp: got if xp is nd else call(np, p, x), tol="close")


@given(a1=COEFFICIENTS, a2=COEFFICIENTS, name=st.sampled_from(["polyadd", "polysub",
                                                               "polymul", "polydiv"]))
def test_polynomial_arithmetic(a1, a2, name):
    if name == "polydiv" and not a2.any():
        a2 = a2 + 1  # NumPy divides by the leading coefficient
    run_xp(lambda xp: getattr(xp, name)(xp.array(a1), xp.array(a2)), tol="close")


@given(p=COEFFICIENTS, m=st.integers(0, 4))
def test_polyder_and_polyint(p, m):
    run_xp(lambda xp: xp.polyder(xp.array(p), m))
    run_xp(lambda xp: xp.polyint(xp.array(p), m), tol="close")
    run_xp(lambda xp: xp.polyint(xp.array(p), m, k=[2.0] * max(m, 1)), tol="close")


@given(p=COEFFICIENTS, x=arrays_of(REAL, max_dims=2, lo=-3, hi=3))
def test_polyval(p, x):
    run_xp(lambda xp: xp.polyval(xp.array(p), xp.array(x)), tol="close")
    run_xp(lambda xp: xp.polyval(xp.array(p), 1.5), tol="close")


def test_polyval_of_several_polynomials_and_errors():
    p = np.arange(6.0).reshape(3, 2)
    run_xp(lambda xp: xp.polyval(xp.array(p), xp.arange(4.0).reshape(4, 1)))
    run_xp(lambda xp: xp.polyval(xp.array(p), xp.arange(3.0)))
    run_xp(lambda xp: xp.polyval(xp.array(2.0), xp.arange(3.0)))
    run_xp(lambda xp: xp.polyval(xp.zeros(0), xp.arange(3)))


@given(zeros=arrays_of(REAL, min_dims=1, max_dims=1, lo=-3, hi=3))
def test_poly_of_real_zeros(zeros):
    run_xp(lambda xp: xp.poly(xp.array(zeros)), tol="close")


def test_poly_of_complex_zeros_and_matrices():
    run_xp(lambda xp: xp.poly(xp.array([1 + 2j, 1 - 2j])), tol="close")  # NumPy: real
    run_xp(lambda xp: xp.poly(xp.array([1 + 2j, 3 - 2j])), tol="close")  # complex
    run_xp(lambda xp: xp.poly(xp.array([[1.0, 2.0], [3.0, 4.0]])), tol="close")
    run_xp(lambda xp: xp.poly(xp.ones((2, 3))))
    run_xp(lambda xp: xp.poly(xp.ones((2, 2, 2))))


@given(p=COEFFICIENTS)
def test_roots(p):
    run_xp(lambda xp: xp.roots(xp.array(p)), tol="close")  # NumPy's own call: same order


@given(deg=st.integers(0, 3), dtype=st.sampled_from(["float64", "float32", "int64"]),
       columns=st.sampled_from([None, 2]), cov=st.sampled_from([False, True, "unscaled"]))
@example(deg=0, dtype="float64", columns=2, cov="unscaled")  # one (1, 1, 1) matrix, not two
def test_polyfit(deg, dtype, columns, cov):
    x = np.linspace(-2, 3, 9).astype(dtype)
    y = (x.astype(float) ** 2 - x).astype(dtype)
    if columns:
        y = np.stack([y, 2 * y + 1], axis=1)
    w = np.linspace(1, 2, 9)
    run_xp(lambda xp: xp.polyfit(xp.array(x), xp.array(y), deg, cov=cov), tol="close")
    run_xp(lambda xp: xp.polyfit(xp.array(x), xp.array(y), deg, w=xp.array(w), cov=cov),
           tol="close")


def test_polyfit_full_and_errors():
    x = np.linspace(0, 1, 6)
    fits = [xp.polyfit(xp.array(x), xp.array(x ** 3), 2, full=True) for xp in (np, nd)]
    (_, _, rank, _, rcond), (_, _, nd_rank, _, nd_rcond) = fits
    assert (type(nd_rank), nd_rank, nd_rcond) == (type(rank), rank, rcond)  # NumPy's scalars
    run_xp(lambda xp: [xp.polyfit(xp.array(x), xp.array(x ** 3), 2, full=True)[i]
                       for i in (0, 1, 3)], tol="close")
    run_xp(lambda xp: xp.polyfit(xp.array(x), xp.array(x), -1))
    run_xp(lambda xp: xp.polyfit(xp.ones((2, 3)), xp.ones(3), 1))
    run_xp(lambda xp: xp.polyfit(xp.ones(4), xp.ones(3), 1))
    run_xp(lambda xp: xp.polyfit(xp.array(x), xp.array(x), 1, w=xp.ones(2)))
    run_xp(lambda xp: xp.polyfit(xp.zeros(0), xp.zeros(0), 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.RankWarning)
        run_xp(lambda xp: xp.polyfit(xp.array(x[:3]), xp.array(x[:3]), 3, cov=True))


def test_polyfit_warns_when_rank_deficient():
    for xp in (np, nd):
        with pytest.warns(np.exceptions.RankWarning):
            fit = xp.polyfit(xp.ones(5), xp.arange(5.0), 2)
            if xp is nd:
                fit.asnumpy()


def test_order_errors():
    run_xp(lambda xp: xp.polyder(xp.ones(3), -1))
    run_xp(lambda xp: xp.polyint(xp.ones(3), -1))
    run_xp(lambda xp: xp.polyint(xp.ones(3), 3, k=[1.0, 2.0]))
    run_xp(lambda xp: xp.polyder(xp.array(1.0)))


def test_poly1d_takes_and_gives_ndarrays():
    p = nd.poly1d(nd.array([0.0, 1.0, 2.0, 3.0]))
    q = np.poly1d([1.0, 2.0, 3.0])
    assert isinstance(p, nd.poly1d) and p.order == 2 and p == q
    x = nd.arange(4.0)
    assert isinstance(p(x), nd.NDArray)
    np.testing.assert_allclose(p(x).asnumpy(), q(np.arange(4.0)))
    for got, expected in [(p + nd.array([1.0, 1.0]), q + [1.0, 1.0]), (p * p, q * q),
                          (p - 2.0, q - 2.0), (-p, -q), (p ** 2, q ** 2),
                          (p.deriv(), q.deriv()), (p.integ(k=1.0), q.integ(k=1.0)),
                          (nd.polyadd(p, nd.array([1.0])), np.polyadd(q, [1.0])),
                          (nd.polyder(p), np.polyder(q)), (nd.polyint(p), np.polyint(q)),
                          (nd.polymul(p, p), np.polymul(q, q))]:
        assert type(got) is nd.poly1d and got == expected
    quotient, remainder = p / nd.poly1d([1.0, 1.0])
    assert type(quotient) is nd.poly1d and (quotient, remainder) == q / np.poly1d([1, 1])
    np.testing.assert_allclose(nd.polyval(p, x).asnumpy(), q(np.arange(4.0)))
    assert nd.poly1d(nd.array([1.0, -3.0, 2.0]), r=False).roots.tolist() == [2.0, 1.0]
    assert p(2.0) == q(2.0)


NAMES = PUSHED + AT_CALL + ["poly1d"]


@pytest.mark.parametrize("name", NAMES)
def test_numpy_doc_examples(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.RankWarning)
        # np.square(p): ndengine's operands refuse objects that are arrays only through
        # __array__ (a core rule), poly1d among them
        assert run_doc_examples(getattr(np, name), skip=("np.square(p)",))


def test_a_poly1d_call_records_polyval():
    """p(x) of a poly1d is a pushed polyval, whose gradient reaches x (the rules' checks:
    tests/autograd/test_autograd_numpy_more.py)."""
    x = nd.array([2.0, 3.0])
    x.attach_grad()
    with autograd.record():
        y = nd.poly1d([1.0, -2.0, 0.5])(x).sum()
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 4.0])  # p'(x) = 2 x - 2
