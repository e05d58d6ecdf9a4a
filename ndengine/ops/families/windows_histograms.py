"""NumPy's window functions (bartlett, blackman, hamming, hanning, kaiser), histogram2d,
histogramdd, histogram_bin_edges, packbits and unpackbits as ops run by NumPy's own functions.

Windows take no input: ``M`` (and kaiser's ``beta``) are params; the length follows NumPy's
``arange`` over them (``window_length``) and the dtype and NumPy's errors come from the same
call on ``M`` capped at 16.

Histograms: their outputs' shapes come from ``bins`` alone (an int or edges per dimension),
never from the sample's values, so NumPy's call on a stand-in sample gives them exactly. The
stand-ins (``sample_stand_ins``) shrink only the first axis (the samples; equal counts stay
equal, unequal ones unequal, so a weights/sample mismatch is refused as NumPy refuses it)
and keep the others (the dimensions, which ``bins`` must match). A bins rule ('auto', 'fd',
...) of histogram_bin_edges is measured first (the statistics family's
``histogram_bin_count``) and given as the own param ``bin_count``. histogramdd takes its
sample as one (N, D) input or as D inputs, one per coordinate (``sequence``); its outputs
are the histogram and the D edge arrays (``dims``: D).

packbits and unpackbits: shape rules over ``axis`` and ``count``; dtypes and NumPy's errors
(a float input, a bad bitorder) from NumPy's call on small stand-ins.
"""
from __future__ import annotations

import math
import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ..dtypes import check_dtype, is_array_spec
from ..shapes import shape_of
from .numpy_functions import NumpyFunction, quiet
from .numpy_operators import FrozenArray

__all__ = ["WINDOWS", "window_length", "register_all"]

WINDOWS = {"bartlett": np.bartlett, "blackman": np.blackman, "hamming": np.hamming,
           "hanning": np.hanning, "kaiser": np.kaiser}
_PROBE_LENGTH = 16


def window_length(name, M):
    """The length of NumPy's window ``name`` of ``M`` points (M a real number)."""
    M = float(M)
    if name == "kaiser":
        return 1 if M == 1 else max(math.ceil(M), 0)
    if M < 1:
        return 0
    return 1 if M == 1 else max(math.ceil((M - (1 - M)) / 2), 0)


class WindowFunction(NumpyFunction):
    """A window: no inputs, params M (and beta)."""

    def __init__(self, name):
        super().__init__(name, WINDOWS[name], None, positional=(),
                         doc=f"numpy.{name}(M{', beta' if name == 'kaiser' else ''})")

    def infer(self, *inputs, arrays=(), out_dtype=None, **params):
        M = params["M"]
        probe = M
        if isinstance(M, (int, float, np.integer, np.floating)) and M > _PROBE_LENGTH:
            probe = np.array([0.0, M]).dtype.type(_PROBE_LENGTH)
        with quiet():
            result = self.function(**{**params, "M": probe})
        return [((window_length(self.name, M),), result.dtype)]


def _thawed(value):
    """bins or range as NumPy takes them (frozen arrays inside tuples given back)."""
    if isinstance(value, tuple):
        return [_thawed(v) for v in value]
    return value.array if type(value) is FrozenArray else value


def _histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    return np.histogram2d(x, y, _thawed(bins), _thawed(range), density, weights)


def _histogramdd(*columns, sequence, bins=10, range=None, density=None, weights=None):
    sample = list(columns) if sequence else columns[0]
    hist, edges = np.histogramdd(sample, _thawed(bins), _thawed(range), density, weights)
    return (hist, *edges)


def _bin_edges(a, bins=10, range=None, weights=None):
    return np.histogram_bin_edges(a, _thawed(bins), _thawed(range), weights)


def sample_stand_ins(inputs):
    """Ones shaped as the inputs, their first axis shrunk (see the module docstring)."""
    firsts = sorted({shape_of(v)[0] for v in inputs if is_array_spec(v) and shape_of(v)})
    small = {n: min(n, 2 + i) for i, n in enumerate(firsts)}
    made = []
    for value in inputs:
        shape = shape_of(value)
        if shape:
            shape = (small[shape[0]],) + tuple(shape[1:])
        made.append(np.ones(shape, check_dtype(value.dtype)))
    return made


