"""The dependency rule, concurrency of readers, serialisation of writers, async completion,
deletion ordering, priorities, the ASYNC property, reusable operators, nested pushes."""
import gc
import threading
import time
import weakref

import pytest

from ndengine.engine import FnProperty, cpu

from engine_helpers import (KINDS, THREADED, TIMEOUT, Timeout, assert_quiescent,  # noqa: F401
                            engines, run_with_timeout, wait_all, wait_until, wait_var)


class Gate:
    """An op that blocks its worker until opened (with a timeout, so it never hangs forever)."""

    def __init__(self):
        self.started = threading.Event()
        self.opened = threading.Event()

    def __call__(self, rc):
        self.started.set()
        if not self.opened.wait(TIMEOUT):
            raise Timeout("gate never opened")

    def open(self):
        self.opened.set()


def kind_workers(kind, n=4):
    return {} if kind == "NaiveEngine" else {"num_cpu_workers": n}


# ---------------------------------------------------------------------------- rule 1
@pytest.mark.parametrize("kind", KINDS)
def test_writes_run_in_push_order(engines, kind):
    eng = engines(kind, **kind_workers(kind))
    v = eng.new_variable()
    log = []
    for i in range(60):
        def op(rc, i=i):
            if i % 7 == 0:
                time.sleep(0.001)
            log.append(i)
        eng.push_sync(op, cpu(), mutable_vars=[v])
    wait_var(eng, v)
    assert log == list(range(60))
    wait_all(eng)
    assert_quiescent(eng, [v])


@pytest.mark.parametrize("kind", KINDS)
def test_read_after_write_and_write_after_read(engines, kind):
    eng = engines(kind, **kind_workers(kind))
    v = eng.new_variable()
    box = {"x": 0}
    seen = []

    def slow_write(value):
        def op(rc):
            time.sleep(0.02)
            box["x"] = value
        return op

    def slow_read(rc):
        time.sleep(0.02)
        seen.append(box["x"])

    eng.push_sync(slow_write(1), cpu(), mutable_vars=[v])
    eng.push_sync(lambda rc: seen.append(box["x"]), cpu(), const_vars=[v])  # sees 1
    eng.push_sync(slow_read, cpu(), const_vars=[v])  # sees 1, slowly
    eng.push_sync(lambda rc: box.__setitem__("x", 2), cpu(), mutable_vars=[v])  # after reads
    eng.push_sync(lambda rc: seen.append(box["x"]), cpu(), const_vars=[v])  # sees 2
    wait_var(eng, v)
    assert seen == [1, 1, 2]
    assert box["x"] == 2
    assert_quiescent(eng, [v])


@pytest.mark.parametrize("kind", KINDS)
def test_independent_vars_do_not_wait_for_each_other(engines, kind):
    if kind == "NaiveEngine":
        pytest.skip("NaiveEngine runs every op at once in the pushing thread")
    eng = engines(kind, num_cpu_workers=2)
    a, b = eng.new_variable(), eng.new_variable()
    barrier = threading.Barrier(2, timeout=5)
    eng.push_sync(lambda rc: barrier.wait(), cpu(), mutable_vars=[a])
    eng.push_sync(lambda rc: barrier.wait(), cpu(), mutable_vars=[b])
    wait_all(eng)  # raises BrokenBarrierError if the writers were serialised
    assert_quiescent(eng, [a, b])


