"""Gradient rules, one table over op names (tinygrad's ``gradient.py`` is the model).

``RULES[name](f, grads, inputs, outputs, params)`` gives one gradient per input (None where
an input takes none: a condition, an index, a Python scalar), for the op's output gradients
``grads``. Rules are written with ops, through ``f``, which the autograd layer supplies:
``f(name, *inputs, **params)`` pushes the op ``name`` and returns its (first) output, and
``f.zeros(shape, dtype, like)``, ``f.reshape(x, shape)``, ``f.transpose(x, axes)``,
``f.sum_to(g, shape)`` (``g`` summed down to ``shape``, undoing broadcasting),
``f.scatter_add(like, index, values)`` (zeros shaped as ``like``, ``values`` added at
``index``, repeats accumulating: ``numpy.add.at``); arrays are sliced with ``[...]``.
They never compute on data themselves, so gradients are ordinary pushed ops (what they do
compute with NumPy is metadata: index patterns from shapes and params, such as the source
position of each element ``pad`` writes). A gradient may have the broadcast shape: the
caller sums it down to its input's shape. Two helpers here push past ``f``: ``_outputs``
(every output of an op, where ``f`` gives the first: ``eigvalsh``'s gradient needs
``eigh``'s eigenvectors) and ``_const`` (an op without inputs, ``eye`` or ``arange``, on the
gradient's context).

Every rule is checked against central differences in float64 by
tests/test_autograd_rules.py (its ``CASES`` table must name every op ruled here).
Views (slicing, reshape, transpose, flip, squeeze, expand_dims, swapaxes, ravel, ...) are
no ops: the tape's view rule differentiates them (core/tape.py).

Conventions:
  * ties give the whole gradient to every tied element (max, min, ptp, nanmax, nanmin,
    vector norms inf/-inf, matrix norms 1/inf) or to the first input (maximum, minimum,
    fmax, fmin); sort and partition pass each element's gradient to where it came from;
  * piecewise-constant ops (sign, floor, ceil, trunc, fix, rint, round, floor_divide,
    heaviside in x1) have a zero gradient;
  * ``prod`` is exact with zeros in the input; ``cumprod``/``cumulative_prod`` and the
    ``float_power``/``power`` exponent gradient need a nonzero (positive) input;
  * ``cholesky``, ``eigh`` and ``eigvalsh`` read one triangle of a matrix taken as
    symmetric: their gradient is the symmetric one (for symmetric perturbations);
    ``svd``/``eigh`` need distinct singular values/eigenvalues, ``svd`` needs
    ``full_matrices=False`` (or a square matrix), ``qr`` a tall or square matrix
    (mode "reduced", "complete" of a square one, or "r");
  * ``x[idx] = v`` (``assign_index``), ``put`` and ``put_along_axis``: the gradient of
    the written values is the output's gradient at the written positions (where an
    index repeats, only the value NumPy kept, the last written, gets it); the target's
    gradient is the output's with those positions zeroed;
  * some variants raise NotImplementedError at backward, naming what is missing: pad in
    modes maximum/minimum/mean/median/linear_ramp or reflect_type "odd", or with an array
    of several constant_values; roll with an NDArray shift; ufunc methods other than
    reduce (add, multiply, maximum, minimum), accumulate (add, multiply), outer (a binary
    op with a rule), at (add, subtract); matrix norms other than fro, nuc, 2, -2, 1, -1,
    inf, -inf; svd(full_matrices=True) of a non-square matrix; qr of a wide matrix.

Deliberately no gradient (``NOT_DIFFERENTIABLE``: their rule raises a TypeError naming the
op when a gradient reaches them, so ``x * (x > 0)`` says to write ``x * (x > 0).detach()``
or ``nd.where(x > 0, x, 0)``): integer or boolean results (comparisons, logical and bitwise
ops, ``isnan`` & co., ``signbit``, ``isclose``, ``allclose``, ``array_equal``, ``any``,
``all``, ``count_nonzero``, ``argmax``/``argmin`` (and the nan ones), ``argsort``,
``argpartition``, ``lexsort``, ``searchsorted``, ``digitize``, ``nonzero``, ``argwhere``,
``flatnonzero``, ``unique``, ``unique_count``, ``bincount_length``,
``histogram_bin_count``, ``matrix_rank``), random draws (``random_*``), and ``histogram``
(piecewise constant in its data). Creation ops (``fill``, ``arange``, ``linspace``,
``eye``, ``indices``, ``fftfreq``, ``rfftfreq``) read no array, so the tape never records
them (``CREATION``).

Differentiable but not built yet (``NOT_BUILT``: backward says "has no gradient rule"):
``median``, ``nanmedian``, ``quantile``, ``percentile``, ``nanquantile``,
``nanpercentile``, ``nanprod``, ``nanstd``, ``nanvar``, ``nancumprod``, ``prod_where``,
``std_where``, ``var_where``, ``linalg.lstsq``, ``linalg.eig``, ``linalg.eigvals`` (complex
in general), and the ``fft.*`` transforms (complex results).
"""
from __future__ import annotations

import math
import string

import numpy as np

__all__ = ["RULES", "NOT_DIFFERENTIABLE", "NOT_BUILT", "CREATION"]


# ---------------------------------------------------------------- helpers

def _one(rule):
    """A rule of an op with one output: ``rule(f, g, *inputs, out=, **params)``."""
    def full(f, grads, inputs, outputs, params):
        return rule(f, grads[0], *inputs, out=outputs[0], **params)
    return full


def _unary(derivative):
    """``g * derivative(f, x, out)``."""
    return _one(lambda f, g, x, out, **_: [f("multiply", g, derivative(f, x, out))])


def _is_array(x):
    return (hasattr(x, "shape") and hasattr(x, "dtype")
            and not isinstance(x, (int, float, complex, bool, np.generic)))


def _zero(f, g, x):
    """A zero gradient for ``x`` (None for a Python scalar)."""
    return f.zeros(x.shape, g.dtype, g) if _is_array(x) else None


def _outputs(name, inputs, params, ctx=None):
    """Every output of the op ``name`` (``f`` gives the first), pushed as ``f`` pushes."""
    from ..core.pipeline import invoke  # the autograd layer imports this module first
    from .registry import get
    return invoke(get(name), list(inputs), params or None, ctx=ctx)


def _const(name, like, **params):
    """An op without inputs (eye, arange), on ``like``'s context."""
    return _outputs(name, [], params, ctx=like.context)[0]


def _eye(n, dtype, like):
    return _const("eye", like, N=int(n), dtype=np.dtype(dtype))


def _arange(n, like):
    return _const("arange", like, start=0, stop=int(n), step=1, dtype=np.dtype(np.intp))


def _broadcast(f, a, shape):
    """``a`` broadcast to ``shape`` (a copy)."""
    shape = tuple(shape)
    return a if a.shape == shape else f("copy", a, shape=shape)


def _axes(axis, ndim):
    """``axis`` (None, an int or a sequence) as sorted non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if not ndim:
        return ()
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    return tuple(sorted({int(a) % ndim for a in axes}))


def _kept(f, r, shape, axes, keepdims):
    """A reduction's result (or gradient) ``r`` with the reduced axes kept, of length 1."""
    if keepdims:
        return r
    return f.reshape(r, tuple(1 if i in axes else n for i, n in enumerate(shape)))


def _spread(f, g, x, axis, keepdims, scale=None):
    """A reduction's gradient: ``g`` (of the reduced shape) broadcast back over ``x``."""
    g = _kept(f, g, x.shape, _axes(axis, len(x.shape)), keepdims)
    if scale is not None:
        g = f("multiply", g, scale)
    return _broadcast(f, g, x.shape)


def _count(shape, axes):
    return math.prod(shape[a] for a in axes)


def _inverse(perm):
    return tuple(int(i) for i in np.argsort(perm))


def _swap(f, a):
    """The last two axes exchanged (a view)."""
    ndim = len(a.shape)
    return f.transpose(a, tuple(range(ndim - 2)) + (ndim - 1, ndim - 2))


def _flip(axis):
    return (slice(None),) * axis + (slice(None, None, -1),)


class _Shape:
    """Something with a shape (what ``f.scatter_add`` reads of its ``like``)."""

    def __init__(self, shape):
        self.shape = tuple(shape)


def _scatter(f, shape, index, values):
    """Zeros of ``shape``, ``values`` added at ``index`` (a NumPy index: metadata)."""
    return f.scatter_add(_Shape(shape), index, values)


