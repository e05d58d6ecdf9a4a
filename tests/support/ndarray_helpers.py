"""Shared helpers for the NDArray test-suite (tests/test_ndarray_*.py).

The xp harness: a test body ``body(xp, *values)`` builds its arrays with ``xp.array(v)`` and
runs once with ``xp=numpy`` (the oracle) and once with ``xp=ndengine``; ``run_xp`` compares the
results (values, dtype and shape), or checks that both raised the same kind of error.
"""
import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ndengine as nd

BOOL = [np.dtype(bool)]
SIGNED = [np.dtype(d) for d in ("int8", "int16", "int32", "int64")]
UNSIGNED = [np.dtype(d) for d in ("uint8", "uint16", "uint32", "uint64")]
INTS = SIGNED + UNSIGNED
FLOATS = [np.dtype(d) for d in ("float32", "float64")]
REAL_DTYPES = BOOL + INTS + FLOATS
# computed by the ops that say so (Operator.extended_dtypes), refused by the others
EXTENDED = [np.dtype(d) for d in ("float16", "complex64", "complex128")]
DTYPES = REAL_DTYPES + EXTENDED  # every dtype ndengine arrays hold

ENGINE_KINDS = ("NaiveEngine", "ThreadedEnginePooled", "ThreadedEnginePerDevice")

_ERROR_FAMILIES = (TypeError, ValueError, IndexError, OverflowError, ZeroDivisionError,
                   KeyError)


def drain_errors():
    """Forget an error a test provoked on purpose (threaded engines keep it for waitall)."""
    try:
        nd.waitall()
    except Exception:  # noqa: BLE001
        pass
    nd.waitall()  # must be clean now


def raises_anywhere(exc_type, body, match=None):
    """Run body() (which should fail in a kernel) and wait for everything it pushed, all
    inside pytest.raises: NaiveEngine raises at the push, threaded engines at the wait."""
    with pytest.raises(exc_type, match=match) as info:
        body()
        nd.waitall()
    drain_errors()
    return info


def to_numpy_result(value):
    """What the NumPy body returned, as NumPy arrays (lists stay lists)."""
    if isinstance(value, (list, tuple)):
        return [to_numpy_result(v) for v in value]
    return np.asarray(value)


def to_nd_result(value):
    """What the ndengine body returned, as NumPy arrays; every array result must be an
    NDArray (not a NumPy array that slipped through)."""
    if isinstance(value, (list, tuple)):
        return [to_nd_result(v) for v in value]
    assert isinstance(value, nd.NDArray), f"ndengine returned {type(value).__name__}, " \
                                         f"not an NDArray: {value!r}"
    return value.asnumpy()


def tolerance(dtype):
    return {"float16": 1e-3, "float32": 2e-6, "float64": 1e-12, "complex64": 2e-6,
            "complex128": 1e-12}.get(np.dtype(dtype).name, 0)


def assert_same(expected, got, tol="exact", zero_sign=True):
    """Same shape, same dtype, same values (NaNs equal); ``tol="close"``: float values within
    rtol 2e-6 (float32) / 1e-12 (float64)."""
    if isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected), (expected, got)
        for e, g in zip(expected, got):
            assert_same(e, g, tol, zero_sign)
        return
    assert got.shape == expected.shape, f"shape {got.shape} != NumPy's {expected.shape}"
    assert got.dtype == expected.dtype, f"dtype {got.dtype} != NumPy's {expected.dtype}"
    if tol == "close" and got.dtype.kind in "fc":
        rtol = tolerance(got.dtype)
        atol = {8: 1e-30, 16: 1e-30, 2: 1e-7}.get(got.dtype.itemsize, 1e-38)
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, expected, strict=True)
        if zero_sign and got.dtype.kind in "fc":  # assert_array_equal takes -0.0 for 0.0:
            for part in ((lambda a: a),) if got.dtype.kind == "f" else (np.real, np.imag):
                g, e = part(got), part(expected)  # the sign of zero is NumPy's too
                zeros = (e == 0) & (g == 0)
                assert (np.signbit(g[zeros]) == np.signbit(e[zeros])).all(), \
                    f"signed zeros differ: {g!r} != NumPy's {e!r}"


