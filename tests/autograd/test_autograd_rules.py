"""Every gradient rule (ops/gradient_rules.RULES) against central differences in float64:
``CASES`` maps each op with a rule to calls that record it (a function of the namespace,
NumPy's or ndengine's, and small float64 inputs; test_autograd_numeric's ``MORE_CASES`` and
``COMPLEX_CASES`` hold the statistics', lstsq's, eig's and the FFTs', test_autograd_numpy_more's
``NUMPY_MORE_CASES`` and ``NUMPY_MORE_COMPLEX_CASES`` those of ops/gradients/numpy_more.py);
a rule without a case, or an op neither ruled nor listed as having no gradient, fails
``test_every_rule_has_a_numeric_check``.
Also: results without a gradient are constants; setitem (any key, into a fresh or a
tracked array), put and ufunc.at record the values written; linspace with tracked bounds;
under all three engines."""
import numpy as np
import pytest

import ndengine as nd
from ndengine import autograd, ops
from ndengine.core.pipeline import invoke
from ndengine.ops.gradients.rules import CREATION, NOT_BUILT, NOT_DIFFERENTIABLE, RULES

from test_autograd import check_gradients
from test_autograd_numeric import COMPLEX_CASES, MORE_CASES
from test_autograd_numpy_more import NUMPY_MORE_CASES, NUMPY_MORE_COMPLEX_CASES

pytestmark = pytest.mark.usefixtures("nd_engine")

RNG = np.random.default_rng(11)


def rand(*shape, lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, shape)


def with_nan(a):
    """``a`` with NaN at its second element (the nan-functions skip it)."""
    a = a.copy()
    a.flat[1] = np.nan
    return a


def signed(*shape, lo=0.2, hi=1.0):
    """Away from 0 (abs, sign, copysign, ...)."""
    return rand(*shape, lo=lo, hi=hi) * RNG.choice([-1.0, 1.0], shape)


def distinct(*shape):
    """Distinct values, well apart (max, sort, ... have no ties)."""
    return RNG.permutation(np.arange(np.prod(shape), dtype=np.float64)).reshape(shape) / 3 - 1


def spd(n):
    a = rand(n, n)
    return a @ a.T + n * np.eye(n)


OFF_GRID = np.array([[0.31, -1.42, 2.27], [-0.74, 0.13, 1.61]])  # no rounding boundary near


def pushed(name, inputs, params, output=0):
    """An op called directly (ndengine), for ops no public function reaches as such."""
    return invoke(ops.get(name), list(inputs), params)[output]


def assigned(xp, x, v, key):
    """x with x[key] = v, as a new array (assign_index, out of place)."""
    if xp is np:
        y = x.copy()
        y[key] = v
        return y
    return pushed("assign_index", [x, v], {"key": key})


def setitem(xp, v, key, shape=(3, 4)):
    """zeros(shape)[key] = v (recorded: v is tracked, the zeros are not)."""
    z = xp.zeros(shape)
    z[key] = v
    return z * 1.5


def put(xp, a, ind, v):
    if xp is np:
        y = a.copy()
        np.put(y, ind, v)
        return y
    return pushed("put", [a, nd.array(ind), v], {"mode": "raise"})


def put_along(xp, a, ind, v, axis):
    if xp is np:
        y = a.copy()
        np.put_along_axis(y, ind, v, axis)
        return y
    return pushed("put_along_axis", [a, nd.array(ind), v], {"axis": axis})


def stacked(xp, x, y, axis):
    if xp is np:
        return np.stack([x, y], axis=axis)
    return pushed("stack", [x, y], {"axis": axis})


def split_sum(xp, x, sections, axis):
    """Each piece of split(x) weighted differently, through the split op itself."""
    if xp is np:
        pieces = np.split(x, sections, axis=axis)
    else:
        pieces = invoke(ops.get("split"), [x], {"indices_or_sections": sections, "axis": axis})
    return sum(p * (k + 1) for k, p in enumerate(pieces))


def relu(xp, x):
    return nd.relu(x) if xp is nd else np.maximum(x, 0)


def sigmoid(xp, x):
    return nd.sigmoid(x) if xp is nd else 1 / (1 + np.exp(-x))


def ravel_all(xp, *arrays):
    return xp.concatenate([a.reshape(-1) for a in arrays])


def add_at(xp, v):
    """ufunc.at into arrays that are not recorded (v is)."""
    z, w = xp.zeros((4, 3)), xp.zeros((4, 3))
    np.add.at(z, (np.array([0, 2, 0]),), v)
    np.subtract.at(w, (np.array([1, 1]), np.array([0, 2])), v[0, :2])
    return z * 1.5 + w


def unary(name, lo=-1.0, hi=1.0, shape=(2, 3)):
    return [(lambda xp, x: getattr(xp, name)(x), [rand(*shape, lo=lo, hi=hi)])]


def binary(name, a=(-1.0, 1.0), b=(-1.0, 1.0)):
    return [(lambda xp, x, y: getattr(xp, name)(x, y), [rand(2, 3, lo=a[0], hi=a[1]),
                                                        rand(3, lo=b[0], hi=b[1])]),
            (lambda xp, x: getattr(xp, name)(x, 0.7), [rand(2, 2, lo=a[0], hi=a[1])])]