def _c_strides(shape):
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def _scatter_along(f, g, index, shape, axis):
    """Zeros of ``shape`` with ``g`` added along ``axis`` at ``index`` (an NDArray of
    non-negative positions broadcasting against ``g``, whose other axes are ``shape``'s
    or 1 where ``shape`` has 1): take_along_axis's transpose, as one bincount."""
    strides = _c_strides(shape)
    position = f("multiply", index, strides[axis])
    for d, n in enumerate(shape):
        if d != axis and n > 1:
            steps = f("multiply", _arange(n, g), strides[d])
            position = f("add", position, f.reshape(
                steps, tuple(n if i == d else 1 for i in range(len(shape)))))
    size = math.prod(shape)
    position = f.reshape(_broadcast(f, position, g.shape), (-1,))
    flat = f("bincount", position, f.reshape(g, (-1,)), arrays=("weights",), minlength=size,
             length=size)
    return f.reshape(flat, shape)


def _wrapped(f, index, n, mode="raise"):
    """Positions as NumPy reads ``index`` along a length ``n`` (negative ones count from
    the end; mode "clip" clips, "wrap" wraps)."""
    if mode == "clip":
        return f("clip", index, a_min=0, a_max=max(n - 1, 0))
    return f("mod", index, max(n, 1))


def _value_gradient(f, region_grad, value):
    """The gradient of a value written (broadcast) into a region: summed to its shape
    (NumPy drops a value's extra leading ones before broadcasting it)."""
    if not _is_array(value):
        return None
    shape = tuple(value.shape)
    extra = len(shape) - len(region_grad.shape)
    stripped = shape[extra:] if extra > 0 else shape
    return f.reshape(f.sum_to(region_grad, stripped), shape)


# ---------------------------------------------------------------- element-wise

def _true_divide(f, g, x, y, out, **_):
    return [f("true_divide", g, y) if _is_array(x) else None,
            f("negative", f("true_divide", f("multiply", g, out), y)) if _is_array(y) else None]


def _power(f, g, x, y, out, **_):
    dx = dy = None
    if _is_array(x):
        lower = f("subtract", y, 1) if _is_array(y) else y - 1  # y: a Python scalar
        dx = f("multiply", g, f("multiply", y, f("power", x, lower)))
    if _is_array(y):
        dy = f("multiply", g, f("multiply", out, f("log", x)))
    return [dx, dy]


def _select(condition):
    """maximum/minimum: the gradient goes to the chosen input (ties: the first)."""
    def rule(f, g, x, y, out, **_):
        first = f(condition, x, y)
        return [f("where", first, g, 0) if _is_array(x) else None,
                f("where", first, 0, g) if _is_array(y) else None]
    return rule


def _nan_select(condition):
    """fmax/fmin: as maximum/minimum, a NaN loses."""
    def rule(f, g, x, y, out, **_):
        first = f(condition, x, y)
        if _is_array(y):
            first = f("logical_or", first, f("isnan", y))
        return [f("where", first, g, 0) if _is_array(x) else None,
                f("where", first, 0, g) if _is_array(y) else None]
    return rule


def _binary(dx, dy):
    """A binary op's rule from ``g * dx(f, x, y, out)`` and ``g * dy(...)``."""
    def rule(f, g, x, y, out, **_):
        return [f("multiply", g, dx(f, x, y, out)) if _is_array(x) else None,
                f("multiply", g, dy(f, x, y, out)) if _is_array(y) else None]
    return _one(rule)


def _zeros_rule(f, grads, inputs, outputs, params):
    """A piecewise-constant op: zero almost everywhere."""
    return [_zero(f, grads[0], x) for x in inputs]


def _mod(quotient):
    """mod/fmod: x - y * quotient(x / y)."""
    def rule(f, g, x, y, out, **_):
        dy = None
        if _is_array(y):
            dy = f("negative", f("multiply", g, quotient(f, x, y)))
        return [g if _is_array(x) else None, dy]
    return _one(rule)


def _divmod(f, grads, inputs, outputs, params):
    (x, y), (_, g) = inputs, grads  # the quotient is piecewise constant
    return [g if _is_array(x) else None,
            f("negative", f("multiply", g, outputs[0])) if _is_array(y) else None]


def _heaviside(f, g, x, y, out, **_):
    return [_zero(f, g, x), f("where", f("equal", x, 0), g, 0) if _is_array(y) else None]


def _copysign(f, g, x, y, out, **_):
    return [f("multiply", g, f("multiply", f("sign", x), f("sign", out)))
            if _is_array(x) else None, _zero(f, g, y)]


def _where(f, g, condition, x, y, out, **_):
    return [None, f("where", condition, g, 0) if _is_array(x) else None,
            f("where", condition, 0, g) if _is_array(y) else None]


def _clip(f, g, x, out, a_min=None, a_max=None, **_):
    inside = f("equal", out, x)  # not clipped (a bound equal to x passes the gradient)
    return [f("where", inside, g, 0)]


def _clip_arrays(f, g, x, low, high, out, **_):
    """numpy's clip ufunc: minimum(maximum(x, low), high)."""
    above = f("maximum", x, low)
    passes = f("less_equal", above, high)  # maximum(x, low) is the result
    through = f("where", passes, g, 0)
    x_wins = f("greater_equal", x, low)
    return [f("where", x_wins, through, 0) if _is_array(x) else None,
            f("where", x_wins, 0, through) if _is_array(low) else None,
            f("where", passes, 0, g) if _is_array(high) else None]


def _nan_to_num(f, g, x, out, **_):
    return [f("where", f("isfinite", x), g, 0)]


def _copy(f, g, x, out, dtype=None, **_):
    return [g if not _is_array(x) or g.dtype == x.dtype else f("copy", g, dtype=x.dtype)]


LN2, LN10 = math.log(2.0), math.log(10.0)

