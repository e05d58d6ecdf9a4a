"""``casting=`` on ufuncs, as NumPy reads it: the rule checks the inputs' cast to ``dtype=``
and the result's cast into ``out=``; 'unsafe' performs what 'same_kind' refuses; an unknown
rule is NumPy's ValueError. One body run with ``xp=numpy`` and ``xp=ndengine``; the errors
are compared by family and, for the cast errors, by NumPy's message."""
import numpy as np
import pytest

import ndengine as nd
from ndarray_helpers import run_xp

pytestmark = pytest.mark.usefixtures("nd_engine")

CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")
_DTYPES = (np.bool_, np.int8, np.int32, np.int64, np.uint16, np.float32, np.float64,
           np.complex64)


def _values(xp, dtype, n=5):
    return xp.asarray((np.arange(n) * 1.75 - 3).astype(dtype))


@pytest.mark.parametrize("casting", CASTINGS)
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64])
@pytest.mark.parametrize("x_dtype", _DTYPES)
def test_dtype_argument(x_dtype, dtype, casting):
    run_xp(lambda xp: xp.add(_values(xp, x_dtype), 1, dtype=dtype, casting=casting))
    run_xp(lambda xp: xp.multiply(_values(xp, x_dtype), _values(xp, np.int8), dtype=dtype,
                                  casting=casting))
    run_xp(lambda xp: xp.negative(_values(xp, x_dtype), dtype=dtype, casting=casting)
           if x_dtype is not np.bool_ else xp.sqrt(_values(xp, x_dtype), dtype=dtype,
                                                     casting=casting))


@pytest.mark.parametrize("casting", CASTINGS)
@pytest.mark.parametrize("out_dtype", [np.int16, np.int64, np.float32, np.float64])
@pytest.mark.parametrize("x_dtype", [np.int32, np.float32, np.float64])
def test_out_argument(x_dtype, out_dtype, casting):
    def body(xp):
        out = xp.zeros(5, dtype=out_dtype)
        result = xp.subtract(_values(xp, x_dtype), 0.5, out=out, casting=casting)
        assert result is out
        return out
    run_xp(body)


@pytest.mark.parametrize("casting", CASTINGS)
def test_out_broadcast_and_scalars(casting):
    def body(xp):
        out = xp.ones((3, 4), dtype=np.int32)
        xp.add(_values(xp, np.float64, 4), 2.5, out=out, casting=casting)
        return out
    run_xp(body)
    run_xp(lambda xp: xp.add(2.5, 1, casting=casting))
    run_xp(lambda xp: xp.add(_values(xp, np.int8), np.int64(3), casting=casting))


def test_errors_are_numpys():
    x = nd.arange(4.0)
    with pytest.raises(np._core._exceptions._UFuncInputCastingError,
                       match="input 0 from dtype\\('float64'\\) to dtype\\('float32'\\) "
                             "with casting rule 'no'"):
        nd.add(x, 1.5, dtype=np.float32, casting="no")
    with pytest.raises(np._core._exceptions._UFuncOutputCastingError,
                       match="output from dtype\\('float64'\\) to dtype\\('int64'\\)"):
        nd.add(x, 1, out=nd.zeros(4, dtype=np.int64), casting="safe")
    with pytest.raises(ValueError, match="casting must be one of"):
        nd.add(x, 1, casting="bogus")


def test_numpy_protocol_and_ufunc_objects_take_casting():
    """``np.add(x, ..., casting=)`` on NDArrays runs ndengine's op (no fallback to NumPy on a
    copy), and writes an NDArray ``out``."""
    x = nd.array([1.5, 2.5, -3.5])
    out = nd.zeros(3, dtype=np.int16)
    assert np.add(x, 1, out=out, casting="unsafe") is out
    np.testing.assert_array_equal(out.asnumpy(), np.array([2, 3, -2], np.int16))
    result = nd.multiply(x, 2, dtype=np.int32, casting="unsafe")
    assert isinstance(result, nd.NDArray) and result.dtype == np.int32
    np.testing.assert_array_equal(result.asnumpy(), np.multiply(
        np.array([1.5, 2.5, -3.5]), 2, dtype=np.int32, casting="unsafe"))