class Overlap:
    """Counts how many ops are inside a critical region at once."""

    def __init__(self):
        self.lock = threading.Lock()
        self.inside = 0
        self.max_inside = 0
        self.order = []

    def enter(self, tag):
        with self.lock:
            self.inside += 1
            self.max_inside = max(self.max_inside, self.inside)
            self.order.append(tag)

    def leave(self):
        with self.lock:
            self.inside -= 1


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("spelling", ["both-lists", "twice-in-writes", "read-twice-and-write"])
def test_var_listed_twice_or_in_both_lists_counts_once_as_a_write(engines, kind, spelling):
    eng = engines(kind, **kind_workers(kind))
    v = eng.new_variable()
    region = Overlap()
    lists = {"both-lists": ([v], [v]), "twice-in-writes": ([], [v, v]),
             "read-twice-and-write": ([v, v], [v, v])}[spelling]

    def writer(i):
        def op(rc):
            region.enter(i)
            time.sleep(0.003)
            region.leave()
        return op

    for i in range(8):
        eng.push_sync(writer(i), cpu(), const_vars=lists[0], mutable_vars=lists[1])
        # a plain reader between the writes must never overlap a writer either
        eng.push_sync(lambda rc, i=i: region.order.append(("r", i, region.inside)), cpu(),
                      const_vars=[v])
    wait_all(eng)
    assert region.max_inside == 1
    writes = [x for x in region.order if not isinstance(x, tuple)]
    reads = [x for x in region.order if isinstance(x, tuple)]
    assert writes == list(range(8))
    assert all(inside == 0 for _, _, inside in reads)
    assert region.order == [y for i in range(8) for y in (i, ("r", i, 0))]
    assert_quiescent(eng, [v])


@pytest.mark.parametrize("kind", KINDS)
def test_read_listed_twice_counts_once(engines, kind):
    eng = engines(kind, **kind_workers(kind))
    v, w = eng.new_variable(), eng.new_variable()
    ran = []
    eng.push_sync(lambda rc: ran.append("r"), cpu(), const_vars=[v, v, v], mutable_vars=[w])
    eng.push_sync(lambda rc: ran.append("w"), cpu(), mutable_vars=[v])
    wait_all(eng)
    assert ran == ["r", "w"]
    assert_quiescent(eng, [v, w])


# ---------------------------------------------------------------------------- item 3
@pytest.mark.parametrize("kind", THREADED)
def test_readers_of_one_var_run_concurrently(engines, kind):
    eng = engines(kind, num_cpu_workers=2)
    v = eng.new_variable()
    barrier = threading.Barrier(2, timeout=5)
    met = []
    for _ in range(2):
        eng.push_sync(lambda rc: met.append(barrier.wait()), cpu(), const_vars=[v])
    wait_all(eng)  # a BrokenBarrierError here means the reads were serialised
    assert sorted(met) == [0, 1]
    assert_quiescent(eng, [v])


@pytest.mark.parametrize("kind", THREADED)
def test_reads_between_two_writes_run_concurrently_and_after_the_first(engines, kind):
    eng = engines(kind, num_cpu_workers=3)
    v = eng.new_variable()
    barrier = threading.Barrier(2, timeout=5)
    events = []
    lock = threading.Lock()

    def log(x):
        with lock:
            events.append(x)

    def w1(rc):
        time.sleep(0.02)
        log("w1")

    def reader(tag):
        def op(rc):
            log(tag + "-start")
            barrier.wait()
            time.sleep(0.01)
            log(tag + "-end")
        return op

    eng.push_sync(w1, cpu(), mutable_vars=[v])
    eng.push_sync(reader("r1"), cpu(), const_vars=[v])
    eng.push_sync(reader("r2"), cpu(), const_vars=[v])
    eng.push_sync(lambda rc: log("w2"), cpu(), mutable_vars=[v])
    wait_all(eng)
    assert events[0] == "w1"
    assert events[-1] == "w2"
    assert set(events[1:3]) == {"r1-start", "r2-start"}
    assert_quiescent(eng, [v])


@pytest.mark.parametrize("kind", THREADED)
def test_writers_of_one_var_never_overlap_and_keep_push_order(engines, kind):
    eng = engines(kind, num_cpu_workers=4)
    v = eng.new_variable()
    others = [eng.new_variable() for _ in range(4)]
    region = Overlap()
    for i in range(40):
        def op(rc, i=i):
            region.enter(i)
            time.sleep(0.0005)
            region.leave()
        # also read/write unrelated vars so the pool has other work to interleave
        eng.push_sync(op, cpu(), const_vars=[others[i % 4]], mutable_vars=[v])
        eng.push_sync(lambda rc: time.sleep(0.0005), cpu(), mutable_vars=[others[(i + 1) % 4]])
    wait_all(eng)
    assert region.max_inside == 1
    assert region.order == list(range(40))
    assert_quiescent(eng, [v] + others)


