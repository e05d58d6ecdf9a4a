"""power and clip: element-wise ops with rules of their own.

power: NumPy's np.power for float32/float64 (its SIMD pow, 10-40x faster than Numba's, and
for a scalar exponent 2, 0.5, -1, 1, 0 the unary operation NumPy's loop uses, which decides
the last bit), Numba's loops for integers; an integer to a negative integer power is NumPy's
ValueError (at the call for a scalar exponent, before the loop for an array one).

clip: NumPy's own ufuncs (the clip ufunc for two bounds, maximum or minimum for one), on
bounds converted as NumPy converts them; Python int bounds NumPy refuses raise at every call
(the plan's check), those it drops are clamped (the same result).

clip_arrays (a bound is an array): the clip ufunc has two loops that differ on a tie of
signed zeros. Where both bounds are constant over the whole call (each one element: a
scalar, a 0-d or a size-1 array) it keeps x (``clip(0.0, 0.0, -0.0)`` is 0.0); otherwise
it is maximum's then minimum's, and the bound wins (-0.0). The plan sees which from the
bounds' shapes and runs loops of that rule.
"""
from __future__ import annotations

import math

import numpy as np
from numpy._core import umath as _umath  # the clip ufunc behind np.clip

from .loops import LoopKernels, any_negative
from ..runtime.caching import cached_property
from ..runtime.deferred_loops import bind, deferred_kernels
from ..dtypes import check_scalar_fits, int_bounds, is_array_spec, result_type
from .dtype_rules import computes_in_extended, is_weak_int
from . import scalars
from .operators import ElementwiseSpec, spec
from .runs import general_run, nothing_run, numpy_loops
from ..runtime.fp_status import report as report_fp_flags
from ..outputs import single_output, write_with_req
from ..runtime.parallel import split_run, use_parallel
from ..plans import OpReq, is_c_contiguous
from ..shapes import shape_of

__all__ = ["PowerSpec", "ClipSpec", "ClipArraysSpec", "clip_bounds_are_constant",
           "numpy_power_loops"]

_NEGATIVE_POWER = "Integers to negative integer powers are not allowed."


# ------------------------------------------------------------------------ power

def _ones(x, out):
    out.fill(1)  # x ** 0 is 1 for every float, NaN included


# NumPy's float power loop, for an exponent that is the same for the whole loop (a
# scalar): the exact unary operation instead of pow (numpy/_core/src/umath/
# loops_umath_fp.dispatch.c.src).  All are correctly rounded, so these are bit-identical.
# A str names the op whose loops run it (our square is x * x, as NumPy's).
_POWER_FAST_EXPONENTS = {2.0: "square", 0.5: "sqrt", -1.0: np.reciprocal, 1.0: "positive",
                         0.0: _ones}


def numpy_power_loops(fallback: LoopKernels) -> LoopKernels:
    """power's 1-D loops: for float32/float64, NumPy's np.power (its SIMD pow; for a scalar
    exponent 2, 0.5, -1, 1 or 0, the unary operation NumPy's loop uses), so results are
    NumPy's bit for bit; integers keep the ``fallback`` (Numba) loops."""
    floats = frozenset((np.dtype(np.float32), np.dtype(np.float64)))
    power = np.power
    unary_slots = {}  # (op name, dtype, parallel) -> its bound Numba loop (deferred_loops)

    def unary_slot(name, dtype, parallel_run):
        slot = unary_slots.get((name, dtype, parallel_run))
        if slot is None:  # square, sqrt, positive: their ``loops`` are these Numba loops
            loops = spec(name).numba_loops
            slot = unary_slots[name, dtype, parallel_run] = bind(
                loops.parallel if parallel_run else loops.serial, None, (dtype, dtype))
        return slot

    def is_float(x, y, out):
        dtype = out.dtype
        return dtype in floats and x.dtype == dtype and y.dtype == dtype

    def power_pair(x, y, out):
        power(x, y, out=out)

    def serial(x, y, out):
        if is_float(x, y, out):
            power(x, y, out=out)
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
                flags = unary_slot(unary, out.dtype, parallel_run)[0](x, out)
                if flags:  # x ** 2 as square's loop: NumPy reports it as power's
                    report_fp_flags(flags, "power")
                return
            if unary is not None:
                def run(xs, outs):
                    unary(xs, out=outs)
            else:
                def run(xs, outs):
                    power(xs, y, out=outs)
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
                split_run(lambda ys, outs: power(x, ys, out=outs), (y, out))
            else:
                power(x, y, out=out)
        return loop

    return LoopKernels(serial, parallel, array_scalar(False), array_scalar(True),
                          scalar_array(False), scalar_array(True))


