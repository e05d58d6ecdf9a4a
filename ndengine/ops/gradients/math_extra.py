"""Gradient rules of convolve, correlate, cov and corrcoef (``MATH_EXTRA``; conventions:
ops/gradients/rules.py). All are real only (``REAL_ONLY``).

convolve and correlate are bilinear: their results are slices of the full convolution
(correlate's: of the convolution with the reversed ``v``) at NumPy's offsets, so the
gradient is padded back to the full length and correlated with the other operand, over
the ``valid`` range: each operand's gradient has its length.

cov: with ``X`` the centred observations (NumPy's ``atleast_2d``, transposed for
``rowvar=False``, ``y``'s rows appended) and ``C = X X^T / (N - ddof)``, the gradient of
``X`` is ``(G + G^T) X / (N - ddof)`` (its rows have mean zero already, so the centring
takes nothing from it), split back into ``m`` and ``y``. ``fweights`` and ``aweights``
raise NotImplementedError. corrcoef: ``R = C / (s s^T)`` with ``s = sqrt(diag C)`` gives
``dC`` (see ``_corrcoef``), taken through cov's rule. (NumPy's clip of R to [-1, 1] is
taken as the identity: a correlation reaches the bounds only where it is exact.)
"""
from __future__ import annotations

__all__ = ["MATH_EXTRA"]

def _offset(name, n, m, kept):
    """Where NumPy's result starts in the full result of length n + m - 1."""
    extra = n + m - 1 - kept
    if name == "correlate" and n < m:
        return (extra + 1) // 2  # NumPy's correlate swaps, and reverses, a shorter a
    return extra // 2


def _bilinear(name):
    def rule(f, grads, inputs, outputs, params):
        a, v = inputs
        g = grads[0]
        n, m = max(a.size, 1), max(v.size, 1)
        full = n + m - 1
        start = _offset(name, n, m, g.size)
        flat_a, flat_v = f.reshape(a, (n,)), f.reshape(v, (m,))
        g = f.reshape(g, (g.size,))
        if g.size != full:
            g = f("pad", g, pad_width=((start, full - g.size - start),))
        if name == "convolve":  # out = conv(a, v): each operand correlates with the other
            da = f("correlate", g, flat_v, mode="valid")
            dv = f("correlate", g, flat_a, mode="valid")
        else:  # out = conv(a, v[::-1])
            da = f("correlate", g, flat_v[::-1], mode="valid")
            dv = f("correlate", g, flat_a, mode="valid")[::-1]
        return [f.reshape(da, a.shape), f.reshape(dv, v.shape)]
    return rule


def _rows(f, x, rowvar):
    """NumPy's atleast_2d of ``x``, transposed as cov reads it: variables on the rows."""
    rows = f.reshape(x, x.shape if len(x.shape) == 2 else (1, max(x.size, 1)))
    return rows if rowvar or rows.shape[0] == 1 else f.transpose(rows)


def _covariance_gradient(f, inputs, params, g, diagonal=None):
    """The gradients of cov's inputs for the gradient ``dC = g - diag(diagonal)`` of its
    (count, count) result."""
    rowvar = params.get("rowvar", True)
    parts = [_rows(f, x, rowvar) for x in inputs]
    x = parts[0] if len(parts) == 1 else f("concatenate", *parts, axis=0)
    observations = x.shape[1]
    ddof = params.get("ddof")
    if ddof is None:
        ddof = 0 if params.get("bias", False) else 1
    centred = f("subtract", x, f("mean", x, axis=1, keepdims=True))
    product = f("matmul", f("add", g, f.transpose(g)), centred)
    if diagonal is not None:
        product = f("subtract", product,
                    f("multiply", f.reshape(f("multiply", diagonal, 2), (-1, 1)), centred))
    dx = f("true_divide", product, observations - ddof)
    results, start = [], 0
    for original, part in zip(inputs, parts):
        piece = dx[start:start + part.shape[0]]
        start += part.shape[0]
        if not rowvar and len(original.shape) == 2 and original.shape[0] != 1:
            piece = f.transpose(piece)
        results.append(f.reshape(piece, original.shape))
    return results


def _refuse_weights(params):
    names = list(params.get("arrays", ()))
    if "fweights" in names or "aweights" in names:
        raise NotImplementedError("the gradient of cov with fweights or aweights is not built "
                                  "(without them it is)")


def _cov(f, grads, inputs, outputs, params):
    _refuse_weights(params)
    count = max(int(round(outputs[0].size ** 0.5)), 1)
    return _covariance_gradient(f, inputs, params, f.reshape(grads[0], (count, count)))


def _corrcoef(f, grads, inputs, outputs, params):
    """R = C / (s s^T), s = sqrt(diag C): dC = G / (s s^T) - diag(t), t_i the sum over j of
    (G R)_ij + (G R)_ji over 2 C_ii (the diagonal's own terms cancel: R_ii is 1)."""
    count = max(int(round(outputs[0].size ** 0.5)), 1)
    square = (count, count)
    c = f.reshape(f("cov", *inputs, **params), square)
    variances = f("diagonal", c)
    scale = f.reshape(f("sqrt", variances), (count, 1))
    g = f.reshape(grads[0], square)
    weighted = f("multiply", g, f.reshape(outputs[0], square))
    rows_and_columns = f("add", f("sum", weighted, axis=1), f("sum", weighted, axis=0))
    diagonal = f("true_divide", rows_and_columns, f("multiply", variances, 2))
    scaled = f("true_divide", g, f("multiply", scale, f.transpose(scale)))
    return _covariance_gradient(f, inputs, params, scaled, diagonal)


MATH_EXTRA = {
    "convolve": _bilinear("convolve"),
    "correlate": _bilinear("correlate"),
    "cov": _cov,
    "corrcoef": _corrcoef,
}