# ---------------------------------------------------------------------------- item 4: async
@pytest.mark.parametrize("kind", THREADED)
def test_async_op_is_not_finished_until_on_complete(engines, kind):
    eng = engines(kind, num_cpu_workers=2)
    v = eng.new_variable()
    callbacks = []
    log = []
    fn_returned = threading.Event()

    def start(rc, on_complete):
        log.append("async-start")
        callbacks.append(on_complete)
        fn_returned.set()

    eng.push_async(start, cpu(), mutable_vars=[v])
    eng.push_sync(lambda rc: log.append("dependent"), cpu(), const_vars=[v])
    assert fn_returned.wait(5)
    waiter = threading.Thread(target=eng.wait_for_var, args=(v,), daemon=True)
    waiter.start()
    time.sleep(0.1)
    assert log == ["async-start"], "dependent op ran before on_complete"
    assert waiter.is_alive(), "wait_for_var returned before on_complete"
    assert eng._executor.pending == 2
    completer = threading.Thread(target=lambda: (log.append("complete"), callbacks[0]()))
    completer.start()
    completer.join(5)
    waiter.join(5)
    assert not waiter.is_alive()
    wait_all(eng)
    assert log == ["async-start", "complete", "dependent"]
    assert_quiescent(eng, [v])


@pytest.mark.parametrize("kind", KINDS)
def test_async_on_complete_from_another_thread(engines, kind):
    eng = engines(kind, **kind_workers(kind, 2))
    v = eng.new_variable()
    box = {"x": 0}

    def op(rc, on_complete):
        def later():
            time.sleep(0.05)
            box["x"] = 42
            on_complete()
        threading.Thread(target=later, daemon=True).start()

    run_with_timeout(lambda: eng.push_async(op, cpu(), mutable_vars=[v]))
    seen = []
    eng.push_sync(lambda rc: seen.append(box["x"]), cpu(), const_vars=[v])
    wait_var(eng, v)
    wait_all(eng)
    assert seen == [42]
    assert_quiescent(eng, [v])


@pytest.mark.parametrize("kind", KINDS)
def test_async_on_complete_with_exception_marks_failure(engines, kind):
    eng = engines(kind, **kind_workers(kind, 2))
    v, w = eng.new_variable(), eng.new_variable()
    err = ValueError("async failure")
    ran = []

    def op(rc, on_complete):
        threading.Thread(target=lambda: (time.sleep(0.02), on_complete(err)), daemon=True).start()

    if kind == "NaiveEngine":
        with pytest.raises(ValueError) as info:
            run_with_timeout(lambda: eng.push_async(op, cpu(), mutable_vars=[v]))
        assert info.value is err
        with pytest.raises(ValueError) as info:
            eng.push_sync(lambda rc: ran.append(1), cpu(), const_vars=[v], mutable_vars=[w])
        assert info.value is err
    else:
        eng.push_async(op, cpu(), mutable_vars=[v])
        eng.push_sync(lambda rc: ran.append(1), cpu(), const_vars=[v], mutable_vars=[w])
    for var in (v, w, v):
        with pytest.raises(ValueError) as info:
            wait_var(eng, var)
        assert info.value is err
    assert ran == []
    wait_all(eng)  # raised by wait_for_var already: not again
    assert_quiescent(eng, [v, w])