def _dtypes(expected):
    if isinstance(expected, list):
        return {d for e in expected for d in _dtypes(e)}
    return {expected.dtype}


def _refused_extended(exc):
    """The TypeError of an op that does not compute float16 or complex yet."""
    return isinstance(exc, TypeError) and "does not support dtype" in str(exc) and any(
        str(d) in str(exc) for d in EXTENDED)


def run_xp(body, *args, tol="exact", any_error=False, zero_sign=True, **kwargs):
    """body(numpy, *args) vs body(ndengine, *args): same results, or both raise errors of a
    common family (TypeError, ValueError, ...; ``any_error``: any of them, for inputs wrong in
    two ways at once). Returns the NumPy result (or None)."""
    np_exc = nd_exc = None
    with np.errstate(all="ignore"):
        try:
            expected = to_numpy_result(body(np, *args, **kwargs))
        except Exception as exc:  # noqa: BLE001 - the oracle's error is the expectation
            np_exc = exc
        try:
            got = to_nd_result(body(nd, *args, **kwargs))
        except AssertionError:
            raise
        except Exception as exc:  # noqa: BLE001
            nd_exc = exc
            drain_errors()
    if np_exc is None and _dtypes(expected) & set(EXTENDED) and _refused_extended(nd_exc):
        return None  # an op that refuses float16/complex at the call, clearly, for now
    if np_exc is not None:
        assert nd_exc is not None, \
            f"NumPy raised {type(np_exc).__name__}: {np_exc}, ndengine gave {got!r}"
        families = _ERROR_FAMILIES if any_error else \
            tuple(f for f in _ERROR_FAMILIES if isinstance(np_exc, f))
        if type(np_exc) in (RuntimeError, MemoryError):  # NumPy's own: the same type
            families += (type(np_exc),)
        assert isinstance(nd_exc, families), \
            f"NumPy raised {type(np_exc).__name__}: {np_exc}; ndengine raised " \
            f"{type(nd_exc).__name__}: {nd_exc}"
        return None
    if nd_exc is not None:
        raise AssertionError(f"NumPy returned {expected!r}, ndengine raised "
                             f"{type(nd_exc).__name__}: {nd_exc}") from nd_exc
    assert_same(expected, got, tol, zero_sign)
    return expected


# ---------------------------------------------------------------- strategies
def shapes(min_dims=0, max_dims=3, min_side=0, max_side=4):
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                            max_side=max_side)


def values(dtype, shape, *, lo=None, hi=None, finite=False):
    """Arrays of ``dtype``: full range unless lo/hi bound them; floats include NaN and inf
    unless finite or bounded."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        width = dtype.itemsize * 8
        bounded = lo is not None or hi is not None
        elements = st.floats(min_value=lo, max_value=hi, width=width,
                             allow_nan=not (finite or bounded),
                             allow_infinity=not (finite or bounded))
    elif dtype.kind == "c":
        width = dtype.itemsize * 8
        bounded = lo is not None or hi is not None
        elements = st.complex_numbers(max_magnitude=None if hi is None else abs(hi),
                                      width=width, allow_nan=not (finite or bounded),
                                      allow_infinity=not (finite or bounded))
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        elements = st.integers(max(info.min, info.min if lo is None else int(lo)),
                               min(info.max, info.max if hi is None else int(hi)))
    else:
        elements = st.booleans()
    return hnp.arrays(dtype, shape, elements=elements)


def python_scalars(lo=-300, hi=300):
    return st.one_of(st.booleans(), st.integers(lo, hi),
                     st.floats(allow_nan=True, allow_infinity=True),
                     st.floats(-1e3, 1e3))


def fits(value, dtype):
    """Whether a Python scalar can meet an array of ``dtype`` without NumPy 2's overflow
    error (an int out of the dtype's range)."""
    if isinstance(value, bool) or not isinstance(value, int) or dtype.kind not in "iu":
        return True
    info = np.iinfo(dtype)
    return info.min <= value <= info.max
