"""The runs an element-wise plan chooses, and the NumPy-backed 1-D loops they may call.

A plan's run is one of three kinds (``ElementwiseSpec.make_run`` picks it, once per signature):

* flat: the output C-contiguous and written plainly, every array operand C-contiguous with
  the output's size or a single element, no input overlapping the output other than being
  its very same view.  The run converts each operand as the plan said (array: as it is,
  raveled, or cast; scalar: a 1-element array of the computation dtype, kept per value)
  and calls the one 1-D loop the plan chose (serial or ``prange``; array-array,
  array-scalar or scalar-array) -- nothing else;
  (an output that is its first input runs the loop that reads that operand from the output,
  ``serial_in_place``: LLVM does not vectorise a loop whose output may be an input; for loops
  without one, NumPy's loop from ``INPLACE_NUMPY_ELEMENTS`` on);
* ufunc: broadcasting or strided operands of an op whose ufunc is the op itself, no array
  to cast, no overlap but the same view: the ufunc's own call (``ufunc_run``), which drives a
  broadcast 2-3x faster than the buffered nditer below;
* general: the rest (casts, overlapping outputs, ADD_TO): operands cast, overlap copied,
  ``np.nditer`` hands the same loops contiguous buffered chunks.

Transcendental ops call NumPy.  Numba here has no SVML, so its exp/log/sin/... loops are
scalar libm calls, while NumPy 2 ships SIMD loops for them: 3-30x faster per core
(``bench/unary_ufuncs.py``).  For the (op, dtype) pairs in ``NUMPY_UNARY`` the 1-D "loop" is
the ufunc with ``out=`` (sigmoid: four ufuncs in place); NumPy releases the GIL inside, so
engine workers still run in parallel, and a large call is split over the cores by ``parallel.split_run``.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .loops import LoopKernels
from ..dtypes import check_scalar_fits
from ..runtime.fp_status import make_state, reset_state, set_state
from ..runtime.fp_status import report as report_fp_flags
from ..outputs import detach_overlapping, single_output, write_with_req
from ..runtime.parallel import split_run, use_parallel
from ..plans import OpReq

_CHUNK_ELEMENTS = 1 << 13  # nditer buffer: big enough to amortise the kernel call
_CONSTANTS_LIMIT = 64  # converted scalar operands kept per plan and position
_asarray = np.asarray


# ------------------------------------------------------------------ the general driver

def run_loops(loops: LoopKernels, operands: list, out: np.ndarray, name=None) -> None:
    """Fill ``out`` with f(*operands); operands already have the computation dtype. ``name``:
    the ufunc whose FP errors a compiled loop's flags report (None: not reported)."""
    if out.size == 0:
        return
    if out.flags.c_contiguous:
        flags = _run_contiguous(loops, operands, out)
        if flags is not False:
            if flags and name is not None:
                report_fp_flags(flags, name)
            return
    iterator = np.nditer(
        operands + [out],
        flags=["external_loop", "buffered", "zerosize_ok", "grow_inner"],
        op_flags=[["readonly", "contig", "aligned"]] * len(operands)
        + [["writeonly", "contig", "aligned", "no_broadcast"]],
        buffersize=_CHUNK_ELEMENTS,
    )
    flags = 0
    with iterator:
        for chunks in iterator:
            flags |= loops.serial(*chunks) or 0
    if flags and name is not None:
        report_fp_flags(flags, name)


def _run_contiguous(loops, operands, out):
    """The loop's FP flags (None from NumPy's loops), or False: not run (not contiguous)."""
    flat_out = out.reshape(-1)
    size = out.size
    parallel = use_parallel(size)

    def full(x):  # same element order as out: broadcasting only added size-1 axes
        return x.size == size and x.flags.c_contiguous

    if all(full(x) for x in operands):
        kernel = loops.parallel if parallel else loops.serial
        return kernel(*[x.reshape(-1) for x in operands], flat_out)
    if len(operands) == 2:
        x, y = operands
        if full(x) and y.size == 1:
            kernel = loops.parallel_array_scalar if parallel else loops.serial_array_scalar
            return kernel(x.reshape(-1), y.reshape(1), flat_out)
        if x.size == 1 and full(y):
            kernel = loops.parallel_scalar_array if parallel else loops.serial_scalar_array
            return kernel(x.reshape(1), y.reshape(-1), flat_out)
    return False


