"""The two records the scheduler works on: `ThreadedVar` (one per resource) and `OprBlock` (one
per push). Their methods are the dependency algorithm of MXNet's ThreadedVar; they take no locks
themselves: the engine calls them while holding its one engine-wide lock (see core.py for
why), and dispatches what they return after the bookkeeping is done.

ThreadedVar, field by field
    id                 a small int, unique per engine, shown in profiles and reprs.
    pending_write      the oldest op that writes the var and has not finished, or None.
                       Every op pushed after it waits in ``queue``.
    num_pending_reads  how many granted reads are running (reads pushed while no write was
                       pending run at once), or WRITE_TRIGGERED when ``pending_write`` is granted.
    queue              deque of (block, is_write) pushed after ``pending_write``, in push order
                       (None until an op first queues: most vars never need one).
    error, error_tb    the exception (and its traceback) of the op that failed while writing
                       the var, or of an op skipped because of it; None while the var is sound.
    error_seq          the push number (``OprBlock.seq``) of the op that raised ``error``: which
                       of two failures came first in the program (see `inherited_failure`).
    deleted            True once delete_variable was pushed: pushing with it again raises.
    device_sync        None until a GPU op touches the var; then the events that order work on
                       it across GPU streams (devices.py, which documents them).

Invariant: ``queue`` is empty whenever ``pending_write`` is None, and the var is idle (nothing
pushed on it is unfinished) exactly when ``pending_write is None and num_pending_reads == 0``.

OprBlock, field by field
    fn, is_async       the function; called as fn(run_ctx) or fn(run_ctx, on_complete).
    ctx, prop          where it runs (Context) and how it is placed (FnProperty).
    const_vars         vars it reads; mutable_vars, vars it writes (disjoint, no repeats).
    overwrites         the written vars it overwrites completely (a tuple, often empty): a
                       failure on them does not stop it, and its success clears it.
    priority, seq      higher priority runs first; seq (push order) breaks ties.
    name, info         the name shown by the profiler, and free-form profiler arguments.
    origin             where it was pushed from, for error notes: None, a string, or
                       (code object, instruction offset) of the pushing frame (see errors.py).
    wait               how many grants it still waits for: starts at reads + writes + 1; the push
                       itself holds the last one, so an op never runs before it is fully queued.
    kind               OP, DELETE (runs even on a failed var), TOLERANT (runs even when a var
                       it uses failed, unless cancelled: it applies the failure rule per part itself, through ``engine.inherit_failure`` and ``engine.fail_part``
                       and handles the failure; a bulk of tiny ops, core/segment.py) or WAIT (a wait_for_var marker,
                       finished the moment it is granted; never run by a worker).
    opr                the reusable Operator it came from, or None.
    profiling          report this run to the engine's own recorder even when no run hook
                       is installed (``push(op, ctx, profiling=True)``).
    error              the error it ended with (its own, or the one it was skipped with);
                       None until it completes, and after a success.
    waiter             for WAIT blocks, the lock the waiting thread blocks on; for async
                       blocks, set once on_complete was called.
    pool               the pool chosen at push: it runs the block once ready (threaded.py,
                       naive.py).
    pusher             the pushing thread's counter of its pending blocks (a fork waits for
                       the forking thread's own ones).
    stage              push progress: how many of its vars it was appended to (reads, then
                       writes); one more once the push released its hold; DISPATCHED once it was
                       handed to a pool's queue (or, for a WAIT block, finished).
    done               completion progress: 0 until its outcome is recorded, then one more per
                       var completed, then one more once the engine's counters were updated.
    last_grant         the var that last granted it a queued access (see complete_write).
    work               how much queued work it stands for, in the units back-pressure bounds
                       (executor.py ``pending_work``): 1 for one op; a window of ops gives more.

Interrupt safety. Ctrl-C raises KeyboardInterrupt in the main thread between two bytecodes,
but only at a few of them: a function's entry, a backward jump, and right after a call into C.
Every method here is written so that one interrupted anywhere can be called again, with the
same arguments and the engine lock still held, and finishes the work exactly once: its field
updates go together with the step counter they advance (``stage``, ``done``, ``last_grant``)
with no interruption point in between, and its one call into C (a queue append or pop), if
any, is the last thing it does. The engine's transitions (transitions.py, executor.py) follow the
same rule.
"""
import threading
from collections import deque

__all__ = ["ThreadedVar", "OprBlock", "Operator", "wait_marker", "WRITE_TRIGGERED", "OP",
           "DELETE", "WAIT", "TOLERANT", "DISPATCHED", "inherited_failure"]

WRITE_TRIGGERED = -1
OP, DELETE, WAIT, TOLERANT = 0, 1, 2, 3
DISPATCHED = 1 << 40  # OprBlock.stage once the block went to a pool (beyond any var count)


def inherited_failure(reads, writes, overwrites=()):
    """The failed var whose error an op inherits (and is skipped for), or None.

    Among the vars it reads, and those it writes but does not overwrite completely, the one
    whose failure comes earliest in push order (smallest ``error_seq``): the error a serial
    program would have stopped at. One rule for every engine, whatever the argument order."""
    failed = None
    for var in reads:
        if var.error is not None and (failed is None or var.error_seq < failed.error_seq):
            failed = var
    for var in writes:
        if var.error is not None and (failed is None or var.error_seq < failed.error_seq) \
                and var not in overwrites:
            failed = var
    return failed


