"""Lazy element-wise windows: chains of element-wise ops on large arrays, recorded in front of
the engine and pushed as ONE fused op (automatic fusion; Bohrium's instruction list, MXNet's
bulking, jax.jit's fusion without a trace).

An element-wise op (``ops.fusion.kernel``'s ``FUSIBLE_OPS``: unary and binary ufuncs,
comparisons, ``where``, ``clip``, ``astype``) on arrays of ``FUSE_MIN_ELEMENTS`` elements or
more (``FUSE_MIN_NUMPY_ELEMENTS`` for one NumPy's own loop computes; from
``FUSE_MIN_MEDIUM_ELEMENTS``, see `offered`; on a GPU: any array not small) is not pushed by
`invoke`: it is recorded in this thread's lazy window, which hands back its output at once, an
array with no memory yet. The window is flushed by segment.py's rules (any other op of this
thread, a wait or value read, another thread touching its arrays, ``waitall``, a fork, exit)
and by three of its own: a view conflict, a shape change, and ``MAX_OPS`` ops; a tail
reduction (``sum(sqrt(x*x + 1))``) closes it to further ops. The flush
pushes ONE engine op that reads the vars of its leaves and writes the vars of its outputs:

* leaves: the arrays its ops read that no op of the window had written, one per distinct view;
* outputs: the last value written into each array that existed before the window (in-place
  ops: ``x += y``, ``u[1:-1] += ...``), and the arrays its ops made that are still referenced
  at the flush. An array made in the window and dropped before the flush (the temporaries of
  ``a*b + c``, the ``x`` rebound by ``x = x*2 + 1``) is never allocated: nothing can read it.
  A window none of whose results is alive pushes nothing.

Back-pressure. The engine bounds the pending work, not the count of ops (its executor's
``pending_work``): a window's op weighs as its ops do, each 1 plus 1 per ``WORK_ELEMENTS``
elements, so a thread looping ``x += 1`` on a large array cannot queue seconds of fused work
ahead of a reader. A window is pushed without waiting (see segment.py), so the op that opens
a window waits for room before it is recorded (the ops joining it push nothing: they need
not), an op that pushed the window before it (a view conflict, a shape change, a closed
window) waits once it is recorded, with the lock released, and a full window waits before its
push, with its segment's lock released (segment.py's ``flush_full``); another thread that
needs it (a reader) pushes it at once.

The op (lazy_run.py's `FusedRun`) runs ``ops.fusion.kernel``'s kernel for the window's program,
built once per window structure (op names, their plan keys, how their arguments connect, which
nodes are outputs; sizes and strides are in the plan keys, scalar values are arguments). It
runs the ops one by one instead (each op's own plan, as if pushed alone; dead values in
recycled pool buffers) the first time a structure on arrays under ``BUILD_AT_ONCE_ELEMENTS``
is seen, when the program cannot be fused (``NotFusible``), when one of its leaves failed, or
when the kernel raised: then each op that reads a failed array or raises fails the outputs it
reaches, with its own error, name and the user's line that recorded it, and every other
output is computed, as pushing each op would do.

View conflicts. The window refers to a chunk it wrote by the node that wrote it, through the
view written. An op that reads or writes such a chunk through another view flushes the window
first. Reading a chunk through one view and then writing it through another is no conflict
(``u[1:-1] += a*(u[2:] - 2*u[1:-1] + u[:-2])`` is one window): the kernel copies a leaf that
overlaps an output through another view before it writes anything.

`LazyWindow`, field by field (segment, open, engine, ctx, bulk, pushed: as segment.py's Window)
    nodes     the recorded ops (`_Node`), in push order.
    shape     the shape of its ops' results (a window holds one shape); "closed" once a
              tail reduction was recorded (no more ops join it).
    leaves    the NDArrays its ops read from outside the window, one per distinct view.
    leaf_at   dict (id(chunk), view) -> leaf index (each leaf holds its chunk alive).
    written   dict id(chunk) -> `_Written`: the view the window wrote, the node whose value it
              holds, and the pre-existing target array (or, for an array the window made, its
              chunk: held only here and by the user's arrays, so that its death shows).
    key       the nodes' structure keys, in order (the program cache's key).
    scalars   the scalar values the program takes, in its order.
Invariant: a node's refs name only leaves and earlier nodes, and every chunk its arrays use is
marked with the window, before the node is appended; ``written`` changes only after the append.
"""
import math
import sys