def piecewise(name):
    return [(lambda xp, x: getattr(xp, name)(x) * x, [OFF_GRID])]


CASES = {
    # element-wise
    "add": binary("add"), "subtract": binary("subtract"), "multiply": binary("multiply"),
    "true_divide": binary("true_divide", b=(0.5, 2.0)) + [
        (lambda xp, y: 2.0 / y, [rand(3, lo=0.5, hi=2.0)])],
    "negative": unary("negative"), "positive": unary("positive"),
    "conjugate": unary("conjugate"),
    "exp": unary("exp"), "exp2": unary("exp2"), "expm1": unary("expm1"),
    "log": unary("log", 0.3, 2.0), "log2": unary("log2", 0.3, 2.0),
    "log10": unary("log10", 0.3, 2.0), "log1p": unary("log1p", -0.5, 2.0),
    "sqrt": unary("sqrt", 0.3, 2.0), "cbrt": unary("cbrt", 0.3, 2.0),
    "square": unary("square"), "reciprocal": unary("reciprocal", 0.5, 2.0),
    "sin": unary("sin"), "cos": unary("cos"), "tan": unary("tan"),
    "arcsin": unary("arcsin", -0.8, 0.8), "arccos": unary("arccos", -0.8, 0.8),
    "arctan": unary("arctan", -2.0, 2.0),
    "sinh": unary("sinh"), "cosh": unary("cosh"), "tanh": unary("tanh"),
    "arcsinh": unary("arcsinh", -2.0, 2.0), "arccosh": unary("arccosh", 1.2, 3.0),
    "arctanh": unary("arctanh", -0.8, 0.8),
    "deg2rad": unary("deg2rad"), "radians": unary("radians"),
    "rad2deg": unary("rad2deg"), "degrees": unary("degrees"),
    "sigmoid": [(sigmoid, [rand(2, 3, lo=-3, hi=3)])],
    "relu": [(relu, [signed(2, 3)])],
    "abs": [(lambda xp, x: xp.abs(x), [signed(2, 3)])],
    "fabs": [(lambda xp, x: xp.fabs(x), [signed(2, 3)])],
    "sign": piecewise("sign"), "floor": piecewise("floor"), "ceil": piecewise("ceil"),
    "trunc": piecewise("trunc"), "fix": piecewise("fix"), "rint": piecewise("rint"),
    "round": [(lambda xp, x: xp.round(x, 1) * x, [OFF_GRID])],
    "floor_divide": [(lambda xp, x, y: xp.floor_divide(x, y) * x, [OFF_GRID, np.array([0.7, 0.9, 1.1])])],
    "nan_to_num": [(lambda xp, x: xp.nan_to_num(x) * 2, [rand(2, 3)])],
    "power": binary("power", a=(0.5, 2.0)), "float_power": binary("float_power", a=(0.5, 2.0)),
    "maximum": [(lambda xp, x, y: xp.maximum(x, y), [distinct(2, 3), distinct(3) + 0.1])],
    "minimum": [(lambda xp, x, y: xp.minimum(x, y), [distinct(2, 3), distinct(3) + 0.1])],
    "fmax": [(lambda xp, x, y: xp.fmax(x, y), [distinct(2, 3), distinct(3) + 0.1]),
             (lambda xp, x: xp.fmax(x, 0.15), [distinct(2, 3)])],
    "fmin": [(lambda xp, x, y: xp.fmin(x, y), [distinct(2, 3), distinct(3) + 0.1])],
    "hypot": binary("hypot", a=(0.2, 1.0)),
    "arctan2": binary("arctan2", a=(0.2, 1.0)),
    "logaddexp": binary("logaddexp"), "logaddexp2": binary("logaddexp2"),
    "mod": [(lambda xp, x, y: xp.mod(x, y), [OFF_GRID, np.array([0.7, 0.9, 1.1])]),
            (lambda xp, x: xp.mod(x, -0.9), [OFF_GRID])],
    "fmod": [(lambda xp, x, y: xp.fmod(x, y), [OFF_GRID, np.array([0.7, -0.9, 1.1])])],
    "divmod": [(lambda xp, x, y: xp.divmod(x, y)[1] + xp.divmod(x, y)[0] * x,
                [OFF_GRID, np.array([0.7, 0.9, 1.1])])],
    "nextafter": [(lambda xp, x, y: xp.nextafter(x, y), [rand(2, 3), rand(3)])],
    "heaviside": [(lambda xp, x, y: xp.heaviside(x * 0.0, y) + xp.heaviside(x, y) * y,
                   [signed(2, 3), rand(3)])],
    "copysign": [(lambda xp, x, y: xp.copysign(x, y) * x, [signed(2, 3), signed(3)])],
    "where": [(lambda xp, x, y: xp.where(x > 0, x * y, y), [signed(2, 3), rand(3)])],
    "clip": [(lambda xp, x: xp.clip(x, -0.5, 0.7), [signed(2, 3, lo=0.1)])],
    "clip_arrays": [(lambda xp, x, lo, hi: xp.clip(x, lo, hi),
                     [distinct(3, 4), distinct(4) / 4 - 0.55, distinct(3, 1) / 2 + 0.85]),
                    (lambda xp, x, lo: xp.clip(x, lo, 0.55), [distinct(3, 4), distinct(4) / 4 - 0.55])],
    "copy": [(lambda xp, x: xp.broadcast_to(x, (2, 3)) * x.astype(np.float64),
              [rand(3)])],
    # reductions
    "sum": [(lambda xp, x: xp.sum(x, axis=(0, 2), keepdims=True), [rand(2, 3, 2)])],
    "mean": [(lambda xp, x: xp.mean(x, axis=1), [rand(2, 3)])],
    "max": [(lambda xp, x: xp.max(x, axis=0), [distinct(3, 2)])],
    "min": [(lambda xp, x: xp.min(x), [distinct(3, 2)])],
    "prod": [(lambda xp, x: xp.prod(x, axis=(0, 2)), [rand(2, 3, 2, lo=0.5, hi=1.5)]),
             (lambda xp, x: xp.prod(x * np.array([1.0, 0.0, 1.0]), axis=1, keepdims=True),
              [rand(2, 3)]),
             (lambda xp, x: xp.prod(x), [rand(2, 2)])],
    "std": [(lambda xp, x: xp.std(x, axis=1, ddof=1), [rand(2, 4)]),
            (lambda xp, x: xp.std(x, keepdims=True), [rand(2, 3)])],
    "var": [(lambda xp, x: xp.var(x, axis=0), [rand(3, 2)]),
            (lambda xp, x: xp.var(x, ddof=1), [rand(2, 3)])],
    "ptp": [(lambda xp, x: xp.ptp(x, axis=1), [distinct(2, 4)])],
    "nansum": [(lambda xp, x: xp.nansum(x, axis=0), [with_nan(rand(2, 3))])],
    "nanmean": [(lambda xp, x: xp.nanmean(x, axis=1), [with_nan(rand(2, 3))])],
    "nanmax": [(lambda xp, x: xp.nanmax(x), [with_nan(distinct(2, 3))])],
    "nanmin": [(lambda xp, x: xp.nanmin(x, axis=0), [with_nan(distinct(2, 3))])],
    "sum_where": [(lambda xp, x: xp.sum(x, axis=1, where=np.array([True, False, True])),
                   [rand(2, 3)])],
    "mean_where": [(lambda xp, x: xp.mean(x, axis=0, where=np.array([[True, False, True],
                                                                     [True, True, False]])),
                    [rand(2, 3)])],
    "max_where": [(lambda xp, x: xp.max(x, axis=1, initial=-9.0,
                                        where=np.array([True, False, True])),
                   [distinct(2, 3)])],
    "min_where": [(lambda xp, x: xp.min(x, initial=9.0, where=np.array([True, False, True])),
                   [distinct(2, 3)])],
    "average": [(lambda xp, x: xp.average(x, axis=0), [rand(3, 2)]),
                (lambda xp, x, w: xp.average(x, axis=1, weights=w), [rand(2, 3),
                                                                     rand(3, lo=0.5, hi=1.5)]),
                (lambda xp, x, w: sum(xp.average(x, axis=0, weights=w, returned=True)),
                 [rand(2, 3), rand(2, 3, lo=0.5, hi=1.5)])],
    "cumsum": [(lambda xp, x: xp.cumsum(x, axis=1), [rand(2, 3)]),
               (lambda xp, x: xp.cumsum(x), [rand(2, 3)])],
    "cumprod": [(lambda xp, x: xp.cumprod(x, axis=0), [signed(3, 2, lo=0.5, hi=1.5)]),
                (lambda xp, x: xp.cumprod(x), [signed(2, 2, lo=0.5, hi=1.5)])],
    "cumulative_sum": [(lambda xp, x: xp.cumulative_sum(x, axis=1, include_initial=True),
                        [rand(2, 3)])],
    "cumulative_prod": [(lambda xp, x: xp.cumulative_prod(x, axis=0),
                         [signed(3, 2, lo=0.5, hi=1.5)])],
    "nancumsum": [(lambda xp, x: xp.nancumsum(x, axis=1), [with_nan(rand(2, 3))])],
    "diff": [(lambda xp, x: xp.diff(x, n=2, axis=1), [rand(2, 4)]),
             (lambda xp, x, p: xp.diff(x, axis=0, prepend=p, append=0.5), [rand(2, 3),
                                                                           rand(1, 3)])],
    # products
    "matmul": [(lambda xp, x, y: x @ y, [rand(2, 3, 4), rand(4, 2)]),
               (lambda xp, x, y: x @ y, [rand(3), rand(2, 3, 4)]),
               (lambda xp, x, y: x @ y, [rand(2, 3), rand(3)]),
               (lambda xp, x, y: xp.matmul(x, y), [rand(3), rand(3)])],
    "dot": [(lambda xp, x, y: xp.dot(x, y), [rand(3), rand(3)]),
            (lambda xp, x, y: xp.dot(x, y), [rand(2, 3), rand(3)]),
            (lambda xp, x, y: xp.dot(x, y), [rand(2, 3), rand(2, 3, 2)]),
            (lambda xp, x, y: xp.dot(x, y), [rand(3), rand()])],
    "tensordot": [(lambda xp, x, y: xp.tensordot(x, y, axes=([2, 0], [0, 1])),
                   [rand(2, 3, 4), rand(4, 2, 2)]),
                  (lambda xp, x, y: xp.tensordot(x, y, 1), [rand(2, 3), rand(3, 2)])],
    "inner": [(lambda xp, x, y: xp.inner(x, y), [rand(2, 3), rand(4, 3)])],
    "vdot": [(lambda xp, x, y: xp.vdot(x, y), [rand(2, 3), rand(3, 2)])],
    "outer": [(lambda xp, x, y: xp.outer(x, y), [rand(2, 2), rand(3)])],
    "kron": [(lambda xp, x, y: xp.kron(x, y), [rand(2, 3), rand(2)]),
             (lambda xp, x, y: xp.kron(x, y), [rand(2, 1, 2), rand(3, 2)])],
    "einsum": [(lambda xp, x, y: xp.einsum("ij,jk->ki", x, y), [rand(2, 3), rand(3, 2)]),
               (lambda xp, x: xp.einsum("ii->i", x), [rand(3, 3)]),
               (lambda xp, x, v: xp.einsum("iij,k->jk", x, v), [rand(2, 2, 3), rand(2)]),
               (lambda xp, x: xp.einsum("ij->", x), [rand(2, 3)]),
               (lambda xp, x, y: xp.einsum("...j,j->...", x, y), [rand(2, 2, 3), rand(3)]),
               (lambda xp, x, y: xp.einsum(x, [0, 1], y, [1], [0]), [rand(2, 3), rand(3)]),
               (lambda xp, x, y: xp.einsum("i,i,ij->j", x, x, y), [rand(3), rand(3, 2)]),
               (lambda xp, x, y: xp.einsum("...j,...j->...", x, y), [rand(1, 3), rand(2, 3)]),
               (lambda xp, x, s: xp.einsum("i,->i", x, s), [rand(3), rand()])],
    "linalg.multi_dot": [(lambda xp, a, b, c: xp.linalg.multi_dot([a, b, c]),
                          [rand(3), rand(3, 2), rand(2, 4)]),
                         (lambda xp, a, b, c: xp.linalg.multi_dot([a, b, c]),
                          [rand(2, 3), rand(3, 2), rand(2)])],
    # joins, moves, shapes
    "concatenate": [(lambda xp, x, y: xp.concatenate([x, y, x], axis=0) * 1.5,
                     [rand(2, 3), rand(1, 3)]),
                    (lambda xp, x, y: xp.concatenate([x, y], axis=None), [rand(2, 3), rand(2)])],
    "stack": [(lambda xp, x, y: stacked(xp, x, y, 1), [rand(2, 3), rand(2, 3)])],
    "split": [(lambda xp, x: split_sum(xp, x, 3, 1), [rand(2, 6)]),
              (lambda xp, x: split_sum(xp, x, [1, 3], 0), [rand(4, 2)])],
    "roll": [(lambda xp, x: xp.roll(x, 2, axis=1) * xp.roll(x, -1), [rand(2, 3)]),
             (lambda xp, x: xp.roll(x, (1, 2), axis=(0, 1)), [rand(2, 3)])],
    "tile": [(lambda xp, x: xp.tile(x, (2, 1, 3)), [rand(2, 3)]),
             (lambda xp, x: xp.tile(x, 2), [rand(3)])],
    "repeat": [(lambda xp, x: xp.repeat(x, 2), [rand(2, 3)]),
               (lambda xp, x: xp.repeat(x, 3, axis=1), [rand(2, 3)]),
               (lambda xp, x: xp.repeat(x, [2, 0, 1], axis=1), [rand(2, 3)])],
    "pad": [(lambda xp, x: xp.pad(x, ((1, 0), (2, 1))), [rand(2, 3)]),
            (lambda xp, x, c: xp.pad(x, 1, constant_values=c), [rand(2, 3), rand()]),
            *[(lambda xp, x, mode=mode: xp.pad(x, ((2, 1), (1, 3)), mode=mode), [rand(3, 4)])
              for mode in ("edge", "wrap", "reflect", "symmetric")],
            (lambda xp, x: xp.pad(x, ((4, 3), (0, 1)), mode="reflect"), [rand(2, 3)]),
            (lambda xp, x: xp.pad(x, 5, mode="wrap"), [rand(3)])],
    "diag": [(lambda xp, x: xp.diag(x, 1), [rand(3)]),
             (lambda xp, x: xp.diag(x, -1), [rand(3, 4)])],
    "diagonal": [(lambda xp, x: xp.diagonal(x, 1, 2, 0), [rand(3, 2, 4)])],
    "trace": [(lambda xp, x: xp.trace(x, -1), [rand(3, 3, 2)])],
    "tril": [(lambda xp, x: xp.tril(x, 1), [rand(2, 3, 4)]), (lambda xp, x: xp.tril(x), [rand(3)])],
    "triu": [(lambda xp, x: xp.triu(x, -1), [rand(3, 4)])],
    # indexing and selection
    "take_index": [(lambda xp, x: x[np.array([1, 0, 1])] * 2, [rand(2, 3)]),
                   (lambda xp, x: x[np.array([[0, 1], [1, 1]]), np.array([2, 0])], [rand(2, 3)]),
                   (lambda xp, x: x[x > 0], [signed(3, 3)])],
    "take": [(lambda xp, x: xp.take(x, [4, 0, -1, 4]), [rand(2, 3)]),
             (lambda xp, x: xp.take(x, [[2, 0], [-1, 2]], axis=1), [rand(2, 3, 2)]),
             (lambda xp, x: xp.take(x, [5, -4], axis=0, mode="wrap"), [rand(3, 2)]),
             (lambda xp, x: xp.take(x, [7, -2, 1], axis=0, mode="clip"), [rand(3, 2)])],
    "take_along_axis": [(lambda xp, x: xp.take_along_axis(x, np.array([[0, 2, 2], [1, -1, 0]]),
                                                          axis=1), [rand(2, 3)]),
                        (lambda xp, x: xp.take_along_axis(x, np.array([[0, 1, 0]]), axis=0),
                         [rand(2, 3)]),
                        (lambda xp, x: xp.take_along_axis(x, np.array([[1], [0]]), axis=1),
                         [rand(2, 3)]),
                        (lambda xp, x: xp.take_along_axis(x, np.array([5, 0, 5]), axis=None),
                         [rand(2, 3)])],
    "assign_index": [(lambda xp, x, v: assigned(xp, x, v, (np.array([0, 2]), slice(1, 3))),
                      [rand(3, 4), rand(1, 2)]),
                     (lambda xp, x: assigned(xp, x, 0.5, (slice(None), np.array([3, 0]))),
                      [rand(3, 4)]),
                     (lambda xp, v: setitem(xp, v, (np.array([0, 2]), slice(1, 3))),
                      [rand(2, 2)]),
                     (lambda xp, v: setitem(xp, v, (np.array([2, 0, 2]), np.array([1, 1, 1]))),
                      [rand(3)]),
                     (lambda xp, v: setitem(xp, v, np.array([[True, False, True, False]] * 3)),
                      [rand(6)])],
    "put": [(lambda xp, a, v: put(xp, a, np.array([0, 5, -1]), v), [rand(2, 3), rand(3)]),
            (lambda xp, a, v: put(xp, a, np.array([[4, 1], [4, 0]]), v), [rand(2, 3), rand(2, 2)]),
            (lambda xp, a, v: put(xp, a, np.array([1, 2, 3, 4]), v), [rand(2, 3), rand(2)])],
    "put_along_axis": [(lambda xp, a, v: put_along(xp, a, np.array([[2], [0]]), v, 1),
                        [rand(2, 3), rand(2, 1)]),
                       (lambda xp, a, v: put_along(xp, a, np.array([[1, 0, 1]]), v, 0),
                        [rand(2, 3), rand(3)]),
                       (lambda xp, a, v: put_along(xp, a, np.array([[0, 2, 0]]), v, 1),
                        [rand(2, 3), rand(2, 3)])],
    "choose": [(lambda xp, x, y: xp.choose(np.array([[0, 1, 0], [1, 1, 0]]), [x, y]),
                [rand(2, 3), rand(3)]),
               (lambda xp, x, y: xp.choose(np.array([2, 0, 3]), [x, y, 0.5], mode="wrap"),
                [rand(3), rand(3)])],
    "bincount": [(lambda xp, w: xp.bincount(np.array([0, 3, 1, 3]), weights=w, minlength=5),
                  [rand(4)])],
    "sort": [(lambda xp, x: xp.sort(x, axis=0), [distinct(3, 2)]),
             (lambda xp, x: xp.sort(x, axis=None), [distinct(2, 3)])],
    "partition": [(lambda xp, x: xp.partition(x, 1, axis=-1), [distinct(2, 4)]),
                  (lambda xp, x: xp.partition(x, (0, 2), axis=0), [distinct(4, 2)])],
    "ufunc_method": [(lambda xp, x: np.add.reduce(x, axis=1)[:, None] * np.multiply.reduce(x),
                      [rand(2, 3)]),
                     (lambda xp, x: np.maximum.reduce(x, axis=0, keepdims=True),
                      [distinct(3, 2)]),
                     (lambda xp, x: np.multiply.reduce(x, axis=0, initial=2.0), [rand(3, 2)]),
                     (lambda xp, x: np.add.accumulate(x, axis=1) * np.multiply.accumulate(x),
                      [signed(2, 3, lo=0.5, hi=1.5)]),
                     (lambda xp, x, y: np.multiply.outer(x, y) + np.subtract.outer(y, x)[..., 0],
                      [rand(2), rand(2, 2)]),
                     (lambda xp, v: add_at(xp, v), [rand(3, 3)])],
    # linalg
    "linalg.inv": [(lambda xp, a: xp.linalg.inv(a), [spd(3)]),
                   (lambda xp, a: xp.linalg.inv(a), [np.stack([spd(2), spd(2) + 1])])],
    "linalg.det": [(lambda xp, a: xp.linalg.det(a), [rand(3, 3)]),
                   (lambda xp, a: xp.linalg.det(a), [rand(2, 2, 2)])],
    "linalg.slogdet": [(lambda xp, a: xp.linalg.slogdet(a)[1] * 2 + xp.linalg.slogdet(a)[0],
                        [rand(2, 3, 3)])],
    "linalg.solve": [(lambda xp, a, b: xp.linalg.solve(a, b), [spd(3), rand(3)]),
                     (lambda xp, a, b: xp.linalg.solve(a, b), [np.stack([spd(2), spd(2)]),
                                                               rand(2)]),
                     (lambda xp, a, b: xp.linalg.solve(a, b), [spd(3), rand(2, 3, 2)])],
    "linalg.cholesky": [(lambda xp, x: xp.linalg.cholesky(x @ x.T + 3 * xp.eye(3)),
                         [rand(3, 3)]),
                        (lambda xp, x: xp.linalg.cholesky(x @ x.T + 2 * xp.eye(2), upper=True),
                         [rand(2, 2)])],
    "linalg.eigh": [(lambda xp, x: ravel_all(xp, xp.linalg.eigh(x + x.T)[0],
                                              xp.linalg.eigh(x + x.T)[1] ** 2),
                     [rand(3, 3)])],
    "linalg.eigvalsh": [(lambda xp, x: xp.linalg.eigvalsh(x + x.T, UPLO="U"), [rand(3, 3)])],
    "linalg.svd": [(lambda xp, a: ravel_all(xp, *(r ** 2 for r in xp.linalg.svd(
        a, full_matrices=False))), [rand(4, 3)]),
                   (lambda xp, a: ravel_all(xp, *(r ** 2 for r in xp.linalg.svd(a))),
                    [rand(2, 2, 2)]),
                   (lambda xp, a: xp.linalg.svd(a, compute_uv=False), [rand(2, 3)])],
    "linalg.svdvals": [(lambda xp, a: xp.linalg.svdvals(a), [rand(3, 2)])],
    "linalg.qr": [(lambda xp, a: ravel_all(xp, *xp.linalg.qr(a)), [rand(4, 3)]),
                  (lambda xp, a: xp.linalg.qr(a, mode="r"), [rand(3, 3)])],
    "linalg.pinv": [(lambda xp, a: xp.linalg.pinv(a), [rand(3, 2)]),
                    (lambda xp, a: xp.linalg.pinv(a), [rand(2, 4)])],
    "linalg.matrix_power": [(lambda xp, a: xp.linalg.matrix_power(a, 3), [rand(3, 3)]),
                            (lambda xp, a: xp.linalg.matrix_power(a, -2), [spd(2)]),
                            (lambda xp, a: xp.linalg.matrix_power(a, 0) * a, [rand(2, 2)])],
    "linalg.norm": [(lambda xp, x: xp.linalg.norm(x), [rand(2, 3, 2)]),
                    *[(lambda xp, x, o=o: xp.linalg.norm(x, ord=o, axis=1),
                       [distinct(2, 4) + 0.1]) for o in (1, 2, 3, np.inf, -np.inf, 0)],
                    *[(lambda xp, x, o=o: xp.linalg.norm(x, ord=o), [distinct(3, 4) + 0.1])
                      for o in ("fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf)],
                    (lambda xp, x: xp.linalg.norm(x, ord="fro", axis=(2, 0), keepdims=True),
                     [rand(2, 2, 3)]),
                    (lambda xp, x: xp.linalg.norm(x, ord=2, axis=(0, 2)), [rand(3, 2, 2)])],
    # signals and covariances (last: the draws above keep their values)
    "convolve": [(lambda xp, x, y, m=m: xp.convolve(x, y, m), [rand(n), rand(k)])
                 for m in ("full", "same", "valid") for n, k in ((5, 3), (2, 4), (3, 3))],
    "correlate": [(lambda xp, x, y, m=m: xp.correlate(x, y, m), [rand(n), rand(k)])
                  for m in ("full", "same", "valid") for n, k in ((5, 3), (2, 4), (4, 4))],
    "cov": [(lambda xp, x: xp.cov(x), [rand(3, 5)]),
            (lambda xp, x, y: xp.cov(x, y, rowvar=False, ddof=0), [rand(5, 2), rand(5)]),
            (lambda xp, x: xp.cov(x, bias=True), [rand(6)])],
    "corrcoef": [(lambda xp, x: xp.corrcoef(x), [rand(3, 5)]),
                 (lambda xp, x, y: xp.corrcoef(x, y, rowvar=False), [rand(5, 2), rand(5, 1)])],
}


def test_every_rule_has_a_numeric_check():
    """A rule with no case here (or in test_autograd_numeric's tables), a case for no rule,
    or an op in no list, fails."""
    ruled = {name for name, rule in RULES.items() if getattr(rule, "differentiable", True)}
    checked = (set(CASES) | set(MORE_CASES) | set(COMPLEX_CASES) | set(NUMPY_MORE_CASES)
               | set(NUMPY_MORE_COMPLEX_CASES))
    assert sorted(ruled - checked) == []
    assert sorted(checked - ruled) == []
    assert not ruled & set(NOT_BUILT) and not set(NOT_DIFFERENTIABLE) & set(NOT_BUILT)
    known = set(RULES) | set(NOT_BUILT) | set(CREATION)
    built_in = {name for name in ops.names() if _built_in(name)}
    assert sorted(built_in - known) == []
    assert sorted(known - built_in) == []


def _built_in(name):
    """An ndengine op (other tests register ops of their own: their kernels are theirs)."""
    kernels = ops.get(name).kernels.values()
    return all(getattr(k, "__module__", "").startswith("ndengine") for k in kernels)


@pytest.mark.parametrize("name", sorted(CASES))
def test_rule_matches_central_differences(name):
    for fn, arrays in CASES[name]:
        check_gradients(fn, *arrays, rtol=1e-5, atol=1e-7)


# ---------------------------------------------------------------- no gradient

@pytest.mark.parametrize("make, expected", [
    (lambda x: x * (x > 0), [1.0, 0.0, 1.0]),  # relu by a mask
    (lambda x: x * (x > 0).detach(), [1.0, 0.0, 1.0]),
    (lambda x: x + nd.argsort(x), [1.0, 1.0, 1.0]),
    (lambda x: x * nd.isnan(x), [0.0, 0.0, 0.0]),
    (lambda x: nd.argmax(x) * x, [0.0, 0.0, 0.0]),  # argmax is 0
    (lambda x: x * nd.logical_and(x > 0, x < 2.5), [0.0, 0.0, 1.0]),
], ids=["greater", "detached", "argsort", "isnan", "argmax", "logical_and"])
def test_results_without_a_gradient_are_constants(make, expected):
    """As in MXNet and PyTorch: a comparison's (an index's, ...) result takes no gradient."""
    x = nd.array([3.0, -1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = make(x).sum()
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), expected)


def test_a_value_reaching_x_only_through_constants_gives_a_zero_gradient():
    """MXNet writes zeros into a "write" variable its graph reaches without a gradient
    (a stale gradient goes); "add" adds nothing; a variable the graph does not reach keeps
    its gradient."""
    x, other = nd.array([3.0, -1.0, 2.0]), nd.array([1.0, 1.0])
    x.attach_grad()
    other.attach_grad()
    for v in (x, other):
        with autograd.record():
            y = (v * v).sum()
        y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [6.0, -2.0, 4.0])
    with autograd.record():
        y = ((x > 0) * 2.0 + nd.argsort(x)).sum()
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(other.grad.asnumpy(), [2.0, 2.0])  # not reached
    with autograd.record():
        y = ((x > 0) * 2.0).sum()
    (dx,) = autograd.grad(y, [x])
    np.testing.assert_array_equal(dx.asnumpy(), [0.0, 0.0, 0.0])
    x.attach_grad(grad_req="add")
    x.grad[...] = 5.0
    with autograd.record():
        y = nd.isfinite(x).sum()
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [5.0, 5.0, 5.0])


