"""Creation ops (no array inputs): fill, arange, linspace, eye.

These are memory writes; NumPy fills and copies without holding the GIL for
our dtypes, so a Numba loop would add compile time and nothing else.
"""
from __future__ import annotations

import math

import numpy as np

from .dtypes import check_dtype, result_type
from .outputs import single_output, write_with_req
from .registry import Operator, OpReq, add_operator

_WRITE_TO = OpReq.WRITE_TO
_WRITE_INPLACE = OpReq.WRITE_INPLACE
_FILL_PARAMS = frozenset(("value", "shape", "dtype"))
_SCALAR_TYPES = frozenset((bool, int, float))


def _shape(shape) -> tuple:
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    shape = tuple(int(n) for n in shape)
    if any(n < 0 for n in shape):
        raise ValueError(f"negative dimensions are not allowed: {shape}")
    return shape


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
    return [(_shape(shape), check_dtype(dtype) if dtype is not None else result_type(value))]


def make_fill(dtype, *, value=0, **_):
    return np.asarray(value).astype(dtype)


def fill_infer_key(inputs, params):
    """Memo key: (shape, dtype), or (shape, type of a Python scalar value) without dtype."""
    if inputs or not params.keys() <= _FILL_PARAMS:
        return None
    shape = params.get("shape", ())
    if type(shape) is not tuple and type(shape) is not int:
        return None
    dtype = params.get("dtype")
    if dtype is not None:
        return shape, dtype, None
    kind = type(params.get("value", 0))
    return (shape, None, kind) if kind in _SCALAR_TYPES else None


def fill_kernel(inputs, outputs, req, **params):
    """out[...] = value cast to out's dtype."""
    if len(outputs) == 1 and len(req) == 1 and params.keys() <= _FILL_PARAMS:
        r = req[0]
        if r is _WRITE_TO or r is _WRITE_INPLACE:  # the generic kernel minus its plumbing
            out = outputs[0]
            out[...] = np.asarray(params.get("value", 0)).astype(out.dtype)
            return
    _fill_full_kernel(inputs, outputs, req, **params)


# arange ----------------------------------------------------------------------

def _arange_args(start, stop, step):
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ValueError("arange: step must not be zero")
    return start, stop, step


def infer_arange(*, start=0, stop=None, step=1, dtype=None):
    start, stop, step = _arange_args(start, stop, step)
    # NumPy's length rule: ceil((stop - start) / step), never negative.
    if all(isinstance(v, (int, np.integer)) for v in (start, stop, step)):
        length = len(range(int(start), int(stop), int(step)))
    else:
        length = max(0, math.ceil((stop - start) / step))
    if dtype is None:
        dtype = np.result_type(*(np.asarray(v) for v in (start, stop, step)))
    return [((length,), check_dtype(dtype))]


def make_arange(dtype, *, start=0, stop=None, step=1, **_):
    start, stop, step = _arange_args(start, stop, step)
    return np.arange(start, stop, step, dtype=dtype)


# linspace --------------------------------------------------------------------

def infer_linspace(*, start, stop, num=50, endpoint=True, dtype=None):
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    return [((int(num),), check_dtype(dtype if dtype is not None else np.float64))]


def make_linspace(dtype, *, start, stop, num=50, endpoint=True, **_):
    return np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype)


# eye -------------------------------------------------------------------------

def infer_eye(*, N, M=None, k=0, dtype=np.float64):
    return [((int(N), int(N if M is None else M)), check_dtype(dtype))]


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
            op = Operator(name, num_inputs=0, kind="creation", infer=infer, doc=doc,
                          infer_key=fill_infer_key)
            add_operator(op.set_kernel("cpu", fill_kernel))
            continue
        op = Operator(name, num_inputs=0, kind="creation", infer=infer, doc=doc)
        add_operator(op.set_kernel("cpu", _creation_kernel(make)))
