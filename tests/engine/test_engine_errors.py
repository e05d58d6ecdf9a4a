"""Error rules (item 6) and waits from inside an op (item 7)."""
import threading
import time
import traceback

import pytest

from ndengine.engine import FnProperty, cpu

from engine_helpers import (KINDS, THREADED, assert_quiescent, engines,  # noqa: F401
                            run_with_timeout, wait_all, wait_var)


class Boom(Exception):
    pass


def failing_op_body(rc):
    raise Boom("op failed")


def frames(exc):
    """The exception as printed: the wait's frames, then the op's traceback (a note)."""
    return "".join(traceback.format_exception(exc))


def push_expecting(eng, kind, exc_type, *args, **kwargs):
    """push_sync; NaiveEngine raises at the push, the threaded engines do not. Returns the
    exception raised at the push (NaiveEngine) or None."""
    if kind == "NaiveEngine":
        with pytest.raises(exc_type) as info:
            eng.push_sync(*args, **kwargs)
        return info.value
    eng.push_sync(*args, **kwargs)
    return None


@pytest.mark.parametrize("kind", KINDS)
def test_error_propagates_skips_and_is_raised_by_identity(engines, kind):
    eng = engines(kind, **({} if kind == "NaiveEngine" else {"num_cpu_workers": 2}))
    a, b, c, ok = (eng.new_variable() for _ in range(4))
    ran = []
    err = Boom("the original")

    def failing_op(rc):
        ran.append("fail")
        raise err

    raised = push_expecting(eng, kind, Boom, failing_op, cpu(), mutable_vars=[a])
    if kind == "NaiveEngine":
        assert raised is err
        assert "failing_op" in frames(raised)
    # reads a -> skipped, passes the error to b
    raised = push_expecting(eng, kind, Boom, lambda rc: ran.append("read-a"), cpu(),
                            const_vars=[a], mutable_vars=[b])
    assert raised is None or raised is err
    # writes a -> skipped
    raised = push_expecting(eng, kind, Boom, lambda rc: ran.append("write-a"), cpu(),
                            mutable_vars=[a])
    assert raised is None or raised is err
    # reads b (only affected through propagation) -> skipped, passes it to c
    raised = push_expecting(eng, kind, Boom, lambda rc: ran.append("read-b"), cpu(),
                            const_vars=[b], mutable_vars=[c])
    assert raised is None or raised is err
    # an async op on an affected var is skipped too: fn never called
    if kind == "NaiveEngine":
        with pytest.raises(Boom):
            eng.push_async(lambda rc, done: (ran.append("async"), done()), cpu(),
                           const_vars=[c])
    else:
        eng.push_async(lambda rc, done: (ran.append("async"), done()), cpu(), const_vars=[c])
    # unaffected var keeps working
    eng.push_sync(lambda rc: ran.append("ok"), cpu(), mutable_vars=[ok])
    # deletion still runs on a failed var
    eng.delete_variable(lambda rc: ran.append("delete-a"), cpu(), a)

    for var in (a, b, c, a, c):  # every time, the same object, with the op's frame
        with pytest.raises(Boom) as info:
            wait_var(eng, var)
        assert info.value is err
        assert "failing_op" in frames(info.value)
    wait_var(eng, ok)

    # every error was already raised, at a push (NaiveEngine) or by wait_for_var: an error
    # the user has seen is not raised again by wait_for_all
    wait_all(eng)
    assert sorted(ran) == ["delete-a", "fail", "ok"]  # skipped ops never ran
    assert ran.index("fail") < ran.index("delete-a")  # "ok" is independent: any position
    assert a.error is err and b.error is err and c.error is err and ok.error is None
    assert_quiescent(eng, [a, b, c, ok])

    # the engine keeps working afterwards
    fresh = eng.new_variable()
    box = []
    eng.push_sync(lambda rc: box.append(1), cpu(), const_vars=[ok], mutable_vars=[fresh])
    wait_var(eng, fresh)
    wait_all(eng)
    assert box == [1]