import numpy as np

from .. import engine as _engine_mod
from ..engine.errors import caller_origin as _caller_origin
from ..engine import FnProperty
from ..engine.config import env_bool, env_int
from ..ops.fusion.program import FUSIBLE_OPS, TAIL_REDUCTIONS, numpy_loop_computes
from .array import NDArray, array_on as _array_on
from .chunk import ARGUMENT_REFS, COMPILED, Chunk
from .fp_errors import state_at_push as _fp_state_at_push
from .lazy_run import FusedRun, program_stats
from .segment import (WindowBase, flush_full, flush_locked, flush_touching,
                      open_window_locked, thread_segment)

__all__ = ["ENABLED", "MAX_OPS", "WORK_ELEMENTS", "LazyWindow", "record", "fusible", "offered",
           "program_stats", "set_enabled"]

# Whether ops are recorded at all: NDENGINE_FUSION at import, then `set_enabled` (the
# process-wide ``ndengine.settings(fusion=...)``); read per op where invoke decides
ENABLED = env_bool("NDENGINE_FUSION", True)
MAX_OPS = env_int("NDENGINE_FUSION_MAX_OPS", 64, minimum=1)
INLINE_ELEMENTS = env_int("NDENGINE_FUSION_INLINE_ELEMENTS", 1 << 18, minimum=0)
# Smaller CPU arrays are not recorded: recording and the window's fixed cost (its program
# lookup, the kernel's call, the engine op: ~30 us) exceed what a fused pass saves, and each
# op pushed alone runs inline when ready (invoke). Measured on 2 cores: a long chain
# (x = (x*a + b)*c - d) breaks even at 16K-32K elements and fused takes 0.6x NumPy's time at
# 128K, where each op alone takes 1.4x; but scripts' windows are short (k-means' `labels == k`
# is one op, read at once by a boolean index) and at 32K k-means took 10-15% longer. So the
# default stays at 256K, and below it medium arrays open windows only where they come out long
# (FUSE_MIN_MEDIUM_ELEMENTS).
FUSE_MIN_ELEMENTS = env_int("NDENGINE_FUSION_MIN_ELEMENTS", 1 << 18, minimum=0)
# Ops NumPy's own loops compute (float exp, log, sin, ...: its SIMD loops, which a generated
# kernel does not reproduce bit for bit) make a window run on the blocked evaluator, one NumPy
# call per op and block: below this many elements that is the ops' own cost plus the window's,
# so they are pushed alone (an exp chain of 32K-200K elements took 1.1-1.25x its ops' time
# fused; `x = exp(x*-0.5 + 0.1)` at 100K float32 1.45x NumPy fused, 1.25x op by op).
FUSE_MIN_NUMPY_ELEMENTS = env_int("NDENGINE_FUSION_MIN_NUMPY_ELEMENTS", 1 << 18, minimum=0)
# Medium CPU arrays (from this many elements up to FUSE_MIN_ELEMENTS) open a window only by
# a call whose windows came out long: a window pays its fixed cost (~30 us: the program's
# lookup, the kernel's call, the engine op) once it has LONG_WINDOW_MIN_OPS ops whose results
# add up to LONG_WINDOW_BYTES (measured on 2 cores, chains of `y = y * a` waited for: from 6
# ops of 64K float32, 3 of 64K float64 or of 128K to 200K float32), where a long chain runs at
# 0.5-0.8x NumPy's time fused and 1.4-1.7x op by op; but most windows of scripts are short
# (k-means' `labels == k`, read at once by a boolean index). A call is told by its plan (the
# op and its operands' signature: one dict lookup, where the user's line would cost a walk of
# the frames); after SHORT_WINDOWS_KEPT short windows in a row opened by a plan, its calls
# are pushed alone, but for a try every RETRY_SHORT-th.
FUSE_MIN_MEDIUM_ELEMENTS = env_int("NDENGINE_FUSION_MIN_MEDIUM_ELEMENTS", 1 << 16, minimum=0)
LONG_WINDOW_BYTES = 3 << 19  # 1.5 MiB
LONG_WINDOW_MIN_OPS = 3  # two ops of 200K float32 (1.6 MB) measured slower fused: 61 us, 53
SHORT_WINDOWS_KEPT = 2
RETRY_SHORT = 1024
_PLANS_LIMIT = 4096
# plan -> short windows it opened in a row, then its calls refused since (plans hash by
# identity); a long window clears it
_short_windows = {}
_NUMPY_LOOP = {}  # plan -> whether NumPy's loop computes its op (memo; plans hash by identity)
# Back-pressure's unit is about one tiny op (~5 us); an element-wise pass over this many
# float64s costs about as much, so a member op weighs 1 plus 1 per this many elements
WORK_ELEMENTS = 1 << 13
_INLINE, _WORKER = FnProperty.ASYNC, FnProperty.NORMAL
_object_setattr = object.__setattr__
_CLOSED = "closed"  # a released window's ``bulk``: its op is the engine's alone
# refs to a dead fresh chunk in `seal`: the entry, the loop, and getrefcount's argument if any
_HELD_BY_WINDOW = 2 + ARGUMENT_REFS
_getrefcount = sys.getrefcount
# frames of record, pipeline._fuse_or_push and invoke (compiled, they push none)
_OWN_FRAMES = 0 if COMPILED else 3
_WEAK = (bool, int, float)
_STATIC = {"copy": frozenset(("dtype",)), "round": frozenset(("decimals", "dtype")),
           "clip": frozenset(("a_min", "a_max", "dtype"))}