@pytest.mark.parametrize("kind", KINDS)
def test_on_complete_twice_raises(engines, kind):
    eng = engines(kind, **kind_workers(kind, 2))
    v, w = eng.new_variable(), eng.new_variable()
    second = []
    returned = threading.Event()  # the op is finished at its first on_complete, not its return

    def op(rc, on_complete):
        on_complete()
        try:
            on_complete()
        except RuntimeError as exc:
            second.append(exc)
        returned.set()

    eng.push_async(op, cpu(), mutable_vars=[v])
    eng.push_sync(lambda rc: None, cpu(), mutable_vars=[v])
    wait_all(eng)
    assert returned.wait(5)
    assert len(second) == 1 and "twice" in str(second[0])
    # the engine did not complete the op twice: accounting is intact
    assert_quiescent(eng, [v, w])
    eng.push_sync(lambda rc: None, cpu(), const_vars=[v], mutable_vars=[w])
    wait_all(eng)
    assert_quiescent(eng, [v, w])


@pytest.mark.parametrize("kind", THREADED)
def test_late_second_on_complete_does_not_corrupt_state(engines, kind):
    eng = engines(kind, num_cpu_workers=2)
    v = eng.new_variable()
    saved = []
    eng.push_async(lambda rc, done: (saved.append(done), done()), cpu(), mutable_vars=[v])
    wait_all(eng)
    with pytest.raises(RuntimeError, match="twice"):
        saved[0]()
    assert eng._executor.pending == 0
    assert_quiescent(eng, [v])


@pytest.mark.parametrize("kind", KINDS)
def test_async_fn_raising_before_on_complete_is_its_failure(engines, kind):
    eng = engines(kind, **kind_workers(kind, 2))
    v = eng.new_variable()
    err = KeyError("raised by async fn")

    def op(rc, on_complete):
        raise err

    if kind == "NaiveEngine":
        with pytest.raises(KeyError) as info:
            eng.push_async(op, cpu(), mutable_vars=[v])
        assert info.value is err
    else:
        eng.push_async(op, cpu(), mutable_vars=[v])
    with pytest.raises(KeyError) as info:
        wait_var(eng, v)
    assert info.value is err
    assert_quiescent(eng, [v])


# ---------------------------------------------------------------------------- item 5: deletion
@pytest.mark.parametrize("kind", KINDS)
def test_delete_runs_after_every_earlier_op_including_slow_readers(engines, kind):
    eng = engines(kind, **kind_workers(kind, 3))
    v, other = eng.new_variable(), eng.new_variable()
    log = []
    lock = threading.Lock()

    def entry(x):
        with lock:
            log.append(x)

    eng.push_sync(lambda rc: (time.sleep(0.01), entry("w")), cpu(), mutable_vars=[v])
    eng.push_sync(lambda rc: (time.sleep(0.05), entry("r-slow")), cpu(), const_vars=[v])
    eng.push_sync(lambda rc: (time.sleep(0.02), entry("r")), cpu(), const_vars=[v],
                  mutable_vars=[other])
    eng.delete_variable(lambda rc: entry("delete"), cpu(), v)
    wait_all(eng)
    assert log[0] == "w" and log[-1] == "delete" and sorted(log[1:3]) == ["r", "r-slow"]
    assert_quiescent(eng, [v, other])


@pytest.mark.parametrize("kind", KINDS)
def test_pushing_with_a_deleted_var_raises_at_push(engines, kind):
    eng = engines(kind, **kind_workers(kind, 2))
    v, w = eng.new_variable(), eng.new_variable()
    ran = []
    op = eng.new_operator(lambda rc, done: (ran.append("opr"), done()), [v], [w])
    eng.delete_variable(lambda rc: ran.append("delete"), cpu(), v)
    with pytest.raises(ValueError):
        eng.push_sync(lambda rc: ran.append("read"), cpu(), const_vars=[v])
    with pytest.raises(ValueError):
        eng.push_sync(lambda rc: ran.append("write"), cpu(), mutable_vars=[w, v])
    with pytest.raises(ValueError):
        eng.push_async(lambda rc, done: ran.append("async"), cpu(), const_vars=[w, v])
    with pytest.raises(ValueError):
        eng.push(op, cpu())
    with pytest.raises(ValueError):
        eng.delete_variable(lambda rc: ran.append("delete2"), cpu(), v)
    with pytest.raises(ValueError):
        eng.new_operator(lambda rc, done: done(), [v], [])
    wait_all(eng)
    assert ran == ["delete"]
    assert_quiescent(eng, [v, w])
    # the other var still works
    eng.push_sync(lambda rc: ran.append("w-ok"), cpu(), mutable_vars=[w])
    wait_var(eng, w)
    assert ran == ["delete", "w-ok"]