def test_an_integer_result_used_as_an_index_needs_no_gradient():
    x = nd.array([3.0, -1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = (nd.take(x, nd.argsort(x)) * nd.array([1.0, 2.0, 3.0])).sum()
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [3.0, 1.0, 2.0])


def test_only_a_users_numpy_gradient_interp_gradient_and_i0_are_not_built():
    """Every differentiable built-in op has a rule but user_gradient (second order through a
    registered NumPy gradient: test_autograd_numeric checks its message), interp and
    gradient (tests/ndarray/test_math_extra.py checks theirs), and i0 (its derivative, i1,
    is not in NumPy: test_autograd_numpy_more checks the message)."""
    assert NOT_BUILT == ("user_gradient", "interp", "gradient", "i0")


def test_unsupported_variants_refuse_clearly():
    x = nd.array(rand(3, 2))
    x.attach_grad()
    for make, message in [
            (lambda: nd.pad(x, 1, mode="mean"), r"pad\(mode='mean'\)"),
            (lambda: nd.linalg.svd(x)[0], "full_matrices=False"),
            (lambda: nd.linalg.qr(x.T)[1], "qr"),
    ]:
        with autograd.record():
            y = make().sum()
        with pytest.raises(NotImplementedError, match=message):
            y.backward()


def test_second_order_through_new_rules():
    x = nd.array([0.3, 0.6])
    x.attach_grad()
    with autograd.record():
        y = nd.sinh(x).sum() + (nd.cumsum(x) ** 2).sum()
        (dx,) = autograd.grad(y, [x], create_graph=True)
        z = dx.sum()
    z.backward()
    xs = x.asnumpy()  # z = sum(cosh(x)) + sum_j 2 (j + 1) cumsum(x)_j
    np.testing.assert_allclose(x.grad.asnumpy(), np.sinh(xs) + [6.0, 4.0], rtol=1e-12)


# ---------------------------------------------------------------- views, dtypes, setitem

def test_views_need_no_rule_of_their_own():
    """flip, squeeze, expand_dims, swapaxes, moveaxis, ravel, rot90, split: views of the
    input, which the tape's view rule differentiates."""
    check_gradients(lambda xp, x: xp.flip(x, 1) * xp.rot90(x, 2) + x[::-1].swapaxes(1, 0).T,
                    rand(2, 3))
    check_gradients(lambda xp, x: xp.moveaxis(xp.expand_dims(x, 0), 0, 2).squeeze(2)
                    * xp.ravel(x).reshape(2, 3), rand(2, 3))
    check_gradients(lambda xp, x: xp.split(x, [1, 3], axis=1)[1] * 2, rand(2, 4))


def test_float32_gradients_keep_the_dtype():
    values = rand(3, 3)

    def gradient(dtype):
        x = nd.array(values.astype(dtype))
        x.attach_grad()
        with autograd.record():
            y = (nd.take(x, [2, 0, 2], axis=1) * nd.linalg.inv(x @ x.T + 3 * nd.eye(3, dtype=dtype))
                 ).sum() + nd.einsum("ii", x) + nd.sort(x, axis=0)[0].sum()
        y.backward()
        return x.grad
    low, high = gradient(np.float32), gradient(np.float64)
    assert low.dtype == np.float32
    np.testing.assert_allclose(low.asnumpy(), high.asnumpy(), rtol=1e-4, atol=1e-5)


def test_setitem_with_a_basic_key_into_a_fresh_array():
    x = nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with autograd.record():
        z = nd.zeros(3)
        z[1:] = x[:2]
        loss = (z * x).sum()  # x0 x1 + x1 x2
    loss.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 4.0, 2.0])


