"""Central-difference checks (float64) of the rules in ops/gradients/numpy_more.py
(``NUMPY_MORE_CASES``, real; ``NUMPY_MORE_COMPLEX_CASES``, complex, through
test_autograd_numeric's ``check_complex``): ldexp, frexp, modf, unwrap, sort_complex, the
masked writes, select, vecdot/matvec/vecmat and the polynomial ops; the public in-place
functions on a recorded array; and what refuses clearly. tests/autograd/
test_autograd_rules.py's coverage check reads both tables. Under all three engines."""
import numpy as np
import pytest

import ndengine as nd
from ndengine import autograd, ops
from ndengine.core.pipeline import invoke

from test_autograd import check_gradients
from test_autograd_numeric import check_complex, crand, distinct, rand

pytestmark = pytest.mark.usefixtures("nd_engine")


MASK = np.array([[True, False, True], [False, True, True]])


def written(name, xp, target, mask, values):
    """numpy.<name>(target, mask, values) out of place: a copy for NumPy, the op pushed
    without ``out`` for ndengine (the public function writes in place)."""
    if xp is np:
        result = target.copy()
        getattr(np, name)(result, mask, values)
        return result
    return invoke(ops.get(name), [target, nd.array(mask), values], {})[0]


def copied(xp, dst, src, where):
    if xp is np:
        result = dst.copy()
        np.copyto(result, src, where=where)
        return result
    return invoke(ops.get("copyto"), [dst, src, nd.array(where)], {"casting": "same_kind"})[0]


def fitted(xp, x, y, deg, w=None):
    return xp.polyfit(x, y, deg, w=w)


ABSCISSAS = np.array([-1.0, -0.4, 0.1, 0.5, 0.9, 1.3])

NUMPY_MORE_CASES = {
    "ldexp": [(lambda xp, x: xp.ldexp(x, np.array([1, -2, 3])), [rand(2, 3)]),
              (lambda xp, x: xp.ldexp(x, 2), [rand(3)])],
    "frexp": [(lambda xp, x: xp.frexp(x)[0] * xp.frexp(x)[1], [rand(2, 3, lo=0.1, hi=7.0)])],
    "modf": [(lambda xp, x: xp.modf(x)[0] + xp.modf(x)[1] * x, [rand(2, 3, lo=-3, hi=3)])],
    "unwrap": [(lambda xp, x: xp.unwrap(x), [np.array([0.1, 3.0, 6.1, -0.2, 2.9])]),
               (lambda xp, x: xp.unwrap(x, period=4.0, axis=0), [rand(4, 2, lo=-3, hi=3)])],
    "copyto": [(lambda xp, d, s: copied(xp, d, s, MASK), [rand(2, 3), rand(3)]),
               (lambda xp, d, s: copied(xp, d, s, MASK[:1]), [rand(2, 3), rand(2, 3)])],
    "putmask": [(lambda xp, a, v: written("putmask", xp, a, MASK, v), [rand(2, 3), rand(2, 3)]),
                (lambda xp, a, v: written("putmask", xp, a, MASK, v), [rand(2, 3), rand(4)]),
                (lambda xp, a: written("putmask", xp, a, MASK, np.zeros(0)), [rand(2, 3)])],
    "place": [(lambda xp, a, v: written("place", xp, a, MASK, v), [rand(2, 3), rand(4)]),
              (lambda xp, a, v: written("place", xp, a, MASK, v), [rand(2, 3), rand(2)])],
    "select": [(lambda xp, x, y: xp.select([x > 0.3, x > -0.2], [x * y, y], default=x),
                [rand(2, 3), rand(3)]),
               (lambda xp, x: xp.select([x < 0], [x], 0.5), [rand(4)])],
    "vecdot": [(lambda xp, a, b: xp.vecdot(a, b), [rand(2, 3), rand(3)]),
               (lambda xp, a, b: xp.vecdot(a, b, axis=0), [rand(3, 2), rand(3, 1)])],
    "matvec": [(lambda xp, m, v: xp.matvec(m, v), [rand(2, 3, 4), rand(4)])],
    "vecmat": [(lambda xp, v, m: xp.vecmat(v, m), [rand(2, 3), rand(3, 4)])],
    "polyadd": [(lambda xp, a, b: xp.polyadd(a, b), [rand(2), rand(4)]),
                (lambda xp, a, b: xp.polyadd(a, b), [rand(3), rand(1)])],
    "polysub": [(lambda xp, a, b: xp.polysub(a, b), [rand(4), rand(2)])],
    "polyder": [(lambda xp, p: xp.polyder(p), [rand(4)]),
                (lambda xp, p: xp.polyder(p, 2), [rand(5)]),
                (lambda xp, p: xp.polyder(p, 4) + p[0], [rand(3)])],
    "polyint": [(lambda xp, p: xp.polyint(p), [rand(3)]),
                (lambda xp, p: xp.polyint(p, 3, k=[1.0, 2.0, 0.5]), [rand(4)])],
    "polyval": [(lambda xp, p, x: xp.polyval(p, x), [rand(4), rand(2, 3)]),
                (lambda xp, p, x: xp.polyval(p, x), [rand(3, 2), rand(4, 1)]),
                (lambda xp, p, x: xp.polyval(p, x), [rand(1), rand(3)])],
    "poly": [(lambda xp, r: xp.poly(r), [rand(4)]), (lambda xp, r: xp.poly(r), [rand(1)])],
    "polyfit": [(lambda xp, x, y: fitted(xp, x, y, 2), [ABSCISSAS, rand(6)]),
                (lambda xp, x, y: fitted(xp, x, y, 1), [ABSCISSAS[:4], rand(4, 2)]),
                (lambda xp, x, y, w: fitted(xp, x, y, 2, w), [ABSCISSAS, rand(6),
                                                               rand(6, lo=0.5, hi=1.5)]),
                (lambda xp, x, y, w: fitted(xp, x, y, 1, w), [ABSCISSAS[:5], rand(5, 2),
                                                               rand(5, lo=0.5, hi=1.5)]),
                (lambda xp, x, y: fitted(xp, x, y, 0), [ABSCISSAS[:3], rand(3)])],
}

