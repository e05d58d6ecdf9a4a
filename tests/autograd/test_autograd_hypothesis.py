"""Numeric gradient checks over generated shapes (MXNet's check_numeric_gradient pattern):
every element-wise binary op with a rule (and where, clip_arrays) over broadcastable shape
pairs (0-d, size-1 axes, different ranks) with values in the op's domain; every reduction
and accumulation with a rule over shapes, axes (None, an int, a tuple where NumPy takes
one) and keepdims; matmul, dot, tensordot and inner over compatible shapes, 1-d and
batched. Central differences in float64 (tests/autograd/test_autograd.py's ``check_gradients``);
the examples per test are the Hypothesis profile's (tests/conftest.py: 10 under CI); under
all three engines. The values come from a drawn seed: spread out, so no two are tied and
none sits on a kink."""
import math

import numpy as np
import pytest
from hypothesis import assume, given, strategies as st
from hypothesis.extra import numpy as hnp

from ndengine import ops
from ndengine.ops.gradients.elementwise import ELEMENTWISE
from ndengine.ops.gradients.reductions import REDUCTIONS
from ndengine.ops.gradients.statistics import STATISTICS

from test_autograd import check_gradients

pytestmark = pytest.mark.usefixtures("nd_engine")


def values(data, shape, lo=-2.0, hi=2.0, signed=False):
    """Distinct values in [lo, hi] (times a random sign when ``signed``): a permutation of
    a grid with a random offset, so ties and zeros are far apart from each other."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1), label="seed"))
    n = math.prod(shape)
    grid = (rng.permutation(n) + rng.uniform(0.2, 0.8)) / n
    x = (lo + (hi - lo) * grid).reshape(shape)
    return x * rng.choice([-1.0, 1.0], shape) if signed else x


def shapes(data, count, min_dims=0, max_dims=3):
    return data.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=count, min_dims=min_dims, max_dims=max_dims, min_side=1,
        max_side=3)).input_shapes


def away_from_steps(x, y):
    """x / y at least 1e-3 from an integer (mod, fmod, floor_divide, divmod jump there)."""
    ratio = np.abs(np.asarray(x / y))
    return np.all(np.abs(ratio - np.round(ratio)) > 1e-3)


def apart(*arrays):
    """No two broadcast operands within 1e-3 of each other (max, min, clip: no ties)."""
    arrays = np.broadcast_arrays(*arrays)
    return all(np.all(np.abs(a - b) > 1e-3) for i, a in enumerate(arrays)
               for b in arrays[i + 1:])


# name: (fn(xp, x, y), x's domain (lo, hi, signed), y's domain, a check of the pair)
WIDE, AWAY = (-2.0, 2.0, False), (0.3, 2.0, True)
BINARY = {
    "add": (lambda xp, x, y: xp.add(x, y), WIDE, WIDE, None),
    "subtract": (lambda xp, x, y: xp.subtract(x, y), WIDE, WIDE, None),
    "multiply": (lambda xp, x, y: xp.multiply(x, y), WIDE, WIDE, None),
    "true_divide": (lambda xp, x, y: xp.true_divide(x, y), WIDE, AWAY, None),
    "power": (lambda xp, x, y: xp.power(x, y), (0.5, 2.0, False), WIDE, None),
    "float_power": (lambda xp, x, y: xp.float_power(x, y), (0.5, 2.0, False), WIDE, None),
    "maximum": (lambda xp, x, y: xp.maximum(x, y), WIDE, WIDE, apart),
    "minimum": (lambda xp, x, y: xp.minimum(x, y), WIDE, WIDE, apart),
    "fmax": (lambda xp, x, y: xp.fmax(x, y), WIDE, WIDE, apart),
    "fmin": (lambda xp, x, y: xp.fmin(x, y), WIDE, WIDE, apart),
    "hypot": (lambda xp, x, y: xp.hypot(x, y), AWAY, AWAY, None),
    "arctan2": (lambda xp, x, y: xp.arctan2(x, y), AWAY, AWAY, None),
    "logaddexp": (lambda xp, x, y: xp.logaddexp(x, y), WIDE, WIDE, None),
    "logaddexp2": (lambda xp, x, y: xp.logaddexp2(x, y), WIDE, WIDE, None),
    "mod": (lambda xp, x, y: xp.mod(x, y), WIDE, AWAY, away_from_steps),
    "fmod": (lambda xp, x, y: xp.fmod(x, y), WIDE, AWAY, away_from_steps),
    "floor_divide": (lambda xp, x, y: xp.floor_divide(x, y) * x, WIDE, AWAY, away_from_steps),
    "divmod": (lambda xp, x, y: xp.divmod(x, y)[1] + xp.divmod(x, y)[0] * y, WIDE, AWAY,
               away_from_steps),
    "nextafter": (lambda xp, x, y: xp.nextafter(x, y), WIDE, WIDE, None),
    "heaviside": (lambda xp, x, y: xp.heaviside(x, y) * y + xp.heaviside(x * 0.0, y), AWAY,
                  WIDE, None),
    "copysign": (lambda xp, x, y: xp.copysign(x, y), AWAY, AWAY, None),
}


def test_every_binary_rule_is_generated():
    binary = {name for name in ELEMENTWISE if ops.get(name).num_inputs == 2}
    assert sorted(binary ^ set(BINARY)) == []


@given(data=st.data())
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_rules_with_broadcasting(name, data):
    fn, x_domain, y_domain, valid = BINARY[name]
    x_shape, y_shape = shapes(data, 2)
    x = values(data, x_shape, *x_domain[:2], signed=x_domain[2])
    y = values(data, y_shape, *y_domain[:2], signed=y_domain[2])
    assume(valid is None or valid(x, y))
    check_gradients(fn, x, y)
    scalar = 0.7  # a Python scalar operand takes no gradient
    if valid is None or valid(x, scalar):
        check_gradients(lambda xp, x: fn(xp, x, scalar), x)


@given(data=st.data())
def test_where_with_broadcasting(data):
    c_shape, x_shape, y_shape = shapes(data, 3)
    condition = values(data, c_shape) > 0
    check_gradients(lambda xp, x, y: xp.where(condition, x * y, y), values(data, x_shape),
                    values(data, y_shape))


@given(data=st.data())
def test_clip_arrays_with_broadcasting(data):
    x_shape, lo_shape, hi_shape = shapes(data, 3)
    x, lo, hi = (values(data, s) for s in (x_shape, lo_shape, hi_shape))
    assume(apart(x, lo, hi))
    check_gradients(lambda xp, x, lo, hi: xp.clip(x, lo, hi), x, lo, hi)


# ---------------------------------------------------------------- reductions

def _nan(x, data, axis, need):
    """x with NaNs at drawn positions (about a third), each result still reading ``need``
    values where its lane has them."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1), label="nan seed"))
    axes = _axes(axis, x.ndim)
    perm = [a for a in range(x.ndim) if a not in axes] + list(axes)
    spots = rng.random(x.shape) < 0.35
    lanes = np.transpose(spots, perm).reshape(-1, math.prod(x.shape[a] for a in axes))
    lanes[:, :need] = False
    spots = lanes.reshape([x.shape[a] for a in perm]).transpose(np.argsort(perm))
    return np.where(spots, np.nan, x)


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    return tuple(sorted({a % ndim for a in (axis if isinstance(axis, tuple) else (axis,))}))


