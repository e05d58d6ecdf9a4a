"""Array parameters read as NumPy reads them: a NumPy array (or an NDArray, read at the call)
given for a shape-like parameter keeps its dtype up to NumPy's own conversion (a float or
uint64 array NumPy refuses is refused, a bool array NumPy takes is taken), never turned into
a list of Python numbers first."""
import numpy as np
import pytest

from ndarray_helpers import run_xp

pytestmark = pytest.mark.usefixtures("nd_engine")

_CALLS = {
    "tile": lambda xp, p: xp.tile(xp.arange(3), p),
    "pad": lambda xp, p: xp.pad(xp.arange(3), p),
    "reshape": lambda xp, p: xp.reshape(xp.arange(4), p),
    "reshape_method": lambda xp, p: xp.arange(4).reshape(p),
    "roll": lambda xp, p: xp.roll(xp.arange(4), p),
    "split": lambda xp, p: xp.split(xp.arange(4), p),
    "take": lambda xp, p: xp.take(xp.arange(4), p),
    "broadcast_to": lambda xp, p: xp.broadcast_to(xp.arange(2), p),
    "zeros": lambda xp, p: xp.zeros(p),
    "full": lambda xp, p: xp.full(p, 1),
    "moveaxis": lambda xp, p: xp.moveaxis(xp.zeros((2, 2)), p, 0),
    "expand_dims": lambda xp, p: xp.expand_dims(xp.zeros((2, 2)), p),
    "sum_axis": lambda xp, p: xp.sum(xp.ones((2, 2)), axis=p),
    "array_split": lambda xp, p: xp.array_split(xp.arange(4), p),
    "rot90": lambda xp, p: xp.rot90(xp.zeros((2, 3)), p),
    "indices": lambda xp, p: xp.indices(p),
}

_PARAMETERS = {
    "float": np.array([1.0, 2.0]), "float_0d": np.array(2.0),
    "integral_float": np.array([2.0]), "int": np.array([1, 2]), "bool": np.array([True, False]),
    "uint64": np.array([1, 2], np.uint64), "int8": np.array([1, 2], np.int8),
    "bool_0d": np.array(True), "float_scalar": 2.0, "numpy_float": np.float64(2.0),
}


# each parameter as given, and each array also as an NDArray
_GIVEN = [(name, False) for name in sorted(_PARAMETERS)] + \
    [(name, True) for name in sorted(_PARAMETERS) if isinstance(_PARAMETERS[name], np.ndarray)]


@pytest.mark.parametrize("parameter, as_ndarray", _GIVEN,
                         ids=[name + ("_ndarray" if nd_array else "") for name, nd_array in _GIVEN])
@pytest.mark.parametrize("call", sorted(_CALLS))
def test_an_array_parameter(call, parameter, as_ndarray):
    value = _PARAMETERS[parameter]

    def body(xp):
        return _CALLS[call](xp, xp.asarray(value) if as_ndarray else value)
    run_xp(body)
