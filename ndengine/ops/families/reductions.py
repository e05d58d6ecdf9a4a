"""Reductions: sum, mean, max, min, prod, argmax, argmin, std, var.

The kernels call NumPy's own reductions on purpose: NumPy sums floats
pairwise, so a Numba loop would differ in the last bits for sum/mean/std/var,
and its reduction loops already release the GIL and use SIMD.  What this
module adds is inference without data (shape, NumPy's dtype, NumPy's errors),
the OpReq/overlap handling, and mean/var/std over too few elements: NumPy's
RuntimeWarning ("Mean of empty slice", "Degrees of freedom <= 0 for slice") at the
call, from the plan's check, and in the kernel NumPy's own arithmetic of that case
(numpy/_core/_methods.py), whose FP reports surface at the wait as NumPy's would.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from ...engine.errors import warn_at_caller
from ..dtypes import check_dtype, is_array_spec, result_type
from ..outputs import detach_overlapping, single_output, write_with_req
from ..plans import Plan, is_c_contiguous
from ..registry import OpReq, add_operator, kernel_run, numpy_backed
from ..shapes import normalize_axes, reduced_shape, shape_of
from .row_reductions import MAX_ROW, row_reducer

_WRITE_TO = OpReq.WRITE_TO
_WRITE_INPLACE = OpReq.WRITE_INPLACE
_REDUCTION_PARAMS = frozenset(("axis", "keepdims", "ddof", "dtype", "out_dtype"))

# the ufunc whose reduce method np.sum & co. call (calling it directly skips ~2 us of wrappers)
_UFUNC_OF = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}

# name -> (NumPy function, needs at least one element, NumPy's name in its error)
REDUCTIONS = {
    "sum": (np.sum, False, None),
    "prod": (np.prod, False, None),
    "mean": (np.mean, False, None),
    "std": (np.std, False, None),
    "var": (np.var, False, None),
    "max": (np.max, True, "zero-size array to reduction operation maximum which has no identity"),
    "min": (np.min, True, "zero-size array to reduction operation minimum which has no identity"),
    "argmax": (np.argmax, True, "attempt to get argmax of an empty sequence"),
    "argmin": (np.argmin, True, "attempt to get argmin of an empty sequence"),
}
_STATISTICS = ("mean", "std", "var")  # too few elements: NumPy's own case (_too_few)
# NumPy's warnings of a mean over no element, a var/std over no more than ddof elements
_EMPTY_MEAN = "Mean of empty slice"
_NO_DEGREES = "Degrees of freedom <= 0 for slice"
_ROW_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_ARG_REDUCTIONS = ("argmax", "argmin")


def _input_dtype(x) -> np.dtype:
    return check_dtype(x.dtype) if is_array_spec(x) else result_type(x)


class Reduction:
    def __init__(self, name):
        self.name = name
        self.numpy_fn, self.needs_elements, self.empty_message = REDUCTIONS[name]
        self.ufunc = _UFUNC_OF.get(name)

    def axes(self, x, axis):
        ndim = len(shape_of(x))
        if (axis is not None and type(axis) is not int and type(axis) is not tuple
                and not isinstance(axis, (bool, np.bool_)) and hasattr(axis, "__index__")):
            axis = operator.index(axis)  # np.int64(0), a 0-d integer array: an int axis
        if self.name in _ARG_REDUCTIONS and axis is not None and not isinstance(axis, (int, np.integer)):
            try:  # NumPy takes anything with __index__ (a 0-d integer array)
                axis = operator.index(axis)
            except TypeError:
                raise TypeError(f"{self.name} takes a single integer axis or None, "
                                f"got {axis!r}") from None
        if (ndim == 0 and type(axis) in (int, np.intp) and axis in (0, -1)
                and self.name not in _STATISTICS):
            return ()  # NumPy's legacy rule: axis 0 or -1 of a 0-d array reduces nothing
        return normalize_axes(axis, ndim)

    def output_dtype(self, input_dtype: np.dtype, dtype=None, out_dtype=None) -> np.dtype:
        """NumPy's result dtype, from its own function on a one-element stand-in (sum of
        int32 -> int64, sum(uint8, dtype=uint32) -> uint32, ...).  ``out_dtype``: the
        dtype of the ``out=`` array, which NumPy writes (and for some reductions
        accumulates) in; the stand-in raises NumPy's error where it refuses that out."""
        stand_in = np.zeros(1, input_dtype)
        kwargs = {} if dtype is None else {"dtype": dtype}
        if out_dtype is not None:
            self.numpy_fn(stand_in, out=np.empty((), out_dtype), **kwargs)
            return check_dtype(out_dtype)
        if self.name in _ARG_REDUCTIONS:
            return np.dtype(np.intp)
        return check_dtype(self.numpy_fn(stand_in, **kwargs).dtype)

    def infer(self, x, axis=None, keepdims=False, ddof=0, dtype=None, out_dtype=None):
        if type(keepdims) is not bool and self.name not in _ARG_REDUCTIONS:
            operator.index(keepdims)  # NumPy's TypeError for None, a string, a NumPy bool
        if type(ddof) is not int and self.name in ("std", "var"):
            np.subtract(0, ddof)  # NumPy's TypeError for None or a string, at the call
        if self.name == "std" and out_dtype is not None and np.dtype(out_dtype).kind in "iub":
            raise TypeError(f"Cannot cast ufunc 'sqrt' output from dtype('float64') to "
                            f"{np.dtype(out_dtype)!r} with casting rule 'same_kind'")
        shape = shape_of(x)
        axes = self.axes(x, axis)
        count = math.prod(shape[a] for a in axes)
        if self.needs_elements and count == 0:
            raise ValueError(self.empty_message)
        if self.name in _ARG_REDUCTIONS and axis is None:
            out_shape = (1,) * len(shape) if keepdims else ()
        else:
            out_shape = reduced_shape(shape, axes, keepdims)
        if dtype is not None:
            if self.name in _ARG_REDUCTIONS:
                raise TypeError(f"{self.name}() got an unexpected keyword argument 'dtype'")
            dtype = check_dtype(dtype)
            if self.name == "std" and out_shape and dtype.kind in "iu":
                # NumPy's sqrt into its int array result refuses (a 0-d result is a scalar)
                raise TypeError(f"Cannot cast ufunc 'sqrt' output from dtype('float64') to "
                                f"{dtype!r} with casting rule 'same_kind'")
        return [(out_shape, self.output_dtype(_input_dtype(x), dtype, out_dtype))]

    def plan(self, op, inputs, params, target, aliases, req) -> Plan:
        """The op's planner: NumPy's own ufunc.reduce call when it does it all, else the
        general kernel."""
        outputs = op.general_infer(inputs, params)
        return Plan(outputs, self._rows_run(inputs, params, target, aliases, req)
                    or self._reduce_run(inputs, params, aliases, req)
                    or self._function_run(inputs, params, aliases, req, outputs[0][1])
                    or kernel_run(self.kernel), self._too_few_warning(inputs, params))

    def _too_few(self, x, axis, ddof):
        """The warning NumPy gives a mean over no element or a var/std over ``ddof``
        elements or fewer (its ``_methods``), or None."""
        if self.name not in _STATISTICS:
            return None
        shape = shape_of(x)
        count = math.prod(shape[a] for a in self.axes(x, axis))
        if self.name == "mean":
            return _EMPTY_MEAN if count == 0 else None
        return _NO_DEGREES if ddof >= count else None

    def _too_few_warning(self, inputs, params):
        """The plan's check: NumPy's warning of too few elements at every call, at the
        user's line (the kernel computes that case without it)."""
        message = self._too_few(inputs[0], params.get("axis"), params.get("ddof", 0))
        if message is None:
            return None

        def check(inputs, params):
            warn_at_caller(message)
        return check

    def _rows_run(self, inputs, params, target, aliases, req):
        """``x.sum(axis=-1)`` over C-contiguous float32/float64 rows of at most MAX_ROW
        elements, or ``x.sum(axis=0)`` (``max``, ``min``) over two columns or more, into a
        fresh output: row_reductions' loops, NumPy's operations in NumPy's order (bit for
        bit), without restarting NumPy's inner loop per row (256 rows of 10: ~1 us against
        4-6 us)."""
        if (self.name not in ("sum", "max", "min") or target is not None
                or params.get("dtype") is not None or params.get("out_dtype") is not None
                or not self._plain_call(inputs, params, aliases, req)):
            return None
        loop = _row_loop(inputs[0], params.get("axis"), self.name)
        if loop is None:
            return None
        reduce, grid, size = loop

        def run(inputs, outputs, req, params):
            reduce(inputs[0].reshape(grid), outputs[0].reshape(size))
        return run

    @staticmethod
    def _plain_call(inputs, params, aliases, req):
        """Whether the call is one the kernel's general path would pass straight to NumPy:
        a plain write, no overlap, a bool keepdims, an array input, known params."""
        x = inputs[0] if len(inputs) == 1 else None
        return (req in (None, _WRITE_TO, _WRITE_INPLACE) and not any(aliases or ())
                and type(params.get("keepdims", False)) is bool and is_array_spec(x)
                and not isinstance(x, np.generic) and params.keys() <= _REDUCTION_PARAMS)

    def _reduce_run(self, inputs, params, aliases, req):
        """np.sum(x, axis, out=out, keepdims=k) on an ndarray is exactly
        np.add.reduce(x, axis, None, out, keepdims=k) (numpy's _wrapreduction): for axis None
        or one int, a plain write and no overlap, the plan runs that call."""
        ufunc = self.ufunc
        axis = params.get("axis")
        keepdims = params.get("keepdims", False)
        dtype = params.get("dtype")
        if ufunc is None or not self._plain_call(inputs, params, aliases, req):
            return None
        ndim = len(shape_of(inputs[0]))
        if axis is None:
            axes = None
        elif type(axis) is int and -ndim <= axis < ndim:
            axes = (axis % ndim,)
        else:
            return None

        def run(inputs, outputs, req, params):
            ufunc.reduce(inputs[0], axes, dtype, outputs[0], keepdims=keepdims)
        return run

    def _function_run(self, inputs, params, aliases, req, result_dtype):
        """mean, std, var, argmax, ... (and sum & co. over several axes): the NumPy function
        call the kernel makes, its arguments decided at plan time, where none of the
        kernel's special cases (empty input, float16 statistics, int results of std/var)
        can arise."""
        if not self._plain_call(inputs, params, aliases, req):
            return None
        x, fn, keepdims = inputs[0], self.numpy_fn, params.get("keepdims", False)
        axis = params.get("axis")
        axes = self.axes(x, axis)
        shape = shape_of(x)
        if self._too_few(x, axis, params.get("ddof", 0)) or math.prod(
                shape[a] for a in axes) == 0:
            return None  # the kernel's special cases
        if self.name in _ARG_REDUCTIONS:
            def run(inputs, outputs, req, params):
                outputs[0][...] = fn(inputs[0], axis=axis, keepdims=keepdims)
            return run
        extra = {"ddof": params.get("ddof", 0)} if self.name in ("std", "var") else {}
        if params.get("dtype") is not None:
            extra["dtype"] = params["dtype"]
        out_dtype = params.get("out_dtype")
        if out_dtype is None and (self.name in _STATISTICS and x.dtype == np.float16
                                  or extra and result_dtype.kind in "iub"):
            return None
        if self.name == "mean" and not extra and out_dtype is None:
            return _mean_run(x, shape, axis, axes, keepdims)
        axis = None if axis is None else axes

        def run(inputs, outputs, req, params):
            fn(inputs[0], axis=axis, keepdims=keepdims, out=outputs[0], **extra)
        return run

    def kernel(self, inputs, outputs, req, axis=None, keepdims=False, ddof=0, dtype=None,
               out_dtype=None):
        # out_dtype only told infer the output's dtype: NumPy's own function writing into
        # an output of that dtype does the rest (accumulating in it where NumPy does)
        out, req = single_output(outputs, req)
        if req is OpReq.NULL:
            return
        x = np.asarray(inputs[0])
        axes = self.axes(x, axis)
        if req is not OpReq.ADD_TO:
            (x,) = detach_overlapping([x], [out], allow_same_view=False)
        count = math.prod(x.shape[a] for a in axes)
        too_few = self._too_few(x, axis, ddof) is not None

        def compute(target):
            if too_few:  # NumPy's arithmetic of that case, without its warning (the check's)
                np.copyto(target, _too_few_statistic(self.name, x, axis, axes, keepdims, ddof,
                                                     dtype, out_dtype is not None, count),
                          casting="unsafe")
                return
            if self.name in _ARG_REDUCTIONS:
                target[...] = self.numpy_fn(x, axis=axis, keepdims=keepdims)
                return
            extra = {"ddof": ddof} if self.name in ("std", "var") else {}
            if dtype is not None:
                extra["dtype"] = dtype
            if self.name in _STATISTICS and x.dtype == np.float16 and out_dtype is None:
                # NumPy computes a float16 mean/std/var in float32 unless given out= (then
                # it accumulates in float16): its answer is the one without out=
                np.copyto(target, self.numpy_fn(x, axis=None if axis is None else axes,
                                                keepdims=keepdims, **extra), casting="unsafe")
                return
            if extra and out_dtype is None and target.dtype.kind in "iub":
                # std/var(dtype=int): NumPy computes in float and casts the result; its sqrt
                # into an int out= would refuse (that case fails in infer, at the call)
                np.copyto(target, self.numpy_fn(x, axis=None if axis is None else axes,
                                                keepdims=keepdims, **extra), casting="unsafe")
                return
            self.numpy_fn(x, axis=None if axis is None else axes, keepdims=keepdims,
                          out=target, **extra)

        write_with_req(out, req, compute)

    def register(self):
        op = numpy_backed(self.name, num_inputs=1, kind="reduce", infer=self.infer,
                      planner=self.plan,
                      doc=f"numpy.{self.numpy_fn.__name__} over axis (None, int or tuple), "
                          f"keepdims" + (", ddof" if self.name in ("std", "var") else "") +
                          ("" if self.name in _ARG_REDUCTIONS else ", dtype"))
        return add_operator(op)


