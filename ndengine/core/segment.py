"""The pending segment: tiny ops gathered in front of the engine and pushed as one (bulking).

MXNet's ``BulkAppend``/``BulkFlush``. A small op costs more to push than to run, so each pushing
thread gathers its CPU ops whose arrays are all small or under the inline size (those
``invoke`` binds to their memory at the call: `runs.BoundRun`) into a window, and pushes
the window as ONE engine op once it holds the engine's ``bulk_size`` ops or its new arrays
hold ``WINDOW_BYTES``, or sooner when something needs its results or its place in the order:

* any other op this thread pushes (a large array, another context, a random draw, a copy to a
  device, an op with ``overwrites``): the window goes first;
* a wait or a value read on an array the window touches (``wait_to_read``, ``asnumpy``,
  ``print``, ``bool``, ``float``, ``item``, ``engine_var``), from any thread; ``waitall``
  flushes every thread's window;
* another thread's op on an array the window touches (reads or writes): that thread flushes
  the window first. Each chunk the window touches carries a mark (``chunk.window``);
* another engine or context; a fork (before it); interpreter exit.

Back-pressure. A window's op stands for its ops: its engine ``work`` is their count (a lazy
window's weighs their sizes too, lazy.py), so the engine's bound on pending work holds however
the ops were gathered. A window is pushed under its segment's lock, which other threads need to
flush it, so that push never sleeps in back-pressure (engine/waits.py): the owner waits for
room before it flushes a full window, with the lock released (``flush_full``), and any other
thread's flush (a reader's) pushes at once. The owner's other flushes are followed by one of its
throttled pushes, or, for a lazy window, by its next op's wait for room (lazy.py).

Semantics are those of pushing each op. The window's op reads the vars its ops read and none
writes, and writes every var they write, so the engine orders it as it would order them. It is
a TOLERANT engine op: it runs even when one of its vars failed, and applies the engine's
failure rule to each of its ops itself: an op that reads a failed var (or writes one) is
skipped and its outputs take the earliest failure (``engine.inherit_failure``); an op that
raises fails its own outputs with its error, its name and the user's line that pushed it
(``engine.fail_part``), and the window goes on with the next op. A Ctrl-C while
the window's op runs in the pushing thread fails every output of the window with the
"interrupted" error, as it fails a single op's outputs.

Segment, field by field (one per pushing thread)
    lock      guards ``window`` and the window's fields: the owner appends, any thread flushes.
    window    the open `Window`, or None.
Window, field by field (one per gathering; the next op opens a new one)
    segment   the Segment it belongs to.
    open      True until it is pushed; a mark naming a window that is not open means nothing.
    engine    the engine of its ops (the current one at its first op).
    ctx       the context of its ops.
    nodes     its ops (`runs.BoundRun`s, ``origin`` set, ``reads``/``writes`` the chunks they
              read and write), in push order.
    roles     dict chunk -> role: "read" (its ops read it, none writes it), "write" (one
              writes it), or, for the chunk of an array one of its ops made, the number of its
              nodes that hold the chunk (in their ``reads`` and ``writes``).
    nbytes    the bytes of the arrays its ops made (it is pushed beyond ``WINDOW_BYTES``).
    fresh     the chunks of the arrays its ops made; at the push, those that died meanwhile
              (no reference but the window's own: the list, its role, its nodes') leave the
              op's writes, and never get a var (``Window.vars``; chunk.SmallChunk).
    bulk      None while it gathers; its `_Bulk` once a flush began (nothing gathers then);
              "closed" once released.
    pushed    True once the engine took its op; then only the closing steps remain.
Invariant: every chunk of every node has a role and is marked with the window before the node
is appended, and a made array's count never exceeds the nodes that hold it: the counts grow
after the append (one C call). An interrupt leaves at most extra marks and roles, or a count
too low (a dead array looks alive: its var joins the writes), which cost only order.
Open windows are kept in ``_OPEN`` too, so a thread that ends with one keeps it until a wait,
another thread, ``waitall`` or interpreter exit pushes it.

Ctrl-C. A flush is restartable: a Ctrl-C anywhere in it leaves the window for the next flush
(the next op's append, a wait, ``waitall``) to finish, and nothing gathers into a window whose
flush began. A Ctrl-C during the push may land before or after the engine queued the op, so
the next flush may push it again: a window's op runs once however often it is pushed
(``_Bulk.ran``).
"""
import atexit
import os
import sys
import threading

from .. import engine as _engine_mod
from ..engine.errors import caller_origin as _caller_origin
from ..engine import FnProperty
from . import fp_errors as _fp
from . import at_once as _at_once
from .at_once import begin as _run_now_begin, end as _run_now_end
from .fp_errors import state_at_push as _fp_state_at_push
from .array import NDArray
from .chunk import ARGUMENT_REFS, COMPILED, Chunk, SmallChunk, idle as _idle

