"""What a worker runs for one op: its plan on the arrays' memory.

`Run` carries an op's plan to the worker, which decides nothing: it takes the arrays' views
(their memory, allocated by then) and calls the plan's ``run``. `BoundRun` is the run of an op
whose views exist at the push (a CPU op on small arrays, or one under lazy.INLINE_ELEMENTS:
pipeline's ``_binds_pool_buffers``): segment.py gathers it into a window. Both set NumPy's
error state of their push where they run, and keep its reports (fp_errors.py). No state.
"""
import numpy as np

from ..ops import OpReq
from . import fp_errors as _fp
from . import gpu as _gpu
from .array import NDArray

__all__ = ["Run", "BoundRun"]

_WRITE_TO = [OpReq.WRITE_TO]
_fp_set, _fp_reset = _fp.set_state, _fp.reset_state
_fp_messages, _fp_kept = _fp.MESSAGES, _fp.KEPT


def _describe(inputs, outputs):
    """Profiler arguments: shapes and dtypes of the arrays an op reads and writes."""
    return {"inputs": [(x.shape, str(x.dtype)) if isinstance(x, (NDArray, np.ndarray))
                       else (repr(x),) for x in inputs],
            "outputs": [(x.shape, str(x.dtype)) for x in outputs]}


class Run:
    """What a worker runs for one op: the op's plan on the arrays' memory."""

    __slots__ = ("plan", "inputs", "outputs", "req", "params", "cast_into", "fp")

    def __init__(self, plan, inputs, outputs, req, params, cast_into, fp):
        self.plan = plan
        self.inputs = inputs
        self.outputs = outputs
        self.req = req
        self.params = params
        self.cast_into = cast_into
        self.fp = fp  # the NumPy error state of its push (fp_errors.py)

    def describe(self):
        """Profiler arguments (called only by a run hook)."""
        return _describe(self.inputs, self.outputs)

    def __call__(self, run_ctx):
        stream = run_ctx.stream
        fp = self.fp
        token = _fp_set(fp.run_state)
        try:
            if stream is not None:  # a GPU op: its memory is taken and used on its stream
                with stream:
                    self._run(run_ctx, _gpu.xp(run_ctx.ctx))
            else:
                self._run(run_ctx, np)
        finally:
            _fp_reset(token)
        if _fp_kept:
            _fp.inherit(self.inputs, self.outputs)
        if _fp_messages:
            _fp.collect(fp, self.outputs)

    def _run(self, run_ctx, xp):
        args = []
        for x in self.inputs:
            if type(x) is NDArray:
                view = x._view_cache  # x._data(), without the call when it is cached
                args.append(view if view is not None else x._data())
            else:
                args.append(x)
        outs = []
        for x in self.outputs:
            outs.append(x._data())
        run = self.plan.run
        if self.cast_into is not None:
            # In-place op whose result dtype differs from the target's (float32 += float64):
            # compute at the result dtype, then cast into place as NumPy does.
            temps = [xp.empty(o.shape, dt) for o, dt in zip(outs, self.cast_into)]
            run(args, temps, _WRITE_TO * len(temps), self.params)
            for out, temp in zip(outs, temps):
                xp.copyto(out, temp, casting="unsafe")
        else:
            run(args, outs, self.req, self.params)


class BoundRun:
    """The run of a CPU op whose arrays are all small (SmallChunk), or whose call is under
    lazy.INLINE_ELEMENTS (pipeline's `_binds_pool_buffers`): their memory exists at the push
    (a pool buffer is taken then), so the views are taken there and the worker only calls
    the plan's run."""

    # reads, writes (chunks), name: what a segment needs of it; origin: set when gathered;
    # fp: the NumPy error state of its push (fp_errors.py)
    __slots__ = ("run", "args", "outs", "req", "params", "reads", "writes", "name", "origin",
                 "fp")

    def __init__(self, run, args, outs, req, params, reads, writes, name, fp):
        self.run = run
        self.args = args
        self.outs = outs
        self.req = req
        self.params = params
        self.reads = reads
        self.writes = writes
        self.name = name
        self.fp = fp

    def describe(self):
        """Profiler arguments (called only by a run hook)."""
        return _describe(self.args, self.outs)

    def __call__(self, run_ctx):  # pushed alone (a gathered one runs in its window's op)
        fp = self.fp
        token = _fp_set(fp.run_state)
        try:
            self.run(self.args, self.outs, self.req, self.params)
        finally:
            _fp_reset(token)
        if _fp_kept:
            _fp.inherit(self.reads, self.writes)
        if _fp_messages:
            _fp.collect(fp, self.writes)