def _too_few_statistic(name, x, axis, axes, keepdims, ddof, dtype, out_given, count):
    """mean over no element, var/std over ``ddof`` elements or fewer, computed as NumPy's
    ``_methods._mean`` and ``_var`` compute them (numpy/_core/_methods.py) but for their
    RuntimeWarning: the same sums and divisions in the same dtypes, so the same values (var
    of an empty slice with a negative ddof is 0.0; sum(d*d)/0 is inf) and the same FP flags,
    reported at the wait with NumPy's messages ('invalid value encountered in divide', or in
    'scalar divide' for a scalar result)."""
    axis = None if axis is None else axes
    if dtype is None and x.dtype.kind in "iub":
        dtype = np.dtype("f8")
    elif dtype is None and name == "mean" and x.dtype == np.float16:
        dtype = np.dtype("f4")  # NumPy sums a float16 mean in float32
    count = np.intp(count)
    if name == "mean":
        return _divided(np.add.reduce(x, axis, dtype, None, keepdims), count, out_given)
    arrmean = _divided(np.add.reduce(x, axis, dtype, None, True), count, False)
    deviations = np.asanyarray(x - arrmean)
    if deviations.dtype.kind == "c":
        squares = np.multiply(deviations, np.conjugate(deviations)).real
    else:
        squares = np.multiply(deviations, deviations)
    result = _divided(np.add.reduce(squares, axis, dtype, None, keepdims),
                      np.maximum(count - ddof, 0), out_given)
    if name == "std":
        result = np.sqrt(result) if isinstance(result, np.ndarray) else \
            result.dtype.type(np.sqrt(result))
    return result