@pytest.mark.parametrize("kind", KINDS)
def test_failed_delete_variable_push_leaves_the_var_usable(engines, kind):
    # A push that raises at the call site must leave no trace: the var is not half-deleted.
    eng = engines(kind, **kind_workers(kind, 2))
    v = eng.new_variable()
    with pytest.raises(TypeError):
        eng.delete_variable(lambda rc: None, "not a context", v)
    ran = []
    eng.push_sync(lambda rc: ran.append("w"), cpu(), mutable_vars=[v])
    eng.delete_variable(lambda rc: ran.append("delete"), cpu(), v)
    wait_all(eng)
    assert ran == ["w", "delete"]


@pytest.mark.parametrize("kind", THREADED)
def test_delete_does_not_block_other_vars(engines, kind):
    eng = engines(kind, num_cpu_workers=2)
    v, w = eng.new_variable(), eng.new_variable()
    gate = Gate()
    eng.push_sync(gate, cpu(), const_vars=[v])
    deleted = []
    eng.delete_variable(lambda rc: deleted.append(1), cpu(), v)
    assert gate.started.wait(5)
    done = threading.Event()
    eng.push_sync(lambda rc: done.set(), cpu(), mutable_vars=[w])
    assert done.wait(5), "an op on another var waited for the deletion"
    assert deleted == []
    gate.open()
    wait_all(eng)
    assert deleted == [1]


# ---------------------------------------------------------------------------- item 8: priorities
@pytest.mark.parametrize("kind", THREADED)
def test_ready_ops_run_highest_priority_first(engines, kind):
    eng = engines(kind, num_cpu_workers=1)
    gate = Gate()
    eng.push_sync(gate, cpu(), mutable_vars=[eng.new_variable()])
    assert gate.started.wait(5)
    priorities = [0, 5, -1, 5, 3, 0, 10, -1, 3, 0]
    order = []
    for i, p in enumerate(priorities):
        eng.push_sync(lambda rc, i=i: order.append(i), cpu(),
                      mutable_vars=[eng.new_variable()], priority=p)
    gate.open()
    wait_all(eng)
    expected = sorted(range(len(priorities)), key=lambda i: (-priorities[i], i))
    assert order == expected


@pytest.mark.parametrize("kind", THREADED)
def test_ops_released_together_run_by_priority(engines, kind):
    # The gate writes g; all readers of g become ready at the same completion.
    eng = engines(kind, num_cpu_workers=1)
    g = eng.new_variable()
    gate = Gate()
    eng.push_sync(gate, cpu(), mutable_vars=[g])
    assert gate.started.wait(5)
    priorities = [1, 0, 7, 7, -3, 2]
    order = []
    for i, p in enumerate(priorities):
        eng.push_sync(lambda rc, i=i: order.append(i), cpu(), const_vars=[g], priority=p)
    gate.open()
    wait_all(eng)
    assert order == sorted(range(len(priorities)), key=lambda i: (-priorities[i], i))


@pytest.mark.parametrize("kind", KINDS)
def test_priority_never_breaks_dependencies(engines, kind):
    eng = engines(kind, **kind_workers(kind, 1))
    v = eng.new_variable()
    order = []
    for i, p in enumerate([0, 10, -5, 20, 3]):
        eng.push_sync(lambda rc, i=i: order.append(i), cpu(), mutable_vars=[v], priority=p)
    wait_all(eng)
    assert order == [0, 1, 2, 3, 4]


