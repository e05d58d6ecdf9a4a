"""The examples of NumPy's documentation of each ufunc and function added, run with xp=numpy
and xp=ndengine (complex-number examples left out: ndengine has real dtypes only)."""
import numpy as np
import pytest

import ndengine as nd
from ndarray_helpers import run_xp

pytestmark = pytest.mark.usefixtures("nd_engine")

A = [-1.7, -1.5, -0.2, 0.2, 1.5, 1.7, 2.0]
EPS = np.finfo(np.float64).eps

EXAMPLES = {
    "log2": lambda xp: xp.log2(xp.array([0, 1, 2, 2 ** 4])),
    "log10": lambda xp: xp.log10([1e-15, -3.]),
    "exp2": lambda xp: xp.exp2([2, 3]),
    "cbrt": lambda xp: xp.cbrt([1, 8, 27]),
    "reciprocal": lambda xp: [xp.reciprocal(2.), xp.reciprocal([1, 2., 3.33])],
    "hypot": lambda xp: [xp.hypot(3 * xp.ones((3, 3)), 4 * xp.ones((3, 3))),
                         xp.hypot(3 * xp.ones((3, 3)), [4])],
    "arctan2": lambda xp: [
        xp.arctan2(xp.array([-1, -1, +1, +1]), xp.array([-1, +1, +1, -1])) * 180 / np.pi,
        xp.arctan2([1., -1.], [0., 0.]), xp.arctan2([0., 0., np.inf], [+0., -0., np.inf])],
    "sinh": lambda xp: xp.sinh(0),
    "cosh": lambda xp: [xp.cosh(0), xp.cosh(xp.linspace(-4, 4, 1000))],
    "arcsinh": lambda xp: xp.arcsinh(xp.array([np.e, 10.0])),
    "arccosh": lambda xp: [xp.arccosh([np.e, 10.0]), xp.arccosh(1)],
    "arctanh": lambda xp: xp.arctanh([0, -0.5]),
    "deg2rad": lambda xp: xp.deg2rad(180),
    "rad2deg": lambda xp: xp.rad2deg(np.pi / 2),
    "degrees": lambda xp: degrees_example(xp),
    "radians": lambda xp: [xp.radians(xp.arange(12.) * 30.), radians_out_example(xp)],
    "copysign": lambda xp: [xp.copysign(1.3, -1), 1 / xp.copysign(0, 1), 1 / xp.copysign(0, -1),
                            xp.copysign([-1, 0, 1], -1.1),
                            xp.copysign([-1, 0, 1], xp.arange(3) - 1)],
    "nextafter": lambda xp: [xp.nextafter(1, 2) == EPS + 1,
                             xp.nextafter([1, 2], [2, 1]) == xp.array([EPS + 1, 2 - EPS])],
    "logaddexp": lambda xp: xp.exp(xp.logaddexp(np.log(1e-50), np.log(2.5e-50))),
    "logaddexp2": lambda xp: 2 ** xp.logaddexp2(np.log2(1e-50), np.log2(2.5e-50)),
    "fmod": lambda xp: [xp.fmod([-3, -2, -1, 1, 2, 3], 2), xp.remainder([-3, -2, -1, 1, 2, 3], 2),
                        xp.fmod([5, 3], [2, 2.]),
                        xp.fmod(xp.arange(-3, 3).reshape(3, 2), [2, -2])],
    "remainder": lambda xp: [xp.remainder([4, 7], [2, 3]), xp.remainder(xp.arange(7), 5),
                             xp.arange(7) % 5],
    "divmod": lambda xp: [*xp.divmod(xp.arange(5), 3), *divmod(xp.arange(5), 3)],
    "trunc": lambda xp: xp.trunc(xp.array(A)),
    "rint": lambda xp: xp.rint(xp.array(A)),
    "fix": lambda xp: [xp.fix(np.pi), xp.fix(-3.14), xp.fix([2.1, 2.9, -2.1, -2.9])],
    "fabs": lambda xp: [xp.fabs(-1), xp.fabs([-1.2, 1.2])],
    "absolute": lambda xp: [xp.absolute(xp.array([-1.2, 1.2])), xp.absolute(-1.2),
                            xp.abs(xp.array([-1.2, 1.2])), abs(xp.array([-1.2, 1.2]))],
    "negative": lambda xp: [xp.negative([1., -1.]), -xp.array([1., -1.])],
    "positive": lambda xp: [xp.positive(xp.array([1., -1.])), +xp.array([1., -1.])],
    "conjugate": lambda xp: [xp.conjugate(xp.array([1.5, -2])), xp.conj(3)],
    "signbit": lambda xp: [xp.signbit(-1.2), xp.signbit(xp.array([1, -2.3, 2.1]))],
    "isnan": lambda xp: [xp.isnan(np.nan), xp.isnan(np.inf),
                         xp.isnan([np.log(-1.), 1., np.log(0)])],
    "isinf": lambda xp: [xp.isinf(np.inf), xp.isinf(np.nan), xp.isinf(-np.inf),
                         xp.isinf([np.inf, -np.inf, 1.0, np.nan]), predicate_out(xp, xp.isinf)],
    "isfinite": lambda xp: [xp.isfinite(1), xp.isfinite(0), xp.isfinite(np.nan),
                            xp.isfinite(np.inf), xp.isfinite(-np.inf),
                            xp.isfinite([np.log(-1.), 1., np.log(0)]),
                            predicate_out(xp, xp.isfinite)],
    "logical_and": lambda xp: [xp.logical_and(True, False),
                               xp.logical_and([True, False], [False, False]),
                               xp.logical_and(xp.arange(5) > 1, xp.arange(5) < 4)],
    "logical_or": lambda xp: [xp.logical_or(True, False),
                              xp.logical_or([True, False], [False, False]),
                              xp.logical_or(xp.arange(5) < 1, xp.arange(5) > 3)],
    "logical_xor": lambda xp: [xp.logical_xor(True, False),
                               xp.logical_xor([True, True, False, False],
                                              [True, False, True, False]),
                               xp.logical_xor(xp.arange(5) < 1, xp.arange(5) > 3),
                               xp.logical_xor(0, xp.eye(2))],
    "logical_not": lambda xp: [xp.logical_not(3), xp.logical_not([True, False, 0, 1]),
                               xp.logical_not(xp.arange(5) < 3)],
    "bitwise_and": lambda xp: [
        xp.bitwise_and(13, 17), xp.bitwise_and(14, 13), xp.bitwise_and([14, 3], 13),
        xp.bitwise_and([11, 7], [4, 25]),
        xp.bitwise_and(xp.array([2, 5, 255]), xp.array([3, 14, 16])),
        xp.bitwise_and([True, True], [False, True]),
        xp.array([2, 5, 255]) & xp.array([3, 14, 16])],
    "bitwise_or": lambda xp: [
        xp.bitwise_or(13, 16), xp.bitwise_or(32, 2), xp.bitwise_or([33, 4], 1),
        xp.bitwise_or([33, 4], [1, 2]), xp.bitwise_or(xp.array([2, 5, 255]), xp.array([4, 4, 4])),
        xp.array([2, 5, 255, 2147483647], dtype=np.int32)
        | xp.array([4, 4, 4, 2147483647], dtype=np.int32),
        xp.bitwise_or([True, True], [False, True])],
    "bitwise_xor": lambda xp: [
        xp.bitwise_xor(13, 17), xp.bitwise_xor(31, 5), xp.bitwise_xor([31, 3], 5),
        xp.bitwise_xor([31, 3], [5, 6]), xp.bitwise_xor([True, True], [False, True]),
        xp.array([True, True]) ^ xp.array([False, True])],
    "invert": lambda xp: [
        xp.invert(xp.array(13, dtype=np.uint8)), xp.invert(xp.array(13, dtype=np.uint16)),
        xp.invert(xp.array(13, dtype=np.int8)), xp.invert(xp.array([True, False])),
        xp.bitwise_not(xp.array([True, False])), ~xp.array([True, False])],
    "left_shift": lambda xp: [
        xp.left_shift(5, 2), xp.left_shift(5, [1, 2, 3]), 5 << xp.array([1, 2, 3]),
        xp.left_shift(np.uint8(255), np.int64(1)),
        xp.left_shift(xp.array([255], np.uint8), 1)],
    "right_shift": lambda xp: [xp.right_shift(10, 1), xp.right_shift(10, [1, 2, 3]),
                               10 >> xp.array([1, 2, 3])],
    "heaviside": lambda xp: [xp.heaviside([-1.5, 0, 2.0], 0.5), xp.heaviside([-1.5, 0, 2.0], 1)],
    "fmax": lambda xp: [xp.fmax([2, 3, 4], [1, 5, 2]), xp.fmax(xp.eye(2), [0.5, 2]),
                        xp.fmax([np.nan, 0, np.nan], [0, np.nan, np.nan])],
    "fmin": lambda xp: [xp.fmin([2, 3, 4], [1, 5, 2]), xp.fmin(xp.eye(2), [0.5, 2]),
                        xp.fmin([np.nan, 0, np.nan], [0, np.nan, np.nan])],
    "float_power": lambda xp: [
        xp.float_power(xp.arange(6), 3),
        xp.float_power(xp.arange(6), [1.0, 2.0, 3.0, 3.0, 2.0, 1.0]),
        xp.float_power(xp.arange(6), xp.array([[1, 2, 3, 3, 2, 1], [1, 2, 3, 3, 2, 1]])),
        xp.float_power(-8, 1 / 3)],
    "power": lambda xp: [xp.power(xp.arange(6), 3),
                         xp.power(xp.arange(6), [1.0, 2.0, 3.0, 3.0, 2.0, 1.0]),
                         xp.arange(6) ** 2, xp.pow(xp.arange(6), 2)],
    "equal": lambda xp: [xp.equal([0, 1, 3], xp.arange(3)), xp.equal(1, xp.ones(1)),
                         xp.array([2, 4, 6]) == xp.array([2, 4, 2])],
    "not_equal": lambda xp: [xp.not_equal([1., 2.], [1., 3.]),
                             xp.not_equal([1, 2], [[1, 3], [1, 4]]),
                             xp.array([1., 2.]) != xp.array([1., 3.])],
    "less": lambda xp: [xp.less([1, 2], [2, 2]), xp.array([1, 2]) < xp.array([2, 2])],
    "less_equal": lambda xp: [xp.less_equal([4, 2, 1], [2, 2, 2]),
                              xp.array([4, 2, 1]) <= xp.array([2, 2, 2])],
    "greater": lambda xp: [xp.greater([4, 2], [2, 2]), xp.array([4, 2]) > xp.array([2, 2])],
    "greater_equal": lambda xp: [xp.greater_equal([4, 2, 1], [2, 2, 2]),
                                 xp.array([4, 2, 1]) >= xp.array([2, 2, 2])],
    "nan_to_num": lambda xp: [
        xp.nan_to_num(np.inf), xp.nan_to_num(-np.inf), xp.nan_to_num(np.nan),
        xp.nan_to_num(xp.array([np.inf, -np.inf, np.nan, -128, 128])),
        xp.nan_to_num(xp.array([np.inf, -np.inf, np.nan, -128, 128]), nan=-9999,
                      posinf=33333333, neginf=33333333)],
    "isclose": lambda xp: [
        xp.isclose([1e10, 1e-7], [1.00001e10, 1e-8]), xp.isclose([1e10, 1e-8], [1.00001e10, 1e-9]),
        xp.isclose([1e10, 1e-8], [1.0001e10, 1e-9]), xp.isclose([1.0, np.nan], [1.0, np.nan]),
        xp.isclose([1.0, np.nan], [1.0, np.nan], equal_nan=True),
        xp.isclose([1e-8, 1e-7], [0.0, 0.0]), xp.isclose([1e-100, 1e-7], [0.0, 0.0], atol=0.0),
        xp.isclose([1e-10, 1e-10], [1e-20, 0.0]),
        xp.isclose([1e-10, 1e-10], [1e-20, 0.999999e-10], atol=0.0),
        xp.isclose([1e-10, 1e-10], [1e-20, 0.999999e-10], atol=0.0, rtol=0.0),
        xp.isclose(1e-9, 2e-9), xp.isclose(1e-9, 2e-9, atol=1e-9)],
}


