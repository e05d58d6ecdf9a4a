"""``ndengine.emath``: NumPy's ``numpy.emath`` (math with automatic domain) on NDArrays.

NumPy's algorithm, step for step: where a real input lies outside the real domain (a
negative for sqrt and the logs, ``|x| > 1`` for arccos, arcsin and arctanh, a negative
integer exponent for power), the input is cast to complex (complex64 for the types NumPy
casts so: float32, int8, int16, uint8, uint16; complex128 for the others) and ndengine's
function of the same name runs on it, pushed. Whether to cast decides the result's dtype,
so it is read at the call: one boolean reduction, pushed and waited for (NumPy decides it
from the values too). Inputs that are not NDArrays become NDArrays as ``asarray`` would make
them (NumPy turns them into arrays too, so a Python scalar here is a 0-d array, not a
weak scalar).
"""
import numpy as np

from .arguments import array_of
from .functions import FUNCTIONS
from .signatures import numpy_function
from .statistics import FUNCTIONS as _STATISTICS

__all__ = ["sqrt", "log", "log2", "log10", "logn", "power", "arccos", "arcsin", "arctanh"]

_any, _less, _greater, _absolute = (_STATISTICS["any"], FUNCTIONS["less"],
                                    FUNCTIONS["greater"], FUNCTIONS["absolute"])
# real types numpy.emath casts to complex64 (every other real type: complex128)
_TO_COMPLEX64 = frozenset(np.dtype(t) for t in ("float32", "int8", "int16", "uint8",
                                                "uint16"))


def _real(x):
    """Whether x's dtype is real and signed-comparable (complex inputs need no cast; a
    bool is never negative)."""
    return x.dtype.kind in "iuf"


def _to_complex(x):
    return x.astype(np.complex64 if x.dtype in _TO_COMPLEX64 else np.complex128)


def _fix_negative(x):
    """x as complex where it is real and holds a negative (NumPy's _fix_real_lt_zero)."""
    x = array_of(x)
    return _to_complex(x) if _real(x) and bool(_any(_less(x, 0))) else x


def _fix_negative_int(p):
    """p as float where it is an integer holding a negative (NumPy's _fix_int_lt_zero)."""
    p = array_of(p)
    return p * 1.0 if p.dtype.kind in "iu" and bool(_any(_less(p, 0))) else p


def _fix_abs_above_one(x):
    """x as complex where it is real with an |x| > 1 (NumPy's _fix_real_abs_gt_1)."""
    x = array_of(x)
    return _to_complex(x) if _real(x) and bool(_any(_greater(_absolute(x), 1))) else x


def _on_fixed(name, fix):
    function = FUNCTIONS[name]
    return numpy_function(name, getattr(np.emath, name), lambda x: function(fix(x)),
                          module="ndengine.emath")


sqrt = _on_fixed("sqrt", _fix_negative)
log = _on_fixed("log", _fix_negative)
log2 = _on_fixed("log2", _fix_negative)
log10 = _on_fixed("log10", _fix_negative)
arccos = _on_fixed("arccos", _fix_abs_above_one)
arcsin = _on_fixed("arcsin", _fix_abs_above_one)
arctanh = _on_fixed("arctanh", _fix_abs_above_one)


def _logn(n, x):
    x, n = _fix_negative(x), _fix_negative(n)
    return FUNCTIONS["divide"](FUNCTIONS["log"](x), FUNCTIONS["log"](n))


def _power(x, p):
    return FUNCTIONS["power"](_fix_negative(x), _fix_negative_int(p))


logn = numpy_function("logn", np.emath.logn, _logn, module="ndengine.emath")
power = numpy_function("power", np.emath.power, _power, module="ndengine.emath")