class ThreadedVar:
    __slots__ = ("id", "pending_write", "num_pending_reads", "queue", "error", "error_tb",
                 "error_seq", "deleted", "device_sync", "__weakref__")

    def __init__(self, var_id):
        self.id = var_id
        self.pending_write = None
        self.num_pending_reads = 0
        self.queue = None
        self.error = None
        self.error_tb = None
        self.error_seq = 0
        self.deleted = False
        self.device_sync = None

    def __repr__(self):
        state = "idle" if self.is_idle() else (
            "writing" if self.num_pending_reads == WRITE_TRIGGERED else "busy")
        return f"<ThreadedVar {self.id} {state}{' failed' if self.error else ''}>"

    def is_idle(self):
        return self.pending_write is None and self.num_pending_reads == 0

    def append_read(self, block):
        """A read runs at once unless a write is pending; then it queues behind it."""
        if self.pending_write is None:
            self.num_pending_reads += 1
            block.wait -= 1
            block.stage += 1
        else:
            queue = self.queue
            if queue is None:
                queue = self.queue = deque()
            block.stage += 1
            queue.append((block, False))

    def append_write(self, block):
        """A write becomes the pending write if there is none, granted when no read runs."""
        if self.pending_write is None:
            self.pending_write = block
            if self.num_pending_reads == 0:
                self.num_pending_reads = WRITE_TRIGGERED
                block.wait -= 1
            block.stage += 1
        else:
            queue = self.queue
            if queue is None:
                queue = self.queue = deque()
            block.stage += 1
            queue.append((block, True))

    def complete_read(self, block, ready):
        """``block``'s read is over: the last running read hands the var to the pending write.
        Appends to ready the blocks whose wait reached zero."""
        self.num_pending_reads -= 1
        block.done += 1
        if self.num_pending_reads == 0 and self.pending_write is not None:
            self.num_pending_reads = WRITE_TRIGGERED
            writer = self.pending_write
            writer.wait -= 1
            if writer.wait == 0:
                ready.append(writer)

    def complete_write(self, writer, ready):
        """``writer`` (the granted pending write) finished: grant every read queued up to the
        next write, and that write too if no read sits in between. Calling it again after an
        interruption finishes the job; once finished, calling it again does nothing."""
        if self.pending_write is writer:
            self.pending_write = None
            self.num_pending_reads = 0
        queue = self.queue
        while self.pending_write is None and queue:
            block, is_write = queue[0]
            if block.last_grant is not self:  # not yet granted (before an interruption)
                if is_write:
                    self.pending_write = block
                    if self.num_pending_reads == 0:
                        self.num_pending_reads = WRITE_TRIGGERED
                        block.wait -= 1
                        block.last_grant = self
                        if block.wait == 0:
                            ready.append(block)
                    else:
                        block.last_grant = self
                else:
                    self.num_pending_reads += 1
                    block.wait -= 1
                    block.last_grant = self
                    if block.wait == 0:
                        ready.append(block)
            queue.popleft()
        if queue and queue[0][0] is self.pending_write:  # granted, then interrupted
            queue.popleft()


class OprBlock:
    __slots__ = ("fn", "is_async", "ctx", "const_vars", "mutable_vars", "overwrites", "prop",
                 "priority", "seq", "name", "info", "origin", "wait", "kind", "opr",
                 "profiling", "waiter", "pool", "pusher", "stage", "done", "last_grant",
                 "error", "work")

    def __init__(self, fn, is_async, ctx, const_vars, mutable_vars, prop, priority, seq, name,
                 info=None, kind=OP, opr=None, profiling=False, origin=None, overwrites=()):
        self.fn = fn
        self.is_async = is_async
        self.ctx = ctx
        self.const_vars = const_vars
        self.mutable_vars = mutable_vars
        self.overwrites = overwrites
        self.prop = prop
        self.priority = priority
        self.seq = seq
        self.name = name
        self.info = info
        self.origin = origin
        self.wait = len(const_vars) + len(mutable_vars) + 1
        self.kind = kind
        self.opr = opr
        self.profiling = profiling
        self.waiter = None
        self.pool = None
        self.pusher = None
        self.stage = 0
        self.done = 0
        self.last_grant = None
        self.error = None
        self.work = 1

    def __repr__(self):
        return (f"<OprBlock {self.name or getattr(self.fn, '__name__', '?')} on {self.ctx} "
                f"wait={self.wait} reads={[v.id for v in self.const_vars]} "
                f"writes={[v.id for v in self.mutable_vars]}>")


def wait_marker(var):
    """A WAIT block writing ``var`` (``wait_for_var``, ``read_and_wait``): once pushed, it is
    granted, and releases its ``waiter`` (a lock held until then), when every op pushed on var
    before it finished."""
    waiter = threading.Lock()
    waiter.acquire()
    marker = OprBlock(None, False, None, (), (var,), 0, 0, 0, "wait_for_var", None, WAIT)
    marker.waiter = waiter
    return marker


class Operator:
    """A reusable op made by ``new_operator``; push it many times without rebuilding it.
    ``num_pending`` counts its blocks pushed and not finished (under the engine lock);
    ``deleted`` is set by ``delete_operator``, and ``fn`` is dropped once both say so."""

    __slots__ = ("fn", "const_vars", "mutable_vars", "prop", "name", "num_pending", "deleted",
                 "__weakref__")

    def __init__(self, fn, const_vars, mutable_vars, prop, name):
        self.fn = fn
        self.const_vars = const_vars
        self.mutable_vars = mutable_vars
        self.prop = prop
        self.name = name
        self.num_pending = 0
        self.deleted = False

    def __repr__(self):
        return f"<Operator {self.name or getattr(self.fn, '__name__', '?')}>"
