"""numpy.linalg's Array API functions (NumPy 2): ``cross``, ``diagonal``, ``trace``,
``matrix_transpose``, ``vecdot``, ``matrix_norm`` and ``vector_norm``, with numpy.linalg's
parameter lists. Each works over the last axes and is built from the namespace's own
functions (the main namespace's ``cross``, ``vecdot``, ``matrix_transpose``, ``diagonal``,
``trace``; ``linalg.norm``), so it returns at once with pushed ops, as they do.

``ndengine.ndarray`` adds this table to ``ndengine.linalg`` (``linalg._add_functions``) once
the families are imported; it imports the families ``math_extra`` (cross) and
``creation_extra`` (vecdot, matrix_transpose). ``ndengine.array_api.linalg`` uses these
functions too: the standard's signatures are numpy.linalg's.
"""
import math

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from .. import linalg
from ..arguments import array_of, first_context
from ..pushed import PUSHED
from ..shaping import SHAPING
from ..signatures import numpy_function
from .creation_extra import CREATION
from .math_extra import COMPOSED

__all__ = ["LINALG_STANDARD"]


def _cross(x1, x2, /, *, axis=-1):
    ctx = first_context(x1, x2)
    x1, x2 = array_of(x1, ctx), array_of(x2, ctx)
    if x1.ndim == 0 or x2.ndim == 0 or x1.shape[axis] != 3 or x2.shape[axis] != 3:
        sizes = [x.shape[axis] if x.ndim else 0 for x in (x1, x2)]
        raise ValueError(f"Both input arrays must be (arrays of) 3-dimensional vectors, but "
                         f"they are {sizes[0]} and {sizes[1]} dimensional instead.")
    return COMPOSED["cross"](x1, x2, axis=axis)


def _diagonal(x, /, *, offset=0):
    return PUSHED["diagonal"](array_of(x), offset=offset, axis1=-2, axis2=-1)


def _trace(x, /, *, offset=0, dtype=None):
    return PUSHED["trace"](array_of(x), offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def _vecdot(x1, x2, /, *, axis=-1):
    return CREATION["vecdot"](x1, x2, axis=axis)


def _matrix_norm(x, /, *, keepdims=False, ord="fro"):  # noqa: A002 - NumPy's name
    return linalg.norm(array_of(x), ord=ord, axis=(-2, -1), keepdims=keepdims)


def _vector_norm(x, /, *, axis=None, keepdims=False, ord=2):  # noqa: A002 - NumPy's name
    """Several axes (or all, ``axis=None``) are moved last and flattened into one first (a
    view where the layout allows), as numpy.linalg.vector_norm does."""
    x = array_of(x)
    if isinstance(axis, (int, np.integer)):
        return linalg.norm(x, ord=ord, axis=int(axis), keepdims=keepdims)
    axes = tuple(range(x.ndim)) if axis is None else normalize_axis_tuple(axis, x.ndim)
    kept = [a for a in range(x.ndim) if a not in axes]
    flat_shape = (*(x.shape[a] for a in kept), math.prod(x.shape[a] for a in axes))
    flat = SHAPING["reshape"](SHAPING["transpose"](x, kept + list(axes)), flat_shape)
    norm = linalg.norm(flat, ord=ord, axis=-1)
    if keepdims:
        return SHAPING["reshape"](norm, tuple(1 if a in axes else x.shape[a]
                                              for a in range(x.ndim)))
    return norm


_ROWS = {
    "cross": (_cross, "The main namespace's ``cross``, for 3-vectors only."),
    "diagonal": (_diagonal, "A view of the diagonals of the last two axes."),
    "trace": (_trace, "The pushed sums of the diagonals of the last two axes."),
    "matrix_transpose": (CREATION["matrix_transpose"], "A view."),
    "vecdot": (_vecdot, "The main namespace's ``vecdot`` (``x1`` conjugated)."),
    "matrix_norm": (_matrix_norm, "``linalg.norm`` over the last two axes."),
    "vector_norm": (_vector_norm, "``linalg.norm`` of vectors."),
}

LINALG_STANDARD = {name: numpy_function(name, getattr(np.linalg, name), implementation, doc,
                                        module="ndengine.linalg")
                   for name, (implementation, doc) in _ROWS.items()}