@pytest.mark.parametrize("kind", THREADED)
def test_wait_for_all_raises_first_unseen_error_then_forgets(engines, kind):
    eng = engines(kind, num_cpu_workers=2)
    a, b = eng.new_variable(), eng.new_variable()
    e1, e2 = Boom("first"), Boom("second")

    def raise_(exc):
        def op(rc):
            raise exc
        return op

    eng.push_sync(raise_(e1), cpu(), mutable_vars=[a])
    with pytest.raises(Boom) as info:
        wait_var(eng, a)  # the user has seen e1: wait_for_all does not raise it again
    assert info.value is e1
    d = eng.new_variable()
    eng.push_sync(raise_(e2), cpu(), mutable_vars=[b, d])
    # fails after e2 for sure: it waits for e2's op (on d), and runs as it overwrites d
    eng.push_sync(raise_(Boom("third")), cpu(), mutable_vars=[d], overwrites=[d])
    with pytest.raises(Boom) as info:
        wait_all(eng)
    assert info.value is e2
    wait_all(eng)  # the third was forgotten with it
    # both vars still report their own error, every time
    for var, exc in ((a, e1), (b, e2), (a, e1)):
        with pytest.raises(Boom) as info:
            wait_var(eng, var)
        assert info.value is exc
    wait_all(eng)


@pytest.mark.parametrize("kind", THREADED)
def test_error_of_op_without_writes_still_reaches_wait_for_all(engines, kind):
    eng = engines(kind, num_cpu_workers=2)
    v = eng.new_variable()
    err = Boom("read-only op failed")

    def reader(rc):
        raise err

    eng.push_sync(reader, cpu(), const_vars=[v])
    wait_var(eng, v)  # a read does not mark the var
    with pytest.raises(Boom) as info:
        wait_all(eng)
    assert info.value is err
    wait_all(eng)
    assert v.error is None


@pytest.mark.parametrize("kind", KINDS)
def test_skipped_ops_raise_upstream_error_and_failure_of_one_writer_marks_all_its_vars(engines,
                                                                                        kind):
    eng = engines(kind, **({} if kind == "NaiveEngine" else {"num_cpu_workers": 2}))
    x, y, z = eng.new_variable(), eng.new_variable(), eng.new_variable()
    err = Boom("multi")

    def multi(rc):
        raise err

    push_expecting(eng, kind, Boom, multi, cpu(), const_vars=[z], mutable_vars=[x, y])
    for var in (x, y):
        with pytest.raises(Boom) as info:
            wait_var(eng, var)
        assert info.value is err
    wait_var(eng, z)  # only read: unaffected
    assert z.error is None
    try:
        wait_all(eng)
    except Boom:
        pass
    wait_all(eng)


@pytest.mark.parametrize("pool_started", [False, True])  # a block, or the run-now path
@pytest.mark.parametrize("kind", THREADED)
def test_error_with_async_prop_inline(engines, kind, pool_started):
    eng = engines(kind, num_cpu_workers=2)
    if pool_started:
        eng.push_sync(lambda rc: None, cpu(), mutable_vars=[eng.new_variable()],
                      prop=FnProperty.ASYNC)
    v = eng.new_variable()
    err = Boom("inline")

    def inline(rc):
        raise err

    eng.push_sync(inline, cpu(), mutable_vars=[v], prop=FnProperty.ASYNC)  # no raise at push
    with pytest.raises(Boom) as info:
        wait_var(eng, v)
    assert info.value is err and "inline" in frames(info.value)
    wait_all(eng)  # seen at wait_for_var: not raised again


@pytest.mark.parametrize("kind", KINDS)
def test_delete_fn_runs_when_var_failed_and_its_own_error_is_reported(engines, kind):
    eng = engines(kind, **({} if kind == "NaiveEngine" else {"num_cpu_workers": 2}))
    v = eng.new_variable()
    deleted = []
    push_expecting(eng, kind, Boom, failing_op_body, cpu(), mutable_vars=[v])
    eng.delete_variable(lambda rc: deleted.append(1), cpu(), v)
    try:
        wait_all(eng)
    except Boom:
        pass
    assert deleted == [1]
    assert_quiescent(eng, [v])


