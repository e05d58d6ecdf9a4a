"""NumPy's index tricks on NDArrays (``GRIDS``): mgrid, ogrid, r_, c_, s_, index_exp,
ndindex, ndenumerate and the ``broadcast`` class.

mgrid and ogrid read the slices as NumPy's ``nd_grid`` does (sizes, the result dtype from
the bounds and steps, a complex step as a count) and push NumPy's arithmetic on ndengine's
arange and indices: ``index * step + start`` in that dtype. r_ and c_ are NumPy's
``AxisConcatenator`` over NDArrays: slices become pushed aranges or linspaces, items are
raised to ``ndmin`` dimensions as views, every part takes the common dtype, and one pushed
concatenate joins them; its string directives (``'0,2,1'``) are NumPy's, except ``'r'``,
``'c'`` and a string key, which make NumPy matrices (no matrix type here: a ValueError).

s_, index_exp and ndindex only build indices and shapes: they are NumPy's own objects.
ndenumerate reads its array's values once, when made; ``broadcast`` holds NDArrays and
knows its shape at once (NumPy's broadcasting errors, from geometry alone); iterating it
(``next``, ``iters``) reads the values once.
"""
import math

import numpy as np

from ...core import NDArray
from ..arguments import array_of, first_context, read_values
from ..creation import arange, linspace
from ..pushed import PUSHED
from ..shaping import SHAPING

__all__ = ["GRIDS"]


def _slice_parts(key):
    """(start, stop, step, count) of a grid slice, NumPy's defaults; count is the number of
    points for a complex step, else None."""
    start = 0 if key.start is None else key.start
    step = 1 if key.step is None else key.step
    if isinstance(step, (complex, np.complexfloating)):
        return start, key.stop, step, int(abs(step))
    return start, key.stop, step, None


def _spacing(start, stop, count):
    """The step of ``count`` points from start to stop inclusive (NumPy's float division)."""
    return 1 if count == 1 else (stop - start) / float(count - 1)


class _Grid:
    """numpy.mgrid (dense) and numpy.ogrid (sparse) over NDArrays."""

    def __init__(self, sparse):
        self.sparse = sparse

    def __getitem__(self, key):
        if isinstance(key, slice):
            return self._line(key)
        parts = [_slice_parts(k) for k in key]
        sizes, numbers = [], [0]  # NumPy's: at least np.int_
        for start, stop, step, count in parts:
            sizes.append(count if count is not None else math.ceil((stop - start) / step))
            numbers += [start, stop, abs(step) if count is not None else step]
        dtype = np.result_type(*numbers)
        if self.sparse:
            grids = [arange(n, dtype=dtype) for n in sizes]
        else:
            indices = PUSHED["indices"](sizes, dtype=dtype)
            grids = [indices[k] for k in range(len(sizes))]
        for k, (start, stop, step, count) in enumerate(parts):
            step = step if count is None else _spacing(start, stop, count)
            grids[k] = (grids[k] * step + start).astype(dtype, copy=False)
        if self.sparse:
            return tuple(grid.reshape((1,) * k + (-1,) + (1,) * (len(sizes) - k - 1))
                         for k, grid in enumerate(grids))
        return SHAPING["stack"](grids)

    @staticmethod
    def _line(key):
        start, stop, step, count = _slice_parts(key)
        if count is None:
            return arange(start, stop, step)
        dtype = np.result_type(start, stop, abs(step))
        return arange(0, count, 1, dtype=dtype) * _spacing(start, stop, count) + start


def _no_matrix():
    return ValueError("the 'r' and 'c' directives and string keys make NumPy matrices; "
                      "ndengine has no matrix type")


def _directive(item, axis, ndmin, trans1d):
    """NumPy's string directive: 'axis' or 'axis,ndmin[,trans1d]'."""
    if item in ("r", "c"):
        raise _no_matrix()
    if "," in item:
        fields = item.split(",")
        try:
            axis, ndmin = (int(x) for x in fields[:2])
            if len(fields) == 3:
                trans1d = int(fields[2])
            return axis, ndmin, trans1d
        except Exception as exc:
            raise ValueError(f"unknown special directive {item!r}") from exc
    try:
        return int(item), ndmin, trans1d
    except (ValueError, TypeError) as exc:
        raise ValueError("unknown special directive") from exc