def _divided(total, count, out_given):
    """NumPy's last step of a mean or var: an array divided in place, a scalar (a 0-d
    result without ``out=``) by Python's division of NumPy scalars."""
    if isinstance(total, np.ndarray) or out_given:
        total = np.asarray(total)
        return np.true_divide(total, count, out=total, casting="unsafe")
    return total.dtype.type(total / count)


def _row_loop(x, axis, name):
    """(reduce, grid, size): row_reductions' reduction ``name`` (sum, max, min) of ``x`` over
    ``axis`` (an int) as a (rows, columns) grid into ``size`` results, where it gives NumPy's
    bits: C-contiguous float32/float64; for a sum the last axis of at most MAX_ROW elements
    (max and min: not there, which of two equal zeros NumPy keeps follows its SIMD width), or
    axis 0 over two columns or more; else None."""
    shape, dtype = shape_of(x), np.dtype(x.dtype)
    if (dtype not in _ROW_DTYPES or len(shape) < 2 or type(axis) is not int
            or not is_c_contiguous(x)):
        return None
    axis %= len(shape)
    if axis == len(shape) - 1 and 0 < shape[-1] <= MAX_ROW and name == "sum":
        grid, size = (math.prod(shape[:-1]), shape[-1]), math.prod(shape[:-1])
    elif axis == 0 and shape[0] and math.prod(shape[1:]) >= 2:
        name = name + "_columns"
        grid, size = (shape[0], math.prod(shape[1:])), math.prod(shape[1:])
    else:
        return None
    return row_reducer(name, dtype, numpy_first=True), grid, size


