"""NumPy functions as ops: inference on small stand-ins, a kernel that calls NumPy itself.

An op of this kind runs one NumPy function (np.nanmean, np.quantile, np.argsort, ...) in its
kernel, on the op's buffers, so values, dtypes and value errors are NumPy's by construction.
Inference touches no data: the output shapes come from the op's shape rule on the real
shapes; the output dtypes and NumPy's errors come from the same call on stand-ins, arrays of
ones whose lengths are small but keep the real lengths' zeros, ones and order (lengths 3 and
1000 become 2 and 3 when both occur), so NumPy still sees unequal lengths as unequal and
refuses what it refuses at the call (a bad axis, weights of the wrong length, a bad kind).

Params: the function's own keyword arguments (scalars, tuples, or NumPy arrays the caller
snapshotted: ``q``, ``bins``), plus
``arrays``: the keyword names of the inputs that follow the function's positional ones
  (``("weights",)``: the second input is passed as ``weights=``);
``out_dtype``: the dtype of a given ``out=`` array, into which NumPy writes (and in which
  some functions accumulate): the kernel then hands NumPy the output as ``out=``;
and the op's own params (``own_params``: sizes measured before the call, never NumPy's).
"""
from __future__ import annotations

import contextlib
import math
import warnings

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from ..dtypes import check_dtype, is_array_spec
from ..outputs import detach_overlapping, write_value, write_with_req
from ..registry import add_operator, numpy_backed
from ..shapes import reduced_shape, shape_of

__all__ = ["NumpyFunction", "FUNCTIONS", "stand_ins", "quiet", "reduce_shapes", "arg_reduce_shapes",
           "same_shapes", "flat_or_same_shapes"]

_NO_KEYWORDS = {}  # (never written: a call without keyword arrays passes it as **)
STAND_IN_LIMIT = 4096  # elements per stand-in; beyond it lengths above one all become 2
FUNCTIONS: dict = {}  # op name -> its registered NumpyFunction (the gpu kernels read the rows)


@contextlib.contextmanager
def quiet():
    """No floating-point or NumPy warnings from a stand-in call: the kernel's real call
    warns (an all-NaN slice, a mean of nothing), once."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _small_lengths(specs):
    lengths = sorted({n for shape in specs for n in shape if n > 1})
    small = {n: i + 2 for i, n in enumerate(lengths)}
    if any(math.prod(small.get(n, n) for n in shape) > STAND_IN_LIMIT for shape in specs):
        small = dict.fromkeys(lengths, 2)  # many distinct lengths: keep "more than one" only
        if any(math.prod(small.get(n, n) for n in shape) > STAND_IN_LIMIT for shape in specs):
            small = dict.fromkeys(lengths, 1)
    return small


def stand_ins(values, fills=None):
    """NumPy stand-ins for the array specs among ``values`` (see the module docstring),
    filled with ``fills[i]`` (default 1); Python scalars stay as they are."""
    shapes = [shape_of(v) for v in values if is_array_spec(v)]
    small = _small_lengths(shapes)
    result = []
    for i, value in enumerate(values):
        if is_array_spec(value):
            fill = 1 if fills is None or fills[i] is None else fills[i]
            shape = tuple(small.get(n, n) for n in shape_of(value))
            result.append(np.full(shape, fill, check_dtype(value.dtype)))
        else:
            result.append(value)
    return result


# ---------------------------------------------------------------- shape rules
# rule(shapes, params) -> one shape per output; ``shapes``: input name -> its shape (a
# Python scalar input is 0-d); ``params``: NumPy's keyword arguments and the op's own.

def _keepdims(params):
    return bool(params.get("keepdims", False))


def reduce_shapes(shapes, params):
    """A reduction over ``axis`` (None, an int or a sequence), ``keepdims``."""
    shape = shapes["a"]
    if not shape:
        return [()]
    axis = params.get("axis")
    axes = tuple(range(len(shape))) if axis is None else normalize_axis_tuple(axis, len(shape))
    return [reduced_shape(shape, axes, _keepdims(params))]


def arg_reduce_shapes(shapes, params):
    """argmin-like: an int axis, or None (the flattened index, (1,)*ndim with keepdims)."""
    shape = shapes["a"]
    if params.get("axis") is None or not shape:
        return [(1,) * len(shape) if _keepdims(params) else ()]
    return reduce_shapes(shapes, params)


def same_shapes(shapes, params):
    return [shapes["a"]]


def flat_or_same_shapes(default_axis):
    """The rule of cumsum (default axis None), argsort (-1) & co.: the flattened input for
    axis None, else the input's shape; a 0-d input gives (1,)."""
    def rule(shapes, params):
        shape = shapes["a"]
        if params.get("axis", default_axis) is None or not shape:
            return [(math.prod(shape),)]
        return [shape]
    return rule


def axis_index(params, ndim, default=-1):
    return normalize_axis_index(params.get("axis", default), ndim)