_ELEMENTWISE = {
    "add": _one(lambda f, g, x, y, out, **_: [g if _is_array(x) else None,
                                               g if _is_array(y) else None]),
    "subtract": _one(lambda f, g, x, y, out, **_: [g if _is_array(x) else None,
                                                    f("negative", g) if _is_array(y) else None]),
    "multiply": _one(lambda f, g, x, y, out, **_: [
        f("multiply", g, y) if _is_array(x) else None,
        f("multiply", g, x) if _is_array(y) else None]),
    "true_divide": _one(_true_divide),
    "negative": _one(lambda f, g, x, out, **_: [f("negative", g)]),
    "positive": _one(lambda f, g, x, out, **_: [g]),
    "conjugate": _one(lambda f, g, x, out, **_: [g]),  # real dtypes
    "exp": _unary(lambda f, x, out: out),
    "exp2": _unary(lambda f, x, out: f("multiply", out, LN2)),
    "expm1": _unary(lambda f, x, out: f("add", out, 1)),
    "log": _unary(lambda f, x, out: f("reciprocal", x)),
    "log2": _unary(lambda f, x, out: f("reciprocal", f("multiply", x, LN2))),
    "log10": _unary(lambda f, x, out: f("reciprocal", f("multiply", x, LN10))),
    "log1p": _unary(lambda f, x, out: f("reciprocal", f("add", x, 1))),
    "sqrt": _unary(lambda f, x, out: f("true_divide", 0.5, out)),
    "cbrt": _unary(lambda f, x, out: f("true_divide", 1 / 3, f("square", out))),
    "square": _unary(lambda f, x, out: f("multiply", x, 2)),
    "reciprocal": _unary(lambda f, x, out: f("negative", f("square", out))),
    "sin": _unary(lambda f, x, out: f("cos", x)),
    "cos": _unary(lambda f, x, out: f("negative", f("sin", x))),
    "tan": _unary(lambda f, x, out: f("add", f("square", out), 1)),
    "arcsin": _unary(lambda f, x, out: f("reciprocal", f("sqrt", f("subtract", 1,
                                                                   f("square", x))))),
    "arccos": _unary(lambda f, x, out: f("true_divide", -1, f("sqrt", f("subtract", 1,
                                                                        f("square", x))))),
    "arctan": _unary(lambda f, x, out: f("reciprocal", f("add", f("square", x), 1))),
    "sinh": _unary(lambda f, x, out: f("cosh", x)),
    "cosh": _unary(lambda f, x, out: f("sinh", x)),
    "tanh": _unary(lambda f, x, out: f("subtract", 1, f("square", out))),
    "arcsinh": _unary(lambda f, x, out: f("reciprocal", f("sqrt", f("add", f("square", x),
                                                                    1)))),
    "arccosh": _unary(lambda f, x, out: f("reciprocal", f("sqrt", f("subtract",
                                                                    f("square", x), 1)))),
    "arctanh": _unary(lambda f, x, out: f("reciprocal", f("subtract", 1, f("square", x)))),
    "deg2rad": _unary(lambda f, x, out: math.pi / 180),
    "radians": _unary(lambda f, x, out: math.pi / 180),
    "rad2deg": _unary(lambda f, x, out: 180 / math.pi),
    "degrees": _unary(lambda f, x, out: 180 / math.pi),
    "sigmoid": _unary(lambda f, x, out: f("multiply", out, f("subtract", 1, out))),
    "relu": _unary(lambda f, x, out: f("greater", x, 0)),
    "abs": _unary(lambda f, x, out: f("sign", x)),
    "fabs": _unary(lambda f, x, out: f("sign", x)),
    **{name: _zeros_rule for name in ("sign", "floor", "ceil", "trunc", "fix", "rint",
                                      "round", "floor_divide")},
    "nan_to_num": _one(_nan_to_num),
    "power": _one(_power),
    "float_power": _one(_power),
    "maximum": _one(_select("greater_equal")),
    "minimum": _one(_select("less_equal")),
    "fmax": _one(_nan_select("greater_equal")),
    "fmin": _one(_nan_select("less_equal")),
    "hypot": _binary(lambda f, x, y, out: f("true_divide", x, out),
                     lambda f, x, y, out: f("true_divide", y, out)),
    "arctan2": _binary(  # arctan2(x1, x2) = atan(x1 / x2)
        lambda f, x, y, out: f("true_divide", y, f("add", f("square", x), f("square", y))),
        lambda f, x, y, out: f("true_divide", f("negative", x),
                               f("add", f("square", x), f("square", y)))),
    "logaddexp": _binary(lambda f, x, y, out: f("exp", f("subtract", x, out)),
                         lambda f, x, y, out: f("exp", f("subtract", y, out))),
    "logaddexp2": _binary(lambda f, x, y, out: f("exp2", f("subtract", x, out)),
                          lambda f, x, y, out: f("exp2", f("subtract", y, out))),
    "mod": _mod(lambda f, x, y: f("floor_divide", x, y)),
    "fmod": _mod(lambda f, x, y: f("trunc", f("true_divide", x, y))),
    "divmod": _divmod,
    "nextafter": _one(lambda f, g, x, y, out, **_: [g if _is_array(x) else None,
                                                     _zero(f, g, y)]),
    "heaviside": _one(_heaviside),
    "copysign": _one(_copysign),
    "where": _one(_where),
    "clip": _one(_clip),
    "clip_arrays": _one(_clip_arrays),
    "copy": _one(_copy),
}


# ---------------------------------------------------------------- reductions

def _sum(f, g, x, out, axis=None, keepdims=False, **_):
    return [_spread(f, g, x, axis, keepdims)]


def _mean(f, g, x, out, axis=None, keepdims=False, **_):
    count = _count(x.shape, _axes(axis, len(x.shape)))
    return [_spread(f, g, x, axis, keepdims, 1.0 / max(count, 1))]


def _extreme(f, g, x, out, axis=None, keepdims=False, **_):
    """max/min: the gradient goes to every element equal to the result."""
    g_full = _spread(f, g, x, axis, keepdims)
    out_full = _spread(f, out, x, axis, keepdims)
    return [f("where", f("equal", x, out_full), g_full, 0)]


def _ptp(f, g, x, out, axis=None, keepdims=False, **_):
    axes = _axes(axis, len(x.shape))
    g_full = _spread(f, g, x, axis, keepdims)
    high = f("max", x, axis=axes, keepdims=True)
    low = f("min", x, axis=axes, keepdims=True)
    return [f("subtract", f("where", f("equal", x, high), g_full, 0),
              f("where", f("equal", x, low), g_full, 0))]


def _exclusive_products(f, a):
    """Along the last axis: each element's product of the others (exact with zeros)."""
    lead, n = a.shape[:-1], a.shape[-1]
    ones = f("add", f.zeros(lead + (1,), a.dtype, a), 1)
    if n == 1:
        return ones

    def before(b):  # product of the elements before each one
        return f("concatenate", ones, f("cumprod", b[..., :-1], axis=-1), axis=-1)
    return f("multiply", before(a), before(a[..., ::-1])[..., ::-1])


def _prod(f, g, x, out, axis=None, keepdims=False, **_):
    shape, ndim = tuple(x.shape), len(x.shape)
    axes = _axes(axis, ndim)
    if not axes:
        return [g]
    kept = tuple(a for a in range(ndim) if a not in axes)
    perm = kept + axes
    moved = f.reshape(f.transpose(x, perm), tuple(shape[a] for a in kept) + (-1,))
    others = f.reshape(_exclusive_products(f, moved), tuple(shape[a] for a in perm))
    return [f("multiply", _spread(f, g, x, axis, keepdims),
              f.transpose(others, _inverse(perm)))]


def _dof(shape, axes, ddof):
    """N - ddof (NaN where it is not positive: NumPy's result is then inf or NaN)."""
    dof = _count(shape, axes) - ddof
    return dof if dof > 0 else math.nan


def _centered(f, x, axes):
    return f("subtract", x, f("mean", x, axis=axes, keepdims=True))


def _var(f, g, x, out, axis=None, keepdims=False, ddof=0, **_):
    axes = _axes(axis, len(x.shape))
    scale = 2.0 / _dof(x.shape, axes, ddof)
    return [f("multiply", _spread(f, g, x, axis, keepdims, scale), _centered(f, x, axes))]


def _std(f, g, x, out, axis=None, keepdims=False, ddof=0, **_):
    axes = _axes(axis, len(x.shape))
    scale = 1.0 / _dof(x.shape, axes, ddof)
    spread = f("true_divide", _spread(f, g, x, axis, keepdims, scale),
               _kept(f, out, x.shape, axes, keepdims))
    return [f("multiply", spread, _centered(f, x, axes))]


def _nan_masked(rule):
    """A nan-reduction: ``rule`` on the input, the gradient zero at the NaNs."""
    def nan_rule(f, g, x, out, **params):
        (grad,) = rule(f, g, x, out, **params)
        return [f("where", f("isnan", x), 0, grad)]
    return nan_rule


def _nanmean(f, g, x, out, axis=None, keepdims=False, **_):
    axes = _axes(axis, len(x.shape))
    present = f("logical_not", f("isnan", x))
    count = f("sum", present, axis=axes, keepdims=True)
    grad = f("true_divide", _spread(f, g, x, axis, keepdims), count)
    return [f("where", present, grad, 0)]


def _where_mask(inputs, params, x):
    """The ``where=`` of a reduction (an input named in ``arrays``, or a param)."""
    names = params.get("arrays", ())
    if "where" in names:
        return inputs[1 + list(names).index("where")]
    return params.get("where", True)


def _sum_where(f, grads, inputs, outputs, params):
    x = inputs[0]
    mask = _where_mask(inputs, params, x)
    grad = _spread(f, grads[0], x, params.get("axis"), params.get("keepdims", False))
    if _is_array(mask):
        grad = f("where", mask, grad, 0)
    return [grad] + [None] * (len(inputs) - 1)


def _mean_where(f, grads, inputs, outputs, params):
    x = inputs[0]
    mask = _where_mask(inputs, params, x)
    axis, keepdims = params.get("axis"), params.get("keepdims", False)
    if not _is_array(mask):
        return _mean(f, grads[0], x, outputs[0], axis=axis, keepdims=keepdims) + [None] * (
            len(inputs) - 1)
    count = f("sum", _broadcast(f, mask, x.shape), axis=_axes(axis, len(x.shape)),
              keepdims=True)
    grad = f("true_divide", _spread(f, grads[0], x, axis, keepdims), count)
    return [f("where", mask, grad, 0)] + [None] * (len(inputs) - 1)


def _extreme_where(f, grads, inputs, outputs, params):
    x = inputs[0]
    mask = _where_mask(inputs, params, x)
    axis, keepdims = params.get("axis"), params.get("keepdims", False)
    g_full = _spread(f, grads[0], x, axis, keepdims)
    out_full = _spread(f, outputs[0], x, axis, keepdims)
    chosen = f("equal", x, out_full)
    if _is_array(mask):
        chosen = f("logical_and", chosen, mask)
    return [f("where", chosen, g_full, 0)] + [None] * (len(inputs) - 1)


