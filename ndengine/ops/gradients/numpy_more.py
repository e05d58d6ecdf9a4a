"""Gradient rules of the NumPy functions added last: ldexp, frexp, modf, unwrap,
sort_complex, the masked writes (copyto, putmask, place), select, the vector-matrix
products (vecdot, matvec, vecmat) and the polynomial ops (poly, polyadd, polysub, polyder,
polyint, polyval, polyfit): ``NUMPY_MORE`` (conventions: ops/gradients/rules.py).

Element-wise: ``ldexp(x, n) = x 2^n`` passes ``g 2^n`` to ``x`` (``n`` is an integer);
``frexp``'s mantissa ``x 2^-e`` passes ``g 2^-e`` (the exponent is an integer, constant
almost everywhere); ``modf``'s fractional part passes ``g``, its integral part nothing
(piecewise constant); ``unwrap`` adds multiples of the period, constant almost everywhere,
so it passes ``g``; ``sort_complex`` is sort along the last axis (NumPy's complex order, the
one argsort uses), its gradient goes back to where each element came from.

Masked writes (out of place as ops: the target is input 0): an element written takes its
gradient to the value it came from, every other one to the target. copyto's ``src``
broadcasts (the caller sums it down); putmask's ``values`` repeat flat, position ``i``
reading ``values.flat[i % size]``; place's ``vals`` repeat over the True positions, the
``k``-th reading ``vals.flat[k % size]`` (``k`` from a cumulative sum of the mask). select
passes ``g`` to the first choice whose condition holds, the default where none does.

Products (PyTorch's complex convention: ``g`` times the conjugate derivative):
``vecdot(a, b) = sum(conj(a) b)`` gives ``a`` ``conj(g) b`` and ``b`` ``g a`` (vdot's);
``matvec(A, v)`` gives ``A`` ``g conj(v)^T`` and ``v`` ``A^H g``; ``vecmat(v, A) =
conj(v)^T A`` gives ``v`` ``A conj(g)`` and ``A`` ``v g^T``.

Polynomials: polyadd/polysub pad the shorter operand on the left, so each operand's
gradient is the trailing part of ``g`` (negated for polysub's second); polyder and polyint
scale each kept coefficient by a falling (rising) factorial of its power; polyval passes
``g x^k`` to the coefficient of ``x^k`` and ``g p'(x)`` to ``x``; poly's coefficient of
``prod (x - r_j)`` changes with ``r_i`` as minus the (shifted) coefficients of the product
without ``r_i``: one poly per zero. polyfit solves ``(W V(x)) c = W y`` in the least-squares
sense (``V`` the Vandermonde matrix, ``W`` the weights): lstsq's rule gives the gradients of
``W V`` and ``W y``, which the chain rule takes to ``x``, ``y`` and ``w`` (a full-rank fit:
then the result does not depend on ``rcond``). polyfit with ``cov=True`` raises
NotImplementedError at backward.
"""
from __future__ import annotations

import numpy as np

from .common import _conj, _const, _is_array, _one, _swap, _zero
from .indexing import INDEXING
from .linalg import _columns, _pinv

__all__ = ["NUMPY_MORE"]


# ---------------------------------------------------------------- element-wise

def _ldexp(f, g, x, n, out, **_):
    return [f("ldexp", g, n) if _is_array(x) else None, None]


def _frexp(f, grads, inputs, outputs, params):
    return [f("ldexp", grads[0], f("negative", outputs[1]))]


def _modf(f, grads, inputs, outputs, params):
    return [grads[0]]


def _unwrap(f, g, p, out, **_):
    return [g]


# ---------------------------------------------------------------- masked writes, select

def _copyto(f, grads, inputs, outputs, params):
    (dst, src, where), g = inputs, grads[0]
    return [f("where", where, 0, g), f("where", where, g, 0) if _is_array(src) else None,
            None]


def _flat_mask(f, mask, shape):
    """putmask's and place's mask (as many elements as the target) as booleans shaped as it."""
    return f("not_equal", f.reshape(mask, tuple(shape)), 0)


def _repeated_values_gradient(f, written, source, values):
    """The gradient of ``values`` read flat and repeated: ``written`` (the output's gradient
    where a value was written, zero elsewhere) summed by ``source`` (the position in
    ``values`` each element reads)."""
    if not _is_array(values):
        return None
    size = max(values.size, 1)
    flat = f("bincount", f.reshape(source, (-1,)), f.reshape(written, (-1,)),
             arrays=("weights",), minlength=size, length=size)
    return f.reshape(flat, values.shape)