def _raised(value, ndmin, ctx, dtype=None):
    """``value`` with at least ``ndmin`` dimensions (leading ones), as NumPy's ``array(...,
    ndmin=)``; in ``dtype`` where given."""
    if dtype is not None and not isinstance(value, NDArray):
        value = np.array(value, dtype=dtype)  # NumPy's conversion (its overflow errors)
    value = array_of(value, ctx)
    if dtype is not None:
        value = value.astype(dtype, copy=False)
    return value.reshape((1,) * (ndmin - value.ndim) + value.shape) if value.ndim < ndmin \
        else value


class _AxisConcatenator:
    """numpy.r_ and numpy.c_ over NDArrays: one pushed concatenate (see the module
    docstring)."""

    def __init__(self, axis=0, ndmin=1, trans1d=-1):
        self.axis, self.ndmin, self.trans1d = axis, ndmin, trans1d

    def _part(self, item, ndmin, trans1d, ctx):
        if isinstance(item, slice):
            start, stop, step, count = _slice_parts(item)
            part = linspace(start, stop, num=count) if count is not None \
                else arange(start, stop, step)
            if ndmin > 1:
                part = _raised(part, ndmin, ctx)
                if trans1d != -1:
                    part = SHAPING["swapaxes"](part, -1, trans1d)
            return part
        item_ndim = np.ndim(item) if not isinstance(item, NDArray) else item.ndim
        part = _raised(item, ndmin, ctx)
        if trans1d != -1 and item_ndim < ndmin:
            k2, k1 = ndmin - item_ndim, trans1d
            k1 = k1 + k2 + 1 if k1 < 0 else k1
            axes = list(range(ndmin))
            part = part.transpose(axes[:k1] + axes[k2:] + axes[k1:k2])
        return part

    def __getitem__(self, key):
        if isinstance(key, str):
            raise _no_matrix()
        key = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        ctx = first_context(*key)
        parts, kinds = [], []
        for k, item in enumerate(key):
            if isinstance(item, str):
                if k != 0:
                    raise ValueError("special directives must be the first entry.")
                axis, ndmin, trans1d = _directive(item, axis, ndmin, trans1d)
                continue
            if type(item) in np.ScalarType:
                parts.append(item)
                kinds.append(item)  # weak, as NumPy's result_type takes it
                continue
            part = self._part(item, ndmin, trans1d, ctx)
            parts.append(part)
            kinds.append(part.dtype)
        if kinds:
            dtype = np.result_type(*kinds)
            parts = [_raised(part, ndmin, ctx, dtype) for part in parts]
        return SHAPING["concatenate"](tuple(parts), axis=axis)

    def __len__(self):
        return 0


class ndenumerate(np.ndenumerate):  # noqa: N801 - NumPy's name
    """As ``numpy.ndenumerate``: an NDArray's values are read once, when it is made."""

    def __init__(self, arr):
        super().__init__(read_values(arr))


class broadcast:  # noqa: N801 - NumPy's name
    """As ``numpy.broadcast``, holding NDArrays: ``shape``, ``ndim``, ``nd``, ``size``,
    ``numiter`` at once (NumPy's errors for shapes that do not broadcast); iterating it (or
    ``iters``) reads the values once."""

    def __init__(self, *args):
        ctx = first_context(*args)
        self.arrays = tuple(array_of(a, ctx) for a in args)
        # NumPy's own broadcasting (and its errors) on zero-stride stand-ins: no memory
        geometry = np.broadcast(*(np.lib.stride_tricks.as_strided(
            np.zeros(1, bool), a.shape, (0,) * a.ndim) for a in self.arrays))
        self.shape, self.size, self.numiter = geometry.shape, geometry.size, len(args)
        self.ndim = self.nd = len(self.shape)
        self._values = None

    @property
    def iters(self):
        if self._values is None:
            self._values = np.broadcast(*(a.asnumpy() for a in self.arrays))
        return self._values.iters

    @property
    def index(self):
        return 0 if self._values is None else self._values.index

    def reset(self):
        if self._values is not None:
            self._values.reset()

    def __iter__(self):
        return self

    def __next__(self):
        self.iters  # noqa: B018 - reads the values on the first step
        return next(self._values)


for _kind in (ndenumerate, broadcast):
    _kind.__module__ = "ndengine"

GRIDS = {"mgrid": _Grid(sparse=False), "ogrid": _Grid(sparse=True),
         "r_": _AxisConcatenator(0, ndmin=1, trans1d=-1),
         "c_": _AxisConcatenator(-1, ndmin=2, trans1d=0),
         "s_": np.s_, "index_exp": np.index_exp, "ndindex": np.ndindex,
         "ndenumerate": ndenumerate, "broadcast": broadcast}
"""The index tricks, by NumPy's names."""