def as_operand(value, dtype: np.dtype, *, wrap_scalars=False) -> np.ndarray:
    """An input as an array of the computation dtype (scalars become 0-d)."""
    if isinstance(value, np.ndarray):
        return value if value.dtype == dtype else value.astype(dtype)
    if wrap_scalars:
        return np.asarray(value).astype(dtype)  # C-style wrap, as np.where does
    check_scalar_fits(value, dtype)
    return np.asarray(value, dtype=dtype)


def general_run(loops, computation, wrap_scalars, check_operands=None, name=None):
    """The general run: casts, broadcasting, strided outputs, overlap copies, ADD_TO.
    ``name``: the ufunc the loops' FP flags are reported for (None: not reported)."""
    def run(inputs, outputs, req, params):
        out, r = single_output(outputs, req)
        if r is OpReq.NULL:
            return
        operands = [as_operand(v, dt, wrap_scalars=wrap_scalars)
                    for v, dt in zip(inputs, computation)]
        if check_operands is not None:
            check_operands(operands)
        if r is not OpReq.ADD_TO:
            operands = detach_overlapping(operands, [out])
        write_with_req(out, r, lambda target: run_loops(loops, operands, target, name))
    return run


def ufunc_run(ufunc, computation, wrap_scalars, all_arrays=False):
    """The run of a signature that broadcasts (or has strided operands) and casts no array:
    ``ufunc(*operands, out=out)``, scalars converted as the general run does. Only
    for an op whose ufunc is the op itself, so that NumPy's loop is the op's own.
    ``all_arrays``: two operands, both arrays of their computation dtype, passed as they are
    (``e / e.sum(axis=1, keepdims=True)``: no conversion). ``out`` by keyword: NumPy 2.4
    deprecates a third positional argument of maximum and minimum."""
    if all_arrays and len(computation) == 2:
        def run_arrays(inputs, outputs, req, params):
            ufunc(inputs[0], inputs[1], out=outputs[0])
        return run_arrays

    def run(inputs, outputs, req, params):
        operands = [as_operand(v, dt, wrap_scalars=wrap_scalars)
                    for v, dt in zip(inputs, computation)]
        ufunc(*operands, out=outputs[0])
    return run


def nothing_run(inputs, outputs, req, params):
    """An empty output, or nothing asked: there is nothing to compute."""


# ------------------------------------------------------------------ the flat runs

def _ravel(array):
    return array.reshape(-1)


def array_converter(dtype, cast: bool, ravel: bool):
    """The flat run's conversion of one array operand (None: passed as it is)."""
    if cast:
        return lambda array: array.astype(dtype).reshape(-1)  # a C-contiguous copy
    return _ravel if ravel else None


def scalar_converter(dtype, wrap: bool):
    """The flat run's conversion of one scalar operand: a 1-element array of ``dtype``,
    converted as ``as_operand`` does (the plan's check already refused what NumPy refuses)
    and kept per value (never for 0.0 / -0.0, which compare equal but differ)."""
    constants = {}

    def convert(value):
        operand = constants.get(value)
        if operand is None:
            if wrap:
                operand = _asarray(value).astype(dtype).reshape(1)
            else:
                operand = _asarray(value, dtype=dtype).reshape(1)
            if value and len(constants) < _CONSTANTS_LIMIT:  # (left writeable: Numba
                constants[value] = operand  # compiles a loop of its own for read-only arrays)
        return operand
    convert.constants = constants  # flat_run looks a kept value up itself, without the call
    return convert


