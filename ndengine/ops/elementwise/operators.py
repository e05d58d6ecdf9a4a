"""Element-wise operators: their specs and plans.

Each op is an ``ElementwiseSpec``: a Numba scalar function (``scalars``, ``ufunc_scalars``;
None for ops that run NumPy's own loop only) and the NumPy ufunc whose type resolution it
copies (``dtype_rules.resolve_like``: output dtypes equal NumPy's, including NEP 50 weak
Python scalars).  The tables that register them are in ``tables``; power and clip, whose
rules are their own, in ``power_clip``; logical_and/or/xor, signbit and divmod in
``ufunc_specs``.

``plan`` (the op's planner, see ``ops.plans``) decides a call signature once: the output
(NumPy's dtype, the broadcast shape), the per-call checks (a weak Python int must fit the
dtype it meets: NumPy's OverflowError, ``dtype_rules.weak_int_check``), and the run
(``runs``): the computation dtypes, how each operand is converted, which 1-D loop runs --
NumPy's where it is faster (``NUMPY_UNARY``, ``NUMPY_BINARY``), Numba's otherwise
(``loops``, one set per scalar function).

``dtype=`` (NumPy's ufunc argument) is the op parameter ``dtype``: the loop NumPy picks for
that output dtype, inputs cast to it (``resolve_like``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .dtype_rules import (
    check_weak_scalar, computes_in_extended, is_weak_int, resolve_like, weak_int_check,
    weak_int_range)
from .loops import LoopKernels, binary_kernels, ternary_kernels, unary_kernels
from ..runtime.caching import cached_property
from ..dtypes import check_dtype, int_bounds, is_array_spec, promotion_operand, result_type
from ..runtime.deferred_loops import bind as bind_deferred, deferred_kernels
from ..runtime.fp_status import reports_fp_errors
from .runs import (
    NUMPY_BINARY, NUMPY_UNARY, array_converter, flat_run, general_run, nothing_run, numpy_loops,
    numpy_typed_loops, scalar_converter, ufunc_run)
from ..outputs import array_module, single_output, write_with_req
from ..runtime.parallel import use_parallel
from ..plans import OVERLAP, SAME_VIEW, OpReq, Plan, is_c_contiguous
from ..registry import Operator, add_operator
from ..shapes import broadcast_shapes, shape_of

__all__ = ["ElementwiseSpec", "ComparisonSpec", "UnaryLikeSpec", "ReluSpec", "RoundSpec",
           "WhereSpec", "spec", "numba_loops_of"]

_PLAIN_REQS = (None, OpReq.WRITE_TO, OpReq.WRITE_INPLACE)
_FULL, _ONE = "full", "one"  # an operand of the output's size, or a single element
# A flat run whose output is its first input (x -= y) runs the loops' in-place variant
# (``LoopKernels.serial_in_place``), which reads that operand from the output. Loops without
# one run NumPy's loop from this size on, not Numba's: LLVM vectorises a loop only when its
# output cannot overlap an input, so an in-place Numba loop runs scalar (float32, 64K
# elements: 19.6 us, NumPy's 6.7 us; they cross at about 4K elements, below which NumPy's
# call costs more than the loop).
INPLACE_NUMPY_ELEMENTS = 4096


# ---------------------------------------------------------------- op definition

def _with_input_check(run, check):
    """``run`` preceded by ``check(inputs)``: value checks only the data can decide."""
    def checked(inputs, outputs, req, params):
        check(inputs)
        run(inputs, outputs, req, params)
    return checked


_SPECS: dict = {}  # name -> ElementwiseSpec, filled by register()
# NumPy functions, not ufuncs, that run the ufunc their spec copies (fix: trunc, round:
# rint or its own scaling, clip: the clip/maximum/minimum ufuncs), float16 and complex too
_RUNS_ITS_UFUNC = frozenset(("fix", "round", "clip"))

_FACTORIES = {1: unary_kernels, 2: binary_kernels, 3: ternary_kernels}  # by arity
_LOOPS_BY_SCALAR: dict = {}  # (scalar, arity) -> LoopKernels: ops sharing a scalar share them


def spec(name: str) -> "ElementwiseSpec":
    """The ElementwiseSpec behind a registered element-wise op (benchmarks, tests)."""
    return _SPECS[name]


def numba_loops_of(scalar, arity: int) -> LoopKernels:
    """The Numba 1-D loops around ``scalar`` (made once per scalar: degrees and rad2deg,
    fix and trunc compile one set)."""
    loops = _LOOPS_BY_SCALAR.get((scalar, arity))
    if loops is None:
        loops = _FACTORIES[arity](scalar)
        _LOOPS_BY_SCALAR[scalar, arity] = loops
    return loops


@dataclass
class ElementwiseSpec:
    name: str
    scalar: Callable | None           # Numba scalar function; None: NumPy's loop only
    ufunc: np.ufunc                   # whose dtype resolution we copy
    doc: str = ""
    wrap_scalars = False              # True: out-of-range Python ints wrap instead of raising

    @property
    def arity(self) -> int:
        return self.ufunc.nin

    @cached_property
    def numba_loops(self) -> LoopKernels:
        if self.scalar is None:
            raise TypeError(f"{self.name} runs NumPy's loop only: it has no Numba scalar")
        return numba_loops_of(self.scalar, self.arity)

    @property
    def numpy_loop(self):
        """(NumPy's 1-D loop, the dtypes it runs for) where NumPy's loop is used, or None."""
        return {1: NUMPY_UNARY, 2: NUMPY_BINARY}.get(self.arity, {}).get(self.name)

    @cached_property
    def numpy_loops(self) -> LoopKernels:
        return numpy_loops(self.numpy_loop[0], self.arity)

    @cached_property
    def loops(self) -> LoopKernels:
        """1-D loops for any dtype (the general run): NumPy's where faster, else Numba's."""
        return self._loops_around(lambda: deferred_kernels(self.numba_loops))

    def _loops_around(self, numba_loops):
        numpy_loop = self.numpy_loop
        if numpy_loop is None:
            return numba_loops()
        if self.scalar is None:  # the ufunc's own loops: every dtype it resolves to
            return self.numpy_loops
        return numpy_typed_loops(*numpy_loop, numba_loops(), self.arity)

    @property
    def defers_compile(self) -> bool:
        """Whether NumPy's loop runs a signature until its Numba loop is worth compiling
        (``deferred_loops``): where the ufunc is the op itself, with one output and the
        plain choice of loops."""
        return (self.scalar is not None and self.is_its_ufunc
                and self.ufunc.nout == 1 and type(self).plan_loops is ElementwiseSpec.plan_loops)

    @cached_property
    def fp_name(self):
        """The ufunc name its compiled loops' FP flags are reported for, as NumPy's loop of
        the op reports them; None where NumPy never reports any (fp_status)."""
        name = self.ufunc.__name__ if self.is_its_ufunc else self.name
        return name if reports_fp_errors(name) else None

    @property
    def is_its_ufunc(self) -> bool:
        """Whether the op is its ufunc: NumPy's function of its name, or ``runs_ufunc``."""
        return self.runs_ufunc or getattr(np, self.name, None) is self.ufunc

    @cached_property
    def general_loops(self) -> LoopKernels:
        """The general run's loops: ``loops``, each Numba signature deferred where
        ``defers_compile`` (other callers of ``loops``, power's, keep the Numba loop's
        results, which may differ from NumPy's ufunc outside its dtypes: complex square)."""
        if not self.defers_compile:
            return self.loops
        return self._loops_around(
            lambda: deferred_kernels(self.numba_loops, self.extended_loops))

    @property
    def computes_extended(self) -> bool:
        """Whether it runs float16 and complex (``EXTENDED_DTYPES``): with NumPy's own loops,
        so only where the ufunc whose dtypes it copies is the op itself (or the ufunc
        NumPy's function of that name runs: ``_RUNS_ITS_UFUNC``)."""
        return getattr(np, self.name, None) is self.ufunc or self.name in _RUNS_ITS_UFUNC

    @cached_property
    def extended_loops(self) -> LoopKernels:
        """NumPy's loops of the op (float16 computed in float32 and rounded, as NumPy does)."""
        return numpy_loops(self.ufunc, self.arity)

    def plan_loops(self, computation, out_dtype) -> LoopKernels:
        """The loops a flat run of these dtypes calls."""
        if computes_in_extended(computation, out_dtype):
            return self.extended_loops
        numpy_loop = self.numpy_loop
        if numpy_loop is not None and (self.scalar is None or (
                out_dtype in numpy_loop[1] and all(c == out_dtype for c in computation))):
            return self.numpy_loops
        return self.numba_loops

    def resolve(self, inputs, params):
        # params["dtype"]: NumPy's ``dtype=`` ufunc argument (the output dtype)
        return resolve_like(self.ufunc, self.name, inputs, params.get("dtype") if params else None)

    # ------------------------------------------------ the general inference

    def infer(self, *inputs, **params):
        computation, out_dtype = self.resolve(inputs, params)
        if not self.wrap_scalars:
            for index, (value, dtype) in enumerate(zip(inputs, computation)):
                if self.checks_scalar(inputs, index):
                    check_weak_scalar(value, dtype)
        shape = broadcast_shapes(*(shape_of(v) for v in inputs))
        return [(shape, out_dtype)]

    def checks_scalar(self, inputs, index) -> bool:
        """Whether input ``index`` is a weak Python int that must fit its computation dtype."""
        return is_weak_int(inputs[index])

    # ------------------------------------------------ plans

    def plan(self, op, inputs, params, target, aliases, req) -> Plan:
        """The op's planner: infer once, then the checks and the run for this signature."""
        outputs = op.general_infer(inputs, params)
        computation, out_dtype = self.resolve(inputs, params)
        shape = outputs[0][0]
        run = self.make_run(inputs, params, computation, shape, out_dtype, target, aliases, req)
        return Plan(outputs, run, self.make_check(inputs, params, computation, shape))

    def make_check(self, inputs, params, computation, shape):
        """The per-call check: every weak Python int in range of its computation dtype."""
        if self.wrap_scalars:
            return None
        bounds = []
        for index, dtype in enumerate(computation):
            if self.checks_scalar(inputs, index):
                bounds.append((index, *weak_int_range(dtype), dtype))
        return weak_int_check(bounds)

    def input_check(self, inputs, computation, shape):
        """A check of the input data before the loop runs (``check(inputs)``), or None."""
        return None

    def make_run(self, inputs, params, computation, shape, out_dtype, target, aliases, req):
        """The run for this signature: flat when every operand allows it, else general."""
        size = math.prod(shape)
        if size == 0 or req is OpReq.NULL:
            return nothing_run
        run = self._flat_run(inputs, computation, shape, out_dtype, target, aliases, req, size)
        if run is None and self.defers_compile \
                and _writes_plainly(target, aliases, req, out_dtype) \
                and all(np.dtype(value.dtype) == dtype for value, dtype in zip(inputs, computation)
                        if is_array_spec(value) and not isinstance(value, np.generic)):
            # broadcasting or strides, nothing to cast: the ufunc's own call (its loop is
            # this op's, and NumPy drives a broadcast faster than a buffered nditer does)
            run = ufunc_run(self.ufunc, computation, self.wrap_scalars,
                            all(is_array_spec(v) and not isinstance(v, np.generic)
                                for v in inputs))
        if run is None:
            loops = (self.extended_loops if computes_in_extended(computation, out_dtype)
                     else self.general_loops)
            run = general_run(loops, computation, self.wrap_scalars, name=self.fp_name)
        check = self.input_check(inputs, computation, shape)
        return run if check is None else _with_input_check(run, check)

    def _flat_run(self, inputs, computation, shape, out_dtype, target, aliases, req, size):
        if not _writes_plainly(target, aliases, req, out_dtype) or (
                target is not None and not is_c_contiguous(target)):
            return None
        kinds, converters = [], []
        for value, dtype in zip(inputs, computation):
            if is_array_spec(value) and not isinstance(value, np.generic):
                value_shape = shape_of(value)
                count = math.prod(value_shape)
                if count == 1 and not 0 < len(value_shape) == len(shape):
                    kinds.append(_ONE)  # broadcast (or 0-d): NumPy's stride 0, its scalar loop
                elif count == size and is_c_contiguous(value):
                    kinds.append(_FULL)
                elif count == 1:
                    kinds.append(_ONE)
                else:
                    return None  # broadcasting or strides: the general run
                converters.append(array_converter(dtype, np.dtype(value.dtype) != dtype,
                                                  len(value_shape) != 1))
            else:  # a weak Python scalar or a NumPy scalar (strong, 0-d)
                kinds.append(_ONE)
                converters.append(scalar_converter(
                    dtype, self.wrap_scalars and not isinstance(value, np.generic)))
        if _FULL not in kinds:  # every operand one element: the first runs as the array
            kinds[0] = _FULL
        loops, parallel = self.plan_loops(computation, out_dtype), use_parallel(size)
        # the first operand is the output's memory, read as it is: the in-place loop
        in_place = (not parallel and aliases and aliases[0] == SAME_VIEW and kinds[0] is _FULL
                    and np.dtype(inputs[0].dtype) == computation[0])  # (not cast)
        loop = _pick_loop(loops, kinds, parallel, in_place)
        if loop is None:
            return None
        if self.scalar is None or loops is not self.numba_loops:
            slot = [loop]
        else:  # NumPy's loop until due where it defers; else none: compiled at the first call
            numpy_loop = _pick_loop(self.extended_loops, kinds, parallel) if self.defers_compile \
                else None
            if numpy_loop is not None and aliases and aliases[0] == SAME_VIEW and not parallel \
                    and size >= INPLACE_NUMPY_ELEMENTS and not _is_in_place_loop(loops, loop):
                slot = [numpy_loop]  # in place (x -= y): see INPLACE_NUMPY_ELEMENTS
            else:
                slot = bind_deferred(loop, numpy_loop, (*computation, out_dtype))
        return flat_run(slot, converters, len(shape) != 1, self.fp_name)

    def register(self, kind: str) -> Operator:
        arity = self.arity
        op = Operator(self.name, num_inputs=arity, num_outputs=self.ufunc.nout, kind=kind,
                      infer=self.infer,
                      inplace=tuple((i, 0) for i in range(arity)),
                      doc=self.doc, planner=self.plan, scalars_by_type=True,
                      value_params=self.value_params, extended_dtypes=self.computes_extended)
        _SPECS[self.name] = self
        return add_operator(op)

    value_params = ()  # params keyed by type (clip's bounds)
    runs_ufunc = False  # True: the op is its ufunc under a name of its own (clip_arrays)


def _where_into(cond, x, y, out):
    """``out[...] = where(cond, x, y)`` with NumPy's own copies (any dtype)."""
    np.copyto(out, y)
    np.copyto(out, x, where=cond)


def _writes_plainly(target, aliases, req, out_dtype):
    """Whether the output is written plainly: WRITE_TO or WRITE_INPLACE, no input overlapping
    it other than as its very view, and a given target of the result dtype."""
    return req in _PLAIN_REQS and not (aliases and OVERLAP in aliases) and (
        target is None or np.dtype(target.dtype) == out_dtype)


def _pick_loop(loops, kinds, parallel, in_place=False):
    """The one 1-D loop for operands of these kinds, or None (the general run); ``in_place``:
    the first operand is the output's memory (its in-place variant, where the loops have
    one)."""
    if all(kind is _FULL for kind in kinds):
        if in_place and loops.serial_in_place is not None:
            return loops.serial_in_place
        return loops.parallel if parallel else loops.serial
    if len(kinds) == 2:
        if kinds[0] is _FULL:
            if in_place and loops.serial_array_scalar_in_place is not None:
                return loops.serial_array_scalar_in_place
            return loops.parallel_array_scalar if parallel else loops.serial_array_scalar
        if kinds[1] is _FULL:
            return loops.parallel_scalar_array if parallel else loops.serial_scalar_array
    return None


def _is_in_place_loop(loops, loop):
    return loop is not None and loop in (loops.serial_in_place, loops.serial_array_scalar_in_place)


class RoundSpec(ElementwiseSpec):
    """np.round: half to even; ints stay ints.  decimals != 0 scales like NumPy."""

    def resolve(self, inputs, params):
        (x,) = inputs
        dtype = check_dtype(promotion_operand(x)) if is_array_spec(x) else result_type(x)
        # NumPy's own choice (np.round(bool) is float16, which we refuse).
        out = check_dtype(np.round(np.zeros(1, dtype), params.get("decimals", 0)).dtype)
        return [out], out

    def make_run(self, inputs, params, computation, shape, out_dtype, target, aliases, req):
        decimals = params.get("decimals", 0)
        if decimals == 0:
            return super().make_run(inputs, params, computation, shape, out_dtype, target,
                                    aliases, req)

        # Scaling by 10**decimals is NumPy's own algorithm; reuse it rather than
        # re-derive its float rounding steps.
        def run(inputs, outputs, req, params):
            out, r = single_output(outputs, req)
            x = np.array(inputs[0], copy=True)  # inputs may overlap out
            # (np.round's out= refuses int outputs for negative decimals, so assign)
            write_with_req(out, r, lambda target: target.__setitem__(
                Ellipsis, np.round(x, decimals)))
        return run


class ComparisonSpec(ElementwiseSpec):
    """equal, less, ...: a Python int outside an integer array's range is compared, not refused.

    NumPy 2 gives the mathematically right answer (``uint8_array < 300`` is all True,
    ``int8_array == -1000`` all False) where arithmetic would raise OverflowError.  Such a
    value is beyond every element, so the answer is one constant: ``compare(0, value)``.
    Only an integer *array* partner counts: with bool arrays (an int64 loop) or floats
    NumPy raises what the plain path raises.  The plan's run compares the value with the
    partner's range (a Python comparison) and fills the constant when it is outside.
    """
    python_compare: Callable = None  # operator.lt, ...: the same comparison on Python ints

    @staticmethod
    def _int_partner(inputs, index):
        """The integer dtype of the array facing a weak Python int at ``index``, or None."""
        if len(inputs) != 2 or not is_weak_int(inputs[index]):
            return None
        partner = inputs[1 - index]
        if not is_array_spec(partner) or np.dtype(partner.dtype).kind not in "iu":
            return None
        return np.dtype(partner.dtype)

    def checks_scalar(self, inputs, index) -> bool:
        return is_weak_int(inputs[index]) and self._int_partner(inputs, index) is None

    def make_run(self, inputs, params, computation, shape, out_dtype, target, aliases, req):
        run = super().make_run(inputs, params, computation, shape, out_dtype, target,
                               aliases, req)
        for index in (0, 1):
            dtype = self._int_partner(inputs, index)
            if dtype is not None and run is not nothing_run:
                return self._beyond_range_run(run, index, *int_bounds(dtype))
        return run

    def _beyond_range_run(self, run, index, low, high):
        """``run``, except for a Python int beyond the integer partner's range: NumPy's
        constant answer (on any device: the GPU kernels wrap their runs with it too)."""
        compare = self.python_compare

        def compared(inputs, outputs, req, params):
            value = inputs[index]
            if low <= value <= high:
                run(inputs, outputs, req, params)
                return
            constant = bool(compare(0, value) if index else compare(value, 0))
            out, r = single_output(outputs, req)
            write_with_req(out, r, lambda target: target.fill(constant), xp=array_module(out))
        return compared


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


class WhereSpec(ElementwiseSpec):
    """where(cond, x, y): cond cast to bool, values promoted like NumPy."""
    wrap_scalars = True  # np.where(c, uint8_array, -1) gives 255, not OverflowError

    def resolve(self, inputs, params):
        cond, x, y = inputs
        dtype = result_type(x, y)
        return [np.dtype(bool), dtype, dtype], dtype

    @property
    def computes_extended(self) -> bool:
        return True

    @cached_property
    def extended_loops(self) -> LoopKernels:
        return numpy_loops(_where_into, 3)

    @property
    def arity(self):
        return 3
