"""Exact var and block state after each transition of the dependency algorithm (var.py) and of
the inline placement (transitions.py): every field, after every step, without an engine."""
import pytest

from ndengine.engine import Cancelled, cpu
from ndengine.engine.transitions import (RUNNING_INLINE, claim_inline, normalize,
                                         normalize_vars, release_inline, skip_error)
from ndengine.engine.var import (DELETE, WRITE_TRIGGERED, OprBlock, ThreadedVar,
                                 inherited_failure)


def state(var):
    return (var.pending_write, var.num_pending_reads, list(var.queue or ()), var.error)


def block(reads=(), writes=(), seq=1, overwrites=(), kind=0):
    return OprBlock(None, False, cpu(), tuple(reads), tuple(writes), 0, 0, seq, "op",
                    overwrites=tuple(overwrites), kind=kind)


def test_fresh_var_is_idle():
    v = ThreadedVar(0)
    assert state(v) == (None, 0, [], None) and v.is_idle()


def test_read_then_write_then_read_queue_in_push_order():
    v = ThreadedVar(0)
    r1, w, r2 = block([v]), block(writes=[v]), block([v])
    v.append_read(r1)
    assert state(v) == (None, 1, [], None) and (r1.wait, r1.stage) == (1, 1)
    v.append_write(w)  # pending, not granted: a read runs
    assert state(v) == (w, 1, [], None) and (w.wait, w.stage) == (2, 1)
    v.append_read(r2)  # behind the pending write
    assert state(v) == (w, 1, [(r2, False)], None) and (r2.wait, r2.stage) == (2, 1)
    ready = []
    v.complete_read(r1, ready)  # the last read hands the var to the write
    assert state(v) == (w, WRITE_TRIGGERED, [(r2, False)], None)
    assert w.wait == 1 and ready == []  # w still holds its own push hold
    v.complete_write(w, ready)
    assert state(v) == (None, 1, [], None) and r2.wait == 1 and r2.last_grant is v


def test_write_is_granted_at_once_on_an_idle_var():
    v = ThreadedVar(0)
    w = block(writes=[v])
    v.append_write(w)
    assert state(v) == (w, WRITE_TRIGGERED, [], None) and w.wait == 1
    ready = []
    v.complete_write(w, ready)
    assert state(v) == (None, 0, [], None) and ready == []


def test_complete_write_grants_the_next_write_and_marks_it_ready():
    v = ThreadedVar(0)
    w1, w2 = block(writes=[v]), block(writes=[v])
    v.append_write(w1)
    v.append_write(w2)
    w2.wait -= 1  # its push released its own hold
    ready = []
    v.complete_write(w1, ready)
    assert state(v) == (w2, WRITE_TRIGGERED, [], None) and ready == [w2] and w2.wait == 0
    v.complete_write(w1, ready)  # called again (after an interrupt): nothing more happens
    assert state(v) == (w2, WRITE_TRIGGERED, [], None) and ready == [w2]


def test_claim_inline_marks_exactly_the_granted_state_and_release_restores_it():
    read, other, write = ThreadedVar(0), ThreadedVar(1), ThreadedVar(2)
    for reads in ((), (read,), (read, other)):
        assert claim_inline(reads, (write,)) is True
        assert state(write) == (RUNNING_INLINE, WRITE_TRIGGERED, [], None)
        for r in reads:
            assert state(r) == (None, 1, [], None)
        assert release_inline(reads, (write,)) is True
        for v in (read, other, write):
            assert state(v) == (None, 0, [], None)


@pytest.mark.parametrize("busy", ["write pending", "write read", "read failed", "write failed",
                                  "read written"])
def test_claim_inline_changes_nothing_when_a_var_is_not_free(busy):
    read, write = ThreadedVar(0), ThreadedVar(1)
    if busy == "write pending":
        write.append_write(block(writes=[write]))
    elif busy == "write read":
        write.append_read(block([write]))
    elif busy == "read failed":
        read.error = ValueError("x")
    elif busy == "write failed":
        write.error = ValueError("x")
    else:
        read.append_write(block(writes=[read]))
    before = (state(read), state(write))
    assert claim_inline((read,), (write,)) is False
    assert (state(read), state(write)) == before


