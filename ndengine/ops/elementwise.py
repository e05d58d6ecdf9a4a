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

Per-call overhead.  Tiny arrays make the fixed Python cost dominate, so infer
and the kernel first try a lean path driven by a per-op cache of "plans"
keyed by the input signature (array dtype, or Python scalar type): a plan
holds the computation dtypes, the output dtype, the int range a weak Python
int must fit, the 1-D loops and a few constant operands already converted.
The lean kernel path runs only when every step of the full path above would
have been a no-op or exactly the same call: output C-contiguous, array
inputs C-contiguous with the output's size, no overlap other than the very
same array object, req WRITE_TO / WRITE_INPLACE and no params.  Anything
else (and every error) goes through the full path, unchanged.

Transcendental ops call NumPy.  Numba here has no SVML, so its exp/log/sin/...
loops are scalar libm calls, while NumPy 2 ships SIMD loops for them: 3-30x
faster per core (``bench/unary_ufuncs.py``).  We do not hand-write what NumPy
already does well: for the (op, dtype) pairs in ``NUMPY_UNARY`` the 1-D "loop"
is the ufunc with ``out=`` (sigmoid: four ufuncs in place), floating-point
errors ignored as in the Numba loops; NumPy releases the GIL inside, so engine
workers still run in parallel, and a large call is split over the cores by
``parallel.split_run``.  Every path above (lean, contiguous, nditer chunks) uses
it.  Numba keeps the rest, where it is as fast or faster (arithmetic,
comparisons, sqrt, relu).  Float power is NumPy's np.power too (its SIMD pow is
10-40x faster, and its loop's shortcuts for a scalar exponent 2, 0.5, -1, 1, 0
decide the last bit): ``numpy_power_loops``.