def flat_run(slot, converters, ravel_out: bool, name=None):
    """The flat run: convert the operands as planned, call the one loop planned (``slot[0]``:
    a one-item list, so that a deferred loop can put its compiled loop there). A compiled
    loop returns its FP flags: reported for the ufunc ``name`` (None: not reported)."""
    if len(converters) == 1:
        (convert,) = converters

        def run(inputs, outputs, req, params):
            x = inputs[0]
            out = outputs[0]
            if convert is not None:
                x = convert(x)
            if ravel_out:
                out = out.reshape(-1)
            flags = slot[0](x, out)
            if flags and name is not None:
                report_fp_flags(flags, name)
    elif len(converters) == 2 and converters[0] is None \
            and getattr(converters[1], "constants", None) is not None and not ravel_out:
        # an array and a scalar (x + 1, x * 0.5), spelled out: the scalar's 1-element array
        # looked up where it was kept, the converter called only for a new value
        convert_y = converters[1]
        constants = convert_y.constants

        def run(inputs, outputs, req, params):
            x, y = inputs
            operand = constants.get(y)
            flags = slot[0](x, convert_y(y) if operand is None else operand, outputs[0])
            if flags and name is not None:
                report_fp_flags(flags, name)
    elif len(converters) == 2:
        convert_x, convert_y = converters

        def run(inputs, outputs, req, params):
            x, y = inputs
            out = outputs[0]
            if convert_x is not None:
                x = convert_x(x)
            if convert_y is not None:
                y = convert_y(y)
            if ravel_out:
                out = out.reshape(-1)
            flags = slot[0](x, y, out)
            if flags and name is not None:
                report_fp_flags(flags, name)
    else:
        def run(inputs, outputs, req, params):
            out = outputs[0]
            if ravel_out:
                out = out.reshape(-1)
            flags = slot[0](*[v if c is None else c(v) for c, v in zip(converters, inputs)], out)
            if flags and name is not None:
                report_fp_flags(flags, name)
    return run


# ------------------------------------------------------- loops that call NumPy

def numpy_loops(fn: Callable, arity: int = 1) -> LoopKernels:
    """1-D loops that run ``fn(*inputs, out=out)`` (split over the cores in parallel), under
    the op's NumPy error state (fp_status.py: NumPy's own loops report as NumPy does).
    Binary: the one-element operand of the array-scalar loops is handed to NumPy as a scalar,
    so that NumPy runs its scalar loop even for a one-element output (its loops differ: float
    fmin(0.0, -0.0) is -0.0 with a scalar -0.0, 0.0 with a one-element array)."""
    def serial(*args):
        fn(*args[:-1], out=args[-1])

    def parallel(*args):
        split_run(serial, args)

    if arity != 2:
        return LoopKernels(serial, parallel, serial_in_place=serial)  # NumPy copes with out=x

    def serial_array_scalar(x, y, out):
        fn(x, y[0], out=out)

    def serial_scalar_array(x, y, out):
        fn(x[0], y, out=out)

    def parallel_array_scalar(x, y, out):
        b = y[0]
        split_run(lambda xs, outs: fn(xs, b, out=outs), (x, out))

    def parallel_scalar_array(x, y, out):
        a = x[0]
        split_run(lambda ys, outs: fn(a, ys, out=outs), (y, out))

    return LoopKernels(serial, parallel, serial_array_scalar, parallel_array_scalar,
                       serial_scalar_array, parallel_scalar_array, serial, serial_array_scalar)


def numpy_typed_loops(fn: Callable, dtypes, fallback: LoopKernels,
                      arity: int = 1) -> LoopKernels:
    """1-D loops for any dtype: ``fn`` (``numpy_loops``) when every operand and the output
    have one dtype and it is in ``dtypes``, the ``fallback`` (Numba) loops otherwise."""
    dtypes = frozenset(np.dtype(d) for d in dtypes)
    numpy = numpy_loops(fn, arity)

    def chooser(field):
        numpy_loop, numba_loop = getattr(numpy, field), getattr(fallback, field)
        if numba_loop is None:
            return None

        def loop(*args):
            dtype = args[-1].dtype
            if dtype in dtypes and all(a.dtype == dtype for a in args[:-1]):
                numpy_loop(*args)
            else:
                numba_loop(*args)
        return loop

    return LoopKernels(*(chooser(field) for field in LoopKernels._fields))


