"""NumPy's set routines on NDArrays: isin, union1d, intersect1d, setdiff1d, setxor1d and the
Array API's unique_values, unique_counts, unique_inverse, unique_all (``SETS``, NumPy's
parameter lists through ``signatures.numpy_function``).

``isin`` is one pushed op (``ops.families.sets``): it returns at once. The others return
arrays whose length depends on the values, so they wait, as ``unique`` does (see
``statistics``): intersect1d, setdiff1d and setxor1d push ``set_routine_size`` (NumPy's
routine, measuring its result), wait for it, then push the routine's op planned with that
length; union1d is NumPy's own composition, ``unique(concatenate((ar1, ar2), axis=None))``;
the ``unique_*`` functions are ``unique`` with the arguments NumPy gives it, their results
in named tuples with NumPy's field names. NumPy's errors for bad arguments come from the
op's inference, before any wait.
"""
from collections import namedtuple

import numpy as np

from .. import ops
from .arguments import array_of, first_context, push
from .shaping import SHAPING
from .signatures import numpy_function
from .statistics import FUNCTIONS as _STATISTICS

__all__ = ["SETS", "UniqueAllResult", "UniqueCountsResult", "UniqueInverseResult"]

# the result types of NumPy's unique_* functions (numpy.lib's), with the same fields
UniqueAllResult = namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices",
                                                 "counts"])
UniqueCountsResult = namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def _two_inputs(arguments):
    ar1, ar2 = arguments.pop("ar1"), arguments.pop("ar2")
    ctx = first_context(ar1, ar2)
    return [array_of(ar1, ctx), array_of(ar2, ctx)], ctx


def _isin(arguments):
    element, test_elements = arguments.pop("element"), arguments.pop("test_elements")
    ctx = first_context(element, test_elements)
    inputs = [array_of(element, ctx), array_of(test_elements, ctx)]
    return push("isin", inputs, arguments, ctx=ctx)[0]


def _value_sized(name):
    def routine(arguments):
        inputs, ctx = _two_inputs(arguments)
        ops.get(name).infer(*inputs, count=0, **arguments)  # NumPy's errors, before the wait
        size = push("set_routine_size", inputs, {"routine": name, **arguments}, ctx=ctx)[0]
        outputs = push(name, inputs, {**arguments, "count": int(size.item())}, ctx=ctx)
        return tuple(outputs) if arguments.get("return_indices") else outputs[0]
    return routine


def _union1d(arguments):
    inputs, _ = _two_inputs(arguments)
    return _STATISTICS["unique"](SHAPING["concatenate"](inputs, axis=None))


def _unique_values(arguments):
    return _STATISTICS["unique"](arguments["x"], equal_nan=False, sorted=False)


def _unique_counts(arguments):
    return UniqueCountsResult(*_STATISTICS["unique"](arguments["x"], return_counts=True,
                                                     equal_nan=False))


def _unique_inverse(arguments):
    return UniqueInverseResult(*_STATISTICS["unique"](arguments["x"], return_inverse=True,
                                                      equal_nan=False))


def _unique_all(arguments):
    return UniqueAllResult(*_STATISTICS["unique"](arguments["x"], return_index=True,
                                                  return_inverse=True, return_counts=True,
                                                  equal_nan=False))


_WAITS = " Waits for its inputs before it returns: the result's length depends on the values."
_ROWS = {
    "isin": (_isin, "Pushed as one op (NumPy's isin runs inside it)."),
    "union1d": (_union1d, "unique(concatenate((ar1, ar2), axis=None)), as NumPy's." + _WAITS),
    "intersect1d": (_value_sized("intersect1d"), "One pushed op, sized first." + _WAITS),
    "setdiff1d": (_value_sized("setdiff1d"), "One pushed op, sized first." + _WAITS),
    "setxor1d": (_value_sized("setxor1d"), "One pushed op, sized first." + _WAITS),
    "unique_values": (_unique_values, "unique(x, equal_nan=False, sorted=False)." + _WAITS),
    "unique_counts": (_unique_counts, "unique(x, return_counts=True, equal_nan=False), as a "
                                      "(values, counts) named tuple." + _WAITS),
    "unique_inverse": (_unique_inverse, "unique(x, return_inverse=True, equal_nan=False), as "
                                        "a (values, inverse_indices) named tuple." + _WAITS),
    "unique_all": (_unique_all, "unique(x) with every result, equal_nan=False, as a (values, "
                                "indices, inverse_indices, counts) named tuple." + _WAITS),
}

SETS = {name: numpy_function(name, getattr(np, name), implementation, doc, by_name=True)
        for name, (implementation, doc) in _ROWS.items()}
