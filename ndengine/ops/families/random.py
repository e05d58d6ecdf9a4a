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

``random_method`` calls a method of NumPy's Generator as it is (``normal``, ``choice``,
``shuffle``...), with the caller's own arguments, so the numbers are NumPy's for the same
generator state and call sequence (see ``GENERATOR_METHODS``).
"""
from __future__ import annotations

import math
import os

import numpy as np

from ..dtypes import check_dtype, is_array_spec
from ..outputs import single_output, write_with_req
from ..registry import Operator, OpReq, add_operator
from .creation import _shape
from ..shapes import normalize_axis_index

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


# ---------------------------------------------------------------- Generator methods
# method -> (its parameters that may be arrays, in NumPy's order; the result's dtype: a
# dtype, "dtype" for the call's dtype= (with the dtypes NumPy draws), or None for the rules
# of choice/permutation/shuffle below)
_FLOAT = np.dtype(np.float64)
_INT = np.dtype(np.int64)
GENERATOR_METHODS = {
    "random": ((), ("dtype", lambda d: d in _FLOATS)),
    "standard_normal": ((), ("dtype", lambda d: d in _FLOATS)),
    "integers": (("low", "high"), ("dtype", lambda d: d.kind in "iub")),
    "normal": (("loc", "scale"), _FLOAT),
    "uniform": (("low", "high"), _FLOAT),
    "exponential": (("scale",), _FLOAT),
    "poisson": (("lam",), _INT),
    "binomial": (("n", "p"), _INT),
    "choice": (("a", "p"), None),
    "permutation": (("x",), None),
    "shuffle": (("x",), None),
}


def _stand_in(spec, small=False):
    """A NumPy array with an array spec's shape and dtype that costs no memory (``small``:
    a writable one with at most one element per axis, for permutation and shuffle)."""
    if small:
        return np.zeros(tuple(min(n, 1) for n in spec.shape), spec.dtype)
    return np.broadcast_to(np.zeros((), spec.dtype), spec.shape)


def _distribution_shape(size, values, names):
    """The result's shape: ``size``, or the parameters' broadcast shape."""
    shapes = [tuple(values[n].shape) if is_array_spec(values[n]) else np.shape(values[n])
              for n in names if values.get(n) is not None]
    shape = np.broadcast_shapes(*shapes) if shapes else ()
    if size is None:
        return shape
    size = _shape(size)
    if shapes and math.prod(size) and np.broadcast_shapes(shape, size) != size:
        raise ValueError(f"shape mismatch: objects cannot be broadcast to a single shape. "
                         f"Mismatch is between the parameters' shape {shape} and the "
                         f"requested shape {size}.")
    return size


def _infer_distribution(method, values, arrays):
    names, dtype = GENERATOR_METHODS[method]
    if type(dtype) is tuple:
        dtype = _dtype(values.get("dtype", np.float64 if method != "integers" else np.int64),
                       dtype[1], method)
    shape = _distribution_shape(values.get("size"), values, names)
    if not arrays:  # NumPy checks the values; with NDArray parameters the draw itself does
        call = dict(values)
        call["size"] = shape if not math.prod(shape) else \
            _distribution_shape(None, values, names) or None
        getattr(_CHECKER, method)(**call)
    return shape, dtype


def _infer_choice(values, arrays):
    a, size, axis = values["a"], values.get("size"), values.get("axis", 0)
    call = dict(values)
    if is_array_spec(a):
        call["a"] = _stand_in(a)
    if "p" in arrays:  # its values are read when the draw runs; its shape is checked now
        p = arrays["p"]
        call["p"] = np.full(p.shape, 1.0 / max(math.prod(p.shape), 1))
    sample = () if size is None else _shape(size)
    if values.get("replace", True) and math.prod(sample):
        call["size"] = None  # NumPy's checks then are the same, and cost one draw
    dtype = np.asarray(_CHECKER.choice(**call)).dtype
    if not np.ndim(call["a"]):
        return sample, dtype
    a_shape = tuple(np.shape(call["a"]))
    axis = normalize_axis_index(axis, len(a_shape))
    return a_shape[:axis] + sample + a_shape[axis + 1:], dtype


def _infer_permutation(values, arrays):
    x = values["x"]
    if isinstance(x, (int, np.integer)):
        return (max(int(x), 0),), _INT  # numpy.arange(x), shuffled
    if is_array_spec(x) and not isinstance(x, np.ndarray):
        _CHECKER.permutation(_stand_in(x, small=True), axis=values.get("axis", 0))
        return tuple(x.shape), check_dtype(x.dtype)
    x = np.asarray(x)
    _CHECKER.permutation(_stand_in(x, small=True), axis=values.get("axis", 0))
    return x.shape, check_dtype(x.dtype)


def _infer_shuffle(values, arrays):
    x = values["x"]
    if "x" in arrays:
        _CHECKER.shuffle(_stand_in(x, small=True), axis=values.get("axis", 0))
        return tuple(x.shape), check_dtype(x.dtype)
    # a NumPy array or a list, shuffled by the draw itself: the output only marks it done
    if isinstance(x, np.ndarray):
        _CHECKER.shuffle(_stand_in(x, small=True), axis=values.get("axis", 0))
    elif values.get("axis", 0) != 0:
        raise NotImplementedError("Axis argument is only supported on ndarray objects")
    elif not hasattr(x, "__setitem__") or not hasattr(x, "__len__"):
        raise TypeError(f"shuffle takes an array or a mutable sequence, not "
                        f"{type(x).__name__}")
    return (0,), np.dtype(np.uint8)


_SPECIAL = {"choice": _infer_choice, "permutation": _infer_permutation,
            "shuffle": _infer_shuffle}


def infer_method(order, *arrays, generator=None, method, array_params=(), **values):
    """``Generator.<method>(**values)`` with the arrays named by ``array_params`` (the
    inputs after the order input) in their places: the result's (shape, dtype), NumPy's
    errors at the call."""
    if method not in GENERATOR_METHODS:
        raise ValueError(f"random_method: no Generator method {method!r}; known: "
                         f"{', '.join(GENERATOR_METHODS)}")
    arrays = dict(zip(array_params, arrays))
    values = dict(values, **arrays)
    if method in _SPECIAL:
        shape, dtype = _SPECIAL[method](values, arrays)
    else:
        shape, dtype = _infer_distribution(method, values, arrays)
    return [(tuple(shape), check_dtype(dtype))]


def _method_kernel(inputs, outputs, req, *, generator, method, array_params=(), **values):
    out, req = single_output(outputs, req)
    if req is OpReq.NULL:
        return  # draw nothing: the stream only advances for written outputs
    values.update(zip(array_params, inputs[1:]))
    call = getattr(_generator({"generator": generator}), method)  # checks its type
    if method == "shuffle":
        if "x" in array_params:
            values["x"] = out  # the array itself, written in place
        call(**values)
        return
    write_with_req(out, req, lambda target: target.__setitem__(Ellipsis, call(**values)))


def register_all() -> None:
    for name, infer, draw, doc in RANDOM_TABLE:
        # the generator changes no decision: one plan for every generator
        op = Operator(name, num_inputs=None, kind="random", infer=infer, doc=doc,
                      unkeyed_params=("generator",))
        add_operator(op.set_kernel("cpu", _random_kernel(draw)))
    method = Operator("random_method", num_inputs=None, kind="random", infer=infer_method,
                      doc="a method of NumPy's Generator, called as it is (GENERATOR_METHODS)",
                      unkeyed_params=("generator",))
    add_operator(method.set_kernel("cpu", _method_kernel))
    order = Operator("random_order", num_inputs=0, kind="random", infer=infer_order,
                     doc="orders a device's draws: writes its (empty) output, nothing else")
    add_operator(order.set_kernel("cpu", _order_kernel))
