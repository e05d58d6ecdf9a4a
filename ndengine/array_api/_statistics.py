"""The standard's statistical, utility and linear algebra functions, generated from tables
onto ndengine's reductions and products, with ``matrix_transpose`` and ``vecdot`` built from
them (a view, and a pushed multiply-and-sum)."""
from .. import ndarray

from ._generate import generate_all

__all__ = ["FUNCTIONS", "matrix_transpose", "vecdot"]

_REDUCE = "x, /, *, axis=None, keepdims=False"
_REDUCE_DTYPE = "x, /, *, axis=None, dtype=None, keepdims=False"
_CUMULATIVE = "x, /, *, axis=None, dtype=None, include_initial=False"
_SPREAD = "x, /, *, axis=None, correction=0.0, keepdims=False"
_ROWS = [
    ("cumulative_sum", _CUMULATIVE, ndarray.cumulative_sum),
    ("cumulative_prod", _CUMULATIVE, ndarray.cumulative_prod),
    ("max", _REDUCE, ndarray.max),
    ("mean", _REDUCE, ndarray.mean),
    ("min", _REDUCE, ndarray.min),
    ("prod", _REDUCE_DTYPE, ndarray.prod),
    ("std", _SPREAD, ndarray.std),
    ("sum", _REDUCE_DTYPE, ndarray.sum),
    ("var", _SPREAD, ndarray.var),
    ("all", _REDUCE, ndarray.all),
    ("any", _REDUCE, ndarray.any),
    ("diff", "x, /, *, axis=-1, n=1, prepend=None, append=None", ndarray.diff, None,
     ("prepend", "append")),
    ("matmul", "x1, x2, /", ndarray.matmul),
    ("tensordot", "x1, x2, /, *, axes=2", ndarray.tensordot),
]


def matrix_transpose(x, /):
    """Array API ``matrix_transpose``: the view of ``x`` with its last two axes swapped."""
    if x.ndim < 2:
        raise ValueError("matrix_transpose needs an array of at least two dimensions")
    return ndarray.swapaxes(x, -1, -2)


def vecdot(x1, x2, /, *, axis=-1):
    """Array API ``vecdot``: ``sum(conj(x1) * x2, axis)`` over the broadcast arrays, in their
    promoted dtype (two pushed ops; the product is fused with the sum on large arrays)."""
    ndim = max(x1.ndim, x2.ndim)
    if not -ndim <= axis < 0:
        raise ValueError(f"vecdot: axis {axis} must be negative and within the broadcast "
                         f"rank {ndim}")
    if -axis <= min(x1.ndim, x2.ndim) and x1.shape[axis] != x2.shape[axis]:
        raise ValueError(f"vecdot: the arrays' sizes along axis {axis} differ "
                         f"({x1.shape[axis]} and {x2.shape[axis]})")
    if x1.dtype.kind == "c":
        x1 = ndarray.conj(x1)
    product = x1 * x2
    return ndarray.sum(product, axis=axis, dtype=product.dtype)


FUNCTIONS = generate_all(_ROWS)
FUNCTIONS.update(matrix_transpose=matrix_transpose, vecdot=vecdot)