def _quantile_method(data):
    return data.draw(st.sampled_from(["linear", "weibull", "hazen", "median_unbiased",
                                      "normal_unbiased", "interpolated_inverted_cdf",
                                      "midpoint", "lower", "higher", "nearest"]))


def _q(data):
    return data.draw(st.one_of(st.floats(0.0, 1.0), st.lists(st.floats(0.0, 1.0), min_size=1,
                                                              max_size=2)), label="q")


# name: (call(xp, x, axis, keepdims, data) with the drawn params, minimum lane size,
#        whether the data has NaNs, whether axis may be a tuple)
REDUCERS = {
    **{name: (lambda xp, x, axis, keep, data, name=name: getattr(xp, name)(
        x, axis=axis, keepdims=keep), 1, name.startswith("nan"), True)
       for name in ("sum", "mean", "max", "min", "prod", "ptp", "nansum", "nanmean",
                    "nanmax", "nanmin", "nanprod", "median", "nanmedian")},
    **{name: (lambda xp, x, axis, keep, data, name=name, ddof=None: getattr(xp, name)(
        x, axis=axis, keepdims=keep, ddof=ddof), 2, name.startswith("nan"), True)
       for name in ("std", "var", "nanstd", "nanvar")},
    **{name: (lambda xp, x, axis, keep, data, name=name, q=None, method=None: getattr(
        xp, name)(x, q, axis=axis, keepdims=keep, method=method), 1, name.startswith("nan"),
        True) for name in ("quantile", "nanquantile", "percentile", "nanpercentile")},
    "average": (lambda xp, x, axis, keep, data: xp.average(x, axis=axis, keepdims=keep), 1,
                False, True),
}
WHERE = ("sum_where", "mean_where", "prod_where", "std_where", "var_where", "max_where",
         "min_where")