NUMPY_MORE_COMPLEX_CASES = {
    "sort_complex": [(lambda xp, x: xp.sort_complex(x), [crand(2, 4)]),
                     (lambda xp, x: xp.sort_complex(x), [distinct(5)])],
    "vecdot": [(lambda xp, a, b: xp.vecdot(a, b), [crand(2, 3), crand(3)])],
    "matvec": [(lambda xp, m, v: xp.matvec(m, v), [crand(2, 3), crand(2, 1, 3)])],
    "vecmat": [(lambda xp, v, m: xp.vecmat(v, m), [crand(3), crand(2, 3, 2)])],
    "polyval": [(lambda xp, p, x: xp.polyval(p, x), [crand(3), crand(4)])],
    "copyto": [(lambda xp, d, s: copied(xp, d, s, MASK), [crand(2, 3), crand(2, 3)])],
}


@pytest.mark.parametrize("name", sorted(NUMPY_MORE_CASES))
def test_rule_matches_central_differences(name):
    for fn, arrays in NUMPY_MORE_CASES[name]:
        check_gradients(fn, *arrays, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", sorted(NUMPY_MORE_COMPLEX_CASES))
def test_complex_rule_matches_central_differences(name):
    for fn, arrays in NUMPY_MORE_COMPLEX_CASES[name]:
        check_complex(fn, *arrays)


@pytest.mark.parametrize("write, expected", [
    (lambda z, v: nd.putmask(z, MASK[0], v), [1.0, 0.0, 100.0]),
    (lambda z, v: nd.place(z, MASK[0], v), [1.0, 100.0, 0.0]),
    (lambda z, v: nd.copyto(z, v, where=MASK[0]), [1.0, 0.0, 100.0]),
    (lambda z, v: nd.copyto(z, v), [1.0, 10.0, 100.0]),
], ids=["putmask", "place", "copyto-where", "copyto"])
def test_public_masked_writes_into_a_fresh_array_record_the_values(write, expected):
    """The public functions write in place: into an array made while recording, the values
    written take their gradient (place's k-th True position reads the k-th value)."""
    v = nd.array([1.0, 2.0, 3.0])
    v.attach_grad()
    with autograd.record():
        z = nd.zeros(3)
        write(z, v)
        y = (z * nd.array([1.0, 10.0, 100.0])).sum()
    y.backward()
    np.testing.assert_array_equal(v.grad.asnumpy(), expected)


def test_what_has_no_gradient_refuses_clearly():
    """i0 (its derivative i1 is not in NumPy) and polyfit with cov=True raise at backward,
    naming the op."""
    x = nd.array([0.5, 1.0])
    x.attach_grad()
    abscissas = nd.array([0.0, 1.0, 2.0, 3.0])
    for make, error, message in [
            (lambda: nd.i0(x), TypeError, "i0 has no gradient rule"),
            (lambda: nd.polyfit(abscissas, x[:1] * abscissas + nd.array([0.1, -0.2, 0.3, 0.0]),
                                1, cov=True)[0], NotImplementedError, "polyfit with cov=True"),
    ]:
        with autograd.record():
            y = make().sum()
        with pytest.raises(error, match=message):
            y.backward()


def test_integer_results_are_constants():
    """gcd, lcm, bitwise_count, spacing and frexp's exponent take no gradient."""
    x = nd.array([3.0, -1.5, 2.0])
    x.attach_grad()
    n = nd.array([4, 6, 9])
    with autograd.record():
        y = (x * (nd.gcd(n, 6) + nd.lcm(n, 4) + nd.bitwise_count(n)) + nd.spacing(x) * 1e15
             + nd.frexp(x)[1]).sum()
    y.backward()
    expected = np.gcd([4, 6, 9], 6) + np.lcm([4, 6, 9], 4) + np.bitwise_count([4, 6, 9])
    np.testing.assert_array_equal(x.grad.asnumpy(), expected)