_UFUNC_STATIC = frozenset(("dtype",))


def set_enabled(enabled):
    """Turn fusion on or off for every thread (``enabled``: a bool); returns the previous
    value. A window already open is pushed as it is at its next flush."""
    global ENABLED
    previous, ENABLED = ENABLED, enabled
    return previous


def offered(op, params, plan, device):
    """Whether invoke offers a call of ``op`` (``params``, its ``plan``) on ``device`` to this
    thread's lazy window: fusion on, the op fusible with these params, and on a CPU its
    largest array at least ``FUSE_MIN_ELEMENTS`` (``FUSE_MIN_NUMPY_ELEMENTS`` for an op NumPy's
    loop computes); from ``FUSE_MIN_MEDIUM_ELEMENTS`` an op joins this thread's open window,
    and opens one where the windows its plan opened came out long (not an op NumPy's loop
    computes). The window may still refuse it (`record`)."""
    if not ENABLED:
        return False
    if device != "cpu":
        return fusible(op, params)
    elements = plan.elements
    if elements < FUSE_MIN_MEDIUM_ELEMENTS and elements < FUSE_MIN_ELEMENTS:
        return False  # (the size first: most calls are small, and it is two comparisons)
    if not fusible(op, params):
        return False
    if elements >= FUSE_MIN_ELEMENTS:
        return elements >= FUSE_MIN_NUMPY_ELEMENTS or not _numpy_loop(op, plan)
    if _numpy_loop(op, plan):
        return False
    window = thread_segment().window
    if op.name in TAIL_REDUCTIONS:
        return _reducible(window, elements)
    return _joinable(window, plan.outputs[0][0]) or _opens_long_windows(plan)


