"""NumPy's element-wise functions that are not ufuncs: nan_to_num, isclose, allclose,
array_equal.  The kernel is NumPy's function itself on the op's buffers, so values are
NumPy's by construction; infer runs it on one-element stand-ins of the inputs' dtypes (and
the scalars as they are) for NumPy's result dtype and NumPy's errors at the call.

* ``nan_to_num`` (x; params nan, posinf, neginf: scalars) -> x's shape and dtype;
* ``isclose`` (a, b, rtol, atol; param equal_nan) -> bool, the inputs broadcast;
* ``allclose`` (the same inputs) and ``array_equal`` (a1, a2; param equal_nan) -> one
  bool of shape (): the caller waits for it (NumPy returns a Python bool).
"""
from __future__ import annotations

import numpy as np

from ..dtypes import check_dtype, is_array_spec
from ..outputs import single_output, write_with_req
from ..registry import OpReq, add_operator, numpy_backed
from ..shapes import broadcast_shapes, shape_of

__all__ = ["register_all"]

def _stand_in(value):
    """An array spec as a 0-d NumPy array of its dtype; scalars as they are."""
    if is_array_spec(value) and not isinstance(value, np.generic):
        return np.zeros((), check_dtype(value.dtype))
    return value


def _broadcast(inputs):
    return broadcast_shapes(*(shape_of(v) if is_array_spec(v) else () for v in inputs))


def _quietly(fn, *args, **kwargs):
    with np.errstate(all="ignore"):
        return fn(*args, **kwargs)


# ------------------------------------------------------------------- nan_to_num

def _check_replacement(name, value):
    if isinstance(value, (list, tuple, np.ndarray)) or is_array_spec(value) and \
            not isinstance(value, np.generic):
        raise TypeError(f"nan_to_num: {name} must be a scalar in ndengine (NumPy also "
                        "takes arrays)")


def infer_nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    for name, value in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        _check_replacement(name, value)
    dtype = check_dtype(x.dtype) if is_array_spec(x) else np.asarray(x).dtype
    probe = np.array([np.nan, np.inf, -np.inf]).astype(dtype)
    _quietly(np.nan_to_num, probe, copy=False, nan=nan, posinf=posinf, neginf=neginf)
    return [(shape_of(x) if is_array_spec(x) else (), dtype)]


def nan_to_num_kernel(inputs, outputs, req, nan=0.0, posinf=None, neginf=None):
    out, req = single_output(outputs, req)

    def compute(target):
        x = np.asarray(inputs[0])
        if x is not target:
            np.copyto(target, x)
        _quietly(np.nan_to_num, target, copy=False, nan=nan, posinf=posinf, neginf=neginf)
    write_with_req(out, req, compute)


# ---------------------------------------------------- isclose, allclose, array_equal

def infer_isclose(a, b, rtol, atol, equal_nan=False):
    stand_ins = [_stand_in(v) for v in (a, b, rtol, atol)]
    _quietly(np.isclose, *stand_ins, equal_nan=equal_nan)  # NumPy's errors
    return [(_broadcast((a, b, rtol, atol)), np.dtype(bool))]


def infer_allclose(a, b, rtol, atol, equal_nan=False):
    infer_isclose(a, b, rtol, atol, equal_nan)
    return [((), np.dtype(bool))]


def _numpy_function_kernel(fn):
    def kernel(inputs, outputs, req, **params):
        out, req = single_output(outputs, req)
        if req is OpReq.NULL:
            return
        result = _quietly(fn, *[np.asarray(v) if is_array_spec(v) else v for v in inputs],
                          **params)
        write_with_req(out, req, lambda target: target.__setitem__(Ellipsis, result))
    return kernel


def _isclose(a, b, rtol, atol, equal_nan=False):
    return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def _allclose(a, b, rtol, atol, equal_nan=False):
    return np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def infer_array_equal(a1, a2, equal_nan=False):
    if shape_of(a1) != shape_of(a2):
        raise ValueError(f"array_equal: shapes {shape_of(a1)} and {shape_of(a2)} differ (the "
                         "function answers False without pushing an op)")
    _quietly(np.array_equal, _stand_in(a1), _stand_in(a2), equal_nan=equal_nan)
    return [((), np.dtype(bool))]


def register_all() -> None:
    add_operator(numpy_backed(
        "nan_to_num", num_inputs=1, kind="other", infer=infer_nan_to_num,
        inplace=((0, 0),), doc="numpy.nan_to_num(x, nan=, posinf=, neginf=) of a float array")
        .set_kernel("cpu", nan_to_num_kernel))
    add_operator(numpy_backed(
        "isclose", num_inputs=4, kind="other", infer=infer_isclose,
        doc="numpy.isclose(a, b, rtol, atol, equal_nan=)")
        .set_kernel("cpu", _numpy_function_kernel(_isclose)))
    add_operator(numpy_backed(
        "allclose", num_inputs=4, kind="other", infer=infer_allclose,
        doc="numpy.allclose(a, b, rtol, atol, equal_nan=) as one bool of shape ()")
        .set_kernel("cpu", _numpy_function_kernel(_allclose)))
    add_operator(numpy_backed(
        "array_equal", num_inputs=2, kind="other", infer=infer_array_equal,
        doc="numpy.array_equal(a1, a2, equal_nan=) of two arrays of one shape, as one bool "
            "of shape ()")
        .set_kernel("cpu", _numpy_function_kernel(np.array_equal)))
