"""Creation ops (no array inputs): fill, arange, linspace, eye.

These are memory writes; NumPy fills and copies without holding the GIL for
our dtypes, so a Numba loop would add compile time and nothing else.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from ..dtypes import check_dtype, check_scalar_fits, result_type
from ..outputs import single_output, write_with_req
from ..plans import Plan
from ..registry import OpReq, add_operator, kernel_run, numpy_backed
from .indexing import setitem_value_shape
from ..shapes import broadcast_shapes, check_shape

_WRITE_TO = OpReq.WRITE_TO
_WRITE_INPLACE = OpReq.WRITE_INPLACE
_FILL_PARAMS = frozenset(("value", "shape", "dtype"))


_shape = check_shape


def scalar_param(value):
    """A creation op's scalar parameter as the op will read it when it runs: a NumPy 0-d
    array becomes an (immutable) NumPy scalar; a bigger array is NumPy's TypeError."""
    if isinstance(value, np.ndarray):
        if value.ndim:
            raise TypeError("only 0-dimensional arrays can be converted to Python scalars")
        return value[()]
    return value


def _creation_kernel(make):
    """Kernel that writes ``make(target.dtype, **params)`` into the output."""
    def kernel(inputs, outputs, req, **params):
        out, req = single_output(outputs, req)
        if req is not OpReq.NULL:
            # the output's dtype is the inferred one; the dtype param was only for infer
            rest = {k: v for k, v in params.items() if k != "dtype"}
            write_with_req(out, req, lambda target: target.__setitem__(
                Ellipsis, make(target.dtype, **rest)))
    return kernel


# fill ------------------------------------------------------------------------

def infer_fill(*, value=0, shape=(), dtype=None):
    shape = _shape(shape)
    value_shape = np.shape(value)
    if value_shape and not _broadcasts_to(setitem_value_shape(value_shape, shape), shape):
        raise ValueError(f"could not broadcast input array from shape {value_shape} into "
                         f"shape {shape}")
    return [(shape, check_dtype(dtype) if dtype is not None else result_type(value))]


def _broadcasts_to(source, target) -> bool:
    if len(source) > len(target):
        return False
    try:
        return broadcast_shapes(source, target) == target
    except ValueError:
        return False


def make_fill(dtype, *, value=0, **_):
    return np.asarray(value).astype(dtype)


def plan_fill(op, inputs, params, target, aliases, req) -> Plan:
    """fill's planner: a plain write is one NumPy assignment of the value cast to out's dtype."""
    outputs = op.general_infer(inputs, params)
    if req not in (None, _WRITE_TO, _WRITE_INPLACE) or not params.keys() <= _FILL_PARAMS:
        return Plan(outputs, kernel_run(_fill_full_kernel))

    def run(inputs, outputs, req, params):
        out, value = outputs[0], params.get("value", 0)
        if type(value) in _SCALAR_TYPES:  # (full checked it fits: fill casts it as astype)
            out.fill(value)
        else:
            out[...] = np.asarray(value).astype(out.dtype)
    return Plan(outputs, run)


_SCALAR_TYPES = (bool, int, float, complex)


# arange ----------------------------------------------------------------------

def _arange_args(start, stop, step):
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ZeroDivisionError("division by zero")  # NumPy's error
    return start, stop, step


def infer_arange(*, start=0, stop=None, step=1, dtype=None):
    start, stop, step = (scalar_param(v) for v in _arange_args(start, stop, step))
    # NumPy's length rule: ceil((stop - start) / step), never negative.
    if all(isinstance(v, (int, np.integer)) for v in (start, stop, step)):
        length = len(range(int(start), int(stop), int(step)))
    else:
        span = (stop - start) / step
        if span != span:
            raise ValueError("arange: cannot compute length")
        if math.isinf(span):
            raise ValueError("Maximum allowed size exceeded")
        length = max(0, math.ceil(span))
    if dtype is None:
        dtype = np.result_type(*(np.asarray(v) for v in (start, stop, step)))
    dtype = check_dtype(dtype)
    if dtype.kind == "b" and length > 2:
        raise TypeError("arange() is only supported for booleans when the result has at most "
                        "length 2.")
    for value in (start, stop, step):
        check_scalar_fits(value, dtype)  # NumPy 2: arange(-1, 3, dtype=uint8) overflows
    return [((length,), dtype)]


def make_arange(dtype, *, start=0, stop=None, step=1, **_):
    start, stop, step = _arange_args(start, stop, step)
    return np.arange(start, stop, step, dtype=dtype)


# linspace --------------------------------------------------------------------

def infer_linspace(*, start, stop, num=50, endpoint=True, dtype=None):
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    # array bounds give one sample row per step, as in NumPy (axis=0)
    bounds = tuple(broadcast_shapes(np.shape(start), np.shape(stop)))
    if dtype is None:  # NumPy's: float64, or the bounds' own dtype when it is wider
        dtype = np.result_type(np.asarray(start), np.asarray(stop), float)
    return [((num, *bounds), check_dtype(dtype))]


def make_linspace(dtype, *, start, stop, num=50, endpoint=True, **_):
    return np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype)


# eye -------------------------------------------------------------------------

def infer_eye(*, N, M=None, k=0, dtype=np.float64):
    operator.index(k)  # NumPy's TypeError for a float k
    return [(_shape((N, N if M is None else M)), check_dtype(dtype))]


def make_eye(dtype, *, N, M=None, k=0, **_):
    return np.eye(N, M, k, dtype=dtype)


CREATION_TABLE = [
    ("fill", infer_fill, make_fill, "out[...] = value; params value, shape, dtype"),
    ("arange", infer_arange, make_arange, "numpy.arange(start, stop, step, dtype)"),
    ("linspace", infer_linspace, make_linspace, "numpy.linspace(start, stop, num, endpoint, dtype)"),
    ("eye", infer_eye, make_eye, "numpy.eye(N, M, k, dtype)"),
]


_fill_full_kernel = _creation_kernel(make_fill)


def register_all() -> None:
    for name, infer, make, doc in CREATION_TABLE:
        if name == "fill":
            add_operator(numpy_backed(name, num_inputs=0, kind="creation", infer=infer, doc=doc,
                                  planner=plan_fill, value_params=("value",)))
            continue
        op = numpy_backed(name, num_inputs=0, kind="creation", infer=infer, doc=doc)
        add_operator(op.set_kernel("cpu", _creation_kernel(make)))