def _numpy_loop(op, plan):
    """Whether NumPy's own loop computes ``op`` for this plan's result dtype (memo)."""
    found = _NUMPY_LOOP.get(plan)
    if found is None:
        if len(_NUMPY_LOOP) >= _PLANS_LIMIT:
            _NUMPY_LOOP.clear()
        found = _NUMPY_LOOP[plan] = numpy_loop_computes(op.name, plan.outputs[0][1])
    return found


def _gathering(window):
    """Whether ``window`` (a segment's) is a lazy window with ops, still gathering."""
    return type(window) is LazyWindow and window.bulk is None and len(window.nodes) > 0


def _joinable(window, shape):
    """Whether ``window`` is gathering and an op with a result of ``shape`` would join it (not
    one a reduction closed, nor of another shape: the op would push it and open another)."""
    return _gathering(window) and window.shape == shape


def _reducible(window, elements):
    """Whether ``window`` is gathering and could take a tail reduction of an array of
    ``elements``: not closed, of that size (`_record_tail` checks the array)."""
    return (_gathering(window) and type(window.shape) is tuple
            and math.prod(window.shape) == elements)


def _opens_long_windows(plan):
    """Whether a call of ``plan`` on medium arrays may open a window: not after
    SHORT_WINDOWS_KEPT short ones in a row opened by it, but for one try every RETRY_SHORT."""
    short = _short_windows.get(plan, 0)
    if short < SHORT_WINDOWS_KEPT or (
            (short - SHORT_WINDOWS_KEPT) % RETRY_SHORT == RETRY_SHORT - 1):
        return True  # unchanged: invoke may ask twice for one op (_binds_pool_buffers, then
        # _fuse_or_push); the window's flush counts it, short or long
    _short_windows[plan] = short + 1  # counted only when refused: it is asked once then
    return False


def _note_window_length(nodes):
    """At a flush: a window of medium arrays that came out short (under LONG_WINDOW_MIN_OPS
    ops, or their results under LONG_WINDOW_BYTES, each its first op's size) counts against the
    plan of its first op, a long one clears that plan's count."""
    if not nodes:
        return
    elements = math.prod(nodes[0].shape)
    if elements >= FUSE_MIN_ELEMENTS:
        return
    plan = nodes[0].plan
    ops = len(nodes)
    if (ops >= LONG_WINDOW_MIN_OPS
            and ops * elements * nodes[0].dtype.itemsize >= LONG_WINDOW_BYTES):
        _short_windows.pop(plan, None)
        return
    if len(_short_windows) >= _PLANS_LIMIT:
        _short_windows.clear()
    _short_windows[plan] = _short_windows.get(plan, 0) + 1


def fusible(op, params):
    """Whether ``op`` with ``params`` may be recorded (what the program builder takes): an
    element-wise op, or a tail reduction (over all axes or one) that closes a window."""
    name = op.name
    if name in TAIL_REDUCTIONS:
        axis = params.get("axis")
        return (len(params) == 2 and (axis is None or type(axis) is int)
                and type(params.get("keepdims")) is bool)
    if name not in FUSIBLE_OPS:
        return False
    if name == "copy" and "dtype" not in params:
        return False
    allowed = _STATIC.get(name, _UFUNC_STATIC)
    for key in params:
        if key not in allowed:
            return False
    return True


class _Node:
    __slots__ = ("op", "plan", "refs", "params", "shape", "dtype", "name", "origin", "tail",
                 "fp")

    def __init__(self, op, plan, refs, params, shape, dtype, origin):
        self.op = op
        self.plan = plan
        self.refs = refs      # per input: ("l", leaf index), ("n", node index), ("s", value)
        self.params = params
        self.shape = shape
        self.dtype = dtype
        self.name = op.name
        self.origin = origin
        self.tail = False  # a reduction closing the window (its last node)
        self.fp = _fp_state_at_push()  # NumPy's error state of its push (fp_errors.py)


class _Written:
    __slots__ = ("view", "node", "target", "chunk")

    def __init__(self, view, node, target, chunk):
        self.view = view
        self.node = node
        self.target = target  # the pre-existing array written, or None
        self.chunk = chunk    # the chunk of an array the window made, or None


