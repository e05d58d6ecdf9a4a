"""Sorting and searching: sort, argsort, partition, argpartition, searchsorted, digitize,
lexsort, and the ops whose output size depends on the values: nonzero, argwhere,
flatnonzero, unique, bincount (each planned from a size measured first by a small op:
count_nonzero, unique_count, bincount_length).

The kernels call NumPy's own functions (see ``numpy_functions``); sort and partition sort
the output itself in place (``ndarray.sort``), so ``x.sort()`` is one pass over x.
"""
from __future__ import annotations

import functools
import operator

import numpy as np

from .numpy_functions import NumpyFunction, axis_index, flat_or_same_shapes
from ..outputs import same_view, write_with_req
from ..plans import OpReq
from ..shapes import shape_of


def in_place_kernel(method, xp, args, keywords, params, outputs, req):
    """Write the input into the output, then ``output.sort()`` (or partition) there; the
    flattened input for axis None. ``xp``: the arrays' module (the GPU kernels call it too)."""
    (x,) = args
    params = dict(params)
    axis = params.pop("axis", -1)
    kth = params.pop("kth", None)

    def compute(target):
        if axis is None:
            xp.copyto(target, x.reshape(-1))
        elif not same_view(x, target):
            xp.copyto(target, x)
        run = getattr(target, method)
        if kth is None:
            run(axis=-1 if axis is None else axis, **params)
        else:
            run(kth, axis=-1 if axis is None else axis, **params)
    write_with_req(outputs[0], OpReq(req[0]), compute, xp=xp)


def _in_place(method):
    return functools.partial(in_place_kernel, method, np)


def _checked_kth(inputs, params):
    """NumPy checks kth against the real length along the axis: here; the stand-in (whose
    lengths are small) is handed kth 0 for every kth found in bounds."""
    kth = params.get("kth")
    shape = shape_of(inputs["a"])
    axis = params.get("axis", -1)
    try:
        kths = [operator.index(k) for k in np.ravel(kth)]
        length = int(np.prod(shape)) if axis is None else (
            shape[axis_index(params, len(shape))] if shape else 1)
    except (TypeError, ValueError, IndexError):
        return params  # not integers, or a bad axis: NumPy's error from the stand-in
    if any(isinstance(k, (bool, np.bool_)) for k in np.ravel(kth)) or 0 in shape:
        return params  # NumPy's ValueError for booleans (from the stand-in); an empty
        # array has no bounds to check
    for k in kths:
        if not -length <= k < length:
            raise ValueError(f"kth(={k}) out of bounds ({length})")
    return {**params, "kth": np.zeros(np.shape(kth), np.intp) if np.ndim(kth) else 0}


def _searchsorted_shapes(shapes, params):
    return [shapes["v"]]


def _lexsort(*keys, axis=-1, sequence=True):
    """np.lexsort of the keys, a sequence of arrays (``sequence``) or one array of them."""
    return np.lexsort(keys if sequence else keys[0], axis=axis)


def _lexsort_shapes(shapes, params):
    first = shapes.get("a", ())
    return [first if params.get("sequence", True) else first[1:]]


# ---------------------------------------------------------------- value-sized outputs
def _nonzero_shapes(shapes, params):
    return [(params["count"],)] * len(shapes["a"])


def _argwhere_shapes(shapes, params):
    return [(params["count"], len(shapes["a"]))]


def _unique_count(a, *, axis=None, equal_nan=True):
    """How many values (slices along ``axis``) np.unique finds."""
    found = np.unique(a, axis=axis, equal_nan=equal_nan)
    return np.intp(found.size if axis is None else found.shape[axis])


def _unique_shapes(shapes, params):
    shape, count, axis = shapes["a"], params["count"], params.get("axis")
    if axis is None:
        values = (count,)
        inverse = shape
    else:
        axis = axis_index(params, len(shape))
        values = shape[:axis] + (count,) + shape[axis + 1:]
        inverse = (shape[axis],)
    made = [values]
    if params.get("return_index"):
        made.append((count,))
    if params.get("return_inverse"):
        made.append(inverse)
    if params.get("return_counts"):
        made.append((count,))
    return made


def _bincount_length(x, weights=None, minlength=0):
    """The length np.bincount gives (its errors for negative values included)."""
    x = np.asarray(x)
    if x.size and x.min() < 0:
        raise ValueError("'list' argument must have no negative elements")
    return np.intp(max(int(x.max()) + 1 if x.size else 0, operator.index(minlength)))


def _functions():
    sized = "; planned from a size measured first (the caller waits for it)"
    return [
        NumpyFunction("sort", np.sort, flat_or_same_shapes(-1), kernel=_in_place("sort"),
                      doc="numpy.sort: axis (None: flattened), kind, stable; sorts its "
                          "output in place (x.sort(): the output is x)"),
        NumpyFunction("argsort", np.argsort, flat_or_same_shapes(-1),
                      doc="numpy.argsort: axis, kind, stable"),
        NumpyFunction("partition", np.partition, flat_or_same_shapes(-1),
                      kernel=_in_place("partition"), stand_in_params=_checked_kth,
                      doc="numpy.partition: kth, axis, kind; partitions its output in place"),
        NumpyFunction("argpartition", np.argpartition, flat_or_same_shapes(-1),
                      stand_in_params=_checked_kth, doc="numpy.argpartition: kth, axis, kind"),
        NumpyFunction("searchsorted", np.searchsorted, _searchsorted_shapes,
                      positional=("a", "v"), fills={"sorter": 0},
                      doc="numpy.searchsorted(a, v): side; sorter an input"),
        NumpyFunction("digitize", np.digitize, lambda shapes, params: [shapes["a"]],
                      doc="numpy.digitize: bins (a param or an input), right"),
        NumpyFunction("lexsort", _lexsort, _lexsort_shapes,
                      positional=("a",) + tuple(f"key{i}" for i in range(1, 64)),
                      doc="numpy.lexsort: the keys as inputs, axis"),
        NumpyFunction("nonzero", np.nonzero, _nonzero_shapes, own_params=("count",),
                      num_outputs=lambda a, params: len(shape_of(a)),
                      doc="numpy.nonzero" + sized),
        NumpyFunction("argwhere", np.argwhere, _argwhere_shapes, own_params=("count",),
                      doc="numpy.argwhere" + sized),
        NumpyFunction("flatnonzero", np.flatnonzero, lambda shapes, params: [(params["count"],)],
                      own_params=("count",), doc="numpy.flatnonzero" + sized),
        NumpyFunction("unique", np.unique, _unique_shapes, own_params=("count",),
                      num_outputs=lambda a, params: 1 + sum(
                          bool(params.get(k)) for k in
                          ("return_index", "return_inverse", "return_counts")),
                      doc="numpy.unique: return_index, return_inverse, return_counts, axis, "
                          "equal_nan, sorted" + sized),
        NumpyFunction("unique_count", _unique_count, lambda shapes, params: [()],
                      doc="how many values (or slices along axis) numpy.unique finds"),
        NumpyFunction("bincount", np.bincount, lambda shapes, params: [(params["length"],)],
                      own_params=("length",),
                      doc="numpy.bincount: weights an input, minlength" + sized),
        NumpyFunction("bincount_length", _bincount_length, lambda shapes, params: [()],
                      doc="the length numpy.bincount gives"),
    ]


def register_all() -> None:
    for function in _functions():
        function.register()


__all__ = ["register_all"]
