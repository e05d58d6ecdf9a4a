"""Random ops drawing from a caller-owned ``numpy.random.Generator``.

The NDArray layer serialises random ops on a per-device generator, so the same
sequence of calls gives the same numbers.  Draws come from NumPy's Generator
(no hand-written RNG); uniform/normal scale a standard draw made directly in
the output dtype, which is how Generator.uniform/normal compute for float64.

Every parameter is checked by ``infer``, at the call, with NumPy's own errors: the
same call is made on a spare generator (``_CHECKER``) with no draw, or a draw the
size of the parameters' broadcast shape.  So the kernel, run later by the engine,
meets only parameters NumPy accepts.  The ops take any number of inputs and ignore
them: the NDArray layer passes the array that orders the draws of a device.
``random_order`` writes that array and nothing else (see ndarray/random.py).
"""
from __future__ import annotations

import math
import os

import numpy as np

from .dtypes import check_dtype
from .outputs import single_output, write_with_req
from .registry import Operator, OpReq, add_operator
from .creation import _shape

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_CHECKER = np.random.Generator(np.random.PCG64(0))  # draws only to check parameters


def _generator(params) -> np.random.Generator:
    generator = params.get("generator")
    if not isinstance(generator, np.random.Generator):
        raise TypeError("random ops need param generator=numpy.random.Generator")
    return generator


def _dtype(dtype, allowed, what):
    """NumPy's TypeError for a dtype it cannot draw (numpy.random.randint's wording)."""
    dtype = check_dtype(dtype)
    if not allowed(dtype):
        raise TypeError(f"Unsupported dtype {dtype!r} for {what}")
    return dtype


def _check_with_numpy(method, shape, args, **kwargs):
    """Raise what ``Generator.<method>(*args, size=shape, **kwargs)`` raises, without drawing
    ``shape`` numbers: NumPy checks the parameters' values the same for every non-empty size,
    so a scalar draw (or one of the parameters' own broadcast shape) shows every error."""
    arg_shapes = [np.shape(a) for a in args if np.ndim(a)]
    if math.prod(shape) == 0:
        size = shape  # NumPy checks less for an empty draw: ask it with the very size
    elif arg_shapes:
        size = np.broadcast_shapes(*arg_shapes)
        if np.broadcast_shapes(size, shape) != shape:
            raise ValueError(f"shape mismatch: objects cannot be broadcast to a single shape. "
                             f"Mismatch is between the parameters' shape {size} and the "
                             f"requested shape {shape}.")
    else:
        size = None
    getattr(_CHECKER, method)(*args, size=size, **kwargs)


def infer_uniform(*order, low=0.0, high=1.0, shape=(), dtype=np.float64, generator=None):
    shape = _shape(shape)
    dtype = _dtype(dtype, lambda d: d in _FLOATS, "uniform")
    _check_with_numpy("uniform", shape, (low, high))
    return [(shape, dtype)]


def infer_normal(*order, loc=0.0, scale=1.0, shape=(), dtype=np.float64, generator=None):
    shape = _shape(shape)
    dtype = _dtype(dtype, lambda d: d in _FLOATS, "normal")
    _check_with_numpy("normal", shape, (loc, scale))
    return [(shape, dtype)]


def infer_randint(*order, low, high=None, shape=(), dtype=np.int64, generator=None):
    shape = _shape(shape)
    dtype = _dtype(dtype, lambda d: d.kind in "iub", "randint")
    _check_with_numpy("integers", shape, (low, high), dtype=dtype)
    return [(shape, dtype)]


def _random_infer_key(inputs, params):
    """Memo key of a draw's infer (ops.registry): every parameter but the generator, which
    changes nothing in the result. An unhashable one (a list) means no memo."""
    # type and repr too: 2.0 == 2, True == 1 and -0.0 == 0.0 are different parameters to
    # NumPy (a float size is refused, a negative zero scale is "scale < 0")
    return tuple(sorted((k, type(v).__name__, repr(v), v) for k, v in params.items()
                        if k != "generator"))


def infer_order(*order, **_):
    return [((0,), np.dtype(np.uint8))]


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


def _order_kernel(inputs, outputs, req, **params):
    pass  # its only effect is the write of its output's var: the next draw waits for it


RANDOM_TABLE = [
    ("random_uniform", infer_uniform, draw_uniform, "uniform on [low, high); float32/float64"),
    ("random_normal", infer_normal, draw_normal, "normal(loc, scale); float32/float64"),
    ("random_randint", infer_randint, draw_randint, "integers in [low, high) like Generator.integers"),
]


def _after_fork_in_child():
    # A thread of the parent may have held the checker's lock (every Generator has one) at the
    # fork; that lock cannot be replaced, so the child gets a fresh checker.
    global _CHECKER
    _CHECKER = np.random.Generator(np.random.PCG64(0))


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def register_all() -> None:
    for name, infer, draw, doc in RANDOM_TABLE:
        op = Operator(name, num_inputs=None, kind="random", infer=infer, doc=doc,
                      infer_key=_random_infer_key)
        add_operator(op.set_kernel("cpu", _random_kernel(draw)))
    order = Operator("random_order", num_inputs=0, kind="random", infer=infer_order,
                     doc="orders a device's draws: writes its (empty) output, nothing else",
                     infer_key=lambda inputs, params: ())
    add_operator(order.set_kernel("cpu", _order_kernel))