def _view_of(x):
    return (x._offset, x._strides, x.shape, x.dtype)


class LazyWindow(WindowBase):
    __slots__ = ("shape", "leaves", "leaf_at", "written", "key", "scalars")

    def __init__(self, segment, engine, ctx):
        WindowBase.__init__(self, segment, engine, ctx)
        self.shape = None
        self.leaves = []
        self.leaf_at = {}
        self.written = {}
        self.key = []
        self.scalars = []

    def refs_for(self, inputs, out, shape):
        """The refs of an op on ``inputs`` writing ``out`` (or a new array) of ``shape``, or
        None when the op cannot join this window (a view conflict or another shape)."""
        if self.shape is not None and shape != self.shape:
            return None
        written = self.written
        if out is not None:
            entry = written.get(id(out._chunk))
            if entry is not None and entry.view != _view_of(out):
                return None
        refs = []
        for x in inputs:
            if type(x) is NDArray:
                chunk = x._chunk
                view = _view_of(x)
                entry = written.get(id(chunk))
                if entry is not None:
                    if entry.view != view:
                        return None
                    refs.append(("n", entry.node))
                    continue
                where = (id(chunk), view)
                index = self.leaf_at.get(where)
                if index is None:
                    index = self.leaf_at[where] = len(self.leaves)
                    self.leaves.append(x)
                refs.append(("l", index))
            elif type(x) in _WEAK or isinstance(x, np.generic):
                refs.append(("s", x))
            else:
                return None
        return refs

    def release(self):
        """Once closed: let its arrays go (marks still name the window, and a chunk -> window
        -> op -> array -> chunk cycle would keep large buffers until the cyclic GC ran)."""
        self.nodes = self.leaves = self.scalars = self.key = ()
        self.leaf_at = {}
        self.written = {}
        if self.bulk is not None:
            self.bulk = _CLOSED

    def seal(self):
        """The window's engine op, or None when none of its results is alive."""
        outputs, out_nodes, writes = [], [], []
        nodes = self.nodes
        _note_window_length(nodes)
        for entry in self.written.values():
            target = entry.target
            if target is None:
                chunk = entry.chunk
                if _getrefcount(chunk) <= _HELD_BY_WINDOW:
                    continue  # died in the window: never allocated
                node = nodes[entry.node]
                target = _array_on(chunk, node.shape, node.dtype)
            outputs.append(target)
            out_nodes.append(entry.node)
            writes.append(target._chunk.var)
        if not outputs:
            return None
        written = self.written
        reads = []
        for x in self.leaves:
            chunk = x._chunk
            if id(chunk) not in written and chunk.var not in reads:
                reads.append(chunk.var)
        # a worker runs it, the user's thread goes on; a window on arrays of less than
        # INLINE_ELEMENTS runs in the pushing thread when its inputs are ready (MXNet's
        # inline execution): waking a worker costs more than the kernel at that size
        elements = math.prod(nodes[0].shape)
        inline = elements < INLINE_ELEMENTS and self.ctx.device_type == "cpu"
        return FusedRun(self, reads, writes, outputs, out_nodes,
                        _INLINE if inline else _WORKER,
                        len(nodes) * (1 + elements // WORK_ELEMENTS))


def record(engine, ctx, op, plan, key, inputs, params, output, fresh):
    """Record ``op`` (its ``plan`` and the plan's key ``key``, chosen by invoke) on ``inputs``,
    writing ``output`` (a new array with no memory yet when ``fresh``, else the in-place target) in
    this thread's lazy window (invoke offers it: `offered`). False when it must be pushed
    alone (invoke then pushes it)."""
    name = op.name
    tail = name in TAIL_REDUCTIONS
    segment = thread_segment()
    if not _gathering_into(segment.window, engine, ctx):
        engine.wait_for_room()  # a new window: back-pressure for those pushed (see above)
    flush_touching(inputs, segment)  # another thread's open window on the arrays goes first
    if not fresh:
        flush_touching((output,), segment)
    origin = _caller_origin(_OWN_FRAMES)
    if tail:
        return fresh and _record_tail(segment, engine, ctx, op, plan, key, inputs[0], params,
                                      output, origin)
    shape = output.shape
    target = None if fresh else output
    with segment.lock:
        window = open_window_locked(segment, LazyWindow, engine, ctx)
        refs = window.refs_for(inputs, target, shape)
        pushed = refs is None
        if pushed:  # a view conflict or another shape: the window goes first
            flush_locked(segment)
            window = open_window_locked(segment, LazyWindow, engine, ctx)
            refs = window.refs_for(inputs, target, shape)
            if refs is None:
                engine.wait_for_room()
                return False
        for x in inputs:
            if type(x) is NDArray:
                x._chunk.window = window
        chunk = output._chunk
        if fresh and type(chunk) is not Chunk:
            # a small result of ops on large arrays (a bool mask of float64s): a pool chunk
            # without memory yet, so that the ops that use it are recorded here too
            chunk = Chunk(chunk.nbytes, ctx)
            _object_setattr(output, "_chunk", chunk)
            _object_setattr(output, "_view_cache", None)
        chunk.window = window
        nodes = window.nodes
        index = len(nodes)
        window.key.append((name, key, _ref_kinds(refs)))
        _add_scalars(window.scalars, refs, name, params)
        window.shape = shape
        nodes.append(_Node(op, plan, refs, params, shape,
                           output.dtype, origin))  # see the invariant
        window.written[id(chunk)] = _Written(_view_of(output), index, target,
                                             chunk if fresh else None)
        full = len(nodes) >= MAX_OPS
    if full:
        flush_full(window)
    elif pushed:
        engine.wait_for_room()  # for the window pushed (under the lock) above
    return True


def _gathering_into(window, engine, ctx):
    """Whether ``window`` is gathering for ``engine`` and ``ctx``: an op joining it needs no
    wait for room (its first op waited)."""
    return _gathering(window) and window.engine is engine and window.ctx is ctx


def _ref_kinds(refs):
    """The refs as the program key has them: a scalar by its kind only (its value is an
    argument of the program)."""
    kinds = []
    for ref in refs:
        kinds.append(ref if ref[0] != "s" else "s")
    return tuple(kinds)


def _record_tail(segment, engine, ctx, op, plan, key, x, params, output, origin):
    """A reduction of the value of one of the open window's ops closes the window as its
    tail (``sum(sqrt(x*x + 1))``): recorded, and the window takes no more ops. It is pushed
    at its next flush, not now: the reduced array is still referenced by this very call,
    and it usually dies before then (then it is never allocated)."""
    if type(x) is not NDArray:
        return False
    with segment.lock:
        window = segment.window
        if type(window) is not LazyWindow or window.bulk is not None \
                or window.engine is not engine or window.ctx is not ctx \
                or window.shape is _CLOSED:
            return False
        entry = window.written.get(id(x._chunk))
        if entry is None or entry.view != _view_of(x):
            return False
        chunk = output._chunk
        chunk.window = window
        nodes = window.nodes
        index = len(nodes)
        refs = [("n", entry.node)]
        window.key.append((op.name, key, tuple(refs)))
        node = _Node(op, plan, refs, params, output.shape, output.dtype, origin)
        node.tail = True
        nodes.append(node)  # see the invariant
        window.written[id(chunk)] = _Written(_view_of(output), index, None, chunk)
        window.shape = _CLOSED  # no shape matches: the next op flushes the window first
    return True


def _add_scalars(values, refs, name, params):
    """Append the scalars a node adds to the program to ``values``, in ProgramBuilder's
    order: its scalar arguments, then clip's bounds."""
    for kind, value in refs:
        if kind == "s":
            values.append(value)
    if name == "clip":
        for key in ("a_min", "a_max"):
            if params.get(key) is not None:
                values.append(params[key])
