"""Element-wise operators, generated from the tables at the bottom of this file.

Each row names an op, its Numba scalar function (``elementwise_kernels``), the
NumPy ufunc whose type resolution it copies (so output dtypes equal NumPy's,
including NEP 50 weak Python scalars), and its gradient where one is simple.

Kernel strategy, per call:
  1. cast every input to the computation dtype NumPy would loop in;
  2. fast path -- output C-contiguous and each input either C-contiguous with
     the output's size or a single element: one 1-D loop over raveled views,
     no copies (``prange`` version above ``parallel.PARALLEL_MIN_SIZE``);
  3. otherwise (broadcasting, strided or transposed outputs) ``np.nditer``
     hands the same 1-D loop contiguous buffered chunks.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import elementwise_kernels as ek
from .dtypes import check_dtype, check_scalar_fits, is_array_spec, promotion_operand, result_type
from .outputs import detach_overlapping, single_output, write_with_req
from .parallel import use_parallel
from .registry import Operator, OpReq, add_operator
from .shapes import broadcast_shapes, shape_of

_CHUNK_ELEMENTS = 1 << 13  # nditer buffer: big enough to amortise the kernel call


# ------------------------------------------------------------------ the driver

def run_loops(loops: ek.LoopKernels, operands: list, out: np.ndarray) -> None:
    """Fill ``out`` with f(*operands); operands already have the computation dtype."""
    if out.size == 0:
        return
    if out.flags.c_contiguous and _run_contiguous(loops, operands, out):
        return
    iterator = np.nditer(
        operands + [out],
        flags=["external_loop", "buffered", "zerosize_ok", "grow_inner"],
        op_flags=[["readonly", "contig", "aligned"]] * len(operands)
        + [["writeonly", "contig", "aligned", "no_broadcast"]],
        buffersize=_CHUNK_ELEMENTS,
    )
    with iterator:
        for chunks in iterator:
            loops.serial(*chunks)


def _run_contiguous(loops, operands, out) -> bool:
    flat_out = out.reshape(-1)
    size = out.size
    parallel = use_parallel(size)

    def full(x):  # same element order as out: broadcasting only added size-1 axes
        return x.size == size and x.flags.c_contiguous

    if all(full(x) for x in operands):
        kernel = loops.parallel if parallel else loops.serial
        kernel(*[x.reshape(-1) for x in operands], flat_out)
        return True
    if len(operands) == 2:
        x, y = operands
        if full(x) and y.size == 1:
            kernel = loops.parallel_array_scalar if parallel else loops.serial_array_scalar
            kernel(x.reshape(-1), y.reshape(1), flat_out)
            return True
        if x.size == 1 and full(y):
            kernel = loops.parallel_scalar_array if parallel else loops.serial_scalar_array
            kernel(x.reshape(1), y.reshape(-1), flat_out)
            return True
    return False


def as_operand(value, dtype: np.dtype, *, wrap_scalars=False) -> np.ndarray:
    """An input as an array of the computation dtype (Python scalars become 0-d)."""
    if isinstance(value, np.ndarray):
        return value if value.dtype == dtype else value.astype(dtype)
    if wrap_scalars:
        return np.asarray(value).astype(dtype)  # C-style wrap, as np.where does
    check_scalar_fits(value, dtype)
    return np.asarray(value, dtype=dtype)


# -------------------------------------------------------------- dtype resolution

@functools.lru_cache(maxsize=4096)
def _resolve_with_ufunc(ufunc: np.ufunc, operands: tuple) -> tuple:
    return ufunc.resolve_dtypes(operands + (None,) * ufunc.nout)


def resolve_like(ufunc: np.ufunc, name: str, inputs) -> tuple[list, np.dtype]:
    """(computation dtype per input, output dtype) exactly as ``ufunc`` would choose."""
    operands = tuple(promotion_operand(v) for v in inputs)
    try:
        resolved = _resolve_with_ufunc(ufunc, operands)
    except TypeError:
        shown = ", ".join(getattr(o, "__name__", str(o)) for o in operands)
        raise TypeError(f"{name} is not supported for input types ({shown})") from None
    return [check_dtype(d) for d in resolved[:ufunc.nin]], check_dtype(resolved[-1])


# ---------------------------------------------------------------- op definition

@dataclass
class ElementwiseSpec:
    name: str
    scalar: Callable                  # Numba scalar function
    ufunc: np.ufunc                   # whose dtype resolution we copy
    gradient: Callable | None = None
    doc: str = ""
    wrap_scalars = False              # True: out-of-range Python ints wrap instead of raising

    @property
    def arity(self) -> int:
        return self.ufunc.nin

    @functools.cached_property
    def loops(self) -> ek.LoopKernels:
        factory = {1: ek.unary_kernels, 2: ek.binary_kernels, 3: ek.ternary_kernels}[self.arity]
        return factory(self.scalar)

    def resolve(self, inputs, params):
        return resolve_like(self.ufunc, self.name, inputs)

    def check_operands(self, operands, params):
        """Value checks that must happen before anything is written."""

    def infer(self, *inputs, **params):
        computation, out_dtype = self.resolve(inputs, params)
        for value, dtype in zip(inputs, computation):
            if not is_array_spec(value) and not self.wrap_scalars:
                check_scalar_fits(value, dtype)
        shape = broadcast_shapes(*(shape_of(v) for v in inputs))
        return [(shape, out_dtype)]

    def kernel(self, inputs, outputs, req, **params):
        out, req = single_output(outputs, req)
        if req is OpReq.NULL:
            return
        computation, _ = self.resolve(inputs, params)
        operands = [as_operand(v, dt, wrap_scalars=self.wrap_scalars)
                    for v, dt in zip(inputs, computation)]
        self.check_operands(operands, params)
        if req is not OpReq.ADD_TO:
            operands = detach_overlapping(operands, [out])
        write_with_req(out, req, lambda target: run_loops(self.loops, operands, target))

    def register(self, kind: str) -> Operator:
        op = Operator(self.name, num_inputs=self.arity, kind=kind, infer=self.infer,
                      inplace=tuple((i, 0) for i in range(self.arity)),
                      gradient=self.gradient, doc=self.doc)
        return add_operator(op.set_kernel("cpu", self.kernel))


class PowerSpec(ElementwiseSpec):
    def infer(self, *inputs, **params):
        results = super().infer(*inputs, **params)
        base, exponent = inputs
        if (results[0][1].kind in "iu" and not is_array_spec(exponent) and exponent < 0):
            raise ValueError("Integers to negative integer powers are not allowed.")
        return results

    def check_operands(self, operands, params):
        exponent = operands[1]
        if exponent.dtype.kind == "i" and ek.any_negative(exponent.reshape(-1)):
            raise ValueError("Integers to negative integer powers are not allowed.")


class RoundSpec(ElementwiseSpec):
    """np.round: half to even; ints stay ints.  decimals != 0 scales like NumPy."""

    def resolve(self, inputs, params):
        (x,) = inputs
        dtype = check_dtype(promotion_operand(x)) if is_array_spec(x) else result_type(x)
        # NumPy's own choice (np.round(bool) is float16, which we refuse).
        out = check_dtype(np.round(np.zeros(1, dtype), params.get("decimals", 0)).dtype)
        return [out], out

    def kernel(self, inputs, outputs, req, decimals=0):
        if decimals == 0:
            return super().kernel(inputs, outputs, req)
        # Scaling by 10**decimals is NumPy's own algorithm; reuse it rather than
        # re-derive its float rounding steps.
        out, req = single_output(outputs, req)
        (x,) = detach_overlapping([np.asarray(inputs[0])], [out], allow_same_view=False)
        # (np.round's out= refuses int outputs for negative decimals, so assign)
        write_with_req(out, req, lambda target: target.__setitem__(Ellipsis, np.round(x, decimals)))


class UnaryLikeSpec(ElementwiseSpec):
    """Ops NumPy lacks as a ufunc: dtypes follow ``ufunc`` applied to (x, *extra)."""
    extra: tuple = ()

    def resolve(self, inputs, params):
        computation, out = resolve_like(self.ufunc, self.name, tuple(inputs) + self.extra)
        return computation[:1], out

    @property
    def arity(self):
        return 1


class ReluSpec(UnaryLikeSpec):
    extra = (0,)  # relu(x) == maximum(x, 0) with 0 a weak Python int


def _clip_bound(bound, dtype: np.dtype):
    """A Python/NumPy scalar bound in ``dtype``; out-of-range ints clamp (NumPy 2 does too)."""
    if dtype.kind in "iu" and isinstance(bound, (int, np.integer)):
        info = np.iinfo(dtype)
        bound = min(max(int(bound), int(info.min)), int(info.max))
    return np.asarray(bound, dtype=dtype)


class ClipSpec(ElementwiseSpec):
    """clip(x, a_min, a_max): maximum then minimum, NaN propagating; None = no bound."""

    @property
    def arity(self):
        return 1

    def resolve(self, inputs, params):
        bounds = [b for b in (params.get("a_min"), params.get("a_max")) if b is not None]
        for b in bounds:
            if not isinstance(b, (bool, int, float, np.generic)):
                raise TypeError(f"clip bounds must be scalars, got {type(b).__name__}")
        dtype = result_type(inputs[0], *[b if isinstance(b, (bool, int, float)) else
                                         np.asarray(b) for b in bounds])
        return [dtype], dtype

    def infer(self, x, a_min=None, a_max=None):
        _, dtype = self.resolve([x], dict(a_min=a_min, a_max=a_max))
        return [(shape_of(x), dtype)]

    @functools.cached_property
    def clip_loops(self):
        return {"both": ek.ternary_kernels(ek.clip),
                "low": ek.binary_kernels(ek.maximum),
                "high": ek.binary_kernels(ek.minimum)}

    def kernel(self, inputs, outputs, req, a_min=None, a_max=None):
        out, req = single_output(outputs, req)
        if req is OpReq.NULL:
            return
        (dtype,), _ = self.resolve(inputs, dict(a_min=a_min, a_max=a_max))
        operands = [as_operand(inputs[0], dtype)]
        if a_min is not None:
            operands.append(_clip_bound(a_min, dtype))
        if a_max is not None:
            operands.append(_clip_bound(a_max, dtype))
        if a_min is None and a_max is None:
            loops = self.identity_loops
        elif a_max is None:
            loops = self.clip_loops["low"]
        elif a_min is None:
            loops = self.clip_loops["high"]
        else:
            loops = self.clip_loops["both"]
        if req is not OpReq.ADD_TO:
            operands = detach_overlapping(operands, [out])
        write_with_req(out, req, lambda target: run_loops(loops, operands, target))

    @functools.cached_property
    def identity_loops(self):
        return ek.unary_kernels(ek.positive)


class WhereSpec(ElementwiseSpec):
    """where(cond, x, y): cond cast to bool, values promoted like NumPy."""
    wrap_scalars = True  # np.where(c, uint8_array, -1) gives 255, not OverflowError

    def resolve(self, inputs, params):
        cond, x, y = inputs
        dtype = result_type(x, y)
        return [np.dtype(bool), dtype, dtype], dtype

    @property
    def arity(self):
        return 3

    @functools.cached_property
    def loops(self):
        return ek.ternary_kernels(ek.where_select)


# --------------------------------------------------------------------- gradients
# gradient(out_grad, inputs, output, **params) -> one gradient per input
# (None for Python scalars and for inputs the op is not differentiable in).

def unbroadcast(grad: np.ndarray, value):
    """Sum ``grad`` down to ``value``'s shape (undoing broadcasting)."""
    if not is_array_spec(value):
        return None
    shape = shape_of(value)
    grad = np.asarray(grad)
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, n in enumerate(shape):
        if n == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad


def _unary_gradient(rule):
    def gradient(out_grad, inputs, output, **params):
        (x,) = inputs
        return [unbroadcast(rule(np.asarray(out_grad), np.asarray(x), np.asarray(output)), x)]
    return gradient


def _binary_gradient(rule):
    def gradient(out_grad, inputs, output, **params):
        x, y = inputs
        gx, gy = rule(np.asarray(out_grad), np.asarray(x), np.asarray(y), np.asarray(output))
        return [unbroadcast(gx, x), unbroadcast(gy, y)]
    return gradient


def _zero_gradient(g, x, out):
    return np.zeros_like(g)


UNARY_GRADIENTS = {
    "negative": lambda g, x, out: -g,
    "positive": lambda g, x, out: g,
    "abs": lambda g, x, out: g * np.sign(x),
    "exp": lambda g, x, out: g * out,
    "log": lambda g, x, out: g / x,
    "log1p": lambda g, x, out: g / (1 + x),
    "expm1": lambda g, x, out: g * (out + 1),
    "sqrt": lambda g, x, out: g / (2 * out),
    "square": lambda g, x, out: 2 * x * g,
    "sin": lambda g, x, out: g * np.cos(x),
    "cos": lambda g, x, out: -g * np.sin(x),
    "tan": lambda g, x, out: g * (1 + out * out),
    "tanh": lambda g, x, out: g * (1 - out * out),
    "arcsin": lambda g, x, out: g / np.sqrt(1 - x * x),
    "arccos": lambda g, x, out: -g / np.sqrt(1 - x * x),
    "arctan": lambda g, x, out: g / (1 + x * x),
    "sigmoid": lambda g, x, out: g * out * (1 - out),
    "relu": lambda g, x, out: g * (x > 0),
    "sign": _zero_gradient, "floor": _zero_gradient, "ceil": _zero_gradient,
    "round": _zero_gradient,
}