def _average(f, grads, inputs, outputs, params):
    """numpy.average: without weights the mean; with them sum(a * w) / sum(w) (a second
    output, ``returned``, is sum(w) broadcast)."""
    a = inputs[0]
    axis, keepdims = params.get("axis"), params.get("keepdims", False)
    if len(inputs) == 1:
        return _mean(f, grads[0], a, outputs[0], axis=axis, keepdims=keepdims)
    w = inputs[1]
    axes = _axes(axis, len(a.shape))
    wb = w
    if len(w.shape) != len(a.shape):  # 1-d weights along the one axis
        wb = f.reshape(w, tuple(n if i == axes[0] else 1 for i, n in enumerate(a.shape)))
    total = f("sum", _broadcast(f, wb, a.shape), axis=axes, keepdims=True)
    g = _kept(f, grads[0], a.shape, axes, keepdims)
    g_scaled = f("true_divide", g, total)
    da = f("multiply", g_scaled, wb)
    dw = f("multiply", g_scaled, f("subtract", a, _kept(f, outputs[0], a.shape, axes,
                                                          keepdims)))
    if len(grads) > 1:  # returned: the weights' sum (broadcast as the average)
        dw = f("add", dw, _kept(f, grads[1], a.shape, axes, keepdims))
    dw = f.sum_to(_broadcast(f, dw, a.shape), wb.shape)
    return [da, f.reshape(dw, w.shape)]


# ---------------------------------------------------------------- accumulations

def _reverse_cumsum(f, g, axis):
    return f("cumsum", g[_flip(axis)], axis=axis)[_flip(axis)]


def _accumulation(kind, nan=False):
    """cumsum/cumprod/cumulative_*/nancumsum: the gradient along the axis (flattened for
    axis None), through the initial element cumulative_* may prepend."""
    def rule(f, g, x, out, axis=None, include_initial=False, **_):
        flat = axis is None or not x.shape
        source = f.reshape(x, (-1,)) if flat else x
        axis = 0 if flat else axis % len(x.shape)
        if include_initial:
            g = g[(slice(None),) * axis + (slice(1, None),)]
            out = out[(slice(None),) * axis + (slice(1, None),)]
        if kind == "sum":
            grad = _reverse_cumsum(f, g, axis)
        else:  # d out[j] / d x[i] = out[j] / x[i] (j >= i): a nonzero input
            grad = f("true_divide", _reverse_cumsum(f, f("multiply", g, out), axis), source)
        if nan:
            grad = f("where", f("isnan", source), 0, grad)
        return [f.reshape(grad, x.shape) if flat else grad]
    return _one(rule)


def _diff(f, grads, inputs, outputs, params):
    """numpy.diff's n differences of concatenate([prepend, a, append]) along the axis:
    the adjoint of each difference is a difference of the zero-padded gradient."""
    a, g = inputs[0], grads[0]
    n, ndim = params.get("n", 1), len(a.shape)
    names = list(params.get("arrays", ()))
    if n == 0:
        return [g] + [None] * (len(inputs) - 1)
    axis = params.get("axis", -1) % ndim
    for _ in range(n):
        widths = tuple((1, 1) if i == axis else (0, 0) for i in range(ndim))
        padded = f("pad", g, pad_width=widths, mode="constant")
        g = f("subtract", padded[(slice(None),) * axis + (slice(None, -1),)],
              padded[(slice(None),) * axis + (slice(1, None),)])

    def length(name):
        if name in names:
            shape = inputs[1 + names.index(name)].shape
        elif name in params:
            shape = np.shape(params[name])
        else:
            return 0
        return shape[axis] if shape else 1
    before, middle = length("prepend"), a.shape[axis]
    parts = {"prepend": (0, before), "append": (before + middle, None)}
    results = [g[(slice(None),) * axis + (slice(before, before + middle),)]]
    for name in names:
        start, stop = parts[name]
        results.append(g[(slice(None),) * axis + (slice(start, stop),)])
    return results


# ---------------------------------------------------------------- products

def _matmul(f, g, x, y, out, **_):
    """matmul (batched, broadcasting); a 1-d operand is a (1, n) row or an (n, 1) column."""
    x_vector, y_vector = len(x.shape) == 1, len(y.shape) == 1
    x2 = f.reshape(x, (1,) + tuple(x.shape)) if x_vector else x
    y2 = f.reshape(y, tuple(y.shape) + (1,)) if y_vector else y
    if x_vector or y_vector:
        batch = tuple(g.shape[:len(g.shape) - (not x_vector) - (not y_vector)])
        g = f.reshape(g, batch + (x2.shape[-2], y2.shape[-1]))
    dx = f("matmul", g, _swap(f, y2))
    dy = f("matmul", _swap(f, x2), g)
    if x_vector:
        dx = f.reshape(f.sum_to(dx, x2.shape), x.shape)
    if y_vector:
        dy = f.reshape(f.sum_to(dy, y2.shape), y.shape)
    return [dx, dy]


def _tensordot_axes(axes, na, nb):
    """numpy.tensordot's reading of ``axes``: (a's contracted axes, b's), non-negative."""
    try:
        iter(axes)
    except TypeError:
        axes_a, axes_b = list(range(na - axes, na)), list(range(axes))
    else:
        axes_a, axes_b = axes
    axes_a = list(axes_a) if hasattr(axes_a, "__len__") else [axes_a]
    axes_b = list(axes_b) if hasattr(axes_b, "__len__") else [axes_b]
    return [int(i) % na for i in axes_a], [int(j) % nb for j in axes_b]


def _tensordot_gradients(f, g, a, b, axes_a, axes_b):
    """tensordot(a, b, (axes_a, axes_b)): each operand's gradient is a tensordot of g with
    the other, its axes put back in the operand's order."""
    na, nb = len(a.shape), len(b.shape)
    free_a = [i for i in range(na) if i not in axes_a]
    free_b = [j for j in range(nb) if j not in axes_b]
    sorted_a, sorted_b = sorted(axes_a), sorted(axes_b)
    ga = f("tensordot", g, b, axes=(tuple(range(len(free_a), len(g.shape))), tuple(free_b)))
    perm_a = tuple(free_a.index(i) if i in free_a
                   else len(free_a) + sorted_b.index(axes_b[axes_a.index(i)])
                   for i in range(na))
    gb = f("tensordot", a, g, axes=(tuple(free_a), tuple(range(len(free_a)))))
    perm_b = tuple(len(axes_a) + free_b.index(j) if j in free_b
                   else sorted_a.index(axes_a[axes_b.index(j)]) for j in range(nb))
    return [f.transpose(ga, perm_a), f.transpose(gb, perm_b)]


def _scalar_product(f, g, a, b):
    """A product with a 0-d operand: multiply."""
    return [f("multiply", g, b) if _is_array(a) else None,
            f("multiply", g, a) if _is_array(b) else None]


def _dot(f, g, a, b, out, **_):
    if not _is_array(a) or not _is_array(b) or not a.shape or not b.shape:
        return _scalar_product(f, g, a, b)
    if len(b.shape) <= 2:  # numpy.dot is matmul here
        return _matmul(f, g, a, b, out)
    return _tensordot_gradients(f, g, a, b, [len(a.shape) - 1], [len(b.shape) - 2])


def _tensordot(f, g, a, b, out, axes=2, **_):
    axes_a, axes_b = _tensordot_axes(axes, len(a.shape), len(b.shape))
    return _tensordot_gradients(f, g, a, b, axes_a, axes_b)


def _inner(f, g, a, b, out, **_):
    if not a.shape or not b.shape:
        return _scalar_product(f, g, a, b)
    return _tensordot_gradients(f, g, a, b, [len(a.shape) - 1], [len(b.shape) - 1])


def _vdot(f, g, a, b, out, **_):
    return [f("multiply", g, f.reshape(b, a.shape)), f("multiply", g, f.reshape(a, b.shape))]


def _outer(f, g, a, b, out, **_):
    return [f.reshape(f("matmul", g, f.reshape(b, (-1,))), a.shape),
            f.reshape(f("matmul", f.reshape(a, (-1,)), g), b.shape)]