def test_claim_inline_refuses_other_shapes():
    vs = [ThreadedVar(i) for i in range(5)]
    assert claim_inline((), ()) is False
    assert claim_inline((), (vs[0], vs[1])) is False
    assert claim_inline((vs[0], vs[1], vs[2]), (vs[3],)) is False
    assert all(state(v) == (None, 0, [], None) for v in vs)


def test_release_inline_leaves_the_marks_when_another_op_queued_meanwhile():
    read, write = ThreadedVar(0), ThreadedVar(1)
    assert claim_inline((read,), (write,))
    queued = block([write])
    write.append_read(queued)  # another thread's read, behind the inline write
    assert state(write) == (RUNNING_INLINE, WRITE_TRIGGERED, [(queued, False)], None)
    assert release_inline((read,), (write,)) is False
    assert state(write) == (RUNNING_INLINE, WRITE_TRIGGERED, [(queued, False)], None)
    assert state(read) == (None, 1, [], None)
    # the completion through a block grants it, as for any writer
    ready = []
    read.complete_read(block([read]), ready)
    write.complete_write(RUNNING_INLINE, ready)
    assert state(write) == (None, 1, [], None) and state(read) == (None, 0, [], None)


def test_release_inline_leaves_the_marks_when_a_write_waits_on_a_read_var():
    read, write = ThreadedVar(0), ThreadedVar(1)
    assert claim_inline((read,), (write,))
    writer = block(writes=[read])
    read.append_write(writer)  # pending behind the inline read
    assert state(read) == (writer, 1, [], None)
    assert release_inline((read,), (write,)) is False
    assert state(read) == (writer, 1, [], None)
    assert state(write) == (RUNNING_INLINE, WRITE_TRIGGERED, [], None)


def test_normalize():
    a, b, c = ThreadedVar(0), ThreadedVar(1), ThreadedVar(2)
    assert normalize_vars([a], [b]) == ((a,), (b,))
    assert normalize_vars([b], [b]) == ((), (b,))
    assert normalize_vars([a, c, b, a], [c, c]) == ((a, b), (c,))
    assert normalize([a], [b, c], [c, c]) == ((a,), (b, c), (c,))
    with pytest.raises(ValueError, match="not among the vars the op writes"):
        normalize([], [b], [a])
    with pytest.raises(ValueError, match="does not overwrite it"):
        normalize([b], [b], [b])
    a.deleted = True
    with pytest.raises(ValueError, match="was deleted"):
        normalize_vars([a], [b])


def test_skip_error_is_the_failure_rule():
    a, b, c = ThreadedVar(0), ThreadedVar(1), ThreadedVar(2)
    assert skip_error(block([a], [b], seq=5), cancel_below=0) is None
    cancelled = skip_error(block([a], [b], seq=5), cancel_below=6)
    assert isinstance(cancelled[0], Cancelled) and cancelled[2] == 5
    late, early = ValueError("late"), ValueError("early")
    a.error, a.error_seq = late, 9
    b.error, b.error_seq = early, 3
    assert skip_error(block([a], [b], seq=10), 0) == (early, None, 3)  # earliest failure
    assert skip_error(block([a], [b], seq=10, overwrites=[b]), 0) == (late, None, 9)
    assert skip_error(block([], [b], seq=10, overwrites=[b]), 0) is None  # rewritten whole
    assert skip_error(block([a], [c], seq=10, kind=DELETE), 6) is None  # deletions run
    assert inherited_failure((a,), (b,)) is b


# ---------------------------------------------------------------------------- engine deletion
from engine_helpers import KINDS, engines, wait_all  # noqa: E402,F401