# ---------------------------------------------------------------------------- item 13: ASYNC
@pytest.mark.parametrize("kind", THREADED)
def test_async_property_runs_inline_when_ready(engines, kind):
    eng = engines(kind, num_cpu_workers=2)
    v = eng.new_variable()
    where = []
    eng.push_sync(lambda rc: where.append(threading.get_ident()), cpu(), mutable_vars=[v],
                  prop=FnProperty.ASYNC)
    assert where == [threading.get_ident()]  # ran during the push call itself
    eng.push_async(lambda rc, done: (where.append(threading.get_ident()), done()), cpu(),
                   const_vars=[v], prop=FnProperty.ASYNC)
    assert where[1] == threading.get_ident()
    wait_all(eng)
    assert_quiescent(eng, [v])


@pytest.mark.parametrize("kind", THREADED)
def test_async_property_runs_on_a_worker_when_not_ready(engines, kind):
    eng = engines(kind, num_cpu_workers=2)
    v = eng.new_variable()
    gate = Gate()
    eng.push_sync(gate, cpu(), mutable_vars=[v])
    where = []
    eng.push_sync(lambda rc: where.append((threading.get_ident(),
                                           threading.current_thread().name)),
                  cpu(), const_vars=[v], prop=FnProperty.ASYNC)
    assert where == []
    gate.open()
    wait_all(eng)
    assert len(where) == 1
    assert where[0][0] != threading.get_ident()
    assert where[0][1].startswith("ndengine-")
    assert_quiescent(eng, [v])


def _start_async_pool(eng):
    """Push one ASYNC op, so the pool exists and later ready ASYNC ops take the run-now path
    (a push that finds no pool goes through a block, which starts it)."""
    eng.push_sync(lambda rc: None, cpu(), mutable_vars=[eng.new_variable()],
                  prop=FnProperty.ASYNC)


@pytest.mark.parametrize("kind", THREADED)
def test_async_op_run_at_push_holds_its_vars_until_done(engines, kind):
    # While a ready ASYNC op runs in the pushing thread, ops that other threads push on its
    # vars queue behind it, and a wait on its output waits for it.
    eng = engines(kind, num_cpu_workers=2)
    _start_async_pool(eng)
    v, w = eng.new_variable(), eng.new_variable()
    order, seen = [], {}
    waited = threading.Event()

    def pusher():
        eng.push_sync(lambda rc: order.append("write"), cpu(), mutable_vars=[w])
        eng.push_sync(lambda rc: order.append("read"), cpu(), const_vars=[w])
        eng.push_sync(lambda rc: order.append("write v"), cpu(), mutable_vars=[v])

    def waiter():
        eng.wait_for_var(w)
        seen["order at wait"] = list(order)
        waited.set()

    def inline(rc):
        seen["thread"] = threading.get_ident()
        executor = eng._executor
        seen["state"] = (executor.pending + executor.pending_now, v.num_pending_reads,
                         w.num_pending_reads, w.pending_write is not None)
        for target in (pusher, waiter):
            threading.Thread(target=target, daemon=True).start()
        # queued on w: the write, the read and the wait's marker; v's write waits for our read
        wait_until(lambda: w.queue is not None and len(w.queue) == 3
                   and v.pending_write is not None)
        time.sleep(0.05)
        seen["blocked"] = (list(order), waited.is_set())
        order.append("inline")

    eng.push_sync(inline, cpu(), const_vars=[v], mutable_vars=[w], prop=FnProperty.ASYNC)
    assert seen["thread"] == threading.get_ident()
    assert seen["state"] == (1, 1, -1, True)  # a granted read of v, the granted write of w
    assert seen["blocked"] == ([], False)
    assert waited.wait(TIMEOUT)
    wait_all(eng)
    assert order[:3] == ["inline", "write", "read"] and sorted(order[3:]) == ["write v"]
    assert seen["order at wait"][:1] == ["inline"]
    assert_quiescent(eng, [v, w])