BINARY_GRADIENTS = {
    "add": lambda g, x, y, out: (g, g),
    "subtract": lambda g, x, y, out: (g, -g),
    "multiply": lambda g, x, y, out: (g * y, g * x),
    "true_divide": lambda g, x, y, out: (g / y, -g * x / (y * y)),
    "power": lambda g, x, y, out: (g * y * np.power(x, y - 1.0),
                                   g * out * np.log(np.where(x > 0, x, 1.0))),
    "maximum": lambda g, x, y, out: (g * (x >= y), g * (x < y)),
    "minimum": lambda g, x, y, out: (g * (x <= y), g * (x > y)),
}


def _clip_gradient(out_grad, inputs, output, a_min=None, a_max=None):
    x = np.asarray(inputs[0])
    inside = np.ones(x.shape, bool)
    if a_min is not None:
        inside &= x >= a_min
    if a_max is not None:
        inside &= x <= a_max
    return [np.asarray(out_grad) * inside]


def _where_gradient(out_grad, inputs, output, **params):
    cond, x, y = inputs
    g = np.asarray(out_grad)
    c = np.asarray(cond, dtype=bool)
    return [None, unbroadcast(np.where(c, g, 0), x), unbroadcast(np.where(c, 0, g), y)]


# ------------------------------------------------------------------------ tables
# name, Numba scalar function, NumPy ufunc giving the dtype rules

