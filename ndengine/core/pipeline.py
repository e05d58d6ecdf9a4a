"""The per-op pipeline: invoke, the one path every op takes, from the call to the push.

Per op: the call's signature (ops.plans: dtype, shape, strides per array, type or value per
scalar, the params, the write target), its plan (one dict lookup once seen), the plan's value
checks, the outputs; the run object (`_Run`) carries the plan to the worker, which decides
nothing. Shapes, dtypes, values and contexts are checked here, before anything is pushed.
Hand-tuning of the per-op cost lives here and only here (bench/tiny_ops.py guards it).
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
from . import segment as _segment
from .array import NDArray
from . import tape as _tape
from .chunk import RECORDING as _RECORDING, SmallChunk as _SmallChunk, new_array as _new_array

__all__ = ["invoke", "waitall", "as_operand", "from_numpy", "copy_between"]

_ASYNC, _NORMAL = FnProperty.ASYNC, FnProperty.NORMAL

_NO_PARAMS = {}  # shared, never written
_WRITE_TO = [OpReq.WRITE_TO]
_WRITE_INPLACE = [OpReq.WRITE_INPLACE]
_SCALARS = (bool, int, float, complex)
_KEY_SCALARS = frozenset(_SCALARS) | _NUMPY_SCALARS  # keyed by their type (or value)
_np_ndarray = np.ndarray
# NumPy's error state: read at the push (one get, one lookup), applied where the op runs
_fp_state_at_push = _fp.state_at_push
_fp_set, _fp_reset = _fp.set_state, _fp.reset_state
_fp_messages, _fp_kept = _fp.MESSAGES, _fp.KEPT

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


def _describe(inputs, outputs):
    """Profiler arguments: shapes and dtypes of the arrays an op reads and writes."""
    return {"inputs": [(x.shape, str(x.dtype)) if isinstance(x, (NDArray, np.ndarray))
                       else (repr(x),) for x in inputs],
            "outputs": [(x.shape, str(x.dtype)) for x in outputs]}


class _Run:
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


class _BoundRun:
    """The run of a CPU op whose arrays are all small (SmallChunk), or whose call is under
    lazy.INLINE_ELEMENTS (`_binds_pool_buffers`): their memory exists at the push (a pool
    buffer is taken then), so the views are taken there and the worker only calls the plan's
    run."""

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
    them (a failed array written whole becomes valid again).
    Per op: the call's signature (ops.plans: dtype, shape, strides per array, type or value
    per scalar, the params, the write target), its plan (one dict lookup once seen), the
    plan's value checks, the outputs; the run object carries the plan to the worker. Shapes,
    dtypes, values and contexts are checked here, before anything is pushed.
    Every line is paid by every tiny op, hence the spelled-out common cases.
    """
    if _RECORDING[0] and _tape.is_recording():  # autograd: run it, then tape it
        return _tape.invoke_recorded(op, inputs, params, out, ctx, ctx_check, extra_writes,
                                     overwrites)
    if params is None:
        params = _NO_PARAMS
    engine = _engine_mod.get()
    bulk_size = engine.bulk_size
    # While the engine gathers, reads and writes are chunks (a small chunk's var is made at
    # its first use, and a temporary gathered and dropped never needs one): their vars are
    # taken only if the op is pushed alone. The NaiveEngine never gathers: vars at once.
    gathering = bulk_size > 1
    reads = []
    key = []
    args = []  # what a bound run gets: views (NDArrays yet to bind: pooled) and scalars
    by_type = op.scalars_by_type
    # small: the run can be bound to the arrays' memory at the push (a bound run, gathered
    # into the thread's window): every array a SmallChunk, whose memory exists, or (pooled)
    # a CPU array of a call under lazy.INLINE_ELEMENTS, whose pool buffer is taken now
    small = True
    pooled = False
    for x in inputs:
        kind = type(x)
        if kind is NDArray:
            chunk = x._chunk
            if chunk.ctx is not ctx:
                if ctx is None:
                    ctx = chunk.ctx
                elif ctx_check:
                    raise ValueError(
                        f"{op.name}: arrays are on different contexts ({ctx} and {chunk.ctx});"
                        " move one with .copyto(ctx) or .as_in_context(ctx) first")
            reads.append(chunk if gathering else chunk.var)
            key += (x.dtype, x.shape, x._strides)  # _strides None: C-contiguous
            if small:
                if type(chunk) is _SmallChunk:  # its memory exists: the run gets the view
                    view = x._view_cache
                    args.append(view if view is not None else x._data())
                else:
                    args.append(x)  # bound below, if the call is under the inline size
                    pooled = True
        elif kind in _KEY_SCALARS:
            key.append(kind if by_type else (kind, x))
            args.append(x)
        else:
            key.extend(_input_key(x, by_type))
            args.append(x)
    if ctx is None:
        ctx = current_context()
    key.append(_param_key(params, op.value_params, op.unkeyed_params) if params else None)
    aliases = None
    if out is None:
        key.append(None)
    else:
        if out._chunk.ctx is not ctx and ctx_check:
            raise ValueError(
                f"{op.name}: arrays are on different contexts ({ctx} and {out._chunk.ctx}); "
                "move one with .copyto(ctx) or .as_in_context(ctx) first")
        aliases = _aliases(inputs, out)
        key.append((out.dtype, out.shape, out._strides, aliases, None))
    key = tuple(key)
    device = ctx.device_type
    plan = None
    if device == "cpu":
        try:
            plan = op.plans.get(key)
        except TypeError:  # unhashable params: op.plan builds this call's own plan
            pass
    if plan is None:
        if out is not None and op.kind in _UFUNC_KINDS:
            _check_ufunc_cast(op, inputs, params, out)  # NumPy checks the cast first
        plan = op.plan(inputs, params, key=key, target=out, aliases=aliases, device=device)
    check = plan.check
    if check is not None:
        check(inputs, params)
    binds_pool = None  # whether pool buffers are bound at the push (_binds_pool_buffers)
    if pooled:
        binds_pool = _binds_pool_buffers(op, params, plan, device)
        if binds_pool:
            args = [x._data() if type(x) is NDArray else x for x in args]
        else:
            small = False
    cast_into = None
    outs = None  # the outputs' views, while every array is small
    if out is None:
        specs = plan.outputs
        if len(specs) == 1:  # the common case, spelled out: one new array
            shape, dtype = specs[0]
            result = _new_array(shape, dtype, ctx, engine)
            outputs = [result]
            chunk = result._chunk
            if gathering:
                writes = [chunk]
            elif type(chunk) is _SmallChunk:  # its var, made by the op that makes it
                writes = [_new_var(chunk, engine)]
            else:
                writes = [chunk.var]
            outs = ()  # (not bound)
            if small:
                if type(chunk) is _SmallChunk:
                    outs = [result._view_cache]  # a new small array's memory (chunk.py)
                else:
                    if binds_pool is None:
                        binds_pool = _binds_pool_buffers(op, params, plan, device)
                    if binds_pool:
                        outs = [result._data()]  # its pool buffer, taken now
                    else:
                        small = False
            req = _WRITE_TO
        else:
            outputs = [_new_array(shape, dtype, ctx, engine) for shape, dtype in specs]
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
        req = _WRITE_INPLACE if any(x is out for x in inputs) else _WRITE_TO
        outputs = [out]
    if outs is None:  # the chunks it writes, and their views while every array is small
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
    if small and cast_into is None and device == "cpu":
        run = _BoundRun(plan.run, args, outs, req, params, reads, writes, op.name,
                        _fp_state_at_push())
        if gathering and not extra_writes and not overwrites:
            _segment.append(engine, ctx, run, outputs, out is None, bulk_size)
            return outputs
        prop = _ASYNC
    elif (cast_into is None and _lazy.ENABLED
          and (plan.elements >= _lazy.FUSE_MIN_ELEMENTS or device != "cpu")
          and gathering and not extra_writes and not overwrites
          and _lazy.fusible(op, params)
          and _lazy.record(engine, ctx, op, plan, key, inputs, params, outputs[0],
                           out is None)):
        return outputs  # recorded in this thread's lazy window (lazy.py): fused at its flush
    else:
        run = _Run(plan, inputs, outputs, req, params, cast_into, _fp_state_at_push())
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


_tape.INVOKE[0] = invoke


def _binds_pool_buffers(op, params, plan, device):
    """Whether a call on arrays with pool buffers (over chunk.SMALL_BYTES) is bound to their
    memory at the push and gathered like a small one: a CPU call, every array under
    lazy.INLINE_ELEMENTS (such an op runs in the pushing thread anyway), and not an op a
    lazy window would record (lazy.FUSE_MIN_ELEMENTS, when a user lowered it)."""
    elements = plan.elements
    return device == "cpu" and elements < _lazy.INLINE_ELEMENTS and (
        elements < _lazy.FUSE_MIN_ELEMENTS or not (_lazy.ENABLED and _lazy.fusible(op, params)))


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

