"""Random ops drawing from a caller-owned ``numpy.random.Generator``.

The NDArray layer serialises random ops on a per-device generator, so the same
sequence of calls gives the same numbers.  Draws come from NumPy's Generator
(no hand-written RNG); uniform/normal scale a standard draw made directly in
the output dtype, which is how Generator.uniform/normal compute for float64.
"""
from __future__ import annotations

import numpy as np

from .dtypes import check_dtype
from .outputs import single_output, write_with_req
from .registry import Operator, OpReq, add_operator
from .creation import _shape


def _generator(params) -> np.random.Generator:
    generator = params.get("generator")
    if not isinstance(generator, np.random.Generator):
        raise TypeError("random ops need param generator=numpy.random.Generator")
    return generator


def _float_dtype(dtype):
    dtype = check_dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"this random op draws floats; dtype must be float32 or float64, got {dtype}")
    return dtype


def _int_dtype(dtype):
    dtype = check_dtype(dtype)
    if dtype.kind not in "iub":
        raise TypeError(f"random_randint draws integers; got dtype {dtype}")
    return dtype


def infer_uniform(*, low=0.0, high=1.0, shape=(), dtype=np.float64, generator=None):
    return [(_shape(shape), _float_dtype(dtype))]


def infer_normal(*, loc=0.0, scale=1.0, shape=(), dtype=np.float64, generator=None):
    if scale < 0:
        raise ValueError("scale < 0")
    return [(_shape(shape), _float_dtype(dtype))]


def infer_randint(*, low, high=None, shape=(), dtype=np.int64, generator=None):
    return [(_shape(shape), _int_dtype(dtype))]


def draw_uniform(generator, shape, dtype, low=0.0, high=1.0, **_):
    u = generator.random(shape, dtype=dtype)
    return dtype.type(low) + (dtype.type(high) - dtype.type(low)) * u


def draw_normal(generator, shape, dtype, loc=0.0, scale=1.0, **_):
    z = generator.standard_normal(shape, dtype=dtype)
    return dtype.type(loc) + dtype.type(scale) * z


def draw_randint(generator, shape, dtype, low, high=None, **_):
    return generator.integers(low, high, size=shape, dtype=dtype)


def _random_kernel(draw):
    def kernel(inputs, outputs, req, **params):
        out, req = single_output(outputs, req)
        if req is OpReq.NULL:
            return  # draw nothing: the stream only advances for written outputs
        generator = _generator(params)
        rest = {k: v for k, v in params.items() if k not in ("generator", "shape", "dtype")}
        write_with_req(out, req, lambda target: target.__setitem__(
            Ellipsis, draw(generator, target.shape, target.dtype, **rest)))
    return kernel


RANDOM_TABLE = [
    ("random_uniform", infer_uniform, draw_uniform, "uniform on [low, high); float32/float64"),
    ("random_normal", infer_normal, draw_normal, "normal(loc, scale); float32/float64"),
    ("random_randint", infer_randint, draw_randint, "integers in [low, high) like Generator.integers"),
]


def register_all() -> None:
    for name, infer, draw, doc in RANDOM_TABLE:
        op = Operator(name, num_inputs=0, kind="random", infer=infer, doc=doc)
        add_operator(op.set_kernel("cpu", _random_kernel(draw)))
