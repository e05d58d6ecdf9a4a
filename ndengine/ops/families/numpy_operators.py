"""Operators whose CPU kernel is NumPy's own function (tile, pad, take, einsum, linalg.svd, ...).

Each op is a table row: the NumPy function, a shape function (the output shapes from the input
shapes and the params, raising NumPy's errors) and the rule for the output dtypes:

* ``"same"``: the first input's dtype;
* ``"probe"``: NumPy's function run once on tiny stand-ins (every dimension 1, filled with
  ``fill``) of the inputs' dtypes with the call's params: its result dtypes, and NumPy's own
  errors for bad params, an ndim it refuses, an index dtype it refuses. Plans are kept per call
  signature, so the probe runs once per signature.

The kernel calls the function on the inputs and copies its result(s) into the preallocated
outputs. Array-valued params given as arrays travel as inputs (read when the op runs): the
param ``keyword_inputs`` names them, in order, after the positional inputs.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from ..dtypes import check_dtype, is_array_spec
from ..outputs import detach_overlapping, write_value
from ..registry import add_operator, numpy_backed
from ..shapes import shape_of

__all__ = ["numpy_operator", "NUMPY_OPERATORS", "NumpyOperatorRow", "FrozenArray", "thawed",
           "split_inputs", "stand_in", "tiny", "probe_results", "COMPLEX_BY_VALUE"]

class NumpyOperatorRow(NamedTuple):
    """One registered ``numpy_operator``: what its kernel runs (the gpu kernels read it)."""
    function: Callable
    call: Callable
    hint: str


NUMPY_OPERATORS: dict = {}  # op name -> NumpyOperatorRow

COMPLEX_BY_VALUE = ("NumPy decides from the values whether it is complex, which an "
                    "asynchronous op cannot; pass a complex array, or compute it with NumPy "
                    "on the values, e.g. {hint}")


class FrozenArray:
    """A NumPy array given as an op param, hashable (params key the plan memo) and a private
    read-only copy; ``split_inputs`` gives the op's functions the array back. (A tuple of its
    values would lose its dtype: a float array taken as a list of Python floats, a uint64
    ``pad_width`` that NumPy refuses as a list of ints that it takes.)"""

    __slots__ = ("array", "_key")

    def __init__(self, array):
        self.array = np.array(array)
        self.array.flags.writeable = False
        self._key = (self.array.dtype.str, self.array.shape, self.array.tobytes())

    def __eq__(self, other):
        return type(other) is FrozenArray and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        return f"FrozenArray({self.array!r})"


def thawed(params):
    """``params`` with each FrozenArray given back as its (read-only) array: what an op's
    kernel and its gradient rule see."""
    if any(type(v) is FrozenArray for v in params.values()):
        return {k: v.array if type(v) is FrozenArray else v for k, v in params.items()}
    return params


def split_inputs(inputs, params):
    """(positional inputs, params with the keyword inputs put back under their names and
    frozen arrays thawed)."""
    names = params.get("keyword_inputs", ())
    params = thawed(params)
    if not names:
        return list(inputs), params
    count = len(inputs) - len(names)
    merged = {k: v for k, v in params.items() if k != "keyword_inputs"}
    merged.update(zip(names, inputs[count:]))
    return list(inputs[:count]), merged


def stand_in(spec, writeable=False):
    """A NumPy array of ``spec``'s shape and dtype over one element (zero strides): NumPy can
    check a shape or take a view of it without memory or work."""
    shape = shape_of(spec)
    return np.lib.stride_tricks.as_strided(np.zeros(1, check_dtype(spec.dtype)), shape,
                                           (0,) * len(shape), writeable=writeable)


def tiny(value, fill=0):
    """An array spec as an array of its dtype and ndim with every dimension 1; anything else
    as it is."""
    if not is_array_spec(value):
        return value
    return np.full((1,) * len(shape_of(value)), fill, dtype=check_dtype(value.dtype))


def _results(value):
    return tuple(value) if isinstance(value, tuple) else (value,)


def probe_results(call, function, inputs, params, fill=0):
    """NumPy's function on tiny stand-ins of the inputs (array params, such as roll's shift,
    keep their shape): its results, raising what NumPy raises."""
    arrays = [tiny(x, fill) for x in inputs]
    named = {k: stand_in(v) if is_array_spec(v) else v for k, v in params.items()}
    # np.errstate only: it is per thread, where catch_warnings would swap the process's
    # warning filters under other threads' feet
    with np.errstate(all="ignore"):
        return _results(call(function, arrays, named))


def probe_dtypes(call, function, inputs, params, fill=0):
    return [check_dtype(np.asarray(r).dtype)
            for r in probe_results(call, function, inputs, params, fill)]


def plain_call(function, inputs, params):
    return function(*inputs, **params)


def numpy_operator(name, function, shapes, *, dtypes="same", fill=0, call=plain_call,
                   complex_hint=None, doc=None, num_inputs=None, register=True,
                   probe_first=False, sized_by_outputs=False, value_params=()):
    """Register (and return) the op ``name``: kernel ``call(function, inputs, params)``.

    ``shapes(*inputs, **params)`` gives the output shapes (a list, one per output) and raises
    NumPy's errors for bad shapes and values of params; ``dtypes``: ``"same"``, ``"probe"`` or
    a function with the same arguments giving the output dtypes (``probe_first``: the probe
    runs before the shape function, where NumPy checks its arguments first). ``complex_hint``: the NumPy
    call to suggest when a result turns out complex (eig of a rotation), which ndengine cannot
    hold yet. ``sized_by_outputs``: a gather, placed by its output's size (``Operator``).
    ``value_params``: scalar params whose values change neither the output's shape nor its
    dtype (roll's shift): plans are keyed by their type, not one per value."""
    def infer(*inputs, **params):
        arrays, params = split_inputs(inputs, params)
        if probe_first:  # NumPy checks its arguments before the shapes
            out_dtypes = probe_dtypes(call, function, arrays, params, fill)
        out_shapes = shapes(*arrays, **params)
        if dtypes == "same":
            out_dtypes = [check_dtype(arrays[0].dtype)] * len(out_shapes)
        elif dtypes == "probe" and not probe_first:
            out_dtypes = probe_dtypes(call, function, arrays, params, fill)
        elif dtypes != "probe":
            out_dtypes = dtypes(*arrays, **params)
        if len(out_dtypes) != len(out_shapes):
            raise RuntimeError(f"{name}: {len(out_shapes)} output shapes, "
                               f"{len(out_dtypes)} dtypes")
        return list(zip(out_shapes, out_dtypes))

    hint = complex_hint or f"numpy.{name}(x.asnumpy())"

    def kernel(inputs, outputs, req, **params):
        inputs = detach_overlapping(inputs, outputs, allow_same_view=False)
        arrays, params = split_inputs(inputs, params)
        results = _results(call(function, arrays, params))
        for out, write, value in zip(outputs, req, results):
            if type(value) is not np.ndarray:
                value = np.asarray(value)
            if value.dtype.kind == "c" and out.dtype.kind != "c":
                # a value-dependent complex result (eig of a real matrix): the planned real
                # output cannot hold it, and NumPy's dtype could not be known at the call
                raise TypeError(f"{name}: the result is complex; "
                                + COMPLEX_BY_VALUE.format(hint=hint))
            write_value(out, write, value, "unsafe")

    def count(*inputs_and_params):
        *inputs, params = inputs_and_params
        return len(infer(*inputs, **params))

    op = numpy_backed(name, num_inputs=num_inputs, num_outputs=count, kind="other",
                      infer=infer, doc=doc or f"{name}: NumPy's own function, pushed",
                      sized_by_outputs=sized_by_outputs, value_params=value_params)
    op.set_kernel("cpu", kernel)
    if not register:
        return op
    NUMPY_OPERATORS[name] = NumpyOperatorRow(function, call, hint)
    return add_operator(op)
