"""The placement transitions every engine shares, as small pure functions on vars (var.py) and
blocks: what a push normalizes, whether an op may run at once in the pushing thread, and which
error an op is skipped with. They take no locks; the engine calls them under its lock.

Running an op at once in the pushing thread (the inline path) is a placement, not a second
engine: ``claim_inline`` marks its vars exactly as a granted block would hold them, the op runs,
and ``release_inline`` gives them back exactly as a completion would, when nobody queued on them
meanwhile; otherwise the completion goes through a block like any other op (executor.py). No block
is made on that path unless the op fails or another thread queued on its vars.

Var state while an op runs inline, field by field (see var.py for the fields)
    a read var      ``num_pending_reads`` one more than before: a running read, as granted.
    a written var   ``pending_write is RUNNING_INLINE`` and ``num_pending_reads ==
                    WRITE_TRIGGERED``: a granted write. Ops pushed meanwhile by other threads
                    queue behind it in ``queue`` as behind a block.

Invariant: ``claim_inline`` changes nothing unless it returns True, and then every var of the op
is marked; ``release_inline`` changes nothing unless it returns True, and then every mark is
taken back and the vars are as they were before the claim. A failed var (``error`` set) is never
claimed: the op goes through a block, where ``skip_error`` applies the failure rules.

Interrupt safety (see var.py): in both functions every C call (``len``) comes before the first
field update and no loop runs among the updates, so a Ctrl-C lands before all of them or after.
The shapes handled are the commonest ones (one written var, at most two read vars); any other op
goes through a block.
"""
from .errors import Cancelled
from .var import DELETE, TOLERANT, WRITE_TRIGGERED, OprBlock, inherited_failure

__all__ = ["RUNNING_INLINE", "normalize_vars", "normalize", "claim_inline", "release_inline",
           "skip_error"]

# The pending write of the vars an op running inline writes (never run, never queued).
RUNNING_INLINE = OprBlock(None, False, None, (), (), 0, 0, -1, "running inline")


def _deleted(var):
    return ValueError(f"{var!r} was deleted; it cannot be used by a new op")


def normalize_vars(const_vars, mutable_vars):
    """Reads and writes as disjoint tuples without repeats; a var in both counts as a write.
    Raises ValueError for a deleted var."""
    if len(mutable_vars) == 1 and len(const_vars) <= 1:  # the commonest shapes, spelled out
        write = mutable_vars[0]
        if write.deleted:
            raise _deleted(write)
        if not const_vars or const_vars[0] is write:
            return (), (write,)
        read = const_vars[0]
        if read.deleted:
            raise _deleted(read)
        return (read,), (write,)
    if len(mutable_vars) == 1 and len(const_vars) == 2:  # a binary op on two other arrays
        write = mutable_vars[0]
        read, other = const_vars
        if read is not other and write is not read and write is not other \
                and not (write.deleted or read.deleted or other.deleted):
            return (read, other), (write,)
    if len(const_vars) + len(mutable_vars) <= 1:
        const_vars, mutable_vars = tuple(const_vars), tuple(mutable_vars)
    else:
        mutable_vars = tuple(dict.fromkeys(mutable_vars))
        const_vars = tuple(v for v in dict.fromkeys(const_vars) if v not in mutable_vars)
    for var in const_vars:
        if var.deleted:
            raise _deleted(var)
    for var in mutable_vars:
        if var.deleted:
            raise _deleted(var)
    return const_vars, mutable_vars


def normalize(const_vars, mutable_vars, overwrites):
    """(reads, writes, overwrites) of a push: overwrites must be written and not read."""
    if not overwrites:
        const_vars, mutable_vars = normalize_vars(const_vars, mutable_vars)
        return const_vars, mutable_vars, ()
    overwrites = tuple(dict.fromkeys(overwrites))
    for var in overwrites:
        if not any(var is w for w in mutable_vars):
            raise ValueError(f"overwrites: {var!r} is not among the vars the op writes")
        if any(var is r for r in const_vars):
            raise ValueError(f"overwrites: the op reads {var!r}, so it does not overwrite it "
                             "completely")
    const_vars, mutable_vars = normalize_vars(const_vars, mutable_vars)
    return const_vars, mutable_vars, overwrites


def claim_inline(reads, writes):
    """Mark the vars of an op about to run in the pushing thread; True when done.

    False, with nothing changed, unless the op writes one var and reads at most two, and every
    one of them is free and sound: no write pending on any, no read running on the written
    one, no error on any."""
    if len(writes) != 1:
        return False
    num_reads = len(reads)
    write = writes[0]
    if write.pending_write is not None or write.num_pending_reads or write.error is not None:
        return False
    if num_reads == 0:
        write.pending_write = RUNNING_INLINE
        write.num_pending_reads = WRITE_TRIGGERED
        return True
    if num_reads == 1:
        read = reads[0]
        if read.pending_write is not None or read.error is not None:
            return False
        read.num_pending_reads += 1
        write.pending_write = RUNNING_INLINE
        write.num_pending_reads = WRITE_TRIGGERED
        return True
    if num_reads == 2:
        read, other = reads
        if read.pending_write is not None or read.error is not None \
                or other.pending_write is not None or other.error is not None:
            return False
        read.num_pending_reads += 1
        other.num_pending_reads += 1
        write.pending_write = RUNNING_INLINE
        write.num_pending_reads = WRITE_TRIGGERED
        return True
    return False


def release_inline(reads, writes):
    """Take back the marks of ``claim_inline`` after the op succeeded; True when done.

    False, with nothing changed, when another thread queued an op on one of its vars meanwhile
    (behind the write, or as the pending write of a read var): then the completion must grant
    that op, through a block (executor.py)."""
    write = writes[0]
    if write.queue:
        return False
    num_reads = len(reads)
    if num_reads == 0:
        write.pending_write = None
        write.num_pending_reads = 0
        return True
    read = reads[0]
    if read.pending_write is not None:
        return False
    if num_reads == 1:
        read.num_pending_reads -= 1
        write.pending_write = None
        write.num_pending_reads = 0
        return True
    other = reads[1]
    if other.pending_write is not None:
        return False
    read.num_pending_reads -= 1
    other.num_pending_reads -= 1
    write.pending_write = None
    write.num_pending_reads = 0
    return True


def skip_error(block, cancel_below):
    """The failure rule of every engine, checked when a block is about to run: (error,
    traceback, error_seq) when it must not run, else None. A block pushed before the last
    ``cancel_pending`` (``seq < cancel_below``) fails with `Cancelled`; one that reads a failed
    var, or writes one it does not overwrite completely, inherits the earliest failure
    (`inherited_failure`). Deletions always run; a TOLERANT block runs unless cancelled (it
    handles failed vars itself)."""
    if block.kind is DELETE:
        return None
    if block.seq < cancel_below:
        return (Cancelled(f"{block.name or 'the op'} was cancelled before it started "
                          "(cancel_pending); its outputs hold no value"), None, block.seq)
    if block.kind is TOLERANT:
        return None
    failed = inherited_failure(block.const_vars, block.mutable_vars, block.overwrites)
    if failed is not None:
        return failed.error, failed.error_tb, failed.error_seq
    return None