class PowerSpec(ElementwiseSpec):
    @staticmethod
    def _scalar_exponent(inputs) -> bool:
        exponent = inputs[1]
        return not is_array_spec(exponent) or isinstance(exponent, np.generic)

    def infer(self, *inputs, **params):
        results = super().infer(*inputs, **params)
        shape, dtype = results[0]
        if (dtype.kind in "iu" and self._scalar_exponent(inputs) and inputs[1] < 0
                and math.prod(shape)):  # NumPy raises only when a power is computed
            raise ValueError(_NEGATIVE_POWER)
        return results

    def make_check(self, inputs, params, computation, shape):
        check = super().make_check(inputs, params, computation, shape)
        if not (computation[1].kind in "iu" and self._scalar_exponent(inputs)
                and math.prod(shape)):
            return check

        def check_exponent(inputs, params):
            if check is not None:
                check(inputs, params)
            if inputs[1] < 0:
                raise ValueError(_NEGATIVE_POWER)
        return check_exponent

    def input_check(self, inputs, computation, shape):
        if computation[1].kind != "i" or self._scalar_exponent(inputs) or not math.prod(shape) \
                or np.dtype(inputs[1].dtype).kind != "i":
            return None
        # the exponent raveled is C-contiguous: one Numba type per dtype
        slot = bind(any_negative, None, (np.dtype(inputs[1].dtype),))

        def check_exponent_array(inputs):
            if slot[0](np.asarray(inputs[1]).ravel()):
                raise ValueError(_NEGATIVE_POWER)
        return check_exponent_array

    @cached_property
    def loops(self) -> LoopKernels:
        return numpy_power_loops(deferred_kernels(self.numba_loops))

    def plan_loops(self, computation, out_dtype) -> LoopKernels:
        if computes_in_extended(computation, out_dtype):
            return self.extended_loops
        # integers: the Numba loops themselves (what ``loops`` calls), bound by the flat run
        return self.numba_loops if out_dtype.kind in "iu" else self.loops


# ------------------------------------------------------------------------- clip

def _clip_bound(bound, dtype: np.dtype):
    """A Python/NumPy scalar bound in ``dtype``; out-of-range ints clamp.

    ``_check_clip_bounds`` raises first where NumPy raises, so the ints left out of range
    are the ones NumPy drops (a_min <= the dtype's lowest, a_max >= its highest), for which
    clamping gives the same result."""
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


def _copy(x, out):
    np.copyto(out, x)


# which NumPy call clips, by (a_min given, a_max given)
_CLIP_CALLS = {(True, True): _umath.clip, (True, False): np.maximum,
               (False, True): np.minimum, (False, False): _copy}


class ClipSpec(ElementwiseSpec):
    """clip(x, a_min, a_max): NumPy's clip (NaN propagating); None = no bound."""
    value_params = ("a_min", "a_max")  # keyed by type: checked and converted per call

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

    def make_check(self, inputs, params, computation, shape):
        if not (is_weak_int(params.get("a_min")) or is_weak_int(params.get("a_max"))):
            return None
        x_kind, dtype = _kind_of(inputs[0]), computation[0]

        def check(inputs, params):
            _check_clip_bounds(x_kind, dtype, params.get("a_min"), params.get("a_max"))
        return check

    def make_run(self, inputs, params, computation, shape, out_dtype, target, aliases, req):
        size = math.prod(shape)
        if size == 0 or req is OpReq.NULL:
            return nothing_run
        (dtype,) = computation
        has_min, has_max = params.get("a_min") is not None, params.get("a_max") is not None
        clip = _CLIP_CALLS[has_min, has_max]
        x = inputs[0]
        cast = not is_array_spec(x) or np.dtype(x.dtype) != dtype
        # NumPy's ufuncs cope with any layout and overlap; a large contiguous call is split
        split = (use_parallel(size) and is_array_spec(x) and is_c_contiguous(x)
                 and (target is None or is_c_contiguous(target)))

        convert_min = _bound_converter(dtype) if has_min else None
        convert_max = _bound_converter(dtype) if has_max else None
        plain = req in (None, OpReq.WRITE_TO, OpReq.WRITE_INPLACE)

        def run(inputs, outputs, req, params):
            x = inputs[0]
            if cast:
                x = np.asarray(x).astype(dtype)
            bounds = []
            if convert_min is not None:
                bounds.append(convert_min(params["a_min"]))
            if convert_max is not None:
                bounds.append(convert_max(params["a_max"]))

            def compute(target):
                if split and target.flags.c_contiguous:
                    split_run(lambda xs, outs: clip(xs, *bounds, out=outs),
                              (x.reshape(-1), target.reshape(-1)))
                else:
                    clip(x, *bounds, out=target)
            if plain:
                compute(outputs[0])
            else:
                out, r = single_output(outputs, req)
                write_with_req(out, r, compute)
        return run


