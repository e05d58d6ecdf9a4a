"""Gradient rules of ``linalg.eig``, ``linalg.eigvals`` and ``linalg.lstsq``:
``EIG_LSTSQ`` (conventions: ops/gradients/rules.py).

eig (A = V diag(L) V^-1, stacks of matrices) follows PyTorch's ``linalg_eig_backward``
and its convention for complex values (the gradient of a complex ``z`` is
``dL/dRe(z) + i dL/dIm(z)``):

    gA = V^-H (diag(gL) + (V^H gV - V^H V Re(diag(V^H gV))) / conj(E)) V^H,
    E[i, j] = L[j] - L[i] off the diagonal,

so distinct eigenvalues are needed, and a loss of V must not depend on the phase (the sign,
for a real V) of each eigenvector, which NumPy's eig leaves arbitrary (each has norm 1):
``abs(V)`` is well-defined, ``real(V)`` is not. A real matrix with real eigenvalues has real
results and a real gradient; one with complex eigenvalues is refused by the op itself
(ndengine cannot hold NumPy's value-dependent result dtype): pass a complex matrix.

lstsq (a real ``a`` of full rank, the solution x = pinv(a) b; a complex one raises:
rules.REAL_ONLY): b's gradient ``pinv(a)^T gx``, a's the gradient of pinv at
``gx b^T`` (Golub & Pereyra, as linalg.pinv's); the residuals ``|b - a x|^2`` (given for
m > n) pass ``2 (b - a x) gr`` to b and ``-2 (b - a x) gr x^T`` to a (x is optimal: no term
through x), the singular values svd's rule; the rank none. The SVD of a gives pinv(a) and
the singular values' gradient at once.
"""
from __future__ import annotations

from .common import _eye, _swap, _conj, _real
from .linalg import _rows, _columns, _pinv

__all__ = ["EIG_LSTSQ"]


def _mh(f, a):
    """The conjugate transpose of a stack of matrices."""
    return _conj(f, _swap(f, a))


def _eig_gradient(f, w, v, gw, gv):
    n = w.shape[-1]
    eye = _eye(f, n, w.dtype, gw)
    vh = _mh(f, v)
    diagonal = f("multiply", _rows(f, gw), eye)
    if gv is None:
        inner = diagonal
    else:
        vhgv = f("matmul", vh, gv)
        real_diagonal = _real(f, f("sum", f("multiply", vhgv, eye), axis=-1))
        vhgv = f("subtract", vhgv, f("matmul", vh, f("multiply", v, _rows(f, real_diagonal))))
        wc = _conj(f, w)
        gaps = f("add", f("subtract", _rows(f, wc), _columns(f, wc)), eye)  # 1 on the diagonal
        inner = f("multiply", f("true_divide", vhgv, gaps), f("subtract", 1, eye))
        inner = f("add", inner, diagonal)
    return f("linalg.solve", vh, f("matmul", inner, vh))


def _eig(f, grads, inputs, outputs, params):
    (w, v), (gw, gv) = outputs, grads
    return [_eig_gradient(f, w, v, gw, gv)]


def _eigvals(f, grads, inputs, outputs, params):
    w, v = f.outputs("linalg.eig", inputs, {})
    return [_eig_gradient(f, w, v, grads[0], None)]


def _lstsq(f, grads, inputs, outputs, params):
    a, b = inputs
    x, _, _, _ = outputs
    gx, gr, _, gs = grads
    vector = len(b.shape) == 1
    b2 = _columns(f, b) if vector else b
    x2 = _columns(f, x) if vector else x
    gx2 = _columns(f, gx) if vector else gx
    u, s, vh = f.outputs("linalg.svd", [a], {"full_matrices": False})
    p = f("matmul", _swap(f, vh), f("multiply", _columns(f, f("reciprocal", s)), _swap(f, u)))
    db = f("matmul", _swap(f, p), gx2)
    (da,) = _pinv(f, f("matmul", gx2, _swap(f, b2)), a, p)
    residual = f("multiply", f("subtract", b2, f("matmul", a, x2)),
                 f("multiply", _rows(f, gr), 2))  # (b - a x) 2 gr, column by column
    db = f("add", db, residual)
    da = f("subtract", da, f("matmul", residual, _swap(f, x2)))
    da = f("add", da, f("matmul", f("multiply", u, _rows(f, gs)), vh))  # U diag(gs) Vh
    return [da, f.reshape(db, b.shape) if vector else db]


EIG_LSTSQ = {
    "linalg.eig": _eig,
    "linalg.eigvals": _eigvals,
    "linalg.lstsq": _lstsq,
}
