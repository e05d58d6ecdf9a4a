"""Gradient rules of products (matmul, dot, tensordot, einsum, ...) and ``linalg`` (inv,
det, solve, cholesky, eigh, svd, qr, pinv, matrix_power, norm): ``LINALG`` (conventions:
ops/gradients/rules.py)."""
from __future__ import annotations

import math
import string

import numpy as np

from .common import _one, _is_array, _zero, _eye, _broadcast, _spread, _inverse, _swap, _conj

__all__ = ["LINALG"]


def _matmul(f, g, x, y, out, **_):
    """matmul (batched, broadcasting); a 1-d operand is a (1, n) row or an (n, 1) column."""
    x_vector, y_vector = len(x.shape) == 1, len(y.shape) == 1
    x2 = f.reshape(x, (1,) + tuple(x.shape)) if x_vector else x
    y2 = f.reshape(y, tuple(y.shape) + (1,)) if y_vector else y
    if x_vector or y_vector:
        batch = tuple(g.shape[:len(g.shape) - (not x_vector) - (not y_vector)])
        g = f.reshape(g, batch + (x2.shape[-2], y2.shape[-1]))
    dx = f("matmul", g, _conj(f, _swap(f, y2)))  # complex: PyTorch's g y^H, x^H g
    dy = f("matmul", _conj(f, _swap(f, x2)), g)
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
    return [f("multiply", g, _conj(f, b)) if _is_array(a) else None,
            f("multiply", g, _conj(f, a)) if _is_array(b) else None]


def _dot(f, g, a, b, out, **_):
    if not _is_array(a) or not _is_array(b) or not a.shape or not b.shape:
        return _scalar_product(f, g, a, b)
    if len(b.shape) <= 2:  # numpy.dot is matmul here
        return _matmul(f, g, a, b, out)
    return _tensordot_gradients(f, g, _conj(f, a), _conj(f, b), [len(a.shape) - 1],
                                [len(b.shape) - 2])


def _tensordot(f, g, a, b, out, axes=2, **_):
    axes_a, axes_b = _tensordot_axes(axes, len(a.shape), len(b.shape))
    return _tensordot_gradients(f, g, _conj(f, a), _conj(f, b), axes_a, axes_b)


def _inner(f, g, a, b, out, **_):
    if not a.shape or not b.shape:
        return _scalar_product(f, g, a, b)
    return _tensordot_gradients(f, g, _conj(f, a), _conj(f, b), [len(a.shape) - 1],
                                [len(b.shape) - 1])


def _vdot(f, g, a, b, out, **_):
    """vdot(a, b) = sum(conj(a) b): a's gradient conj(g) b (PyTorch's), b's g a."""
    return [f("multiply", _conj(f, g), f.reshape(b, a.shape)),
            f("multiply", g, f.reshape(a, b.shape))]


def _outer(f, g, a, b, out, **_):
    a, b = _conj(f, a), _conj(f, b)  # complex: each gradient reads the other's conjugate
    return [f.reshape(f("matmul", g, f.reshape(b, (-1,))), a.shape),
            f.reshape(f("matmul", f.reshape(a, (-1,)), g), b.shape)]


def _kron(f, g, a, b, out, **_):
    """kron: the output read as (a0, b0, a1, b1, ...) is an outer product."""
    a, b = _conj(f, a), _conj(f, b)
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
    from ..families.products import _einsum_arguments
    from ..families.numpy_operators import stand_in
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
                arrays.append(_eye(f, x.shape[position], g.dtype, g))
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
    return _einsum_gradients(f, grads[0], terms, output, [_conj(f, x) for x in inputs])


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
    return _einsum_gradients(f, grads[0], terms, output, [_conj(f, x) for x in inputs])


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
    eye = _eye(f, n, like.dtype, like)
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
    half = f("subtract", 1, f("multiply", _eye(f, n, g.dtype, g), 0.5))
    phi = f("multiply", f("tril", _mm(f, _swap(f, lower), f("tril", g))), half)
    inverse = f("linalg.inv", lower)
    return [_symmetric(f, _mm(f, _swap(f, inverse), phi, inverse))]


def _eigh(f, grads, inputs, outputs, params):
    """A = V diag(w) V^T: A's gradient V (diag(w') + F o (V^T V')) V^T, symmetrized."""
    (w, v), (gw, gv) = outputs, grads
    inner = f("multiply", _off_diagonal_inverse(f, w, gw), _mm(f, _swap(f, v), gv))
    inner = f("add", inner, f("multiply", _rows(f, gw), _eye(f, w.shape[-1], gw.dtype, gw)))
    return [_symmetric(f, _mm(f, v, inner, _swap(f, v)))]


def _eigvalsh(f, g, a, out, UPLO="L", **_):
    w, v = f.outputs("linalg.eigh", [a], {"UPLO": UPLO})
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
                       f("multiply", _rows(f, gs), _eye(f, k, gs.dtype, gs))),
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
        u, s, vh = f.outputs("linalg.svd", [a], {"full_matrices": False})
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
    u, s, vh = f.outputs("linalg.svd", [a], {"full_matrices": False})
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
        q, r = f.outputs("linalg.qr", [a], {"mode": "reduced"})
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
    left = f("subtract", _eye(f, m, g.dtype, g), _mm(f, a, p))    # I - A P
    right = f("subtract", _eye(f, n, g.dtype, g), _mm(f, p, a))   # I - P A
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
        u, s, vh = f.outputs("linalg.svd", [moved], {"full_matrices": False})
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


LINALG = {
    "matmul": _one(_matmul),
    "dot": _one(_dot),
    "tensordot": _one(_tensordot),
    "inner": _one(_inner),
    "vdot": _one(_vdot),
    "outer": _one(_outer),
    "kron": _one(_kron),
    "einsum": _einsum,
    "linalg.multi_dot": _multi_dot,
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
}