@pytest.mark.parametrize("kind", THREADED)
def test_async_op_run_at_push_leaves_exact_state(engines, kind):
    eng = engines(kind, num_cpu_workers=2)
    _start_async_pool(eng)
    v, w = eng.new_variable(), eng.new_variable()
    for _ in range(3):
        eng.push_sync(lambda rc: None, cpu(), const_vars=[v], mutable_vars=[w],
                      prop=FnProperty.ASYNC)
        assert_quiescent(eng, [v, w])  # finished within the push, nothing left behind
    eng.push_sync(lambda rc: None, cpu(), const_vars=[v, w], mutable_vars=[w],
                  prop=FnProperty.ASYNC)  # a var read and written counts as a write
    assert_quiescent(eng, [v, w])


@pytest.mark.parametrize("kind", THREADED)
def test_async_op_not_run_at_push_on_a_failed_var(engines, kind):
    # An op on a var whose writer failed is skipped (never run), whichever path it takes.
    eng = engines(kind, num_cpu_workers=2)
    _start_async_pool(eng)
    v = eng.new_variable()
    boom = ValueError("boom")

    def fail(rc):
        raise boom

    eng.push_sync(fail, cpu(), mutable_vars=[v], prop=FnProperty.ASYNC)
    ran = []
    eng.push_sync(lambda rc: ran.append(1), cpu(), mutable_vars=[v], prop=FnProperty.ASYNC)
    for _ in range(2):
        with pytest.raises(ValueError) as info:
            wait_var(eng, v)
        assert info.value is boom
    wait_all(eng)  # seen at wait_for_var: not raised again
    assert ran == []
    assert_quiescent(eng, [v])


# ---------------------------------------------------------------------------- item 14: operators
class CallableOp:
    def __init__(self, log):
        self.log = log

    def __call__(self, rc, on_complete):
        self.log.append(rc.ctx)
        on_complete()


@pytest.mark.parametrize("kind", KINDS)
def test_operator_push_many_times_then_delete(engines, kind):
    eng = engines(kind, **kind_workers(kind, 2))
    v, w = eng.new_variable(), eng.new_variable()
    log = []
    fn = CallableOp(log)
    ref = weakref.ref(fn)
    op = eng.new_operator(fn, [v], [w], name="myop")
    del fn
    for _ in range(5):
        eng.push(op, cpu())
    eng.push(op, cpu(1))
    wait_all(eng)
    assert log == [cpu()] * 5 + [cpu(1)]
    eng.delete_operator(op)
    with pytest.raises(ValueError):
        eng.push(op, cpu())
    gc.collect()
    assert ref() is None, "delete_operator should drop the fn reference"
    assert_quiescent(eng, [v, w])


@pytest.mark.parametrize("kind", THREADED)
def test_delete_operator_takes_effect_after_pending_pushes(engines, kind):
    eng = engines(kind, num_cpu_workers=2)
    v, w = eng.new_variable(), eng.new_variable()
    gate = Gate()
    eng.push_sync(gate, cpu(), mutable_vars=[v])
    log = []
    fn = CallableOp(log)
    ref = weakref.ref(fn)
    op = eng.new_operator(fn, [v], [w])
    del fn
    for _ in range(3):
        eng.push(op, cpu())
    eng.delete_operator(op)  # pushes are still pending
    with pytest.raises(ValueError):
        eng.push(op, cpu())
    gc.collect()
    assert ref() is not None, "fn dropped while pushes were pending"
    gate.open()
    wait_all(eng)
    assert log == [cpu()] * 3
    gc.collect()
    assert ref() is None, "fn kept after the last pending push finished"
    assert_quiescent(eng, [v, w])


@pytest.mark.parametrize("kind", KINDS)
def test_operator_respects_dependencies_and_props(engines, kind):
    eng = engines(kind, **kind_workers(kind, 2))
    v = eng.new_variable()
    box = {"x": 0}

    def incr(rc, done):
        x = box["x"]
        time.sleep(0.001)
        box["x"] = x + 1
        done()

    op = eng.new_operator(incr, [], [v, v], prop=FnProperty.CPU_PRIORITIZED)
    for _ in range(20):
        eng.push(op, cpu())
    wait_var(eng, v)
    assert box["x"] == 20
    assert_quiescent(eng, [v])


