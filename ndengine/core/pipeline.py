"""The per-op pipeline: invoke, the one path every op takes, from the call to the push.

Per op, in `invoke`'s phases (MXNet's ``Imperative::Invoke``): record for autograd (tape.py),
read the inputs (their chunks, the call's signature: ops.plans: dtype, shape, strides per
array, type or value per scalar), `_plan` (the params and the write target join the key; one
dict lookup once seen; the plan's value checks), the outputs (one new array spelled out in
invoke, any other case `_make_outputs`), then a bound run (runs.py) gathered by segment.py
(MXNet's BulkAppend), or `_fuse_or_push`: recorded into a lazy window (lazy.py), or pushed
alone (a run object of runs.py carries the plan to the worker, which decides nothing). Shapes,
dtypes, values and contexts are checked before anything is pushed. Hand-tuning of the
per-op cost lives here and only here (bench/tiny_ops.py guards it). No state.
"""

import numpy as np

from .. import engine as _engine_mod
from .. import ops
from ..engine import FnProperty, current_context
from ..ops import OpReq
from ..ops.dtypes import output_casting_error as _output_casting_error
from ..ops.plans import NO_ALIAS as _NO_ALIAS, OVERLAP as _OVERLAP, SAME_VIEW as _SAME_VIEW
from ..ops.plans import NUMPY_SCALAR_TYPES as _NUMPY_SCALARS
from ..ops.plans import input_key as _input_key, param_key as _param_key
from . import fp_errors as _fp
from . import gpu as _gpu
from . import lazy as _lazy
from .lazy import offered as _lazy_offered, record as _lazy_record
from . import segment as _segment
from . import tape as _tape
from .array import NDArray, new_array as _new_array
from .fp_errors import state_at_push as _fp_state_at_push
from .segment import append as _gather, run_now as _run_now
from .chunk import SmallChunk as _SmallChunk
from .runs import BoundRun, Run
from .tape import RECORDING as _RECORDING

__all__ = ["invoke", "waitall", "as_operand", "from_numpy", "copy_between"]

_ASYNC, _NORMAL = FnProperty.ASYNC, FnProperty.NORMAL

_NO_PARAMS = {}  # shared, never written
_engine_get = _engine_mod.get  # the process-wide engine, per op (a global: no module lookup)
_WRITE_TO = [OpReq.WRITE_TO]
_WRITE_INPLACE = [OpReq.WRITE_INPLACE]
_SCALARS = (bool, int, float, complex)
_KEY_SCALARS = frozenset(_SCALARS) | _NUMPY_SCALARS  # keyed by their type (or value)

# ---------------------------------------------------------------- operands and invoke
def as_operand(value, ctx, numpy_scalars=False):
    """Python scalars stay scalars (weak, as in NumPy); arrays of any kind become NDArrays.
    ``numpy_scalars``: NumPy scalars of a supported dtype stay scalars too (strong 0-d
    operands, which the ops take as they are: no array, no engine var)."""
    kind = type(value)
    if kind is NDArray or kind in _SCALARS or (numpy_scalars and kind in _NUMPY_SCALARS):
        return value
    if isinstance(value, NDArray):
        return value
    if isinstance(value, np.generic):
        return from_numpy(np.asarray(value), ctx)
    if isinstance(value, (np.ndarray, list, tuple)):
        return from_numpy(np.asarray(value), ctx)
    if isinstance(value, (bool, int, float)):  # subclasses of the Python scalars
        return type(value).__mro__[-2](value) if not isinstance(value, bool) else bool(value)
    raise TypeError(f"unsupported operand type {type(value).__name__} for an NDArray op")


def from_numpy(values, ctx, dtype=None):
    """A new NDArray holding a private copy of ``values`` (no op is pushed: it is ready)."""
    values = np.asarray(values, dtype=dtype)
    ops.check_dtype(values.dtype)
    arr = _new_array(values.shape, values.dtype, ctx)
    if ctx.device_type == "cpu":
        arr._data()[...] = values
    else:
        _push_upload(values, arr)
    return arr


def filled_now(shape, dtype, ctx, value):
    """A new small CPU array filled with the scalar ``value`` at the call (`new_array` made
    its memory with it: a pushed fill would cost ~3 us more), or None where a pushed fill
    makes it (pool memory is taken when the fill runs; GPU memory on its stream)."""
    arr = _new_array(shape, dtype, ctx)
    if type(arr._chunk) is not _SmallChunk:
        return None
    arr._view_cache.fill(value)
    return arr