def _kron(f, g, a, b, out, **_):
    """kron: the output read as (a0, b0, a1, b1, ...) is an outer product."""
    ndim = max(len(a.shape), len(b.shape))
    sa = (1,) * (ndim - len(a.shape)) + tuple(a.shape)
    sb = (1,) * (ndim - len(b.shape)) + tuple(b.shape)
    g4 = f.reshape(g, tuple(n for pair in zip(sa, sb) for n in pair))
    b_pad, a_pad = f.reshape(b, sb), f.reshape(a, sa)
    da = f("tensordot", g4, b_pad, axes=(tuple(range(1, 2 * ndim, 2)), tuple(range(ndim))))
    db = f("tensordot", a_pad, g4, axes=(tuple(range(ndim)), tuple(range(0, 2 * ndim, 2))))
    return [f.reshape(da, a.shape), f.reshape(db, b.shape)]


def _einsum_terms(subscripts, operands):
    """Each operand's labels and the output's, explicit (NumPy's own parse, ellipses
    given letters), from einsum_path on zero-strided stand-ins: metadata only."""
    from .linalg import _einsum_arguments
    from .numpy_ops import stand_in
    path = np.einsum_path(*_einsum_arguments(subscripts, [stand_in(x) for x in operands]),
                          optimize=False)[1]
    line = next(text for text in path.splitlines() if "Complete contraction:" in text)
    inputs, output = line.split(":", 1)[1].strip().split("->")
    return inputs.split(","), output


def _einsum_gradients(f, g, terms, output, operands):
    """The gradient of each operand of einsum(terms -> output): an einsum of g with the
    other operands into the operand's labels; a label repeated in the operand (its
    diagonal) through an identity matrix; a label nothing else has (summed over the
    operand alone) by broadcasting."""
    results = []
    used = set("".join(terms)) | set(output)
    for k, (term, x) in enumerate(zip(terms, operands)):
        if not _is_array(x):
            results.append(None)
            continue
        spare = (c for c in string.ascii_letters if c not in used)
        subscripts, arrays = [output], [g]
        for j, (other, y) in enumerate(zip(terms, operands)):
            if j != k:
                subscripts.append(other)
                arrays.append(y)
        labels, seen = [], set()
        for position, c in enumerate(term):
            if c in seen:
                new = next(spare)
                subscripts.append(c + new)
                arrays.append(_eye(x.shape[position], g.dtype, g))
                labels.append(new)
            else:
                seen.add(c)
                labels.append(c)
        available = set("".join(subscripts))
        kept = "".join(c for c in labels if c in available)
        r = f("einsum", *arrays, subscripts=",".join(subscripts) + "->" + kept, optimize=True)
        if len(kept) < len(labels):  # broadcast along the operand's own summed labels
            sizes = iter(r.shape)
            shape = tuple(next(sizes) if c in available else 1 for c in labels)
            full = tuple(n if c in available else x.shape[i]
                         for i, (c, n) in enumerate(zip(labels, shape)))
            r = _broadcast(f, f.reshape(r, shape), full)
        results.append(r)
    return results


def _einsum(f, grads, inputs, outputs, params):
    terms, output = _einsum_terms(params["subscripts"], inputs)
    return _einsum_gradients(f, grads[0], terms, output, inputs)


def _multi_dot(f, grads, inputs, outputs, params):
    """linalg.multi_dot: a chain of matrix products (the ends may be vectors)."""
    count = len(inputs)
    letters = string.ascii_letters[:count + 1]
    terms = [letters[i:i + 2] for i in range(count)]
    output = letters[0] + letters[count]
    if len(inputs[0].shape) == 1:
        terms[0], output = terms[0][1:], output[1:]
    if len(inputs[-1].shape) == 1:
        terms[-1], output = terms[-1][:1], output[:-1]
    return _einsum_gradients(f, grads[0], terms, output, inputs)


# ---------------------------------------------------------------- joins, moves, shapes

def _concatenate(f, grads, inputs, outputs, params):
    """Each input's gradient: its slab of the output's."""
    g, axis = grads[0], params.get("axis", 0)
    flat = axis is None  # the inputs were raveled
    axis = 0 if flat else axis % len(g.shape)
    results, start = [], 0
    for x in inputs:
        length = math.prod(x.shape) if flat else x.shape[axis]
        part = g[(slice(None),) * axis + (slice(start, start + length),)]
        results.append(f.reshape(part, x.shape) if flat else part)
        start += length
    return results


def _stack(f, grads, inputs, outputs, params):
    g = grads[0]
    axis = params.get("axis", 0) % len(g.shape)
    return [g[(slice(None),) * axis + (i,)] for i in range(len(inputs))]


def _split(f, grads, inputs, outputs, params):
    (x,) = inputs
    axis = params.get("axis", 0) % len(x.shape)
    return [f("concatenate", *grads, axis=axis)]


def _roll(f, grads, inputs, outputs, params):
    if len(inputs) > 1:  # an NDArray shift, read by the op
        raise NotImplementedError("the gradient of roll with an NDArray shift is not built: "
                                  "pass the shift as an int or a tuple")
    shift, axis = params.get("shift", 0), params.get("axis")
    back = tuple(-s for s in shift) if isinstance(shift, tuple) else -shift
    return [f("roll", grads[0], shift=back, axis=axis)]


def _tile(f, g, x, out, reps=1, **_):
    reps = tuple(int(r) for r in np.ravel(reps))
    ndim = max(len(x.shape), len(reps))
    reps = (1,) * (ndim - len(reps)) + reps
    shape = (1,) * (ndim - len(x.shape)) + tuple(x.shape)
    pairs = tuple(n for pair in zip(reps, shape) for n in pair)  # (r0, n0, r1, n1, ...)
    summed = f("sum", f.reshape(g, pairs), axis=tuple(range(0, 2 * ndim, 2)))
    return [f.reshape(summed, x.shape)]


def _repeat(f, g, x, out, repeats=1, axis=None, **_):
    counts = np.asarray(repeats).astype(np.intp).ravel()
    if axis is None:
        shape, axis = (math.prod(x.shape),), 0
    else:
        shape = tuple(x.shape) or (1,)
        axis = axis % len(shape)
    n = shape[axis]
    if counts.size == 1:
        r = int(counts[0])
        split = shape[:axis] + (n, r) + shape[axis + 1:]
        grad = f("sum", f.reshape(g, split), axis=axis + 1)
    else:  # each output position's source, as numpy.repeat places them
        source = np.repeat(np.arange(n), counts)
        grad = _scatter(f, shape, (slice(None),) * axis + (source,), g)
    return [f.reshape(grad, x.shape)]


_PAD_GATHERS = ("edge", "wrap", "reflect", "symmetric")


def _pad(f, grads, inputs, outputs, params):
    """constant/empty: the gradient's middle; edge/wrap/reflect/symmetric (reflect_type
    "even"): every output position read one input position, along each axis: the
    gradient is added back there (the positions: numpy.pad of an arange, metadata)."""
    from .shaping import pad_pairs
    x, g = inputs[0], grads[0]
    mode = params.get("mode", "constant")
    pairs = pad_pairs(params.get("pad_width", 0), len(x.shape))
    middle = tuple(slice(lo, lo + n) for (lo, _), n in zip(pairs, x.shape))
    if mode in ("constant", "empty"):
        results = [g[middle]]
        names = list(params.get("keyword_inputs", ()))
        for name, value in zip(names, inputs[1:]):
            if name != "constant_values" or math.prod(value.shape) != 1:
                raise NotImplementedError(f"the gradient of pad's {name} (an array of "
                                          f"several values) is not built")
            rest = f("subtract", f("sum", g), f("sum", g[middle]))
            results.append(f.reshape(rest, value.shape))
        return results
    if mode not in _PAD_GATHERS or params.get("reflect_type", "even") != "even":
        raise NotImplementedError(
            f"the gradient of pad(mode={mode!r}"
            + (f", reflect_type={params['reflect_type']!r}" if "reflect_type" in params
               else "") + ") is not built: modes constant, empty, edge, wrap, reflect and "
            "symmetric (reflect_type 'even') have one")
    for axis, ((lo, hi), n) in enumerate(zip(pairs, x.shape)):
        if lo or hi:
            source = np.pad(np.arange(n), (lo, hi), mode=mode)
            shape = tuple(g.shape[:axis]) + (n,) + tuple(g.shape[axis + 1:])
            g = _scatter(f, shape, (slice(None),) * axis + (source,), g)
    return [g] + [None] * (len(inputs) - 1)


def _diagonal_positions(length, offset):
    """Rows and columns of the diagonal ``offset`` (``length`` elements)."""
    steps = np.arange(length)
    return steps + max(-offset, 0), steps + max(offset, 0)