``dtype=`` (NumPy's ufunc argument) is the op parameter ``dtype``: the loop
NumPy picks for that output dtype, inputs cast to it (``resolve_like``).
"""
from __future__ import annotations

import functools
import math
import operator
from dataclasses import dataclass
from typing import Callable

import numpy as np
from numpy._core import umath as _umath  # the clip ufunc behind np.clip

from . import elementwise_kernels as ek
from .caching import cached_property
from .dtypes import (_DTYPE_LOOKUP, check_dtype, check_scalar_fits, int_bounds, is_array_spec,
                     promotion_operand, result_type)
from .outputs import detach_overlapping, single_output, write_with_req
from .parallel import PARALLEL_MIN_SIZE, parallel_enabled, split_run, use_parallel
from .registry import Operator, OpReq, add_operator
from .shapes import TRUSTED_SPEC_TYPES as _TRUSTED, broadcast_shapes, shape_of, spec_dtype_shape

_ndarray = np.ndarray


def _lean_operand(plan, index, value, kind, size, out):
    """Operand ``index`` ready for the 1-D loop over ``out`` (cast to the computation dtype),
    or None when only the full path can handle it (wrong size or layout, overlap)."""
    if kind is _ndarray:
        if value.size != size or not value.flags.c_contiguous:
            return None
        if plan.cast[index]:
            return value.astype(plan.computation[index])
        if value is not out and _may_share_memory(value, out):
            return None
        return value
    return _scalar_operand(plan, index, value)


try:  # the C function behind np.may_share_memory, without its dispatch layer: half the cost
    from numpy._core._multiarray_umath import may_share_memory as _may_share_memory
except ImportError:  # pragma: no cover - another NumPy layout
    _may_share_memory = np.may_share_memory
_asarray = np.asarray
_WRITE_TO = OpReq.WRITE_TO
_WRITE_INPLACE = OpReq.WRITE_INPLACE
_SCALAR_TYPES = frozenset((bool, int, float))
_CONSTANTS_LIMIT = 64  # converted scalar operands kept per plan and position

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


# ------------------------------------------------------- loops that call NumPy

try:  # what np.errstate(all="ignore") sets, without rebuilding it on every call
    from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj
    _IGNORE_FP_ERRORS = _make_extobj(all="ignore")
except Exception:  # noqa: BLE001 - private NumPy API: fall back to the public one
    _extobj_contextvar = None


def quiet(fn: Callable) -> Callable:
    """``fn(x, out)`` as ``fn(x, out=out)`` with NumPy floating-point errors ignored (as our
    Numba loops ignore them), whatever np.seterr / np.errstate the calling thread has."""
    if _extobj_contextvar is None:
        return np.errstate(all="ignore")(lambda x, out: fn(x, out=out))
    set_state, reset_state, ignore = (_extobj_contextvar.set, _extobj_contextvar.reset,
                                      _IGNORE_FP_ERRORS)

    def quietly(x, out):
        token = set_state(ignore)
        try:
            fn(x, out=out)
        finally:
            reset_state(token)
    return quietly


def numpy_unary_loops(fn: Callable, dtypes, fallback: ek.LoopKernels) -> ek.LoopKernels:
    """Unary 1-D loops that run ``fn(x, out=out)`` (a ufunc, or NumPy calls) when ``x`` and
    ``out`` both have a dtype in ``dtypes``, and the ``fallback`` (Numba) loops otherwise."""
    dtypes = frozenset(np.dtype(d) for d in dtypes)
    run = quiet(fn)
    numba_serial, numba_parallel = fallback.serial, fallback.parallel

    def serial(x, out):  # run() inlined: this is paid on every tiny op
        dtype = out.dtype
        if dtype in dtypes and x.dtype == dtype:
            if _extobj_contextvar is None:
                run(x, out)
                return
            token = _extobj_contextvar.set(_IGNORE_FP_ERRORS)
            try:
                fn(x, out=out)
            finally:
                _extobj_contextvar.reset(token)
        else:
            numba_serial(x, out)

    def parallel(x, out):
        dtype = out.dtype
        if dtype in dtypes and x.dtype == dtype:
            split_run(run, (x, out))
        else:
            numba_parallel(x, out)

    return ek.LoopKernels(serial, parallel)


def _quiet_call(fn, *args, out):
    """``fn(*args, out=out)`` with NumPy floating-point errors ignored (see ``quiet``)."""
    if _extobj_contextvar is None:
        with np.errstate(all="ignore"):
            fn(*args, out=out)
        return
    token = _extobj_contextvar.set(_IGNORE_FP_ERRORS)
    try:
        fn(*args, out=out)
    finally:
        _extobj_contextvar.reset(token)


def _ones(x, out):
    out.fill(1)  # x ** 0 is 1 for every float, NaN included


# NumPy's float power loop, for an exponent that is the same for the whole loop (a
# scalar): the exact unary operation instead of pow (numpy/_core/src/umath/
# loops_umath_fp.dispatch.c.src).  All are correctly rounded, so these are bit-identical.
# A str names the op whose loops run it (our square is x * x, as NumPy's).
_POWER_FAST_EXPONENTS = {2.0: "square", 0.5: "sqrt", -1.0: np.reciprocal, 1.0: "positive",
                         0.0: _ones}


def numpy_power_loops(fallback: ek.LoopKernels) -> ek.LoopKernels:
    """power's 1-D loops: for float32/float64, NumPy's np.power (its SIMD pow; for a scalar
    exponent 2, 0.5, -1, 1 or 0, the unary operation NumPy's loop uses), so results are
    NumPy's bit for bit; integers keep the ``fallback`` (Numba) loops."""
    floats = frozenset(np.dtype(d) for d in _F32_F64)
    power = np.power

    def is_float(x, y, out):
        dtype = out.dtype
        return dtype in floats and x.dtype == dtype and y.dtype == dtype

    def power_pair(x, y, out):
        _quiet_call(power, x, y, out=out)

    def serial(x, y, out):
        if is_float(x, y, out):
            _quiet_call(power, x, y, out=out)
        else:
            fallback.serial(x, y, out)

    def parallel(x, y, out):
        if is_float(x, y, out):
            split_run(power_pair, (x, y, out))
        else:
            fallback.parallel(x, y, out)

    def array_scalar(parallel_run):
        numba_loop = (fallback.parallel_array_scalar if parallel_run
                      else fallback.serial_array_scalar)

        def loop(x, y, out):
            if not is_float(x, y, out):
                numba_loop(x, y, out)
                return
            unary = _POWER_FAST_EXPONENTS.get(float(y[0]))
            if type(unary) is str:
                loops = _SPECS[unary].loops
                (loops.parallel if parallel_run else loops.serial)(x, out)
                return
            if unary is not None:
                def run(xs, outs):
                    _quiet_call(unary, xs, out=outs)
            else:
                def run(xs, outs):
                    _quiet_call(power, xs, y, out=outs)
            if parallel_run:
                split_run(run, (x, out))
            else:
                run(x, out)
        return loop

    def scalar_array(parallel_run):
        numba_loop = (fallback.parallel_scalar_array if parallel_run
                      else fallback.serial_scalar_array)

        def loop(x, y, out):
            if not is_float(x, y, out):
                numba_loop(x, y, out)
            elif parallel_run:
                split_run(lambda ys, outs: _quiet_call(power, x, ys, out=outs), (y, out))
            else:
                _quiet_call(power, x, y, out=out)
        return loop

    return ek.LoopKernels(serial, parallel, array_scalar(False), array_scalar(True),
                          scalar_array(False), scalar_array(True))


def _sigmoid_loop(x, out):
    """1 / (1 + exp(-x)) in x's dtype, the Numba scalar's steps in the same order."""
    one = out.dtype.type(1)
    np.negative(x, out=out)
    np.exp(out, out=out)
    np.add(one, out, out=out)
    np.divide(one, out, out=out)


_F32_F64 = (np.float32, np.float64)

# op -> (NumPy 1-D loop, called as f(x, out=out); the dtypes it runs for): where NumPy's
# loop beats our Numba loop per core (bench/unary_ufuncs.py, 4M elements, Numba / NumPy):
# float32: exp 4x, log 7x, log1p 25x, expm1 30x, sin 14x, cos 10x, tan 30x, tanh 40x,
# arcsin/arccos 20x, arctan 30x, sigmoid 3x; float64: 4-11x, sigmoid 3x, but sin/cos ~1x
# (NumPy's float64 sin/cos are libm loops too), so those stay with Numba.  sqrt, relu,
# square, abs, negative: Numba is as fast or faster.
NUMPY_UNARY = {
    # sin/cos float64 too: a tie on this machine, and results equal NumPy's bit for bit
    **{name: (getattr(np, name), _F32_F64)
       for name in ("exp", "log", "log1p", "expm1", "sin", "cos", "tan", "tanh", "arcsin",
                    "arccos", "arctan")},
    "sigmoid": (_sigmoid_loop, _F32_F64),
}


# -------------------------------------------------------------- dtype resolution

@functools.lru_cache(maxsize=4096)
def _resolve_with_ufunc(ufunc: np.ufunc, operands: tuple) -> tuple:
    return ufunc.resolve_dtypes(operands + (None,) * ufunc.nout)


@functools.lru_cache(maxsize=1024)
def _resolve_with_signature(ufunc: np.ufunc, operands: tuple, dtype: np.dtype) -> tuple:
    # ufunc(..., dtype=dtype): the output DType is fixed, the inputs cast to the loop
    # found for it (NumPy's same_kind check on the inputs, NumPy's error)
    return ufunc.resolve_dtypes(operands + (None,) * ufunc.nout,
                                signature=(None,) * ufunc.nin + (dtype,) * ufunc.nout,
                                casting="same_kind")


def resolve_like(ufunc: np.ufunc, name: str, inputs, dtype=None) -> tuple[list, np.dtype]:
    """(computation dtype per input, output dtype) exactly as ``ufunc`` would choose
    (``dtype``: as ``ufunc(..., dtype=dtype)`` would)."""
    operands = tuple(promotion_operand(v) for v in inputs)
    if dtype is not None:
        resolved = _resolve_with_signature(ufunc, operands, check_dtype(dtype))
        return [check_dtype(d) for d in resolved[:ufunc.nin]], check_dtype(resolved[-1])
    try:
        resolved = _resolve_with_ufunc(ufunc, operands)
    except TypeError:
        shown = ", ".join(getattr(o, "__name__", str(o)) for o in operands)
        raise TypeError(f"{name} is not supported for input types ({shown})") from None
    return [check_dtype(d) for d in resolved[:ufunc.nin]], check_dtype(resolved[-1])


# ---------------------------------------------------------------- op definition

_SPECS: dict = {}  # name -> ElementwiseSpec, filled by register()


def spec(name: str) -> "ElementwiseSpec":
    """The ElementwiseSpec behind a registered element-wise op (benchmarks, tests)."""
    return _SPECS[name]


class _Plan:
    """One input signature of one op: what infer and the lean kernel path reuse.

    ``key`` holds, per input, its dtype (arrays) or its Python type (weak scalars).
    """
    __slots__ = ("computation", "out_dtype", "cast", "no_cast", "bounds", "constants",
                 "fast_kernel")

    def __init__(self, key, computation, out_dtype, check_fits, fast_kernel):
        self.computation = tuple(computation)
        self.out_dtype = out_dtype
        # arrays whose dtype is not the computation dtype are cast (astype) first
        self.cast = tuple(isinstance(k, np.dtype) and k != dt
                          for k, dt in zip(key, computation))
        self.no_cast = not any(self.cast)
        # weak Python ints: the range that converts without OverflowError; values
        # outside go to the full path, which raises NumPy's error (or wraps for where)
        self.bounds = tuple(int_bounds(dt) if k is int else None
                            for k, dt in zip(key, computation))
        if not check_fits:
            self.bounds = tuple(None if b is None else int_bounds(np.dtype(np.int64))
                                for b in self.bounds)
        # Python scalar value -> 1-element array of the computation dtype
        self.constants = tuple({} for _ in key)
        self.fast_kernel = fast_kernel


def _fits(value, bounds) -> bool:
    return bounds is None or bounds[0] <= value <= bounds[1]


def _scalar_operand(plan: _Plan, i: int, value):
    """``value`` (a Python scalar) as the 1-element operand the loops take, or None to
    leave it to the full path.  Converted exactly as ``as_operand`` does; kept per plan
    (never for 0.0 / -0.0, which compare equal but differ)."""
    constants = plan.constants[i]
    operand = constants.get(value)
    if operand is None:
        if not _fits(value, plan.bounds[i]):
            return None
        operand = _asarray(value, dtype=plan.computation[i]).reshape(1)
        if value and len(constants) < _CONSTANTS_LIMIT:
            constants[value] = operand
    return operand


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

    @cached_property
    def numba_loops(self) -> ek.LoopKernels:
        factory = {1: ek.unary_kernels, 2: ek.binary_kernels, 3: ek.ternary_kernels}[self.arity]
        return factory(self.scalar)

    @cached_property
    def loops(self) -> ek.LoopKernels:
        """The 1-D loops every kernel path runs: NumPy's where it is faster, else Numba's."""
        numpy_loop = NUMPY_UNARY.get(self.name) if self.arity == 1 else None
        if numpy_loop is None:
            return self.numba_loops
        return numpy_unary_loops(*numpy_loop, self.numba_loops)

    def resolve(self, inputs, params):
        # params["dtype"]: NumPy's ``dtype=`` ufunc argument (the output dtype)
        return resolve_like(self.ufunc, self.name, inputs, params.get("dtype") if params else None)

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
        return self.fast_kernel(inputs, outputs, req, **params)

    def full_kernel(self, inputs, outputs, req, **params):
        """The general path: casts, broadcasting, strided outputs, overlap copies, ADD_TO."""
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

    # ------------------------------------------------ per-signature plans

    @cached_property
    def plans(self) -> dict:
        return {}

    def kernel_is_lean(self, computation) -> bool:
        """False when the kernel must see the operands first (check_operands)."""
        return True

    def new_plan(self, key, inputs):
        """Resolve ``inputs`` (whose signature is ``key``) once; None if they are refused."""
        for k in key:  # every array dtype must be supported (infer's full path checks all)
            if isinstance(k, np.dtype) and _DTYPE_LOOKUP.get(k) is None:
                return None
        try:
            computation, out_dtype = self.resolve(inputs, {})
        except Exception:  # noqa: BLE001 - the full path raises it properly
            return None
        plan = _Plan(key, computation, out_dtype, not self.wrap_scalars,
                     self.kernel_is_lean(computation))
        self.plans[key] = plan
        return plan

    # ------------------------------------------------ lean infer

    def fast_infer_unary(self, inputs, params):
        if params or len(inputs) != 1:
            return None
        x = inputs[0]
        if type(x) in _TRUSTED or type(x) is _ndarray:
            key = (x.dtype,)
            shape = x.shape
        else:
            parts = spec_dtype_shape(x)
            if parts is None:
                return None
            key = (parts[0],)
            shape = parts[1]
        plan = self.plans.get(key) or self.new_plan(key, inputs)
        if plan is None:
            return None
        return [(shape, plan.out_dtype)]

    def fast_infer_binary(self, inputs, params):
        if params or len(inputs) != 2:
            return None
        x, y = inputs
        # The array and scalar cases are tested inline, not through a helper: this runs on
        # every tiny op, and a call costs as much as the test.
        tx = type(x)
        if tx in _TRUSTED or tx is _ndarray:
            kx, sx = x.dtype, x.shape
        elif tx in _SCALAR_TYPES:
            kx, sx = tx, None
        else:
            parts = spec_dtype_shape(x)
            if parts is None:
                return None
            kx, sx = parts
        ty = type(y)
        if ty in _TRUSTED or ty is _ndarray:
            ky, sy = y.dtype, y.shape
        elif ty in _SCALAR_TYPES:
            ky, sy = ty, None
        else:
            parts = spec_dtype_shape(y)
            if parts is None:
                return None
            ky, sy = parts
        key = (kx, ky)
        plan = self.plans.get(key) or self.new_plan(key, inputs)
        if plan is None:
            return None
        if sx is None:
            if sy is None or not _fits(x, plan.bounds[0]):
                return None  # scalar-only ops and out-of-range ints: full path
            shape = sy
        elif sy is None:
            bounds = plan.bounds[1]  # _fits(y, bounds), inline
            if bounds is not None and not bounds[0] <= y <= bounds[1]:
                return None
            shape = sx
        elif sx == sy:
            shape = sx
        else:
            return None  # broadcasting
        return [(shape, plan.out_dtype)]

    def fast_infer_nary(self, inputs, params):
        if params or len(inputs) != self.arity:
            return None
        key = []
        shape = None
        for value in inputs:
            parts = spec_dtype_shape(value)
            if parts is None:
                return None  # scalars too: they would need broadcasting anyway
            if shape is None:
                shape = parts[1]
            elif parts[1] != shape:
                return None
            key.append(parts[0])
        key = tuple(key)
        plan = self.plans.get(key) or self.new_plan(key, inputs)
        if plan is None:
            return None
        return [(shape, plan.out_dtype)]

    # ------------------------------------------------ lean kernels

    def fast_kernel_unary(self, inputs, outputs, req, **params):
        if not params and len(inputs) == 1 and len(outputs) == 1 and len(req) == 1:
            r = req[0]
            out = outputs[0]
            x = inputs[0]
            if ((r is _WRITE_TO or r is _WRITE_INPLACE) and type(out) is _ndarray
                    and type(x) is _ndarray):
                key = (x.dtype,)
                plan = self.plans.get(key) or self.new_plan(key, inputs)
                size = out.size
                if (plan is not None and plan.fast_kernel and x.size == size
                        and out.flags.c_contiguous and x.flags.c_contiguous):
                    if plan.cast[0]:
                        x = x.astype(plan.computation[0])
                    elif x is not out and _may_share_memory(x, out):
                        x = None  # overlap: the full path copies what it must
                    if x is not None:
                        if size:
                            if out.ndim != 1:
                                out = out.reshape(-1)
                                x = x.reshape(-1)
                            elif x.ndim != 1:
                                x = x.reshape(-1)
                            loops = self.loops
                            if size >= PARALLEL_MIN_SIZE and parallel_enabled():
                                loops.parallel(x, out)
                            else:
                                loops.serial(x, out)
                        return
        self.full_kernel(inputs, outputs, req, **params)

    def fast_kernel_binary(self, inputs, outputs, req, **params):
        # The commonest cases (array op array, array op Python scalar and scalar op array, no
        # casts) are spelled out inline: every line here is paid on every tiny op.
        if not params and len(inputs) == 2 and len(outputs) == 1 and len(req) == 1:
            r = req[0]
            out = outputs[0]
            if ((r is _WRITE_TO or r is _WRITE_INPLACE) and type(out) is _ndarray
                    and out.flags.c_contiguous):
                x, y = inputs
                tx = type(x)
                ty = type(y)
                if tx is _ndarray:
                    if ty is _ndarray:
                        key = (x.dtype, y.dtype)
                    elif ty in _SCALAR_TYPES:
                        key = (x.dtype, ty)
                    else:
                        key = None
                elif ty is _ndarray and tx in _SCALAR_TYPES:
                    key = (tx, y.dtype)
                else:
                    key = None
                if key is not None:
                    plan = self.plans.get(key) or self.new_plan(key, inputs)
                    if plan is not None and plan.fast_kernel:
                        if plan.no_cast and self._direct_binary(plan, x, tx, y, ty, out):
                            return
                        if self._lean_binary(plan, x, tx, y, ty, out):
                            return
        self.full_kernel(inputs, outputs, req, **params)

    def _direct_binary(self, plan, x, tx, y, ty, out) -> bool:
        """No casts, every array C-contiguous with out's size and either out itself or not
        overlapping it: run the loop; else False (for _lean_binary)."""
        size = out.size
        if tx is ty:  # two arrays
            if (x.size != size or y.size != size or not x.flags.c_contiguous
                    or not y.flags.c_contiguous
                    or (x is not out and _may_share_memory(x, out))
                    or (y is not out and _may_share_memory(y, out))):
                return False
            if size:
                if out.ndim != 1:
                    out = out.reshape(-1)
                    x = x.reshape(-1)
                    y = y.reshape(-1)
                elif x.ndim != 1 or y.ndim != 1:
                    x = x.reshape(-1)
                    y = y.reshape(-1)
                if size >= PARALLEL_MIN_SIZE and parallel_enabled():
                    self.loops.parallel(x, y, out)
                else:
                    self.loops.serial(x, y, out)
            return True
        if tx is _ndarray:  # array op scalar
            array, index, scalar = x, 1, y
        else:
            array, index, scalar = y, 0, x
        if (size <= 1 or array.size != size or not array.flags.c_contiguous
                or (array is not out and _may_share_memory(array, out))):
            return False
        operand = plan.constants[index].get(scalar)  # cached: no call
        if operand is None:
            operand = _scalar_operand(plan, index, scalar)
            if operand is None:
                return False
        if out.ndim != 1:
            out = out.reshape(-1)
            array = array.reshape(-1)
        elif array.ndim != 1:
            array = array.reshape(-1)
        loops = self.loops
        if size >= PARALLEL_MIN_SIZE and parallel_enabled():
            if index:
                loops.parallel_array_scalar(array, operand, out)
            else:
                loops.parallel_scalar_array(operand, array, out)
        elif index:
            loops.serial_array_scalar(array, operand, out)
        else:
            loops.serial_scalar_array(operand, array, out)
        return True

    def _lean_binary(self, plan, x, tx, y, ty, out) -> bool:
        """Run the 1-D loop on a C-contiguous ``out``; False if the full path must run."""
        size = out.size
        x = _lean_operand(plan, 0, x, tx, size, out)
        if x is None:
            return False
        y = _lean_operand(plan, 1, y, ty, size, out)
        if y is None:
            return False
        if not size:
            return True
        if out.ndim != 1:
            out = out.reshape(-1)
        if tx is _ndarray and x.ndim != 1:
            x = x.reshape(-1)
        if ty is _ndarray and y.ndim != 1:
            y = y.reshape(-1)
        loops = self.loops
        parallel = size >= PARALLEL_MIN_SIZE and parallel_enabled()
        if size == 1 or (tx is _ndarray and ty is _ndarray):
            (loops.parallel if parallel else loops.serial)(x, y, out)
        elif ty is not _ndarray:
            (loops.parallel_array_scalar if parallel else loops.serial_array_scalar)(x, y, out)
        else:
            (loops.parallel_scalar_array if parallel else loops.serial_scalar_array)(x, y, out)
        return True

    def fast_kernel_nary(self, inputs, outputs, req, **params):
        if (not params and len(inputs) == self.arity and len(outputs) == 1
                and len(req) == 1):
            r = req[0]
            out = outputs[0]
            if ((r is _WRITE_TO or r is _WRITE_INPLACE) and type(out) is _ndarray
                    and out.flags.c_contiguous):
                operands = self._lean_operands(inputs, out)
                if operands is not None:
                    size = out.size
                    if size:
                        if out.ndim != 1:
                            out = out.reshape(-1)
                        operands = [v if v.ndim == 1 else v.reshape(-1) for v in operands]
                        loops = self.loops
                        if size >= PARALLEL_MIN_SIZE and parallel_enabled():
                            loops.parallel(*operands, out)
                        else:
                            loops.serial(*operands, out)
                    return
        self.full_kernel(inputs, outputs, req, **params)

    def fast_kernel_ternary(self, inputs, outputs, req, **params):
        # fast_kernel_nary spelled out for three inputs (where)
        if not params and len(inputs) == 3 and len(outputs) == 1 and len(req) == 1:
            r = req[0]
            out = outputs[0]
            c, x, y = inputs
            if ((r is _WRITE_TO or r is _WRITE_INPLACE) and type(out) is _ndarray
                    and type(c) is _ndarray and type(x) is _ndarray and type(y) is _ndarray
                    and out.flags.c_contiguous):
                key = (c.dtype, x.dtype, y.dtype)
                plan = self.plans.get(key) or self.new_plan(key, inputs)
                size = out.size
                if (plan is not None and plan.fast_kernel and plan.no_cast
                        and c.size == size and x.size == size and y.size == size
                        and c.flags.c_contiguous and x.flags.c_contiguous
                        and y.flags.c_contiguous
                        and (c is out or not _may_share_memory(c, out))
                        and (x is out or not _may_share_memory(x, out))
                        and (y is out or not _may_share_memory(y, out))):
                    if size:
                        if out.ndim != 1 or c.ndim != 1 or x.ndim != 1 or y.ndim != 1:
                            out, c, x, y = (out.reshape(-1), c.reshape(-1), x.reshape(-1),
                                            y.reshape(-1))
                        if size >= PARALLEL_MIN_SIZE and parallel_enabled():
                            self.loops.parallel(c, x, y, out)
                        else:
                            self.loops.serial(c, x, y, out)
                    return
        self.fast_kernel_nary(inputs, outputs, req, **params)

    def fast_infer_ternary(self, inputs, params):
        if params or len(inputs) != 3:
            return None
        c, x, y = inputs
        if type(c) is _ndarray and type(x) is _ndarray and type(y) is _ndarray:
            shape = c.shape
            if x.shape != shape or y.shape != shape:
                return None
            key = (c.dtype, x.dtype, y.dtype)
            plan = self.plans.get(key) or self.new_plan(key, inputs)
            return None if plan is None else [(shape, plan.out_dtype)]
        return self.fast_infer_nary(inputs, params)

    def _lean_operands(self, inputs, out):
        """All-array inputs of ``out``'s size, cast, overlap-free; else None."""
        for value in inputs:
            if type(value) is not _ndarray:
                return None
        key = tuple(v.dtype for v in inputs)
        plan = self.plans.get(key) or self.new_plan(key, inputs)
        if plan is None or not plan.fast_kernel:
            return None
        size = out.size
        operands = []
        for value, cast, dtype in zip(inputs, plan.cast, plan.computation):
            if value.size != size or not value.flags.c_contiguous:
                return None
            if cast:
                value = value.astype(dtype)
            elif value is not out and _may_share_memory(value, out):
                return None
            operands.append(value)
        return operands

    def register(self, kind: str) -> Operator:
        arity = self.arity
        self.fast_kernel = {1: self.fast_kernel_unary, 2: self.fast_kernel_binary,
                            3: self.fast_kernel_ternary}.get(arity, self.fast_kernel_nary)
        fast_infer = self.fast_infer()
        kernel = self.fast_kernel if type(self).kernel is ElementwiseSpec.kernel else self.kernel
        op = Operator(self.name, num_inputs=arity, kind=kind, infer=self.infer,
                      inplace=tuple((i, 0) for i in range(arity)),
                      gradient=self.gradient, doc=self.doc, fast_infer=fast_infer)
        _SPECS[self.name] = self
        return add_operator(op.set_kernel("cpu", kernel))

    def fast_infer(self):
        """The lean infer for this op (None: always the full path)."""
        if type(self).infer is not ElementwiseSpec.infer:
            return None
        return {1: self.fast_infer_unary, 2: self.fast_infer_binary,
                3: self.fast_infer_ternary}.get(self.arity, self.fast_infer_nary)


class PowerSpec(ElementwiseSpec):
    def infer(self, *inputs, **params):
        results = super().infer(*inputs, **params)
        base, exponent = inputs
        if (results[0][1].kind in "iu" and not is_array_spec(exponent) and exponent < 0
                and math.prod(results[0][0])):  # NumPy raises only when a power is computed
            raise ValueError("Integers to negative integer powers are not allowed.")
        return results

    def kernel_is_lean(self, computation) -> bool:
        return computation[1].kind != "i"  # signed int exponents are checked first

    def fast_infer(self):
        def fast_infer_power(inputs, params):
            results = self.fast_infer_binary(inputs, params)
            if results is not None and results[0][1].kind in "iu":
                exponent = inputs[1]
                if not is_array_spec(exponent) and exponent < 0:
                    return None  # the full path raises
            return results
        return fast_infer_power

    @cached_property
    def loops(self) -> ek.LoopKernels:
        return numpy_power_loops(self.numba_loops)

    def check_operands(self, operands, params):
        exponent = operands[1]
        computed = math.prod(np.broadcast_shapes(*(o.shape for o in operands)))
        if exponent.dtype.kind == "i" and computed and ek.any_negative(exponent.reshape(-1)):
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


class ComparisonSpec(ElementwiseSpec):
    """equal, less, ...: a Python int outside an integer array's range is compared, not refused.

    NumPy 2 gives the mathematically right answer (``uint8_array < 300`` is all True,
    ``int8_array == -1000`` all False) where arithmetic would raise OverflowError.  Such a
    value is beyond every element, so the answer is one constant: ``compare(0, value)``.
    Only an integer *array* partner counts: with bool arrays (an int64 loop) or floats
    NumPy raises what the plain path raises.  Out-of-range ints never reach the lean
    paths (their plans' bounds send them to the full path).
    """
    python_compare: Callable = None  # operator.lt, ...: the same comparison on Python ints

    @staticmethod
    def out_of_range(value, partner) -> bool:
        """``value`` is a Python int outside the integer dtype of the array ``partner``."""
        if type(value) is not int or not is_array_spec(partner):
            return False
        dtype = partner.dtype
        if getattr(dtype, "kind", None) not in ("i", "u"):
            return False
        low, high = int_bounds(np.dtype(dtype))
        return not low <= value <= high

    def constant_result(self, inputs):
        """The all-elements answer when one input is an out-of-range Python int, else None."""
        if len(inputs) != 2:
            return None
        x, y = inputs
        if self.out_of_range(y, x):
            return bool(self.python_compare(0, y))
        if self.out_of_range(x, y):
            return bool(self.python_compare(x, 0))
        return None

    def infer(self, *inputs, **params):
        if self.constant_result(inputs) is None:
            return super().infer(*inputs, **params)
        computation, out_dtype = self.resolve(inputs, params)  # still refuses bad dtypes
        shape = broadcast_shapes(*(shape_of(v) for v in inputs))
        return [(shape, out_dtype)]

    def fast_infer(self):
        return self.fast_infer_binary  # out-of-range ints fail its bounds: full path

    def full_kernel(self, inputs, outputs, req, **params):
        constant = self.constant_result(inputs)
        if constant is None:
            return super().full_kernel(inputs, outputs, req, **params)
        out, req = single_output(outputs, req)
        self.resolve(inputs, params)
        write_with_req(out, req, lambda target: target.fill(constant))


class UnaryLikeSpec(ElementwiseSpec):
    """Ops NumPy lacks as a ufunc: dtypes follow ``ufunc`` applied to (x, *extra)."""
    extra: tuple = ()

    def resolve(self, inputs, params):
        computation, out = resolve_like(self.ufunc, self.name, tuple(inputs) + self.extra,
                                        params.get("dtype") if params else None)
        return computation[:1], out

    @property
    def arity(self):
        return 1


class ReluSpec(UnaryLikeSpec):
    extra = (0,)  # relu(x) == maximum(x, 0) with 0 a weak Python int


def _clip_bound(bound, dtype: np.dtype):
    """A Python/NumPy scalar bound in ``dtype``; out-of-range ints clamp.

    Call ``_check_clip_bounds`` first: it raises where NumPy raises, so the ints left
    out of range are the ones NumPy drops (a_min <= the dtype's lowest, a_max >= its
    highest), for which clamping gives the same result."""
    if dtype.kind in "iu" and isinstance(bound, (int, np.integer)):
        info = np.iinfo(dtype)
        bound = min(max(int(bound), int(info.min)), int(info.max))
    return np.asarray(bound, dtype=dtype)


def _kind_of(x) -> str:
    """The dtype kind NumPy sees for clip's ``x`` (an array spec or a Python scalar)."""
    return np.dtype(x.dtype).kind if is_array_spec(x) else np.asarray(x).dtype.kind


def _check_clip_bounds(x_kind: str, dtype: np.dtype, a_min, a_max) -> None:
    """Raise NumPy 2's OverflowError for a Python int bound it refuses.

    ``x_kind`` is the array's dtype kind, ``dtype`` the computation dtype.  For an
    integer array np.clip drops a Python int a_min <= the dtype's lowest value and
    a_max >= its highest (numpy/_core/_methods.py::_clip); every other Python int bound
    reaches the ufunc, which refuses it if it does not convert to ``dtype``
    (``clip(uint8, 0, -1)``, ``clip(int8, 200, None)``, ``clip(bool, 2**64, None)``,
    ``clip(float32, 10**400, None)``)."""
    kind = dtype.kind
    low, high = int_bounds(dtype)
    for bound, lower in ((a_min, True), (a_max, False)):
        if type(bound) is not int:
            continue
        if kind in "iu":
            if low <= bound <= high or (x_kind in "iu" and (bound <= low if lower else
                                                            bound >= high)):
                continue  # fits, or NumPy drops it (clamping gives the same result)
            check_scalar_fits(bound, dtype)  # raises NumPy's OverflowError
        elif kind == "f":
            float(bound)  # OverflowError: int too large to convert to float


# Python ints that surely convert to a float (float(10**400) raises OverflowError)
_FLOAT_SAFE_INTS = (-2**1023, 2**1023)


def _fits_clip(plan, i, bound) -> bool:
    """A bound the lean infer may pass: not a Python int outside the plan's int range."""
    return type(bound) is not int or _fits(bound, plan.bounds[i])


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
        _check_clip_bounds(_kind_of(x), dtype, a_min, a_max)
        return [(shape_of(x), dtype)]

    # Lean paths: the plan key is (x's dtype, type(a_min), type(a_max)) with Python
    # scalar (or None) bounds only; the plan's computation is (dtype,).

    _BOUND_TYPES = frozenset((bool, int, float, type(None)))

    def _clip_plan(self, x, a_min, a_max):
        ta, tb = type(a_min), type(a_max)
        if ta not in self._BOUND_TYPES or tb not in self._BOUND_TYPES:
            return None
        key = (x.dtype if type(x) is _ndarray else x, ta, tb)
        plan = self.plans.get(key)
        if plan is None:
            try:
                _, dtype = self.resolve([x], dict(a_min=a_min, a_max=a_max))
            except Exception:  # noqa: BLE001 - the full path raises it properly
                return None
            plan = _Plan(key[:1], [dtype], dtype, False, True)
            plan.constants = ({}, {})  # converted a_min, a_max
            # the Python int bounds the lean infer passes (others: the full path, which
            # raises where NumPy does, e.g. for an int too large for a float)
            plan.bounds = (int_bounds(dtype) if dtype.kind in "iu" else
                           _FLOAT_SAFE_INTS if dtype.kind == "f" else None,) * 2
            self.plans[key] = plan
        return plan

    def fast_infer(self):
        def fast_infer_clip(inputs, params):
            if len(inputs) != 1 or (params and not params.keys() <= {"a_min", "a_max"}):
                return None
            parts = spec_dtype_shape(inputs[0])
            if parts is None:
                return None
            a_min, a_max = params.get("a_min"), params.get("a_max")
            plan = self._clip_plan(parts[0], a_min, a_max)
            if plan is None or not (_fits_clip(plan, 0, a_min) and _fits_clip(plan, 1, a_max)):
                return None  # out-of-range int bounds: the full path decides (and raises)
            return [(parts[1], plan.out_dtype)]
        return fast_infer_clip

    def _bound_operand(self, plan, i, bound, x_kind):
        constants = plan.constants[i]
        operand = constants.get(bound)
        if operand is None:
            dtype = plan.out_dtype
            _check_clip_bounds(x_kind, dtype, *((bound, None) if i == 0 else (None, bound)))
            operand = _clip_bound(bound, dtype).reshape(1)
            if bound and len(constants) < _CONSTANTS_LIMIT:  # never 0.0 / -0.0
                constants[bound] = operand
        return operand

    def _lean_clip(self, inputs, outputs, req, a_min, a_max) -> bool:
        """Contiguous, same size, no overlap, WRITE_TO/WRITE_INPLACE: run the loops here."""
        if len(inputs) != 1 or len(outputs) != 1 or len(req) != 1:
            return False
        r = req[0]
        x = inputs[0]
        out = outputs[0]
        if not ((r is _WRITE_TO or r is _WRITE_INPLACE) and type(out) is _ndarray
                and type(x) is _ndarray):
            return False
        plan = self._clip_plan(x, a_min, a_max)
        size = out.size
        if (plan is None or x.size != size or not out.flags.c_contiguous
                or not x.flags.c_contiguous):
            return False
        dtype = plan.out_dtype
        x_kind = x.dtype.kind
        if x.dtype != dtype:
            x = x.astype(dtype)
        elif x is not out and _may_share_memory(x, out):
            return False
        if a_min is not None and a_max is not None and out.dtype != dtype and size != 1:
            return False  # the two-pass form below needs an exact intermediate
        if not size:
            return True
        if out.ndim != 1:
            out = out.reshape(-1)
            x = x.reshape(-1)
        elif x.ndim != 1:
            x = x.reshape(-1)
        parallel = size >= PARALLEL_MIN_SIZE and parallel_enabled()
        if a_min is None and a_max is None:
            loops = self.identity_loops
            (loops.parallel if parallel else loops.serial)(x, out)
            return True
        low = None if a_min is None else self._bound_operand(plan, 0, a_min, x_kind)
        high = None if a_max is None else self._bound_operand(plan, 1, a_max, x_kind)
        if size == 1:  # every operand is "full": the full path's plain loops
            if low is None or high is None:
                loops = self.clip_loops["high" if low is None else "low"]
                loops.serial(x, high if low is None else low, out)
            else:
                self.clip_loops["both"].serial(x, low, high, out)
            return True
        # minimum(maximum(x, low), high) as two array-scalar passes: the same scalar
        # functions in the same order, the intermediate stored exactly in ``out``
        # (out.dtype is the computation dtype), so the result equals the ternary
        # loop's, which the full path could only run through nditer here.
        if low is not None:
            loops = self.clip_loops["low"]
            (loops.parallel_array_scalar if parallel else loops.serial_array_scalar)(x, low, out)
            x = out
        if high is not None:
            loops = self.clip_loops["high"]
            (loops.parallel_array_scalar if parallel else loops.serial_array_scalar)(x, high, out)
        return True

    @cached_property
    def clip_loops(self):
        return {"both": ek.ternary_kernels(ek.clip),
                "low": ek.binary_kernels(ek.maximum),
                "high": ek.binary_kernels(ek.minimum)}

    def kernel(self, inputs, outputs, req, a_min=None, a_max=None):
        if self._lean_clip(inputs, outputs, req, a_min, a_max):
            return
        out, req = single_output(outputs, req)
        if req is OpReq.NULL:
            return
        (dtype,), _ = self.resolve(inputs, dict(a_min=a_min, a_max=a_max))
        _check_clip_bounds(_kind_of(inputs[0]), dtype, a_min, a_max)
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

    @cached_property
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

    @cached_property
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


COMPARISONS = {"equal": operator.eq, "not_equal": operator.ne, "less": operator.lt,
               "less_equal": operator.le, "greater": operator.gt,
               "greater_equal": operator.ge}


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
        compare = COMPARISONS.get(name)
        spec = (ElementwiseSpec if compare is None else ComparisonSpec)(
            name, scalar, ufunc, _gradient_for(name, BINARY_GRADIENTS, _binary_gradient),
            _doc(name, ufunc))
        if compare is not None:
            spec.python_compare = compare
        spec.register("binary")
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
    ElementwiseSpec("clip_arrays", ek.clip, _umath.clip, None,
                    "clip(x, a_min, a_max) with array bounds: numpy's clip ufunc (three "
                    "broadcast inputs, NumPy's dtype rules)").register("other")
    WhereSpec("where", ek.where_select, np.maximum, _where_gradient,
              "where(cond, x, y) with broadcasting.").register("other")
