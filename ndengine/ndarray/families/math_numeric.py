"""NumPy's numeric ufuncs gcd, lcm, ldexp, frexp, modf, spacing and bitwise_count, and its
functions i0, unwrap, sort_complex and real_if_close on NDArrays (``NUMERIC``).

The ufuncs are element-wise ops whose kernel is NumPy's ufunc itself
(``ops.elementwise.ufunc_specs.UfuncLoopSpec``): NumPy's dtype rules (weak Python scalars
included), ``out=`` and ``dtype=``; the package makes each a ``ufunc`` object (``nin``,
``nout``, ``reduce``, ``outer``, ...). frexp and modf give NumPy's two outputs, with
``out=(a, b)`` (either may be None), through divmod's caller (``functions.call_output_pair``).

i0, unwrap and sort_complex are one pushed op each, run by NumPy's function
(``ops.families.numeric``): they return at once. unwrap's ``discont`` and ``period`` are
op params (an NDArray is read at the call).

real_if_close's result dtype depends on the values (complex, or real where every imaginary
part is within ``tol``), so a complex input is read at the call (a wait); a real input is
returned at once, as itself, as NumPy returns its input.
"""
import numpy as np

from ..arguments import array_of, frozen, push, read_values
from ..functions import call_output_pair
from ..operators import add_family, module_function
from ..signatures import numpy_function

__all__ = ["NUMERIC"]

_UFUNCS = ("gcd", "lcm", "ldexp", "frexp", "modf", "spacing", "bitwise_count")

add_family("ufunc1_pair", "x, /, out=(None, None), *, dtype=None", (), call_output_pair,
           ("frexp", "modf"))


def _i0(x):
    return push("i0", [array_of(x)], {})[0]


def _unwrap(p, discont=None, axis=-1, *, period=2 * np.pi):
    params = {"discont": frozen(read_values(discont)), "axis": axis,
              "period": frozen(read_values(period))}
    return push("unwrap", [array_of(p)], params)[0]


def _sort_complex(a):
    return push("sort_complex", [array_of(a)], {})[0]


def _real_if_close(a, tol=100):
    a = array_of(a)
    if a.dtype.kind != "c":
        return a
    values = a.asnumpy()
    result = np.real_if_close(values, read_values(tol))
    return a if result is values else array_of(result, a.context)


_ONE_OP = "One pushed op (NumPy's function runs inside it)."
_ROWS = {
    "i0": (_i0, _ONE_OP),
    "unwrap": (_unwrap, _ONE_OP + " An NDArray ``discont``/``period`` is read at the call."),
    "sort_complex": (_sort_complex, _ONE_OP + " The result is complex, as NumPy's."),
    "real_if_close": (_real_if_close, "A complex input is read at the call (the result's "
                                      "dtype depends on its values); any other is returned "
                                      "as it is."),
}

NUMERIC = {name: module_function(name) for name in _UFUNCS}
NUMERIC.update({name: numpy_function(name, getattr(np, name), implementation, doc)
                for name, (implementation, doc) in _ROWS.items()})
