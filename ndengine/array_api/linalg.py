"""The standard's ``linalg`` extension, generated from a table onto ``ndengine.linalg``
where only names and signatures differ; ``cross``, ``diagonal``, ``trace``, ``matrix_norm``
and ``vector_norm`` are built from ndengine's functions over the last axes."""
import math

from .. import ndarray

from ._generate import generate_all
from ._statistics import matrix_transpose, vecdot

__all__ = ["FUNCTIONS"]

_MODULE = "ndengine.array_api.linalg"
_ROWS = [
    ("cholesky", "x, /, *, upper=False", ndarray.linalg.cholesky),
    ("det", "x, /", ndarray.linalg.det),
    ("eigh", "x, /", ndarray.linalg.eigh),
    ("eigvalsh", "x, /", ndarray.linalg.eigvalsh),
    ("inv", "x, /", ndarray.linalg.inv),
    ("matmul", "x1, x2, /", ndarray.linalg.matmul),
    ("matrix_power", "x, n, /", ndarray.linalg.matrix_power),
    ("matrix_rank", "x, /, *, rtol=None", ndarray.linalg.matrix_rank),
    ("outer", "x1, x2, /", ndarray.linalg.outer),
    ("pinv", "x, /, *, rtol=None", ndarray.linalg.pinv),
    ("qr", "x, /, *, mode='reduced'", ndarray.linalg.qr),
    ("slogdet", "x, /", ndarray.linalg.slogdet),
    ("solve", "x1, x2, /", ndarray.linalg.solve),
    ("svd", "x, /, *, full_matrices=True", ndarray.linalg.svd),
    ("svdvals", "x, /", ndarray.linalg.svdvals),
    ("tensordot", "x1, x2, /, *, axes=2", ndarray.linalg.tensordot),
]


def cross(x1, x2, /, *, axis=-1):
    """Array API ``linalg.cross``: the cross product of 3-vectors along ``axis`` of the
    broadcast arrays, as pushed multiplies, subtractions and a stack."""
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError(f"cross: both arrays need size 3 along axis {axis}, got "
                         f"{x1.shape} and {x2.shape}")
    a, b = (ndarray.moveaxis(x, axis, -1) for x in ndarray.broadcast_arrays(x1, x2))
    a0, a1, a2 = (a[..., i] for i in range(3))
    b0, b1, b2 = (b[..., i] for i in range(3))
    product = ndarray.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return ndarray.moveaxis(product, -1, axis)


def diagonal(x, /, *, offset=0):
    """Array API ``linalg.diagonal``: the diagonals of the last two axes."""
    return ndarray.diagonal(x, offset=offset, axis1=-2, axis2=-1)


def trace(x, /, *, offset=0, dtype=None):
    """Array API ``linalg.trace``: the sums of the diagonals of the last two axes."""
    return ndarray.trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):  # noqa: A002 - the standard's name
    """Array API ``linalg.matrix_norm``: ndengine's ``linalg.norm`` over the last two axes."""
    return ndarray.linalg.norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):  # noqa: A002
    """Array API ``linalg.vector_norm``: ndengine's ``linalg.norm`` of vectors; several axes
    (or all, ``axis=None``) are moved last and flattened into one first."""
    if isinstance(axis, int):
        return ndarray.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)
    axes = tuple(range(x.ndim)) if axis is None else tuple(a % x.ndim for a in axis)
    if len(set(axes)) != len(axes):
        raise ValueError(f"vector_norm: repeated axis in {axis}")
    kept = [a for a in range(x.ndim) if a not in axes]
    flat = ndarray.reshape(ndarray.transpose(x, kept + list(axes)),
                      tuple(x.shape[a] for a in kept) + (math.prod(x.shape[a] for a in axes),))
    norm = ndarray.linalg.norm(flat, ord=ord, axis=-1)
    if keepdims:
        return ndarray.reshape(norm, tuple(1 if a in axes else x.shape[a] for a in range(x.ndim)))
    return norm


FUNCTIONS = generate_all(_ROWS, module=_MODULE)
FUNCTIONS.update(cross=cross, diagonal=diagonal, trace=trace, matrix_norm=matrix_norm,
                 vector_norm=vector_norm, matrix_transpose=matrix_transpose, vecdot=vecdot)
globals().update(FUNCTIONS)
__all__ += sorted(FUNCTIONS)