def _diagonal(f, g, a, out, offset=0, axis1=0, axis2=1, **_):
    ndim = len(a.shape)
    axis1, axis2 = axis1 % ndim, axis2 % ndim
    others = tuple(i for i in range(ndim) if i not in (axis1, axis2))
    perm = others + (axis1, axis2)
    rows, cols = _diagonal_positions(g.shape[-1], offset)
    moved = _scatter(f, tuple(a.shape[i] for i in perm),
                     (slice(None),) * len(others) + (rows, cols), g)
    return [f.transpose(moved, _inverse(perm))]


def _trace(f, g, a, out, offset=0, axis1=0, axis2=1, **_):
    stand_in = np.broadcast_to(np.empty((), bool), a.shape)
    length = np.diagonal(stand_in, offset, axis1, axis2).shape[-1]
    spread = _broadcast(f, f.reshape(g, tuple(g.shape) + (1,)), tuple(g.shape) + (length,))
    return _diagonal(f, spread, a, None, offset=offset, axis1=axis1, axis2=axis2)


def _diag(f, g, v, out, k=0, **_):
    if len(v.shape) == 1:
        return [f("diagonal", g, offset=k)]
    rows, cols = _diagonal_positions(g.shape[0], k)
    return [_scatter(f, v.shape, (rows, cols), g)]


def _triangle(name):
    def rule(f, g, m, out, k=0, **_):
        grad = f(name, g, k=k)
        return [f("sum", grad, axis=0) if len(m.shape) == 1 else grad]
    return _one(rule)


# ---------------------------------------------------------------- indexing and selection

def _take_index(f, g, x, out, key=None, **_):
    return [f.scatter_add(x, key, g)]


def _take(f, grads, inputs, outputs, params):
    a, indices = inputs
    g = grads[0]
    axis, mode = params.get("axis"), params.get("mode", "raise")
    if axis is None or not a.shape:
        n = math.prod(a.shape)
        index = _wrapped(f, indices, n, mode)
        return [f.reshape(_scatter_along(f, f.reshape(g, (-1,)), f.reshape(index, (-1,)),
                                         (n,), 0), a.shape), None]
    axis %= len(a.shape)
    before, n = math.prod(a.shape[:axis]), a.shape[axis]
    after = math.prod(a.shape[axis + 1:])
    count = math.prod(indices.shape)
    index = f.reshape(_wrapped(f, indices, n, mode), (1, count, 1))
    grad = _scatter_along(f, f.reshape(g, (before, count, after)), index,
                          (before, n, after), 1)
    return [f.reshape(grad, a.shape), None]


def _take_along_axis(f, grads, inputs, outputs, params):
    arr, indices = inputs
    g, axis = grads[0], params.get("axis", -1)
    if axis is None:
        n = math.prod(arr.shape)
        grad = _scatter_along(f, g, _wrapped(f, indices, n), (n,), 0)
        return [f.reshape(grad, arr.shape), None]
    axis %= len(arr.shape)
    index = _wrapped(f, indices, arr.shape[axis])
    return [_scatter_along(f, g, index, tuple(arr.shape), axis), None]


def _advanced(key):
    """The key has an integer index array (a position may be written twice)."""
    parts = key if isinstance(key, tuple) else (key,)
    return any(isinstance(k, np.ndarray) and k.dtype.kind in "iu" for k in parts)


def _last_writes(f, region_grad, written):
    """Where an index repeats, NumPy keeps the last write: ``written(ids)`` writes each
    value's number (ids, shaped as the region) and reads the region back; a value whose
    number survived gets its gradient, the others none."""
    ids = f.reshape(_arange(math.prod(region_grad.shape), region_grad),
                    tuple(region_grad.shape))
    return f("where", f("equal", written(ids), ids), region_grad, 0)


def _assign_index(f, grads, inputs, outputs, params):
    """target[key] = value: the target's gradient is g with the region zeroed, the
    value's g's region (summed to the value's shape)."""
    (target, value), g, key = inputs, grads[0], params["key"]
    dv = None
    if _is_array(value):
        region = g[key]
        if _advanced(key):
            region = _last_writes(f, region, lambda ids: f(
                "assign_index", f.zeros(g.shape, ids.dtype, g), ids, key=key)[key])
        dv = _value_gradient(f, region, value)
    return [f("assign_index", g, 0, key=key) if _is_array(target) else None, dv]


def _put(f, grads, inputs, outputs, params):
    """numpy.put(a, ind, v): a.flat[ind] = v, v repeated as needed."""
    (_, ind, v), g = inputs, grads[0]
    mode = params.get("mode", "raise")
    da = f("put", g, ind, 0, mode=mode)
    if not _is_array(v):
        return [da, None, None]
    size, count = math.prod(v.shape), math.prod(ind.shape)
    flat_ind = f.reshape(ind, (-1,))
    taken = _last_writes(f, f("take", f.reshape(g, (-1,)), flat_ind, mode=mode), lambda ids: f(
        "take", f("put", f.zeros((math.prod(g.shape),), ids.dtype, g), flat_ind, ids,
                  mode=mode), flat_ind, mode=mode))
    if size == count:
        dv = f.reshape(taken, v.shape)
    else:  # v cycles: v.flat[i % v.size] went to ind[i]
        source = f("mod", _arange(count, g), max(size, 1))
        dv = f.reshape(f("bincount", source, taken, arrays=("weights",), minlength=size,
                         length=size), v.shape)
    return [da, None, dv]


def _put_along_axis(f, grads, inputs, outputs, params):
    (_, indices, values), g = inputs, grads[0]
    axis = params["axis"]
    taken = _last_writes(f, f("take_along_axis", g, indices, axis=axis), lambda ids: f(
        "take_along_axis", f("put_along_axis", f.zeros(g.shape, ids.dtype, g), indices, ids,
                             axis=axis), indices, axis=axis))
    return [f("put_along_axis", g, indices, 0, axis=axis), None,
            _value_gradient(f, taken, values)]


def _choose(f, grads, inputs, outputs, params):
    (a, *choices), g = inputs, grads[0]
    mode = params.get("mode", "raise")
    index = a if mode == "raise" else _wrapped(f, a, len(choices), mode)
    return [None] + [f("where", f("equal", index, k), g, 0) if _is_array(c) else None
                     for k, c in enumerate(choices)]


def _bincount(f, grads, inputs, outputs, params):
    if len(inputs) == 1:
        return [None]
    return [None, f("take", grads[0], inputs[0])]


def _permutation(arg_name):
    """sort/partition: the output is the input permuted by argsort/argpartition; the
    gradient goes back through the inverse permutation."""
    def rule(f, g, x, out, axis=-1, kind=None, kth=None, **_):
        params = {"kind": kind} if kind is not None else {}
        if kth is not None:
            params["kth"] = kth
        if axis is None:
            x, axis = f.reshape(x, (-1,)), 0
        order = f(arg_name, x, axis=axis, **params)
        inverse = f("argsort", order, axis=axis)
        return [f.reshape(f("take_along_axis", g, inverse, axis=axis), x.shape)]
    return _one(rule)


_UFUNC_NAMES = {"divide": "true_divide", "remainder": "mod", "absolute": "abs"}


def _ufunc_method(f, grads, inputs, outputs, params):
    """NumPy's ufunc methods: reduce (add, multiply, maximum, minimum), accumulate (add,
    multiply), outer (any binary op with a rule), at (add, subtract)."""
    ufunc, method = params["ufunc"], params["method"]
    name = _UFUNC_NAMES.get(ufunc.__name__, ufunc.__name__)
    g = grads[0]
    if method == "reduce" and name in ("add", "multiply", "maximum", "minimum"):
        x = inputs[0]
        reduction = {"add": _sum, "multiply": _prod, "maximum": _extreme,
                     "minimum": _extreme}[name]
        if name == "multiply" and params.get("initial") is not None:
            g = f("multiply", g, params["initial"])
        return reduction(f, g, x, outputs[0], axis=params.get("axis", 0),
                         keepdims=params.get("keepdims", False))
    if method == "accumulate" and name in ("add", "multiply"):
        axis = params.get("axis", 0)
        rule = RULES["cumsum" if name == "add" else "cumprod"]
        return rule(f, grads, inputs, outputs, {"axis": axis})
    if method == "outer" and name in _ELEMENTWISE and len(inputs) == 2:
        a, b = inputs
        if _is_array(a):
            a = f.reshape(a, tuple(a.shape) + (1,) * len(getattr(b, "shape", ())))
        da, db = _ELEMENTWISE[name](f, grads, [a, b], outputs, {})
        if da is not None:
            da = f.reshape(f.sum_to(da, a.shape), inputs[0].shape)
        return [da, db]
    if method == "at" and name in ("add", "subtract"):
        _, values = inputs
        dv = _value_gradient(f, g[params["index"]], values)
        if dv is not None and name == "subtract":
            dv = f("negative", dv)
        return [g, dv]
    raise NotImplementedError(f"the gradient of numpy.{ufunc.__name__}.{method} is not "
                              "built")