# ---------------------------------------------------------------------------- nested pushes
@pytest.mark.parametrize("kind", KINDS)
def test_op_can_push_more_ops_even_over_max_pending(engines, kind):
    eng = engines(kind, **({} if kind == "NaiveEngine" else
                           {"num_cpu_workers": 2, "max_pending": 2}))
    v = eng.new_variable()
    log = []

    def parent(rc):
        for i in range(10):
            eng.push_sync(lambda rc, i=i: log.append(i), cpu(), mutable_vars=[v])

    eng.push_sync(parent, cpu(), mutable_vars=[eng.new_variable()])
    wait_until(lambda: len(log) == 10, what="nested ops")
    wait_all(eng)
    assert log == list(range(10))
    assert_quiescent(eng, [v])


# ---------------------------------------------------------------------------- inline deletion
@pytest.mark.parametrize("kind", KINDS)
def test_delete_of_idle_cpu_var_runs_at_once_in_the_calling_thread(engines, kind):
    eng = engines(kind, **kind_workers(kind, 2))
    v = eng.new_variable()
    eng.push_sync(lambda rc: None, cpu(), mutable_vars=[v])
    wait_all(eng)
    where = []
    eng.delete_variable(lambda rc: where.append((threading.get_ident(), rc.ctx)), cpu(1), v)
    assert where == [(threading.get_ident(), cpu(1))]
    assert_quiescent(eng, [v])
    with pytest.raises(ValueError):
        eng.push_sync(lambda rc: None, cpu(), const_vars=[v])


@pytest.mark.parametrize("kind", THREADED)
def test_delete_of_busy_var_runs_later_after_the_ops(engines, kind):
    eng = engines(kind, num_cpu_workers=2)
    v = eng.new_variable()
    gate = Gate()
    eng.push_sync(gate, cpu(), const_vars=[v])
    assert gate.started.wait(5)
    where = []
    eng.delete_variable(lambda rc: where.append(threading.current_thread().name), cpu(), v)
    assert where == []
    gate.open()
    wait_all(eng)
    assert len(where) == 1 and where[0].startswith("ndengine-")
    assert_quiescent(eng, [v])


@pytest.mark.parametrize("kind", KINDS)
def test_failing_delete_fn_is_reported(engines, kind):
    eng = engines(kind, **kind_workers(kind, 2))
    idle, busy = eng.new_variable(), eng.new_variable()
    err_idle, err_busy = KeyError("idle"), KeyError("busy")

    def raise_(exc):
        def delete_fn(rc):
            raise exc
        return delete_fn

    for var, exc, slow in ((idle, err_idle, False), (busy, err_busy, True)):
        if slow:
            eng.push_sync(lambda rc: time.sleep(0.05), cpu(), mutable_vars=[var])
        try:
            eng.delete_variable(raise_(exc), cpu(), var)
        except KeyError as raised:
            assert kind == "NaiveEngine" and raised is exc
        with pytest.raises(KeyError) as info:
            wait_var(eng, var)
        assert info.value is exc
    wait_all(eng)  # both errors were raised by wait_for_var already: not again


@pytest.mark.parametrize("kind", THREADED)
def test_ready_deletion_runs_before_earlier_queued_ops(engines, kind):
    # One worker, blocked by a gate that reads z. Two ops queue up behind the gate; then z's
    # deletion is pushed. When the gate finishes, the deletion is ready and must run before
    # the ops queued earlier, so the memory it frees is reusable at once.
    eng = engines(kind, num_cpu_workers=1)
    z, g, a, b = (eng.new_variable() for _ in range(4))
    gate = threading.Event()
    order = []
    eng.push_sync(lambda rc: gate.wait(5), cpu(), const_vars=[z], mutable_vars=[g])
    eng.push_sync(lambda rc: order.append("a"), cpu(), mutable_vars=[a])
    eng.push_sync(lambda rc: order.append("b"), cpu(), mutable_vars=[b])
    eng.delete_variable(lambda rc: order.append("delete z"), cpu(), z)
    gate.set()
    wait_all(eng)
    assert order == ["delete z", "a", "b"]