__all__ = ["append", "run_now", "flush_before", "flush_touching", "flush_own", "flush_all",
           "flush_window", "thread_segment", "open_window_locked", "flush_locked", "WindowBase",
           "flush_full"]

_ASYNC = FnProperty.ASYNC
_fp_kept, _fp_messages = _fp.KEPT, _fp.MESSAGES
_fp_set, _fp_reset = _fp.set_state, _fp.reset_state
_READ, _WRITE = "read", "write"  # a chunk's role in a window (one it made: a count)
_CLOSED = "closed"  # a released window's ``bulk``
# A window is pushed once the arrays its ops made hold this many bytes: the pool buffers of
# its dropped temporaries go back only once it ran. Measured on 2 cores (bench/medium_ops.py,
# 64K float32): 1 MiB pushed a window every ~4 ops and cost 8% more than no gathering at all;
# 4 MiB came out a few percent ahead; unbounded (64 ops, 16 MiB) fell behind again.
WINDOW_BYTES = 4 << 20
# references to a dead fresh chunk during Window.vars, besides its ops' (its role counts
# those): the fresh list, its role's key, the loop, and getrefcount's argument if it has one
_HELD_BY_WINDOW = 3 + ARGUMENT_REFS
_getrefcount = sys.getrefcount
# frames of append and invoke, known to be the package's (compiled, they push none)
_OWN_FRAMES = 0 if COMPILED else 2
_tls = threading.local()
_OPEN = set()  # segments with an open window (strong references: see the module docstring)
_OPEN_LOCK = threading.Lock()


class Segment:
    __slots__ = ("lock", "window", "__weakref__")

    def __init__(self):
        self.lock = threading.Lock()
        self.window = None


class WindowBase:
    """What every kind of window has (`Window` here, lazy.py's `LazyWindow`): see the module
    docstring."""

    __slots__ = ("segment", "open", "engine", "ctx", "nodes", "bulk", "pushed")

    def __init__(self, segment, engine, ctx):
        self.segment = segment
        self.open = True
        self.engine = engine
        self.ctx = ctx
        self.nodes = []
        self.bulk = None
        self.pushed = False

    def flush(self):
        """Push this window if it is still open, from any thread (chunk.flush_window_of: a
        wait, a value read or a direct use of a var it touches)."""
        flush_window(self)


class Window(WindowBase):
    __slots__ = ("roles", "fresh", "nbytes")

    def __init__(self, segment, engine, ctx):
        WindowBase.__init__(self, segment, engine, ctx)
        self.roles = {}
        self.fresh = []
        self.nbytes = 0

    def release(self):
        """Once closed: let its chunks go (marks still name the window: a chunk -> window ->
        chunk cycle would keep arrays until the cyclic GC ran)."""
        self.fresh = self.nodes = ()
        self.roles = {}
        if self.bulk is not None:
            self.bulk = _CLOSED  # its op is the engine's alone (its ops hold chunks)

    def seal(self):
        """The window's engine op (nothing gathers into the window from here on)."""
        reads, writes = self.vars()
        return _Bulk(self, reads, writes)

    def vars(self):
        """(reads, writes) of the window's op: the vars its ops read and none writes; the
        vars they write, but of the arrays they made only those still alive (a temporary
        that died in the window was never seen outside it: nothing can wait on it)."""
        reads, writes = [], []
        roles = self.roles
        for chunk, role in roles.items():
            if role is _READ:
                reads.append(chunk.var)
            elif role is _WRITE:
                writes.append(chunk.var)
        for chunk in self.fresh:
            if _getrefcount(chunk) > _HELD_BY_WINDOW + roles[chunk]:
                writes.append(chunk.var)
        return reads, writes


class _Bulk:
    """The engine op of a flushed window: its ops in push order (see the module docstring)."""

    __slots__ = ("engine", "ctx", "nodes", "reads", "writes", "ran", "name", "origin", "work")
    prop = _ASYNC  # tiny ops: run in the pushing thread when ready

    def __init__(self, window, reads, writes):
        self.engine = window.engine
        self.ctx = window.ctx
        self.nodes = nodes = window.nodes
        self.work = len(nodes)  # the engine's back-pressure counts each tiny op
        self.reads = tuple(reads)
        self.writes = tuple(writes)
        self.ran = False
        self.name = nodes[0].name if len(nodes) == 1 else f"bulk of {len(nodes)}"
        self.origin = nodes[0].origin

    def describe(self):
        """Profiler arguments: the member ops, in order."""
        return {"ops": [node.name for node in self.nodes]}

    def __call__(self, run_ctx):
        if self.ran:
            return  # pushed again after a Ctrl-C cut its first push short: it ran already
        self.ran = True
        engine = self.engine
        run_gathered(engine, self.nodes,
                     engine.any_failed(self.reads) or engine.any_failed(self.writes))