# ---------------------------------------------------------------- linalg
# Stacks of matrices throughout (the last two axes); the formulas: M. Giles, "Collected
# matrix derivative results for forward and reverse mode AD" (inv, det, solve), I. Murray,
# "Differentiation of the Cholesky decomposition", J. Townsend, "Differentiating the
# singular value decomposition", S. Walter & L. Lehmann (qr).

def _mm(f, *arrays):
    result = arrays[0]
    for a in arrays[1:]:
        result = f("matmul", result, a)
    return result


def _as_matrix(f, v):
    """A batch of numbers (..., ) as (..., 1, 1)."""
    return f.reshape(v, tuple(v.shape) + (1, 1))


def _rows(f, v):
    """A vector per matrix (..., n) as rows (..., 1, n): it scales columns."""
    return f.reshape(v, tuple(v.shape[:-1]) + (1, v.shape[-1]))


def _columns(f, v):
    return f.reshape(v, tuple(v.shape) + (1,))


def _symmetric(f, a):
    return f("multiply", f("add", a, _swap(f, a)), 0.5)


def _off_diagonal_inverse(f, values, like):
    """F[i, j] = 1 / (values[j] - values[i]) off the diagonal, 0 on it."""
    n = values.shape[-1]
    eye = _eye(n, like.dtype, like)
    diff = f("subtract", _rows(f, values), _columns(f, values))
    return f("multiply", f("reciprocal", f("add", diff, eye)), f("subtract", 1, eye))


def _inv(f, g, a, out, **_):
    t = _swap(f, out)
    return [f("negative", _mm(f, t, g, t))]


def _det(f, g, a, out, **_):
    scale = _as_matrix(f, f("multiply", g, out))
    return [f("multiply", scale, _swap(f, f("linalg.inv", a)))]


def _slogdet(f, grads, inputs, outputs, params):
    (a,), g = inputs, grads[1]  # the sign is piecewise constant
    return [f("multiply", _as_matrix(f, g), _swap(f, f("linalg.inv", a)))]


def _solve(f, g, a, b, out, **_):
    """x = solve(a, b): b's gradient solve(a^T, g), a's -(b's gradient) x^T; a 1-d b is
    one vector (NumPy 2)."""
    if len(b.shape) == 1:
        db = f("linalg.solve", _swap(f, a), _columns(f, g))[..., 0]
        return [f("negative", f("multiply", _columns(f, db), _rows(f, out))), db]
    db = f("linalg.solve", _swap(f, a), g)
    return [f("negative", f("matmul", db, _swap(f, out))), db]


def _cholesky(f, g, a, out, upper=False, **_):
    """Murray's rule, symmetrized: Phi(X) is X's lower triangle, its diagonal halved."""
    lower, g = (_swap(f, out), _swap(f, g)) if upper else (out, g)
    n = a.shape[-1]
    half = f("subtract", 1, f("multiply", _eye(n, g.dtype, g), 0.5))
    phi = f("multiply", f("tril", _mm(f, _swap(f, lower), f("tril", g))), half)
    inverse = f("linalg.inv", lower)
    return [_symmetric(f, _mm(f, _swap(f, inverse), phi, inverse))]


def _eigh(f, grads, inputs, outputs, params):
    """A = V diag(w) V^T: A's gradient V (diag(w') + F o (V^T V')) V^T, symmetrized."""
    (w, v), (gw, gv) = outputs, grads
    inner = f("multiply", _off_diagonal_inverse(f, w, gw), _mm(f, _swap(f, v), gv))
    inner = f("add", inner, f("multiply", _rows(f, gw), _eye(w.shape[-1], gw.dtype, gw)))
    return [_symmetric(f, _mm(f, v, inner, _swap(f, v)))]


def _eigvalsh(f, g, a, out, UPLO="L", **_):
    w, v = _outputs("linalg.eigh", [a], {"UPLO": UPLO})
    return _eigh(f, [g, f.zeros(v.shape, g.dtype, g)], [a], [w, v], {})


def _svd_gradient(f, u, s, vh, gu, gs, gvh):
    """Townsend's rule for A = U diag(s) Vh (reduced; distinct singular values)."""
    m, n, k = u.shape[-2], vh.shape[-1], s.shape[-1]
    v, gv = _swap(f, vh), _swap(f, gvh)
    ut = _swap(f, u)
    inverse_s = f("reciprocal", s)
    mixing = _off_diagonal_inverse(f, f("square", s), gs)
    j = f("multiply", mixing, f("subtract", _mm(f, ut, gu), _mm(f, _swap(f, gu), u)))
    kk = f("multiply", mixing, f("subtract", _mm(f, vh, gv), _mm(f, gvh, v)))
    inner = f("add", f("add", f("multiply", j, _rows(f, s)),
                       f("multiply", _rows(f, gs), _eye(k, gs.dtype, gs))),
              f("multiply", _columns(f, s), kk))
    grad = _mm(f, u, inner, vh)
    if m > k:  # (I - U U^T) U' S^-1 V^T
        rest = f("subtract", gu, _mm(f, u, ut, gu))
        grad = f("add", grad, _mm(f, f("multiply", rest, _rows(f, inverse_s)), vh))
    if n > k:  # U S^-1 V'^T (I - V V^T)
        rest = f("subtract", gvh, _mm(f, gvh, v, vh))
        grad = f("add", grad, _mm(f, u, f("multiply", _columns(f, inverse_s), rest)))
    return grad


def _svd(f, grads, inputs, outputs, params):
    (a,) = inputs
    m, n = a.shape[-2:]
    if not params.get("compute_uv", True):
        u, s, vh = _outputs("linalg.svd", [a], {"full_matrices": False})
        gs = grads[0]
        return [_svd_gradient(f, u, s, vh, f.zeros(u.shape, gs.dtype, gs), gs,
                              f.zeros(vh.shape, gs.dtype, gs))]
    if params.get("full_matrices", True) and m != n:
        raise NotImplementedError("the gradient of svd(full_matrices=True) of a non-square "
                                  "matrix is not defined (its extra singular vectors are "
                                  "arbitrary): use full_matrices=False")
    (u, s, vh), (gu, gs, gvh) = outputs, grads
    return [_svd_gradient(f, u, s, vh, gu, gs, gvh)]


def _svdvals(f, g, a, out, **_):
    u, s, vh = _outputs("linalg.svd", [a], {"full_matrices": False})
    return [_svd_gradient(f, u, s, vh, f.zeros(u.shape, g.dtype, g), g,
                          f.zeros(vh.shape, g.dtype, g))]


def _qr(f, grads, inputs, outputs, params):
    """A = QR (m >= n): A's gradient (Q' + Q copyltu(M)) R^-T, M = R R'^T - Q'^T Q."""
    (a,), mode = inputs, params.get("mode", "reduced")
    m, n = a.shape[-2:]
    if mode == "raw" or m < n or (mode == "complete" and m != n):
        raise NotImplementedError(f"the gradient of qr(mode={mode!r}) of a {m}x{n} matrix "
                                  "is not built: a tall or square matrix, mode 'reduced' "
                                  "or 'r', has one")
    if mode == "r":
        q, r = _outputs("linalg.qr", [a], {"mode": "reduced"})
        gr = grads[0]
        gq = f.zeros(q.shape, gr.dtype, gr)
    else:
        (q, r), (gq, gr) = outputs, grads
    big_m = f("subtract", _mm(f, r, _swap(f, gr)), _mm(f, _swap(f, gq), q))
    lower = f("tril", big_m, k=-1)
    copyltu = f("add", f("tril", big_m), _swap(f, lower))
    b = f("add", gq, _mm(f, q, copyltu))
    return [_swap(f, f("linalg.solve", r, _swap(f, b)))]