@pytest.mark.parametrize("kind", KINDS)
def test_base_exceptions_are_op_failures_too(engines, kind):
    eng = engines(kind, **({} if kind == "NaiveEngine" else {"num_cpu_workers": 1}))
    v = eng.new_variable()
    err = KeyboardInterrupt()

    def op(rc):
        raise err

    push_expecting(eng, kind, KeyboardInterrupt, op, cpu(), mutable_vars=[v])
    if kind == "NaiveEngine":
        # In the pushing thread a KeyboardInterrupt is Ctrl-C: it went to the caller at the
        # push (above), and the op's output fails with an error that names it.
        with pytest.raises(RuntimeError, match="interrupted") as info:
            wait_var(eng, v)
        # a fresh KeyboardInterrupt as the cause: the user's one holds the pushing frames
        assert isinstance(info.value.__cause__, KeyboardInterrupt)
    else:
        with pytest.raises(KeyboardInterrupt) as info:
            wait_var(eng, v)
        assert info.value is err
    # the worker survived
    w = eng.new_variable()
    done = []
    eng.push_sync(lambda rc: done.append(1), cpu(), mutable_vars=[w])
    wait_var(eng, w)
    assert done == [1]
    try:
        wait_all(eng)
    except KeyboardInterrupt:
        pass


@pytest.mark.parametrize("kind", THREADED)
def test_many_errors_do_not_stop_the_engine(engines, kind):
    eng = engines(kind, num_cpu_workers=2)
    vs = [eng.new_variable() for _ in range(20)]
    errs = [Boom(i) for i in range(20)]
    for v, e in zip(vs, errs):
        eng.push_sync(lambda rc, e=e: (_ for _ in ()).throw(e), cpu(), mutable_vars=[v])
    with pytest.raises(Boom) as info:
        wait_all(eng)
    assert info.value in errs
    wait_all(eng)
    for v, e in zip(vs, errs):
        with pytest.raises(Boom) as info:
            wait_var(eng, v)
        assert info.value is e
    assert_quiescent(eng, vs)


# ---------------------------------------------------------------------------- item 7
@pytest.mark.parametrize("kind", THREADED)
@pytest.mark.parametrize("which", ["wait_for_var", "wait_for_all"])
@pytest.mark.parametrize("prop", [FnProperty.NORMAL, FnProperty.CPU_PRIORITIZED,
                                  FnProperty.ASYNC])
def test_wait_from_inside_an_op_raises_instead_of_deadlocking(engines, kind, which, prop):
    eng = engines(kind, num_cpu_workers=1)
    v, w = eng.new_variable(), eng.new_variable()
    caught = []

    def op(rc):
        try:
            if which == "wait_for_var":
                eng.wait_for_var(w)
            else:
                eng.wait_for_all()
        except RuntimeError as exc:
            caught.append(exc)
            raise

    run_with_timeout(lambda: eng.push_sync(op, cpu(), mutable_vars=[v], prop=prop))
    with pytest.raises(RuntimeError) as info:
        wait_var(eng, v)
    assert info.value is caught[0]
    message = str(info.value)
    assert which in message and "inside an op" in message and "deadlock" in message
    wait_all(eng)  # seen at wait_for_var: not raised again
    assert_quiescent(eng, [v, w])


@pytest.mark.parametrize("kind", THREADED)
def test_wait_from_inside_async_op_on_a_worker_raises(engines, kind):
    eng = engines(kind, num_cpu_workers=1)
    v = eng.new_variable()

    def op(rc, on_complete):
        try:
            eng.wait_for_var(v)
        except RuntimeError as exc:
            on_complete(exc)
        else:
            on_complete()

    eng.push_async(op, cpu(), mutable_vars=[v])
    with pytest.raises(RuntimeError, match="inside an op"):
        wait_var(eng, v)
    wait_all(eng)  # seen at wait_for_var: not raised again


@pytest.mark.parametrize("kind", THREADED)
def test_waits_from_other_threads_are_allowed_while_ops_run(engines, kind):
    eng = engines(kind, num_cpu_workers=2)
    v = eng.new_variable()
    finished = []
    eng.push_sync(lambda rc: (time.sleep(0.05), finished.append(1)), cpu(), mutable_vars=[v])
    results = []

    def waiter():
        eng.wait_for_var(v)
        results.append(bool(finished))

    threads = [threading.Thread(target=waiter) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(5)
    assert results == [True] * 4
    wait_all(eng)