@pytest.mark.parametrize("fn", [
    lambda xp, x: setitem(xp, x[0, 0], 1, shape=(4,)) * x[0],           # an int key
    lambda xp, x: setitem(xp, x[1], (1, slice(None, None, -1))) * x,    # a negative step
    lambda xp, x: setitem(xp, x[:, ::-2], (Ellipsis, slice(None, None, 2))) + x,
    lambda xp, x: setitem(xp, x[0, 1:3], (0, slice(2, None))) * x,      # an int and a slice
    lambda xp, x: setitem(xp, x, slice(None)) * x,                     # the whole array
    lambda xp, x: setitem(xp, x[None, :1], slice(1, 2)) * x,            # leading ones dropped
], ids=["int", "negative-step", "ellipsis", "row-slice", "whole", "leading-ones"])
def test_setitem_with_basic_keys_records_the_value(fn):
    check_gradients(fn, rand(3, 4))


def written_over(xp, x, key, value):
    """y = x * 2 (tracked), then y[key] = value in place: y's overwritten region takes no
    gradient, its other elements keep theirs (through the copy the tape moved aside)."""
    y = xp.exp(x) * 2
    y[key] = value
    return y * xp.exp(x)


@pytest.mark.parametrize("fn", [
    lambda xp, x: written_over(xp, x, (slice(None), slice(1, 3)), 0.5),  # a scalar value
    lambda xp, x: written_over(xp, x, 1, x[0] * 3),                        # a tracked value
    lambda xp, x: written_over(xp, x, (slice(None, None, -1), 0), x[:, 1]),
    lambda xp, x: written_over(xp, x, np.array([2, 0]), x[1]),          # an advanced key
], ids=["scalar", "row", "negative-step-column", "advanced"])
def test_setitem_into_a_tracked_array(fn):
    check_gradients(fn, rand(3, 4))