ACCUMULATIONS = ("cumsum", "cumprod", "nancumsum", "nancumprod", "cumulative_sum",
                 "cumulative_prod")


def test_every_reduction_rule_is_generated():
    ruled = (set(REDUCTIONS) | set(STATISTICS)) - {"diff"}
    assert sorted(ruled ^ (set(REDUCERS) | set(WHERE) | set(ACCUMULATIONS))) == []


def _axis(data, ndim, tuples=True):
    options = [st.none()]
    if ndim:
        options.append(st.integers(-ndim, ndim - 1))
        if tuples:
            options.append(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim,
                                    unique=True).map(tuple))
    return data.draw(st.one_of(*options), label="axis")


@given(data=st.data())
@pytest.mark.parametrize("name", sorted(REDUCERS))
def test_reduction_rules(name, data):
    call, need, nan, tuples = REDUCERS[name]
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4))
    x = values(data, shape, -1.0, 1.0)
    if name.endswith("prod"):
        x = values(data, shape, 0.6, 1.4, signed=True)
    axis = _axis(data, len(shape), tuples)
    keepdims = data.draw(st.booleans(), label="keepdims")
    params = {}
    if name in ("std", "var", "nanstd", "nanvar"):
        params["ddof"] = data.draw(st.integers(0, 1), label="ddof")
        need = max(need, params["ddof"] + 1)
    if "quantile" in name or "percentile" in name:
        q = np.asarray(_q(data))
        params = {"q": q * 100 if "percentile" in name else q, "method": _quantile_method(data)}
    assume(math.prod(shape[a] for a in _axes(axis, len(shape))) >= need)
    if nan:
        x = _nan(x, data, axis, need)
    check_gradients(lambda xp, x: call(xp, x, axis, keepdims, data, **params), x)


@given(data=st.data())
@pytest.mark.parametrize("name", WHERE)
def test_where_reduction_rules(name, data):
    """sum, mean, prod, std, var, max, min with a where= mask broadcasting to x."""
    x_shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    trailing = x_shape[data.draw(st.integers(0, len(x_shape)), label="mask dims"):]
    ones = data.draw(st.lists(st.booleans(), min_size=len(trailing), max_size=len(trailing)))
    mask_shape = tuple(1 if one else n for one, n in zip(ones, trailing))
    mask = values(data, mask_shape) > -1.0  # mostly True
    base = name[:-len("_where")]
    x = values(data, x_shape, 0.6, 1.4, signed=True) if base == "prod" else \
        values(data, x_shape, -1.0, 1.0)
    axis = _axis(data, len(x_shape))
    keepdims = data.draw(st.booleans(), label="keepdims")
    need = 2 if base in ("std", "var") else 1
    params = {"where": mask}
    if base in ("max", "min"):
        params["initial"] = -9.0 if base == "max" else 9.0
        need = 0
    elif base == "prod":
        params["initial"] = 1.5
        need = 0
    counts = np.broadcast_to(mask, x_shape).sum(axis=axis)
    assume(np.min(counts) >= need)
    check_gradients(lambda xp, x: getattr(xp, base)(x, axis=axis, keepdims=keepdims,
                                                    **params), x)