def _push_upload(values, arr):
    """Copy ``values`` (host) onto arr's GPU: into pinned staging memory now (the caller's
    array may change once this returns), then a pushed DMA on the GPU's copy pool."""
    device = _gpu.backend(arr.context)
    staged = device.host_empty(values.shape, arr.dtype)
    np.copyto(staged, values, casting="unsafe")

    def upload(run_ctx):
        with run_ctx.stream:
            device.upload(arr._data(), staged, run_ctx.stream)
    _engine_mod.get().push_sync(upload, arr.context, (), (arr._chunk.var,),
                                FnProperty.COPY_TO_GPU, name="copy_to_gpu",
                                overwrites=(arr._chunk.var,))


def copy_between(source, target):
    """Push target[...] = source across contexts (cast to target's dtype): a copy op on the
    GPU's copy pool, or on the source GPU's for GPU to GPU."""
    src_ctx, dst_ctx = source.context, target.context
    if src_ctx.device_type == "cpu" and dst_ctx.device_type == "cpu":
        invoke(ops.get("copy"), [source], {"shape": target.shape, "dtype": target.dtype},
               out=target, ctx_check=False)
        return
    if src_ctx.device_type == "gpu":
        device, prop, run_on = _gpu.backend(src_ctx), FnProperty.COPY_FROM_GPU, src_ctx
    else:
        device, prop, run_on = _gpu.backend(dst_ctx), FnProperty.COPY_TO_GPU, dst_ctx

    def copy(run_ctx):
        stream = run_ctx.stream
        with stream:
            src, dst = source._data(), target._data()
            if dst_ctx.device_type == "cpu":
                np.copyto(dst, device.download(src, stream), casting="unsafe")
            elif src_ctx.device_type == "cpu":  # through pinned memory: the DMA is async
                staged = device.host_empty(src.shape, dst.dtype)
                np.copyto(staged, src, casting="unsafe")
                device.upload(dst, staged, stream)
            else:
                device.device_copy(dst, src, stream)
    _segment.flush_before((source, target))  # e.g. the lazy window that computes source
    _engine_mod.get().push_sync(copy, run_on, (source._chunk.var,), (target._chunk.var,),
                                prop, name="copyto")


def _aliases(inputs, out):
    """Each input's alias code against ``out`` (ops.plans: 0 none, 1 the same view, 2 may
    overlap), or None when no input shares out's chunk."""
    chunk = out._chunk
    codes = None
    for i, x in enumerate(inputs):
        if type(x) is NDArray and x._chunk is chunk:
            if codes is None:
                codes = [_NO_ALIAS] * len(inputs)
            same = x is out or (x._offset == out._offset and x._strides == out._strides
                                and x.shape == out.shape and x.dtype == out.dtype)
            codes[i] = _SAME_VIEW if same else _OVERLAP
    return None if codes is None else tuple(codes)


_UFUNC_KINDS = ("unary", "binary")


def _cannot_cast(op, dtype, out):
    raise _output_casting_error(op.name, dtype, out.dtype)


def _check_ufunc_cast(op, inputs, params, out):
    """A ufunc's result dtype must cast to ``out``'s (same_kind) before any shape is looked
    at, as in NumPy: the dtypes alone decide it, so 0-d stand-ins of the arrays are planned."""
    specs = [_DtypeOnly(x.dtype) if type(x) is NDArray else x for x in inputs]
    try:
        plan = op.plan(specs, params, device="cpu")
    except Exception:  # noqa: BLE001 - the full plan below raises the real error
        return
    dtype = plan.outputs[0][1]
    if dtype != out.dtype and not np.can_cast(dtype, out.dtype, "same_kind"):
        _cannot_cast(op, dtype, out)


class _DtypeOnly:
    """A 0-d array spec with an array's dtype (what a ufunc's dtype resolution reads)."""
    __slots__ = ("dtype",)
    shape = ()
    strides = None

    def __init__(self, dtype):
        self.dtype = dtype


def _wrong_out_shape(op, shape, out):
    raise ValueError(f"{op.name}: result of shape {shape} cannot be written into an array "
                     f"of shape {out.shape}")