def numpy_unary_loops(fn: Callable, dtypes, fallback: LoopKernels) -> LoopKernels:
    """``numpy_typed_loops`` of a unary op."""
    return numpy_typed_loops(fn, dtypes, fallback, 1)


_QUIET = make_state(all="ignore")


def _sigmoid_loop(x, out):
    """1 / (1 + exp(-x)) in x's dtype, the Numba scalar's steps in the same order. Not a
    NumPy ufunc: like SciPy's expit it reports no FP error (exp's overflow is its answer)."""
    one = out.dtype.type(1)
    token = set_state(_QUIET)
    try:
        np.negative(x, out=out)
        np.exp(out, out=out)
        np.add(one, out, out=out)
        np.divide(one, out, out=out)
    finally:
        reset_state(token)


F32_F64 = (np.dtype(np.float32), np.dtype(np.float64))

# op -> (NumPy 1-D loop, called as f(x, out=out); the dtypes it runs for): where NumPy's
# loop beats our Numba loop per core (bench/unary_ufuncs.py, 4M elements, Numba / NumPy):
# float32: exp 4x, log 7x, log1p 25x, expm1 30x, sin 14x, cos 10x, tan 30x, tanh 40x,
# arcsin/arccos 20x, arctan 30x, sigmoid 3x; float64: 4-11x, sigmoid 3x (sin/cos float64
# are a tie, and NumPy's results are NumPy's bit for bit).  The same way at 2M elements:
# float32 log2 10x, log10 19x, exp2 7x, cbrt 26x, sinh 32x, cosh 15x, arcsinh 19x,
# arccosh 21x, arctanh 36x; float64 3-12x.  sqrt, relu, square, abs, negative, fabs, trunc,
# rint, deg2rad, float reciprocal, the predicates: Numba is as fast or faster.  Integer
# reciprocal is NumPy's ``(type)(1.0 / x)``, whose 1 / 0 is whatever the platform's
# conversion of inf gives: only NumPy's own loop matches it.  Ops that the tables give no
# Numba scalar run NumPy's loop for every dtype.
NUMPY_UNARY = {
    **{name: (getattr(np, name), F32_F64)
       for name in ("exp", "log", "log1p", "expm1", "sin", "cos", "tan", "tanh", "arcsin",
                    "arccos", "arctan", "log2", "log10", "exp2", "cbrt", "sinh", "cosh",
                    "arcsinh", "arccosh", "arctanh")},
    "sigmoid": (lambda x, out: _sigmoid_loop(x, out), F32_F64),
    "reciprocal": (np.reciprocal, tuple(np.dtype(c) for c in "bBhHiIlLqQ")),
}

# the same for binary ops, f(x, y, out=out): arctan2 (float32 34x, float64 8x); logaddexp,
# logaddexp2 and nextafter are a tie (NumPy's are NumPy's bit for bit); float_power is
# NumPy's pow, as power's float loops are (power_clip); float fmax and fmin:
# which of 0.0 and -0.0 (or of two NaNs) NumPy's loop returns depends on the element's
# position (SIMD body or scalar tail), so only NumPy's loop gives NumPy's bits (chunks of a
# split call start at multiples of 1024 elements, where NumPy's SIMD body starts too)
NUMPY_BINARY = {
    **{name: (getattr(np, name), F32_F64)
       for name in ("arctan2", "logaddexp", "logaddexp2", "nextafter", "fmax", "fmin")},
    "float_power": (np.float_power, (np.dtype(np.float64),)),
}