class HistogramFunction(NumpyFunction):
    """histogram2d, histogramdd or histogram_bin_edges (see the module docstring)."""

    def infer(self, *inputs, arrays=(), out_dtype=None, **params):
        numpy_params, own = self.split_params(params)
        args, keywords = self.call_arguments(sample_stand_ins(inputs), arrays)
        with quiet():
            result = self.function(*args, **keywords, **numpy_params)
        results = result if isinstance(result, tuple) else (result,)
        shapes = [np.shape(r) for r in results]
        if "bin_count" in own:  # a bins rule: the measured number of bins
            shapes = [(own["bin_count"] + 1,)]
        return [(shape, np.asarray(r).dtype) for shape, r in zip(shapes, results)]


def _packbits_shapes(shapes, params):
    shape = shapes["a"] or (1,)
    axis = params.get("axis")
    if axis is None:
        return [(-(-math.prod(shape) // 8),)]
    axis = normalize_axis_index(axis, len(shape))
    return [shape[:axis] + (-(-shape[axis] // 8),) + shape[axis + 1:]]


def _unpacked_axis(shape, axis):
    """The shape unpackbits works on (a 0-d input as one element; ``axis`` None: flattened),
    its axis normalized, and how many bits that axis unpacks to before ``count``."""
    shape = shape or (1,)
    if axis is None:
        shape, axis = (math.prod(shape),), 0
    axis = normalize_axis_index(axis, len(shape))
    return shape, axis, shape[axis] * 8


def _unpackbits_shapes(shapes, params):
    count = params.get("count")
    shape, axis, bits = _unpacked_axis(shapes["a"], params.get("axis"))
    if count is not None:
        count = operator.index(count)
        bits = count if count >= 0 else max(bits + count, 0)
    return [shape[:axis] + (bits,) + shape[axis + 1:]]


def _unpackbits_stand_in_params(inputs, params):
    """unpackbits' params for the stand-in call: a negative ``count`` that the real input's
    bits allow may exceed the (smaller) stand-in's, and it changes neither the dtype nor
    NumPy's errors: the stand-in runs without it (the shape rule applies it)."""
    count = params.get("count")
    if count is None or type(count) is bool or not isinstance(count, (int, np.integer)) \
            or count >= 0:
        return params
    bits = _unpacked_axis(shape_of(inputs["a"]), params.get("axis"))[2]
    return {**params, "count": None} if -count <= bits else params


def _functions():
    made = [WindowFunction(name) for name in WINDOWS]
    made.append(HistogramFunction("histogram2d", _histogram2d, None, positional=("x", "y"),
                                  num_outputs=3, own_params=("bin_count",),
                                  doc="numpy.histogram2d: (H, xedges, yedges)"))
    made.append(HistogramFunction(
        "histogramdd", _histogramdd, None, positional=tuple(f"x{i}" for i in range(64)),
        num_outputs=lambda *inputs_and_params: 1 + inputs_and_params[-1]["dims"],
        own_params=("dims", "bin_count"),
        doc="numpy.histogramdd: (H, *edges); the sample as one (N, D) input or D inputs"))
    made.append(HistogramFunction("histogram_bin_edges", _bin_edges, None,
                                  own_params=("bin_count",),
                                  doc="numpy.histogram_bin_edges; a bins rule with its "
                                      "measured bin_count"))
    made.append(NumpyFunction("packbits", np.packbits, _packbits_shapes,
                              doc="numpy.packbits(a, axis, bitorder)"))
    made.append(NumpyFunction("unpackbits", np.unpackbits, _unpackbits_shapes,
                              stand_in_params=_unpackbits_stand_in_params,
                              doc="numpy.unpackbits(a, axis, count, bitorder)"))
    return made


def register_all() -> None:
    for function in _functions():
        function.register()