def degrees_example(xp):
    rad = xp.arange(12.) * np.pi / 6
    out = xp.zeros(rad.shape)
    r = xp.degrees(rad, out)
    return [xp.degrees(rad), r, xp.array(np.all(np.asarray(r) == np.asarray(out)))]


def radians_out_example(xp):
    deg = xp.arange(12.) * 30.
    out = xp.zeros(deg.shape)
    ret = xp.radians(deg, out)
    assert ret is out
    return out


def predicate_out(xp, fn):
    y = xp.array([2, 2, 2])
    fn(xp.array([-np.inf, 0., np.inf]), y)  # a bool result into an int array
    return y


# allclose and array_equal: NumPy's examples, Python bools
BOOL_EXAMPLES = {
    "allclose": lambda xp: [
        xp.allclose([1e10, 1e-7], [1.00001e10, 1e-8]), xp.allclose([1e10, 1e-8],
                                                                   [1.00001e10, 1e-9]),
        xp.allclose([1e10, 1e-8], [1.0001e10, 1e-9]), xp.allclose([1.0, np.nan], [1.0, np.nan]),
        xp.allclose([1.0, np.nan], [1.0, np.nan], equal_nan=True)],
    "array_equal": lambda xp: [
        xp.array_equal([1, 2], [1, 2]), xp.array_equal(xp.array([1, 2]), xp.array([1, 2])),
        xp.array_equal([1, 2], [1, 2, 3]), xp.array_equal([1, 2], [1, 4]),
        xp.array_equal(xp.array([1, np.nan]), xp.array([1, np.nan])),
        xp.array_equal(xp.array([1, np.nan]), xp.array([1, np.nan]), equal_nan=True)],
}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_numpy_documentation_examples(name):
    with np.errstate(all="ignore"):
        run_xp(EXAMPLES[name], tol="close")


@pytest.mark.parametrize("name", sorted(BOOL_EXAMPLES))
def test_numpy_documentation_examples_with_bool_answers(name):
    expected = BOOL_EXAMPLES[name](np)
    got = BOOL_EXAMPLES[name](nd)
    assert all(type(g) is bool for g in got)
    assert got == expected