UNARY_TABLE = [
    ("negative", ek.negative, np.negative),
    ("positive", ek.positive, np.positive),
    ("abs", ek.absolute, np.absolute),
    ("exp", ek.exp, np.exp),
    ("log", ek.log, np.log),
    ("log1p", ek.log1p, np.log1p),
    ("expm1", ek.expm1, np.expm1),
    ("sqrt", ek.sqrt, np.sqrt),
    ("square", ek.square, np.square),
    ("sin", ek.sin, np.sin),
    ("cos", ek.cos, np.cos),
    ("tan", ek.tan, np.tan),
    ("tanh", ek.tanh, np.tanh),
    ("arcsin", ek.arcsin, np.arcsin),
    ("arccos", ek.arccos, np.arccos),
    ("arctan", ek.arctan, np.arctan),
    ("sign", ek.sign, np.sign),
    ("floor", ek.floor, np.floor),
    ("ceil", ek.ceil, np.ceil),
    ("invert", ek.invert, np.invert),
    ("logical_not", ek.logical_not, np.logical_not),
]

BINARY_TABLE = [
    ("add", ek.add, np.add),
    ("subtract", ek.subtract, np.subtract),
    ("multiply", ek.multiply, np.multiply),
    ("true_divide", ek.true_divide, np.true_divide),
    ("floor_divide", ek.floor_divide, np.floor_divide),
    ("mod", ek.remainder, np.remainder),
    ("maximum", ek.maximum, np.maximum),
    ("minimum", ek.minimum, np.minimum),
    ("equal", ek.equal, np.equal),
    ("not_equal", ek.not_equal, np.not_equal),
    ("less", ek.less, np.less),
    ("less_equal", ek.less_equal, np.less_equal),
    ("greater", ek.greater, np.greater),
    ("greater_equal", ek.greater_equal, np.greater_equal),
    ("bitwise_and", ek.bitwise_and, np.bitwise_and),
    ("bitwise_or", ek.bitwise_or, np.bitwise_or),
    ("bitwise_xor", ek.bitwise_xor, np.bitwise_xor),
]


def _gradient_for(name, table, wrap):
    rule = table.get(name)
    return wrap(rule) if rule is not None else None


def _doc(name, ufunc):
    return f"Element-wise {name}; dtypes and results follow numpy.{ufunc.__name__}."


def register_all() -> None:
    for name, scalar, ufunc in UNARY_TABLE:
        ElementwiseSpec(name, scalar, ufunc, _gradient_for(name, UNARY_GRADIENTS, _unary_gradient),
                        _doc(name, ufunc)).register("unary")
    for name, scalar, ufunc in BINARY_TABLE:
        ElementwiseSpec(name, scalar, ufunc, _gradient_for(name, BINARY_GRADIENTS, _binary_gradient),
                        _doc(name, ufunc)).register("binary")
    PowerSpec("power", ek.power, np.power, _binary_gradient(BINARY_GRADIENTS["power"]),
              _doc("power", np.power)).register("binary")
    UnaryLikeSpec("sigmoid", ek.sigmoid, np.exp, _unary_gradient(UNARY_GRADIENTS["sigmoid"]),
                  "Element-wise 1/(1+exp(-x)); dtypes follow numpy.exp.").register("unary")
    ReluSpec("relu", ek.relu, np.maximum, _unary_gradient(UNARY_GRADIENTS["relu"]),
             "Element-wise maximum(x, 0).").register("unary")
    RoundSpec("round", ek.rint, np.rint, _unary_gradient(UNARY_GRADIENTS["round"]),
              "np.round(x, decimals): half to even; ints keep their dtype.").register("unary")
    ClipSpec("clip", ek.clip, np.maximum, _clip_gradient,
             "clip(x, a_min, a_max); either bound may be None.").register("binary")
    WhereSpec("where", ek.where_select, np.maximum, _where_gradient,
              "where(cond, x, y) with broadcasting.").register("other")
