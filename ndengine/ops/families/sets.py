"""NumPy's set routines as ops, run by NumPy's own functions (see ``numpy_functions``):
isin, and intersect1d, setdiff1d and setxor1d, whose output length depends on the values.

The value-sized ones follow unique's design (``sorting``): the caller first pushes
``set_routine_size``, a small op that runs the routine and gives its length, waits for it,
then pushes the routine's op planned with that length (``count``, an op param NumPy never
sees). The kernel checks NumPy's result against the planned length (``write_results``), so
an input another thread rewrote in between raises instead of writing a wrong shape.
"""
from __future__ import annotations

import numpy as np

from .numpy_functions import NumpyFunction

__all__ = ["SIZED_ROUTINES", "register_all"]

# name -> NumPy's function: two 1-d-flattened arrays in, a value-sized 1-d array out
SIZED_ROUTINES = {"intersect1d": np.intersect1d, "setdiff1d": np.setdiff1d,
                  "setxor1d": np.setxor1d}


def _set_routine_size(a, b, *, routine, **params):
    """The length of ``routine(a, b, **params)``'s values (its first result)."""
    result = SIZED_ROUTINES[routine](a, b, **params)
    return np.intp(len(result[0] if isinstance(result, tuple) else result))


def _sized_shapes(shapes, params):
    count = params["count"]
    return [(count,)] * (3 if params.get("return_indices") else 1)


def _functions():
    sized = "; planned from its length, measured first by set_routine_size (the caller waits)"
    made = [NumpyFunction("isin", np.isin, lambda shapes, params: [shapes["a"]],
                          positional=("a", "test_elements"),
                          doc="numpy.isin(element, test_elements): assume_unique, invert, "
                              "kind"),
            NumpyFunction("set_routine_size", _set_routine_size, lambda shapes, params: [()],
                          positional=("a", "b"),
                          doc="the length numpy.intersect1d, setdiff1d or setxor1d gives")]
    for name, function in SIZED_ROUTINES.items():
        made.append(NumpyFunction(
            name, function, _sized_shapes, positional=("a", "b"), own_params=("count",),
            num_outputs=lambda a, b, params: 3 if params.get("return_indices") else 1,
            doc=f"numpy.{name}" + sized))
    return made


def register_all() -> None:
    for function in _functions():
        function.register()