def _mean_run(x, shape, axis, axes, keepdims):
    """np.mean(x, axis, out=out) is NumPy's ``_methods._mean``: add.reduce (in float64 for
    integer and bool input) into out, then out divided in place by the count as an intp (a
    strong int: the division promotes as NumPy's does). The same two calls, without the ~3 us
    of Python around them (float16 input is computed in float32 there: not this run)."""
    sum_dtype = np.dtype(np.float64) if x.dtype.kind in "iub" else None
    count = np.intp(math.prod(shape[a] for a in axes))
    divide = np.true_divide
    loop = _row_loop(x, axis, "sum")  # by a row or column loop: NumPy's bits, sooner
    if loop is not None:
        reduce, grid, size = loop

        def run_loop(inputs, outputs, req, params):
            out = outputs[0]
            reduce(inputs[0].reshape(grid), out.reshape(size))
            divide(out, count, out=out, casting="unsafe")
        return run_loop
    axis = None if axis is None else axes
    add = np.add.reduce

    def run(inputs, outputs, req, params):
        out = outputs[0]
        add(inputs[0], axis, sum_dtype, out, keepdims=keepdims)
        divide(out, count, out=out, casting="unsafe")
    return run


def register_all() -> None:
    for name in REDUCTIONS:
        Reduction(name).register()