def _bound_converter(dtype):
    """``_clip_bound`` kept per value (never for 0.0 / -0.0, which compare equal but differ)."""
    constants = {}

    def convert(bound):
        found = constants.get(bound)
        if found is None:
            found = _clip_bound(bound, dtype)
            if bound and len(constants) < 64:
                constants[bound] = found
        return found
    return convert


# ------------------------------------------------------------------- clip_arrays

def clip_bounds_are_constant(x_shape, low_shape, high_shape, shape) -> bool:
    """Whether NumPy's clip ufunc runs its loop for constant bounds (both strides 0) on
    operands of these shapes (a scalar's is ``()``) and this result shape.

    Each bound must be one element. Broadcast into a larger result it has stride 0. Into a
    one-element result, NumPy takes its trivial loop when every operand is 0-d or of the
    result's shape: there only a 0-d bound has stride 0; otherwise its iterator drops the
    size-1 axes and every stride is 0 (measured on NumPy 2.x over every pairing of the
    shapes up to three axes, C and Fortran order)."""
    if math.prod(low_shape) != 1 or math.prod(high_shape) != 1:
        return False
    if math.prod(shape) > 1:
        return True
    shape = tuple(shape)
    trivial = all(len(s) == 0 or tuple(s) == shape for s in (x_shape, low_shape, high_shape))
    return not trivial or (len(low_shape) == 0 and len(high_shape) == 0)


def _clip_by_constant_bounds(x, low, high, out):
    """NumPy's clip loop for constant bounds over buffered chunks: each bound's chunk is its
    one value repeated, handed to NumPy as a scalar so that NumPy runs that loop."""
    _umath.clip(x, low[0], high[0], out=out)


class ClipArraysSpec(ElementwiseSpec):
    """clip(x, a_min, a_max) with a bound array: NumPy's clip ufunc (three broadcast inputs,
    NumPy's dtype rules), with the rule of NumPy's loop for the bounds' shapes (module
    docstring). The param ``constant_bounds`` states the rule where the operands are not the
    call's own (a fused program's blocks); by default the shapes decide it."""
    runs_ufunc = True

    @cached_property
    def constant_bounds(self) -> "ElementwiseSpec":
        return _ConstantBoundsSpec(self.name, scalars.clip_constant_bounds, self.ufunc, self.doc)

    def make_run(self, inputs, params, computation, shape, out_dtype, target, aliases, req):
        constant = params.get("constant_bounds") if params else None
        if constant is None:
            constant = clip_bounds_are_constant(*(shape_of(v) for v in inputs), shape)
        spec = self.constant_bounds if constant else super()
        return spec.make_run(inputs, params, computation, shape, out_dtype, target, aliases,
                             req)


class _ConstantBoundsSpec(ElementwiseSpec):
    """clip_arrays' runs where both bounds are constant: the general run, whose loop is
    Numba's of that rule, or NumPy's handed the bounds as scalars until it compiles (never
    NumPy's call on the operands as they are: its rule would follow their shapes)."""
    runs_ufunc = True

    @cached_property
    def extended_loops(self) -> LoopKernels:
        return numpy_loops(_clip_by_constant_bounds, 3)

    def make_run(self, inputs, params, computation, shape, out_dtype, target, aliases, req):
        if math.prod(shape) == 0 or req is OpReq.NULL:
            return nothing_run
        return general_run(self.general_loops, computation, self.wrap_scalars,
                           name=self.fp_name)
