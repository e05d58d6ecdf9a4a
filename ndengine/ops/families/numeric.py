"""NumPy's i0, unwrap and sort_complex as ops run by NumPy's own functions (see
``numpy_functions``): each output has its input's shape; its dtype and NumPy's errors for
bad arguments (a bad axis, a complex ``i0``) come from NumPy's call on stand-ins at the call.
unwrap's ``discont`` and ``period`` are op params (scalars).
"""
from __future__ import annotations

import numpy as np

from .numpy_functions import NumpyFunction, same_shapes

__all__ = ["register_all"]


def _functions():
    return [
        NumpyFunction("i0", np.i0, same_shapes,
                      doc="numpy.i0(x): the modified Bessel function of the first kind, "
                          "order 0"),
        NumpyFunction("unwrap", np.unwrap, same_shapes,
                      doc="numpy.unwrap(p, discont, axis, period)"),
        NumpyFunction("sort_complex", np.sort_complex, same_shapes,
                      doc="numpy.sort_complex(a): sorted by real part, then imaginary part"),
    ]


def register_all() -> None:
    for function in _functions():
        function.register()