# ---------------------------------------------------------------- the op
class NumpyFunction:
    """One NumPy function as a registered op (see the module docstring).

    ``positional``: the names of the leading inputs NumPy takes positionally;
    ``takes_out``: NumPy's function has ``out=``; ``out_always``: hand NumPy the output as
    ``out=`` even when the caller gave none (exactly NumPy's result, one copy less);
    ``fills``: stand-in fill per input name (an index array must point inside its array);
    ``stand_in_params(inputs, params)``: params for the stand-in call (a kth bounded by
    the real length, checked against it here, is one the stand-in must not see);
    ``own_params``: op params NumPy never sees (sizes measured before the call);
    ``kernel(args, keywords, params, outputs, req)``: a kernel of the op's own, which may be
    handed an input that is the very view of its output (``x.sort()`` sorts x itself).
    """

    def __init__(self, name, function, shapes, *, positional=("a",), takes_out=False,
                 out_always=False, fills=None, stand_in_params=None, own_params=(),
                 num_outputs=1, kernel=None, doc=None):
        self.name = name
        self.function = function
        self.shapes = shapes
        self.positional = tuple(positional)
        self.takes_out = takes_out
        self.out_always = out_always
        self.fills = fills or {}
        self.stand_in_params = stand_in_params
        self.own_params = frozenset(own_params)
        self.num_outputs = num_outputs
        self.custom_kernel = kernel
        self.doc = doc or f"numpy.{getattr(function, '__name__', name)}"

    def names(self, inputs, arrays):
        names = self.positional[:len(inputs)] + tuple(arrays)
        if len(names) != len(inputs):
            raise TypeError(f"{self.name}: {len(inputs)} inputs, but names for "
                            f"{len(names)}: {names}")
        return names

    def call_arguments(self, values, arrays):
        """NumPy's positional arguments and keyword arrays, from the op's inputs."""
        count = len(values) - len(arrays)
        return list(values[:count]), dict(zip(arrays, values[count:]))

    def split_params(self, params):
        if not self.own_params:
            return params, {}
        own = {k: params[k] for k in self.own_params if k in params}
        numpy_params = {k: v for k, v in params.items() if k not in self.own_params}
        return numpy_params, own

    def infer(self, *inputs, arrays=(), out_dtype=None, **params):
        names = self.names(inputs, arrays)
        numpy_params, own = self.split_params(params)
        small = stand_ins(inputs, [self.fills.get(n) for n in names])
        args, keywords = self.call_arguments(small, arrays)
        if self.stand_in_params is not None:
            numpy_params = self.stand_in_params(dict(zip(names, inputs)), numpy_params)
        with quiet():
            result = self.function(*args, **keywords, **numpy_params)
            results = result if isinstance(result, tuple) else (result,)
            if out_dtype is not None:  # NumPy's own check of that out (and its loop)
                if not self.takes_out:
                    raise TypeError(f"{self.name}() got an unexpected keyword argument 'out'")
                self.function(*args, out=np.empty(np.shape(results[0]), out_dtype),
                              **keywords, **numpy_params)
        shapes = self.shapes({n: shape_of(v) for n, v in zip(names, inputs)}, params)
        if out_dtype is not None:
            return [(shapes[0], check_dtype(out_dtype))]
        return [(shape, np.asarray(r).dtype) for shape, r in zip(shapes, results)]

    def kernel(self, inputs, outputs, req, arrays=(), out_dtype=None, **params):
        numpy_params = params if not self.own_params else self.split_params(params)[0]
        custom = self.custom_kernel is not None
        values = detach_overlapping(inputs, outputs, allow_same_view=custom)
        if arrays:
            args, keywords = self.call_arguments(values, arrays)
        else:
            args, keywords = values, _NO_KEYWORDS
        if custom:
            self.custom_kernel(args, keywords, numpy_params, outputs, req)
            return
        if len(outputs) == 1 and (out_dtype is not None or self.out_always):
            write_with_req(outputs[0], req[0],
                           lambda target: self.function(*args, out=target, **keywords,
                                                        **numpy_params))
            return
        result = self.function(*args, **keywords, **numpy_params)
        write_results(self.name, result if isinstance(result, tuple) else (result,),
                      outputs, req)

    def register(self, kind="other"):
        op = numpy_backed(self.name, num_inputs=None, num_outputs=self.num_outputs, kind=kind,
                      infer=self.infer, doc=self.doc)
        op.set_kernel("cpu", self.kernel)
        FUNCTIONS[self.name] = self
        return add_operator(op)


def write_results(name, results, outputs, req):
    """Each of NumPy's results into its output, which must have the planned shape (a
    value-sized output planned from an earlier read of the input: another thread wrote
    the input in between)."""
    for out, result, write in zip(outputs, results, req):
        shape = result.shape if type(result) is np.ndarray else np.shape(result)
        if shape != out.shape:
            raise RuntimeError(f"{name}: NumPy's result has shape {shape}, the "
                               f"output {out.shape}; the input changed after it was sized "
                               "(written by another thread meanwhile)")
        write_value(out, write, result)