def _positions(f, g):
    return _const(f, "arange", g, start=0, stop=int(g.size), step=1,
                  dtype=np.dtype(np.intp))


def _putmask(f, grads, inputs, outputs, params):
    (target, mask, values), g = inputs, grads[0]
    if _is_array(values) and values.size == 0:  # NumPy writes nothing
        return [g, None, None]
    mask = _flat_mask(f, mask, g.shape)
    written = f("where", mask, g, 0)
    source = f("mod", _positions(f, g), max(getattr(values, "size", 1), 1))
    return [f("where", mask, 0, g), None, _repeated_values_gradient(f, written, source,
                                                                     values)]


def _place(f, grads, inputs, outputs, params):
    (target, mask, values), g = inputs, grads[0]
    mask = _flat_mask(f, mask, g.shape)
    written = f("where", mask, g, 0)
    # the k-th True position reads vals[k % size]; where the mask is False, nothing is
    # written (weight 0), so any valid position serves
    count = f("cumsum", f.reshape(mask, (-1,)), dtype=np.dtype(np.intp))
    source = f("mod", f("subtract", count, 1), max(getattr(values, "size", 1), 1))
    return [f("where", mask, 0, g), None, _repeated_values_gradient(f, written, source,
                                                                     values)]


def _select(f, grads, inputs, outputs, params):
    count, g = params["count"], grads[0]
    conditions, choices = inputs[:count], inputs[count:]
    taken, results = None, [None] * count
    for condition, choice in zip(conditions, choices[:count]):
        chosen = condition if taken is None else f("logical_and", condition,
                                                  f("logical_not", taken))
        results.append(f("where", chosen, g, 0) if _is_array(choice) else None)
        taken = condition if taken is None else f("logical_or", taken, condition)
    default = choices[-1]
    results.append(f("where", taken, 0, g) if _is_array(default) else None)
    return results


# ---------------------------------------------------------------- vector-matrix products

def _last(f, a):
    """``a`` with a trailing axis of length 1."""
    return f.reshape(a, tuple(a.shape) + (1,))


def _before_last(f, a):
    """``a`` with an axis of length 1 before its last."""
    return f.reshape(a, tuple(a.shape[:-1]) + (1, a.shape[-1]))


def _vecdot(f, g, a, b, out, **_):
    g = _last(f, g)
    return [f("multiply", _conj(f, g), b), f("multiply", g, a)]


def _matvec(f, g, matrix, vector, out, **_):
    return [f("multiply", _last(f, g), _before_last(f, _conj(f, vector))),
            f("matvec", _conj(f, _swap(f, matrix)), g)]


def _vecmat(f, g, vector, matrix, out, **_):
    return [f("matvec", matrix, _conj(f, g)),
            f("multiply", _last(f, vector), _before_last(f, g))]


# ---------------------------------------------------------------- polynomials

def _tail(f, g, a, sign=1):
    """A coefficient operand's part of polyadd's (polysub's) gradient: g's last entries."""
    if not _is_array(a):
        return None
    n = max(a.size, 1)
    part = f.reshape(g[g.shape[0] - n:], a.shape)
    return part if sign > 0 else f("negative", part)


def _polyadd(f, g, a1, a2, out, **_):
    return [_tail(f, g, a1), _tail(f, g, a2)]


def _polysub(f, g, a1, a2, out, **_):
    return [_tail(f, g, a1), _tail(f, g, a2, -1)]


def _powers(f, n, like):
    """The power of x each of n coefficients multiplies: n - 1 down to 0, real, of
    ``like``'s precision."""
    return _const(f, "arange", like, start=n - 1, stop=-1, step=-1,
                  dtype=np.dtype(np.dtype(like.dtype).char.lower()))


def _factorial_scale(f, powers, m, step):
    """The product over i < m of (powers + step * i + (step > 0)): falling factorials for
    polyder (step -1), rising ones for polyint (step +1)."""
    scale = None
    for i in range(m):
        factor = f("add", powers, step * i + (1 if step > 0 else 0))
        scale = factor if scale is None else f("multiply", scale, factor)
    return scale


def _polyder(f, g, p, out, m=1, **_):
    m, n = int(m), p.shape[0]
    if m == 0:
        return [g]
    kept = n - m
    if kept <= 0:
        return [_zero(f, g, p)]
    scale = _factorial_scale(f, _powers(f, n, g)[:kept], m, -1)
    return [f("pad", f("multiply", g, scale), pad_width=((0, m),))]