def _pinv(f, g, a, out, **_):
    """Golub & Pereyra's derivative of the pseudo-inverse P (constant rank)."""
    p, pt = out, _swap(f, out)
    m, n = a.shape[-2:]
    left = f("subtract", _eye(m, g.dtype, g), _mm(f, a, p))    # I - A P
    right = f("subtract", _eye(n, g.dtype, g), _mm(f, p, a))   # I - P A
    gt = _swap(f, g)
    grad = f("negative", _mm(f, pt, g, pt))
    grad = f("add", grad, _mm(f, left, gt, p, pt))
    grad = f("add", grad, _mm(f, pt, p, gt, right))
    return [grad]


def _matrix_power(f, g, a, out, n=1, **_):
    if n == 0:
        return [_zero(f, g, a)]
    base = a if n > 0 else f("linalg.inv", a)
    count = abs(n)
    powers = [None, base]
    for _ in range(2, count):
        powers.append(f("matmul", powers[-1], base))

    def power(k):  # base^k transposed
        return _swap(f, powers[k]) if k else None
    grad = None
    for k in range(count):  # sum over k of (B^T)^k G (B^T)^(count-1-k)
        term = g
        if k:
            term = f("matmul", power(k), term)
        if count - 1 - k:
            term = f("matmul", term, power(count - 1 - k))
        grad = term if grad is None else f("add", grad, term)
    if n < 0:  # B = inv(A): A's gradient -B^T B' B^T
        bt = _swap(f, base)
        grad = f("negative", _mm(f, bt, grad, bt))
    return [grad]


def _norm(f, g, x, out, ord=None, axis=None, keepdims=False, **_):
    ndim = len(x.shape)
    if axis is None:
        axes, matrix = tuple(range(ndim)), ord is not None and ndim == 2
    else:
        axes = tuple(int(a) % ndim for a in (axis if isinstance(axis, (tuple, list))
                                              else (axis,)))
        matrix = len(axes) == 2
    g_full = _spread(f, g, x, axes, keepdims)
    out_full = _spread(f, out, x, axes, keepdims)
    if not matrix or ord in (None, "fro"):  # vector norms, Frobenius
        if matrix or ord is None or ord == 2:
            return [f("multiply", g_full, f("true_divide", x, out_full))]
        if ord == 0:
            return [_zero(f, g, x)]
        sign = f("sign", x)
        if ord == 1:
            return [f("multiply", g_full, sign)]
        if ord in (math.inf, -math.inf):
            chosen = f("equal", f("abs", x), out_full)
            return [f("where", chosen, f("multiply", g_full, sign), 0)]
        scaled = f("power", f("true_divide", f("abs", x), out_full), ord - 1)
        return [f("multiply", g_full, f("multiply", sign, scaled))]
    # matrix norms over axes (row axis, column axis): the two moved last
    others = tuple(i for i in range(ndim) if i not in axes)
    perm = others + tuple(axes)
    moved, g_moved = f.transpose(x, perm), f.transpose(g_full, perm)
    if ord in ("nuc", 2, -2):
        u, s, vh = _outputs("linalg.svd", [moved], {"full_matrices": False})
        if ord == "nuc":
            grad = f("matmul", u, vh)
        else:
            k = 0 if ord == 2 else s.shape[-1] - 1
            grad = f("multiply", u[..., :, k:k + 1], vh[..., k:k + 1, :])
    elif ord in (1, -1, math.inf, -math.inf):
        along = -2 if ord in (1, -1) else -1  # column sums (1) or row sums (inf)
        sums = f("sum", f("abs", moved), axis=along, keepdims=True)
        extreme = f("max" if ord in (1, math.inf) else "min", sums, axis=(-2, -1),
                    keepdims=True)
        grad = f("where", f("equal", sums, extreme), f("sign", moved), 0)
    else:
        raise NotImplementedError(f"the gradient of the matrix norm ord={ord!r} is not "
                                  "built")
    return [f.transpose(f("multiply", g_moved, grad), _inverse(perm))]


# ---------------------------------------------------------------- no gradient

NOT_DIFFERENTIABLE = {
    **dict.fromkeys(("equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
                     "logical_and", "logical_or", "logical_xor", "logical_not", "isnan",
                     "isinf", "isfinite", "signbit", "isclose", "allclose", "array_equal",
                     "any", "all"), "a boolean result"),
    **dict.fromkeys(("bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift",
                     "right_shift", "count_nonzero", "argmax", "argmin", "nanargmax",
                     "nanargmin", "argsort", "argpartition", "lexsort", "searchsorted",
                     "digitize", "nonzero", "argwhere", "flatnonzero", "unique",
                     "unique_count", "bincount_length", "histogram_bin_count",
                     "linalg.matrix_rank"), "an integer result"),
    **dict.fromkeys(("random_method", "random_normal", "random_order", "random_randint",
                     "random_uniform"), "a random draw"),
    "histogram": "piecewise constant in its data",
}

CREATION = ("fill", "arange", "linspace", "eye", "indices", "fftfreq", "rfftfreq")

NOT_BUILT = ("median", "nanmedian", "quantile", "percentile", "nanquantile", "nanpercentile",
             "nanprod", "nanstd", "nanvar", "nancumprod", "prod_where", "std_where",
             "var_where", "linalg.lstsq", "linalg.eig", "linalg.eigvals", "fft.fft",
             "fft.fft2", "fft.fftn", "fft.hfft", "fft.ifft", "fft.ifft2", "fft.ifftn",
             "fft.ihfft", "fft.irfft", "fft.irfft2", "fft.irfftn", "fft.rfft", "fft.rfft2",
             "fft.rfftn")


def _refuse(name, reason):
    def rule(f, grads, inputs, outputs, params):
        raise TypeError(f"{name} is not differentiable ({reason}): backward cannot pass a "
                        f"gradient through it; use its result as a constant (compute it from "
                        f"x.detach(), or under autograd.pause()), e.g. x * (x > 0).detach() "
                        f"or where(x > 0, x, 0)")
    rule.differentiable = False
    return rule


# ---------------------------------------------------------------- the table

RULES = {
    **_ELEMENTWISE,
    "sum": _one(_sum),
    "mean": _one(_mean),
    "max": _one(_extreme),
    "min": _one(_extreme),
    "prod": _one(_prod),
    "std": _one(_std),
    "var": _one(_var),
    "ptp": _one(_ptp),
    "nansum": _one(_nan_masked(_sum)),
    "nanmean": _one(_nanmean),
    "nanmax": _one(_extreme),
    "nanmin": _one(_extreme),
    "sum_where": _sum_where,
    "mean_where": _mean_where,
    "max_where": _extreme_where,
    "min_where": _extreme_where,
    "average": _average,
    "cumsum": _accumulation("sum"),
    "cumprod": _accumulation("prod"),
    "cumulative_sum": _accumulation("sum"),
    "cumulative_prod": _accumulation("prod"),
    "nancumsum": _accumulation("sum", nan=True),
    "diff": _diff,
    "matmul": _one(_matmul),
    "dot": _one(_dot),
    "tensordot": _one(_tensordot),
    "inner": _one(_inner),
    "vdot": _one(_vdot),
    "outer": _one(_outer),
    "kron": _one(_kron),
    "einsum": _einsum,
    "linalg.multi_dot": _multi_dot,
    "concatenate": _concatenate,
    "stack": _stack,
    "split": _split,
    "roll": _roll,
    "tile": _one(_tile),
    "repeat": _one(_repeat),
    "pad": _pad,
    "diag": _one(_diag),
    "diagonal": _one(_diagonal),
    "trace": _one(_trace),
    "tril": _triangle("tril"),
    "triu": _triangle("triu"),
    "take_index": _one(_take_index),
    "take": _take,
    "take_along_axis": _take_along_axis,
    "assign_index": _assign_index,
    "put": _put,
    "put_along_axis": _put_along_axis,
    "choose": _choose,
    "bincount": _bincount,
    "sort": _permutation("argsort"),
    "partition": _permutation("argpartition"),
    "ufunc_method": _ufunc_method,
    "linalg.inv": _one(_inv),
    "linalg.det": _one(_det),
    "linalg.slogdet": _slogdet,
    "linalg.solve": _one(_solve),
    "linalg.cholesky": _one(_cholesky),
    "linalg.eigh": _eigh,
    "linalg.eigvalsh": _one(_eigvalsh),
    "linalg.svd": _svd,
    "linalg.svdvals": _one(_svdvals),
    "linalg.qr": _qr,
    "linalg.pinv": _one(_pinv),
    "linalg.matrix_power": _one(_matrix_power),
    "linalg.norm": _one(_norm),
    **{name: _refuse(name, reason) for name, reason in NOT_DIFFERENTIABLE.items()},
}