@given(data=st.data())
@pytest.mark.parametrize("name", ACCUMULATIONS)
def test_accumulation_rules(name, data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    x = values(data, shape, 0.6, 1.4, signed=True)
    if name.startswith("nan"):
        x = _nan(x, data, None, 0)
    if name.startswith("cumulative"):
        axis = data.draw(st.integers(-len(shape), len(shape) - 1)) if len(shape) > 1 else \
            data.draw(st.sampled_from([None, 0, -1]))
        initial = data.draw(st.booleans(), label="include_initial")
        check_gradients(lambda xp, x: getattr(xp, name)(x, axis=axis, include_initial=initial),
                        x)
    else:
        axis = _axis(data, len(shape), tuples=False)
        check_gradients(lambda xp, x: getattr(xp, name)(x, axis=axis), x)


# ---------------------------------------------------------------- products

def _sides(data, count):
    return data.draw(st.lists(st.integers(1, 3), min_size=count, max_size=count),
                     label="sides")


@given(data=st.data())
def test_matmul_shapes(data):
    """1-d operands, matrices, and broadcast batches."""
    a_batch, b_batch = shapes(data, 2, max_dims=2)
    m, k, n = _sides(data, 3)
    a_vector, b_vector = data.draw(st.booleans()), data.draw(st.booleans())
    a_shape = (k,) if a_vector else a_batch + (m, k)
    b_shape = (k,) if b_vector else b_batch + (k, n)
    check_gradients(lambda xp, a, b: xp.matmul(a, b), values(data, a_shape),
                    values(data, b_shape))


@given(data=st.data())
def test_dot_shapes(data):
    """0-d (a product), 1-d, 2-d and n-d operands: numpy.dot's contractions."""
    a_ndim, b_ndim = data.draw(st.integers(0, 3)), data.draw(st.integers(0, 3))
    k = _sides(data, 1)[0]
    a_shape = tuple(_sides(data, a_ndim)) if b_ndim == 0 or a_ndim == 0 else \
        tuple(_sides(data, a_ndim - 1)) + (k,)
    if a_ndim == 0 or b_ndim == 0:
        b_shape = tuple(_sides(data, b_ndim))
    elif b_ndim == 1:
        b_shape = (k,)
    else:
        b_shape = tuple(_sides(data, b_ndim - 2)) + (k,) + tuple(_sides(data, 1))
    assume(len(a_shape) + len(b_shape) <= 5)
    check_gradients(lambda xp, a, b: xp.dot(a, b), values(data, a_shape),
                    values(data, b_shape))


@given(data=st.data())
def test_tensordot_and_inner_shapes(data):
    """tensordot: 0 to 2 contracted axes anywhere in either operand (axes as pairs, or as
    an int when they end a and start b); inner: the last axes."""
    contracted, free_a, free_b = (_sides(data, data.draw(st.integers(0, c)))
                                  for c in (2, 2, 2))
    a_order = data.draw(st.permutations(range(len(free_a) + len(contracted))))
    b_order = data.draw(st.permutations(range(len(free_b) + len(contracted))))
    a_dims = list(free_a) + list(contracted)  # in a_order: dimension i goes to a_order[i]
    b_dims = list(contracted) + list(free_b)
    a_shape = [0] * len(a_dims)
    b_shape = [0] * len(b_dims)
    for i, n in enumerate(a_dims):
        a_shape[a_order[i]] = n
    for i, n in enumerate(b_dims):
        b_shape[b_order[i]] = n
    axes = ([a_order[len(free_a) + j] for j in range(len(contracted))],
            [b_order[j] for j in range(len(contracted))])
    a, b = values(data, tuple(a_shape)), values(data, tuple(b_shape))
    check_gradients(lambda xp, a, b: xp.tensordot(a, b, axes), a, b)
    count = len(contracted)
    at_ends = values(data, tuple(free_a) + tuple(contracted))
    at_starts = values(data, tuple(contracted) + tuple(free_b))
    check_gradients(lambda xp, a, b: xp.tensordot(a, b, count), at_ends, at_starts)
    last = _sides(data, 1)
    check_gradients(lambda xp, a, b: xp.inner(a, b), values(data, tuple(free_a) + tuple(last)),
                    values(data, tuple(free_b) + tuple(last)))
