"""The two records the scheduler works on: `ThreadedVar` (one per resource) and `OprBlock` (one
per push). Their methods are the dependency algorithm of MXNet's ThreadedVar; they take no locks
themselves: the engine calls them while holding its one engine-wide lock (see threaded.py for
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
    deleted            True once delete_variable was pushed: pushing with it again raises.

Invariant: ``queue`` is empty whenever ``pending_write`` is None, and the var is idle (nothing
pushed on it is unfinished) exactly when ``pending_write is None and num_pending_reads == 0``.

OprBlock, field by field
    fn, is_async       the function; called as fn(run_ctx) or fn(run_ctx, on_complete).
    ctx, prop          where it runs (Context) and how it is placed (FnProperty).
    const_vars         vars it reads; mutable_vars, vars it writes (disjoint, no repeats).
    priority, seq      higher priority runs first; seq (push order) breaks ties.
    name, info         the name shown by the profiler, and free-form profiler arguments.
    wait               how many grants it still waits for: starts at reads + writes + 1; the push
                       itself holds the last one, so an op never runs before it is fully queued.
    kind               OP, DELETE (runs even on a failed var) or WAIT (a wait_for_var marker,
                       finished the moment it is granted; never run by a worker).
    opr                the reusable Operator it came from, or None.
    profiling          record this run even when engine-wide profiling is off.
    waiter             for WAIT blocks, the lock the waiting thread blocks on; for async
                       blocks, set once on_complete was called.
    pool               the worker pool chosen at push (threaded engines).
"""
from collections import deque

__all__ = ["ThreadedVar", "OprBlock", "WRITE_TRIGGERED", "OP", "DELETE", "WAIT"]

WRITE_TRIGGERED = -1
OP, DELETE, WAIT = 0, 1, 2


class ThreadedVar:
    __slots__ = ("id", "pending_write", "num_pending_reads", "queue", "error", "error_tb",
                 "deleted", "__weakref__")

    def __init__(self, var_id):
        self.id = var_id
        self.pending_write = None
        self.num_pending_reads = 0
        self.queue = None
        self.error = None
        self.error_tb = None
        self.deleted = False

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
        elif self.queue is None:
            self.queue = deque(((block, False),))
        else:
            self.queue.append((block, False))

    def append_write(self, block):
        """A write becomes the pending write if there is none, granted when no read runs."""
        if self.pending_write is None:
            self.pending_write = block
            if self.num_pending_reads == 0:
                self.num_pending_reads = WRITE_TRIGGERED
                block.wait -= 1
        elif self.queue is None:
            self.queue = deque(((block, True),))
        else:
            self.queue.append((block, True))

    def complete_read(self, ready):
        """The last running read hands the var to the pending write. Appends to ready the
        blocks whose wait reached zero."""
        self.num_pending_reads -= 1
        if self.num_pending_reads == 0 and self.pending_write is not None:
            self.num_pending_reads = WRITE_TRIGGERED
            block = self.pending_write
            block.wait -= 1
            if block.wait == 0:
                ready.append(block)

    def complete_write(self, ready):
        """The finished write grants every read queued up to the next write, and that write too
        if no read sits in between."""
        queue = self.queue
        reads = 0
        self.pending_write = None
        while queue:
            block, is_write = queue.popleft()
            if is_write:
                self.pending_write = block
                break
            reads += 1
            block.wait -= 1
            if block.wait == 0:
                ready.append(block)
        if self.pending_write is not None and reads == 0:
            self.num_pending_reads = WRITE_TRIGGERED
            block = self.pending_write
            block.wait -= 1
            if block.wait == 0:
                ready.append(block)
        else:
            self.num_pending_reads = reads


class OprBlock:
    __slots__ = ("fn", "is_async", "ctx", "const_vars", "mutable_vars", "prop", "priority",
                 "seq", "name", "info", "wait", "kind", "opr", "profiling", "waiter", "pool")

    def __init__(self, fn, is_async, ctx, const_vars, mutable_vars, prop, priority, seq, name,
                 info=None, kind=OP, opr=None, profiling=False):
        self.fn = fn
        self.is_async = is_async
        self.ctx = ctx
        self.const_vars = const_vars
        self.mutable_vars = mutable_vars
        self.prop = prop
        self.priority = priority
        self.seq = seq
        self.name = name
        self.info = info
        self.wait = len(const_vars) + len(mutable_vars) + 1
        self.kind = kind
        self.opr = opr
        self.profiling = profiling
        self.waiter = None
        self.pool = None

    def __repr__(self):
        return (f"<OprBlock {self.name or getattr(self.fn, '__name__', '?')} on {self.ctx} "
                f"wait={self.wait} reads={[v.id for v in self.const_vars]} "
                f"writes={[v.id for v in self.mutable_vars]}>")