def invoke(op, inputs, params=None, out=None, ctx=None, ctx_check=True, extra_writes=(),
           overwrites=()):
    """Push ``op`` on ``inputs`` (NDArrays, Python scalars, NumPy scalars); return the outputs.

    ``out`` (an NDArray) makes the op write in place into it; ``ctx`` places ops that have
    no array input; ``extra_writes`` are more vars the op writes (a random generator's);
    ``overwrites``, vars among the writes whose every byte the op replaces without reading
    them (a failed array written whole becomes valid again). Phases: the module docstring.
    """
    if _RECORDING[0] and _tape.is_recording():  # record for autograd: run it, then tape it
        return _tape.invoke_recorded(invoke, op, inputs, params, out, ctx, ctx_check,
                                     extra_writes, overwrites)
    params = _NO_PARAMS if params is None else params
    engine = _engine_get()
    bulk_size = engine.bulking.size
    # Gathering, reads and writes are chunks (a small chunk's var is made at its first use);
    # args: what a bound run gets (views; NDArrays to bind: pooled); small: (see BoundRun)
    gathering = bulk_size > 1
    reads, key, args = [], [], []
    by_type = op.scalars_by_type
    small, pooled = True, False
    for x in inputs:
        kind = type(x)
        if kind is NDArray:
            arr = x
            chunk = arr._chunk
            if chunk.ctx is not ctx:
                if ctx is None:
                    ctx = chunk.ctx
                elif ctx_check:
                    _different_contexts(op, ctx, chunk.ctx)
            reads.append(chunk if gathering else chunk.var)
            key += (arr.dtype, arr.shape, arr._strides)  # _strides None: C-contiguous
            if small:
                if type(chunk) is _SmallChunk:  # its memory exists: the run gets the view
                    view = arr._view_cache
                    args.append(view if view is not None else arr._data())
                else:
                    args.append(x)
                    pooled = True
        elif kind in _KEY_SCALARS:
            key.append(kind if by_type else (kind, x))
            args.append(x)
        else:
            key.extend(_input_key(x, by_type))
            args.append(x)
    if ctx is None:
        ctx = current_context()
    plan, plan_key = _plan(op, inputs, params, out, ctx, ctx_check, key)
    device = ctx.device_type
    binds_pool = None  # whether pool buffers are bound at the push (_binds_pool_buffers)
    if pooled:  # bound at the push, or not small
        binds_pool = small = _binds_pool_buffers(op, params, plan, device)
        args = [x._data() if type(x) is NDArray else x for x in args] if small else args
    if out is None and len(plan.outputs) == 1:  # the common case, spelled out: a new array
        shape, dtype = plan.outputs[0]
        result = _new_array(shape, dtype, ctx)
        outputs, chunk, req = [result], result._chunk, _WRITE_TO
        writes = [chunk if gathering else _new_var(chunk, engine)
                  if type(chunk) is _SmallChunk else chunk.var]
        outs, cast_into = (), None  # (not bound)
        if small:
            if type(chunk) is _SmallChunk:
                outs = [result._view_cache]  # a new small array's memory (chunk.py)
            elif binds_pool or binds_pool is None and _binds_pool_buffers(op, params, plan,
                                                                          device):
                outs = [result._data()]  # its pool buffer, taken now
            else:
                small = False
    else:
        outputs, writes, outs, req, plan, cast_into, small = _make_outputs(
            op, inputs, params, out, ctx, engine, plan, plan_key, gathering, small, binds_pool)
    run = None
    if small and cast_into is None and device == "cpu":
        gathers = gathering and not extra_writes and not overwrites
        if gathers and _run_now(engine, plan.run, args, outs, req, params, reads, writes,
                                op.name):
            return outputs  # ran at once: nothing before it touches its arrays (segment.py)
        run = BoundRun(plan.run, args, outs, req, params, reads, writes, op.name,
                       _fp_state_at_push())
        if gathers:  # MXNet's BulkAppend
            _gather(engine, ctx, run, outputs, out is None, bulk_size)
            return outputs
    return _fuse_or_push(op, inputs, params, out, ctx, engine, plan, plan_key, gathering, small,
                         run, reads, writes, outputs, req, cast_into, extra_writes, overwrites)


def _different_contexts(op, ctx, other):
    raise ValueError(f"{op.name}: arrays are on different contexts ({ctx} and {other}); "
                     "move one with .copyto(ctx) or .as_in_context(ctx) first")


def _plan(op, inputs, params, out, ctx, ctx_check, key):
    """The call's plan and its key (ops.plans): ``key``, the inputs' part, is finished with
    the params and the write target; a CPU call seen before costs one dict lookup; then the
    plan's value checks run (MXNet's SetShapeType)."""
    key.append(_param_key(params, op.value_params, op.unkeyed_params) if params else None)
    aliases = None
    if out is None:
        key.append(None)
    else:
        if out._chunk.ctx is not ctx and ctx_check:
            _different_contexts(op, ctx, out._chunk.ctx)
        aliases = _aliases(inputs, out)
        key.append((out.dtype, out.shape, out._strides, aliases, None))
    call_key = tuple(key)
    device = ctx.device_type
    plan = None
    if device == "cpu":
        try:
            plan = op.plans.get(call_key)
        except TypeError:  # unhashable params: op.plan builds this call's own plan
            pass
    if plan is None:
        if out is not None and op.kind in _UFUNC_KINDS:
            _check_ufunc_cast(op, inputs, params, out)  # NumPy checks the cast first
        plan = op.plan(inputs, params, key=call_key, target=out, aliases=aliases, device=device)
    check = plan.check
    if check is not None:
        check(inputs, params)
    return plan, call_key