def run_gathered(engine, nodes, check):
    """Run a window's ``nodes`` (BoundRuns) in push order, each under the NumPy error state
    of its push (set once per run of ops pushed under one). A failing op fails its outputs
    and the ops after it still run; once any input may have failed (``check``), an op whose
    inputs failed is skipped and its outputs fail, exactly as each op alone would be."""
    fp = token = None
    try:
        for node in nodes:
            if check and engine.inherit_failure(_vars(node.reads), _vars(node.writes)):
                continue
            if node.fp is not fp:
                if token is not None:
                    _fp_reset(token)
                fp = node.fp
                token = _fp_set(fp.run_state)
            try:
                node.run(node.args, node.outs, node.req, node.params)  # node(run_ctx)
            except Exception as exc:  # noqa: BLE001 - kept on this op's outputs, as alone
                engine.fail_part(_vars(node.writes), exc, node.name, node.origin)
                check = True
            if _fp_kept:
                _fp.inherit(node.reads, node.writes)
            if _fp_messages:
                _fp.collect(fp, node.writes, node.origin)
    finally:
        if token is not None:
            _fp_reset(token)


def _vars(chunks):
    return [chunk.var for chunk in chunks]


def run_now(engine, run, args, outs, req, params, reads, writes, name):
    """Run an op on small arrays at once in the pushing thread, instead of gathering it, when
    nothing pushed or gathered before it touches its arrays (the chunks ``reads`` and
    ``writes``, small arrays' or pool buffers bound at the push: idle vars, no open window),
    no run hook watches the engine
    (a profiler sees every op) and at_once.py lets this thread: then the program is the same
    as if it had been gathered, at NumPy's cost. Its failure or FP errors are kept with its
    outputs exactly as a gathered op's (`run_gathered`). True if it ran, False if it must be
    gathered."""
    if engine.bulking.executor.hook is not None:
        return False
    for chunk in reads:
        if not _idle(chunk):
            return False
    for chunk in writes:
        if not _idle(chunk):
            return False
    if not _run_now_begin():
        return False
    try:
        fp = _fp_state_at_push()
        token = _fp_set(fp.run_state)
        try:
            run(args, outs, req, params)
        except Exception as exc:  # noqa: BLE001 - kept on its outputs, as a gathered op's
            engine.fail_part(_vars(writes), exc, name, _caller_origin(_OWN_FRAMES))
        finally:
            _fp_reset(token)
        if _fp_kept:
            _fp.inherit(reads, writes)
        if _fp_messages:
            _fp.collect(fp, writes, _caller_origin(_OWN_FRAMES))
    finally:
        _run_now_end()
    return True


def append(engine, ctx, run, outputs, fresh, bulk_size):
    """Gather ``run`` (an op on small arrays, a `runs.BoundRun`: it reads the chunks
    ``run.reads`` and writes the chunks ``run.writes``, those of ``outputs``; ``fresh``: its
    outputs are new arrays) into this thread's window; push the window once it holds
    ``bulk_size`` ops (the engine's)."""
    reads, writes = run.reads, run.writes
    segment = thread_segment()
    for chunk in reads:  # another thread's open window on the arrays goes first
        _flush_foreign(chunk.window, segment)
    if not fresh:
        flush_touching(outputs, segment)
    run.origin = _caller_origin(_OWN_FRAMES)
    with segment.lock:
        window = open_window_locked(segment, Window, engine, ctx)
        roles = window.roles
        for chunk in reads:
            chunk.window = window
            if chunk not in roles:
                roles[chunk] = _READ
        if fresh:
            fresh_chunks = window.fresh
            for chunk in writes:
                chunk.window = window
                fresh_chunks.append(chunk)
                roles[chunk] = 1  # held by this node
                window.nbytes += chunk.nbytes
        else:
            for chunk in writes:
                chunk.window = window
                if type(roles.get(chunk)) is not int:
                    roles[chunk] = _WRITE
        nodes = window.nodes
        nodes.append(run)  # the last step that matters (see the invariant)
        for chunk in reads:  # one more node holds each array the window made
            role = roles[chunk]
            if type(role) is int:
                roles[chunk] = role + 1
        if not fresh:
            for chunk in writes:
                role = roles[chunk]
                if type(role) is int:
                    roles[chunk] = role + 1
        full = len(nodes) >= bulk_size or window.nbytes > WINDOW_BYTES
    if full:
        flush_full(window)


