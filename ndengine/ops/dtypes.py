"""The dtypes ndengine supports and NumPy 2 type promotion over array specs.

An "array spec" is anything with ``.shape`` and ``.dtype`` (a NumPy array, an
NDArray, a ``ShapeDtype``).  Python ``bool``/``int``/``float``/``complex`` are *weak*
scalars (NEP 50): they take the dtype of the array they meet.

``EXTENDED_DTYPES`` (float16, complex64, complex128) are supported by the ops that say so
(``Operator.extended_dtypes``): they compute them with NumPy's own loops (float16 in
float32, rounded as NumPy rounds it). Every other op refuses them at the call with a
TypeError that names the op and the dtype.
"""
from __future__ import annotations

import numpy as np

SUPPORTED_DTYPES = tuple(np.dtype(name) for name in (
    "bool",
    "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64",
    "complex64", "complex128",
))
EXTENDED_DTYPES = frozenset(np.dtype(name) for name in ("float16", "complex64", "complex128"))

PYTHON_SCALAR_TYPES = (bool, int, float, complex)


def check_dtype(dtype) -> np.dtype:
    """Return ``dtype`` as a numpy dtype, or raise TypeError if ndengine lacks it."""
    try:
        found = _CHECKED.get(dtype)  # (most calls name one of a few dtypes, over and over)
    except TypeError:  # an unhashable spec
        found = None
    if found is not None:
        return found
    resolved = _resolved(dtype)
    if len(_CHECKED) < 256:
        try:
            _CHECKED[dtype] = resolved
        except TypeError:
            pass
    return resolved


_CHECKED = {}  # what check_dtype resolved: the dtype, or its name or type, -> NumPy's dtype


def _resolved(dtype):
    try:
        resolved = np.dtype(dtype)
    except TypeError as exc:
        raise TypeError(f"ndengine does not understand dtype {dtype!r}; supported: "
                        f"{_supported_names()}") from exc
    if resolved not in SUPPORTED_DTYPES:
        error = ObjectDtypeError if resolved == object else TypeError
        raise error(f"ndengine does not support dtype {resolved}; supported: "
                    f"{_supported_names()}")
    return resolved


class ObjectDtypeError(TypeError):
    """check_dtype's TypeError for NumPy's object dtype (a None or a Python object where an
    array is taken): NumPy's functions called with NDArrays then run NumPy's own code
    (ndarray/interop.py)."""


def _supported_names() -> str:
    return ", ".join(str(d) for d in SUPPORTED_DTYPES)


def is_array_spec(value) -> bool:
    # classes such as np.float32 carry .shape/.dtype descriptors but are dtypes
    return (not isinstance(value, (type, np.dtype))
            and hasattr(value, "shape") and hasattr(value, "dtype"))


def is_python_scalar(value) -> bool:
    # numpy scalars (np.float32(1)) have .shape and .dtype and count as arrays.
    return isinstance(value, PYTHON_SCALAR_TYPES) and not is_array_spec(value)


def promotion_operand(value):
    """What to hand NumPy's promotion for one input: a dtype, or a Python type for weak scalars.

    Python ``bool`` is not weak in NEP 50; it is simply numpy's bool.
    """
    if is_array_spec(value):
        return check_dtype(value.dtype)
    if isinstance(value, bool):
        return np.dtype(bool)
    if isinstance(value, (int, float, complex)):
        return type(value)
    if isinstance(value, (np.dtype, type)) or isinstance(value, str):
        return check_dtype(value)
    raise TypeError(f"expected an array spec, a dtype or a Python scalar, got {type(value).__name__}")


def result_type(*inputs) -> np.dtype:
    """NumPy 2 result_type where Python scalars are weak (NEP 50)."""
    operands = []
    for value in inputs:
        operand = promotion_operand(value)
        # np.result_type treats the *values* 0 / 0.0 as weak Python scalars.
        operands.append(operand(0) if isinstance(operand, type) else operand)
    if not operands:
        raise TypeError("result_type() needs at least one input")
    return check_dtype(np.result_type(*operands))


def check_scalar_fits(value, dtype: np.dtype):
    """NumPy 2 refuses a Python int that does not fit the integer dtype it meets."""
    if isinstance(value, int) and not isinstance(value, bool) and dtype.kind in "iu":
        np.asarray(value, dtype=dtype)  # raises OverflowError with NumPy's message


_FLOAT32_MAX = float(np.finfo(np.float32).max)


def check_scalar_into(value, dtype: np.dtype) -> None:
    """Raise (or warn) as NumPy does when the scalar ``value`` is assigned into an array of
    ``dtype``: NaN or inf into an integer array, a Python int out of the dtype's range, a
    float that overflows float32. The common cases are decided without NumPy."""
    kind = type(value)
    if kind is bool or dtype.kind == "b":
        return
    if kind is int:
        if dtype.kind in "iu":
            lo, hi = int_bounds(dtype)
            if lo <= value <= hi:
                return
        elif -(1 << 53) <= value <= (1 << 53):
            return
    elif kind is float:
        if dtype.kind == "f":
            if dtype.itemsize == 8 or value != value or -_FLOAT32_MAX <= value <= _FLOAT32_MAX:
                return
        elif -9.2e18 < value < 9.2e18:  # finite: NumPy truncates, then checks the range
            lo, hi = int_bounds(dtype)
            if lo <= int(value) <= hi:
                return
    probe = np.empty((), dtype)
    probe[()] = value  # NumPy's own conversion raises (or warns) exactly as NumPy does


def int_bounds(dtype: np.dtype) -> tuple:
    """(lowest, highest) Python int that NumPy accepts for ``dtype`` without OverflowError.

    For non-integer dtypes the int64/uint64 range: values beyond it are left to
    the slow path, which raises exactly what NumPy raises (if anything).
    """
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return int(info.min), int(info.max)
    return -(1 << 63), (1 << 64) - 1


class _NamedUfunc:
    """What NumPy's casting error reads of a ufunc, for an op NumPy has no ufunc for."""
    __slots__ = ("__name__", "nout")

    def __init__(self, name, nout):
        self.__name__ = name
        self.nout = nout


def output_casting_error(name: str, from_dtype, to_dtype, nout: int = 1,
                         operand: int = 0) -> TypeError:
    """NumPy's error for a ufunc result of ``from_dtype`` that cannot be cast into an out of
    ``to_dtype`` under 'same_kind' (a ``numpy.UFuncTypeError``, itself a TypeError), naming
    the ufunc as NumPy does (``abs`` is 'absolute'). ``operand``: the out's operand index
    (inputs first), which NumPy names when the ufunc has several outputs."""
    ufunc = getattr(np, name, None)
    if not isinstance(ufunc, np.ufunc):
        ufunc = _NamedUfunc(name, nout)
    return np._core._exceptions._UFuncOutputCastingError(
        ufunc, "same_kind", np.dtype(from_dtype), np.dtype(to_dtype), operand)


def _numpy_copy_refusal():
    try:
        np.array([0], copy=False)
    except ValueError as exc:
        return str(exc)
    raise AssertionError("NumPy made an array of a list without a copy")


# NumPy's ValueError message when an object cannot give an array without a copy (this NumPy's
# own wording): np.array(obj, copy=False) of an NDArray, and ndengine.array(obj, copy=False)
COPY_REFUSED = _numpy_copy_refusal()