def _make_outputs(op, inputs, params, out, ctx, engine, plan, key, gathering, small,
                  binds_pool):
    """The outputs of a call with ``out`` (checked against the plan as NumPy checks it) or
    with several new arrays (invoke spells out one new array), the chunks (or vars) they
    write and, while every array is small, their views (MXNet's SetNDInputsOutputs).
    Returns (outputs, writes, outs, req, plan, cast_into, small)."""
    cast_into = None
    device = ctx.device_type
    if out is None:
        specs = plan.outputs
        outputs = [_new_array(shape, dtype, ctx) for shape, dtype in specs]
        req = _WRITE_TO * len(outputs)
    else:
        shape, dtype = plan.outputs[0]
        # NumPy's order: a ufunc checks the cast before the shape, other functions after
        if shape != out.shape and op.kind not in _UFUNC_KINDS:
            _wrong_out_shape(op, shape, out)
        if dtype != out.dtype:
            if not np.can_cast(dtype, out.dtype, "same_kind"):
                _cannot_cast(op, dtype, out)
            cast_into = [dtype]
        if shape != out.shape:
            _wrong_out_shape(op, shape, out)
        if cast_into is not None:  # the run writes fresh temporaries, then casts
            plan = op.plan(inputs, params, key=key[:-1] + (None,), device=device)
        req = _WRITE_INPLACE if _is_input(out, inputs) else _WRITE_TO
        outputs = [out]
    writes = []
    outs = []
    for x in outputs:
        chunk = x._chunk
        writes.append(chunk if gathering else chunk.var)
        if small:
            if type(chunk) is not _SmallChunk and binds_pool is None:
                binds_pool = _binds_pool_buffers(op, params, plan, device)
            if type(chunk) is _SmallChunk or binds_pool:
                view = x._view_cache
                outs.append(view if view is not None else x._data())
            else:
                small = False
    return outputs, writes, outs, req, plan, cast_into, small


def _is_input(out, inputs):
    for x in inputs:
        if x is out:
            return True
    return False


def _fuse_or_push(op, inputs, params, out, ctx, engine, plan, key, gathering, small, run,
                  reads, writes, outputs, req, cast_into, extra_writes, overwrites):
    """An op invoke did not gather: recorded into this thread's lazy window (fusion), or
    pushed alone (MXNet's PushFCompute): ``run``, its bound run, or else a `Run` of its plan.
    Returns the outputs."""
    device = ctx.device_type
    if run is not None:
        prop = _ASYNC
    elif (cast_into is None and gathering and not extra_writes and not overwrites
          and _lazy_offered(op, params, plan, device)
          and _lazy_record(engine, ctx, op, plan, key, inputs, params, outputs[0],
                           out is None)):
        return outputs  # recorded in this thread's lazy window (lazy.py): fused at its flush
    else:
        run = Run(plan, inputs, outputs, req, params, cast_into, _fp_state_at_push())
        # a CPU op whose arrays are all under lazy.INLINE_ELEMENTS runs in the pushing thread
        # when its inputs are ready (the engine's ASYNC placement, as for small arrays and
        # lazy windows of that size). Measured on 2 cores: a worker running such an op (64K
        # float32) costs more in hand-off and GIL contention than the op itself.
        prop = _ASYNC if device == "cpu" and (small or plan.elements < _lazy.INLINE_ELEMENTS) \
            else _NORMAL
    if gathering:  # pushed alone: the vars (a new small array's made here, by its op)
        reads = [chunk.var for chunk in reads]
        writes = [chunk.var if out is not None or type(chunk) is not _SmallChunk
                  else _new_var(chunk, engine) for chunk in writes]
    if extra_writes:
        writes.extend(extra_writes)
    _segment.flush_before(inputs, outputs)  # gathered ops of this thread, and any on these
    engine.push_sync(run, ctx, reads, writes, prop, 0, op.name,
                     run.describe,  # called only by a profiler
                     _engine_mod.caller_origin,  # called only when needed: the user's line
                     overwrites)
    return outputs


def _binds_pool_buffers(op, params, plan, device):
    """Whether a call on arrays with pool buffers (over chunk.SMALL_BYTES) is bound to their
    memory at the push and gathered like a small one: a CPU call, every array under
    lazy.INLINE_ELEMENTS (such an op runs in the pushing thread anyway), and not an op a
    lazy window would record (lazy.offered)."""
    return device == "cpu" and plan.elements < _lazy.INLINE_ELEMENTS and not _lazy_offered(
        op, params, plan, device)


def _new_var(chunk, engine):
    """The var of a new small array, made by the op that makes the array."""
    var = chunk.var = engine.new_variable()
    return var


def waitall():
    """Block until every pushed operation has finished; raise the first unseen error. Every
    thread's gathered ops (segment.py) are pushed first."""
    _segment.flush_all()
    try:
        _engine_mod.get().wait_for_all()
    finally:  # the FP reports of every op that ran (fp_errors.py), then the first error
        _fp.surface_all()