def flush_full(window):
    """The owner of ``window``, which took its last op: wait for room in the engine
    (back-pressure), then push it, unless another thread did meanwhile. The segment's lock is
    not held while waiting, so a reader can flush the window and read at once."""
    window.engine.wait_for_room()
    flush_window(window)


def thread_segment():
    """This thread's Segment."""
    try:
        return _tls.segment
    except AttributeError:
        _at_once.note_thread()  # this thread's first gathered or recorded op
        segment = _tls.segment = Segment()
        return segment


def open_window_locked(segment, kind, engine, ctx):
    """With ``segment.lock`` held: its open window if it is a ``kind`` (`Window`, or
    lazy.py's `LazyWindow`) still gathering for ``engine`` and ``ctx``; else the window is
    pushed and a new ``kind(segment, engine, ctx)`` opened."""
    window = segment.window
    if window is None or type(window) is not kind or window.bulk is not None \
            or window.engine is not engine or window.ctx is not ctx:
        if window is not None:  # (a flush that a Ctrl-C cut short is finished here)
            flush_locked(segment)
        with _OPEN_LOCK:
            _OPEN.add(segment)  # first: an interrupt leaves it there with no window
        window = segment.window = kind(segment, engine, ctx)
    return window


def flush_window(window):
    """Push ``window`` if it is still open (from any thread)."""
    segment = window.segment
    with segment.lock:
        if segment.window is window:
            flush_locked(segment)


def flush_own():
    """Push this thread's open window, if any: before an op that is not gathered."""
    segment = getattr(_tls, "segment", None)
    if segment is None:
        _at_once.note_thread()  # (this thread's first push may be this one)
    elif segment.window is not None:
        with segment.lock:
            flush_locked(segment)


def flush_touching(arrays, skip=None):
    """Push every open window that touches one of the NDArrays among ``arrays``, except the
    windows of segment ``skip``."""
    for x in arrays:
        if type(x) is NDArray:
            _flush_foreign(x._chunk.window, skip)


def _flush_foreign(window, skip):
    """Push ``window`` (a chunk's mark) if it is open and not segment ``skip``'s."""
    if window is not None and window.segment is not skip and window.open:
        flush_window(window)


def flush_before(*array_lists):
    """Before an op pushed straight to the engine (not gathered): this thread's open window,
    then every window touching an NDArray in ``array_lists``, so that the engine sees the
    ops in the order they were written."""
    flush_own()
    for arrays in array_lists:
        flush_touching(arrays)


def flush_all():
    """Push every thread's open window (``waitall``, fork, interpreter exit)."""
    with _OPEN_LOCK:
        segments = list(_OPEN)
    for segment in segments:
        with segment.lock:
            flush_locked(segment)


def flush_locked(segment):
    """With ``segment.lock`` held: push its open window as one op, if it has one, and close
    it. Restartable: a Ctrl-C anywhere leaves the window where the next call (the next op's
    append, a flush or a wait) takes it up, and the window's op runs once however often it
    was pushed (``_Bulk.ran``)."""
    window = segment.window
    if window is None:
        return
    if window.nodes and not window.pushed:
        bulk = window.bulk
        if bulk is None:  # from here on nothing more gathers into the window
            window.bulk = bulk = window.seal()
        if bulk is not None:  # (None: a lazy window none of whose results is alive)
            window.engine.push_sync(bulk, window.ctx, bulk.reads, bulk.writes, bulk.prop, 0,
                                    bulk.name, bulk.describe, bulk.origin, (), True, bulk.work,
                                    False)  # under the lock: no back-pressure (see above)
        window.pushed = True
    # Closed in this order, so that an interrupt between two steps leaves nothing that can
    # gather into a pushed window: the segment forgets it first (marks naming it are then
    # ignored by flush_window), then it is marked closed, then its chunks are let go.
    segment.window = None
    window.open = False
    window.release()
    with _OPEN_LOCK:
        _OPEN.discard(segment)



def _flush_before_fork():
    segment = getattr(_tls, "segment", None)
    if segment is not None and segment.window is not None and not segment.lock.locked():
        with segment.lock:
            flush_locked(segment)


def _reset_after_fork():
    """In the child: only the forking thread exists; other threads' windows stay reachable
    through their marks and ``_OPEN``, but their locks may have been held at the fork."""
    global _OPEN_LOCK
    _OPEN_LOCK = threading.Lock()
    for segment in list(_OPEN):
        segment.lock = threading.Lock()


os.register_at_fork(before=_flush_before_fork, after_in_child=_reset_after_fork)
atexit.register(flush_all)