def test_setitem_chains_and_what_cannot_be_written():
    x = nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with autograd.record():
        z = nd.zeros(3)
        for i in range(3):  # writes into z, one after another: nothing is copied
            z[i] = x[2 - i] * (i + 1)
        loss = (z * z).sum()  # x2^2 + 4 x1^2 + 9 x0^2
    loss.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [18.0, 16.0, 6.0])
    with autograd.record():
        with pytest.raises(RuntimeError, match="variable"):
            x[0] = 1.0  # a variable's value is what backward differentiates at
        y = x * 2
        with pytest.raises(RuntimeError, match="views of it"):
            y[1:] = y[:2]  # y[:2], made while recording, shares y's memory
        with pytest.raises(RuntimeError, match="in-place"):
            y += 1  # other in-place ops into a recorded array still raise (as MXNet)


def test_linspace_with_tracked_bounds_is_recorded():
    check_gradients(lambda xp, a, b: xp.linspace(a, b, 5), rand(2), rand(3, 1))
    check_gradients(lambda xp, a, b: xp.linspace(a, b, 4, endpoint=False, axis=-1), rand(2),
                    rand(2))
    check_gradients(lambda xp, b: xp.linspace(0.5, b, 3)[None] * b, 0.7)
    x = nd.array(2.0)
    x.attach_grad()
    with autograd.record():
        with pytest.raises(TypeError, match="recorded for autograd"):
            nd.full(3, x)  # read as a value: refused, not silently constant
        y = (nd.full(3, x.detach()) * x).sum()
    y.backward()
    assert x.grad.item() == 6.0