def _polyint(f, g, p, out, m=1, **_):
    m, n = int(m), p.shape[0]
    if m == 0:
        return [g]
    scale = _factorial_scale(f, _powers(f, n, g), m, 1)
    return [f("true_divide", g[:n], scale)]


def _polyval(f, g, p, x, out, **_):
    n = p.shape[0] if p.shape else 0
    if n == 0:
        return [_zero(f, g, p), _zero(f, g, x)]
    moved = tuple(range(1, len(p.shape))) + (0,)  # the coefficient axis last
    dp = None
    if _is_array(p):
        terms = f("power", _last(f, x), _powers(f, n, g))  # (..., n): x^(n-1) ... x^0
        dp = f("multiply", _last(f, g), _conj(f, terms))
        dp = f.sum_to(dp, tuple(p.shape[1:]) + (n,))
        dp = f.transpose(dp, tuple(int(i) for i in np.argsort(moved)))
    dx = None
    if _is_array(x):
        if n == 1:
            dx = _zero(f, g, x)
        else:
            scale = f.reshape(_powers(f, n, g)[:n - 1], (n - 1,) + (1,) * (len(p.shape) - 1))
            derivative = f("polyval", f("multiply", p[:n - 1], scale), x)
            dx = f("multiply", g, _conj(f, derivative))
    return [dp, dx]


def _poly(f, g, zeros, out, **_):
    """d poly(r) / d r_i = -[0, poly(r without r_i)]: one poly per zero."""
    count = zeros.shape[0]
    if count == 0:
        return [None]
    rows = []
    for i in range(count):
        rest = f("concatenate", zeros[:i], zeros[i + 1:], axis=0)
        rows.append(f.reshape(f("poly", rest), (count,)))
    others = f("stack", *rows, axis=0)  # (count, count)
    return [f("negative", f("matmul", others, g[1:]))]


def _polyfit(f, grads, inputs, outputs, params):
    if params.get("cov"):
        raise NotImplementedError("the gradient of polyfit with cov=True is not built "
                                  "(with cov=False it is)")
    x, y, *rest = inputs
    w = rest[0] if rest else None
    gc, c = grads[0], outputs[0]
    order = int(params["deg"]) + 1
    vector = len(y.shape) == 1
    terms = f("power", _last(f, x), _powers(f, order, gc))  # V: (M, order)
    weights = _last(f, w) if w is not None else None
    a = terms if w is None else f("multiply", weights, terms)
    b = y if w is None else f("multiply", w if vector else weights, y)
    b2, c2, gc2 = ((_columns(f, b), _columns(f, c), _columns(f, gc)) if vector
                   else (b, c, gc))
    pinv = f("linalg.pinv", a)
    db = f("matmul", _swap(f, pinv), gc2)                             # (M, K)
    (da,) = _pinv(f, f("matmul", gc2, _swap(f, b2)), a, pinv)         # (M, order)
    dy = db if w is None else f("multiply", weights, db)
    slopes = None  # V': (M, order - 1), the power's derivative of each column but the last
    if order > 1:
        lower = _powers(f, order - 1, gc)
        slopes = f("multiply", f("power", _last(f, x), lower), f("add", lower, 1))
    da_of_x = da if w is None else f("multiply", weights, da)
    dx = (f("sum", f("multiply", da_of_x[:, :order - 1], slopes), axis=1)
          if slopes is not None else _zero(f, gc, x))
    dw = None
    if w is not None:
        dw = f("add", f("sum", f("multiply", da, terms), axis=1),
               f("sum", f("multiply", db, _columns(f, y) if vector else y), axis=1))
    return [dx, f.reshape(dy, y.shape), *([dw] if w is not None else [])]


NUMPY_MORE = {
    "ldexp": _one(_ldexp),
    "frexp": _frexp,
    "modf": _modf,
    "unwrap": _one(_unwrap),
    "sort_complex": INDEXING["sort"],
    "copyto": _copyto,
    "putmask": _putmask,
    "place": _place,
    "select": _select,
    "vecdot": _one(_vecdot),
    "matvec": _one(_matvec),
    "vecmat": _one(_vecmat),
    "polyadd": _one(_polyadd),
    "polysub": _one(_polysub),
    "polyder": _one(_polyder),
    "polyint": _one(_polyint),
    "polyval": _one(_polyval),
    "poly": _one(_poly),
    "polyfit": _polyfit,
}