@pytest.mark.parametrize("kind", KINDS)
def test_delete_variable_while_the_engine_lock_is_held_is_deferred_then_flushed(engines, kind):
    # A finalizer may run inside the engine, with its lock held: a deletion that must queue
    # is deferred, and the engine pushes it itself at its next push or wait.
    from ndengine.engine import FnProperty
    eng = engines(kind, num_cpu_workers=2)
    v, other = eng.new_variable(), eng.new_variable()
    freed = []
    with eng._lock:  # as a garbage-collector finalizer run inside the engine would see it
        v.num_pending_reads += 1  # busy: the deletion must wait for a read
        eng.delete_variable(lambda rc: freed.append(1), cpu(), v)
        v.num_pending_reads -= 1
    assert v.deleted and freed == []
    with pytest.raises(ValueError, match="was deleted"):
        eng.push_sync(lambda rc: None, cpu(), (v,), (other,))
    eng.push_sync(lambda rc: None, cpu(), (), (other,), FnProperty.ASYNC)  # flushes it
    wait_all(eng)
    assert freed == [1] and eng._deferred == []
    assert state(v) == (None, 0, [], None)


@pytest.mark.parametrize("kind", KINDS)
def test_delete_variable_of_an_idle_var_frees_at_once_even_with_the_lock_held(engines, kind):
    eng = engines(kind, num_cpu_workers=2)
    v = eng.new_variable()
    freed = []
    with eng._lock:
        eng.delete_variable(lambda rc: freed.append(rc.ctx), cpu(), v)
    assert freed == [cpu()] and v.deleted and eng._deferred == []
    with pytest.raises(ValueError, match="already deleted"):
        eng.delete_variable(lambda rc: None, cpu(), v)


class _InterruptingHook:
    """A run-hook slot whose first ``count`` reads raise KeyboardInterrupt: a Ctrl-C landing
    in the pushing thread after it took a block to run and before the op started."""

    def __init__(self, count):
        self.count = count

    def __get__(self, executor, owner=None):
        if self.count:
            self.count -= 1
            raise KeyboardInterrupt
        return None

    def __set__(self, executor, value):
        pass


def test_naive_block_interrupted_before_it_starts_runs_exactly_once():
    from ndengine.engine import NaiveEngine
    from ndengine.engine.executor import Executor

    class Interrupted(Executor):
        hook = _InterruptingHook(2)

    engine = NaiveEngine()
    engine._executor.__class__ = Interrupted
    ran = []
    var = engine.new_variable()
    # NORMAL, not ASYNC: the block path (Executor.push -> run_inline -> execute)
    with pytest.raises(KeyboardInterrupt):
        engine.push_sync(lambda rc: ran.append(1), cpu(), (), (var,))
    assert ran == [] and len(engine._pool.heap) == 1  # put back, once
    with pytest.raises(KeyboardInterrupt):  # the wait takes it, and is interrupted again
        engine.wait_for_all()
    assert ran == [] and len(engine._pool.heap) == 1  # still queued exactly once
    engine.wait_for_all()
    assert ran == [1]
    assert not engine._pool.heap and var.is_idle()
    engine.notify_shutdown()


def test_normalize_vars_spelled_out_cases_agree_with_the_general_rule():
    """The common shapes are spelled out in normalize_vars: every arrangement of up to two
    reads and one or two writes over three vars gives what the general rule gives (repeats
    dropped, a var both read and written counts as a write, order kept)."""
    import itertools
    a, b, c = (ThreadedVar(i) for i in range(3))
    for reads in itertools.chain.from_iterable(
            itertools.product((a, b, c), repeat=n) for n in range(4)):
        for writes in itertools.chain.from_iterable(
                itertools.product((a, b, c), repeat=n) for n in (1, 2)):
            unique_writes = tuple(dict.fromkeys(writes))
            expected = (tuple(v for v in dict.fromkeys(reads) if v not in unique_writes),
                        unique_writes)
            assert normalize_vars(list(reads), list(writes)) == expected, (reads, writes)
