"""Failures users can act on (issue 9): an error seen at a wait is not raised again and does
not keep the op's arrays alive (item 4); an op that overwrites a failed var completely makes
it valid again (item 5); one rule for which error an op inherits (item 6); the error names
the op and the line that pushed it (item 8); the NaiveEngine follows the same rules (item 9).
Every test runs under the three engines."""
import gc
import traceback
import weakref

import numpy as np
import pytest

from ndengine.engine import FnProperty, cpu

from engine_helpers import KINDS, assert_quiescent, engines, wait_all, wait_var  # noqa: F401


class Boom(Exception):
    pass


def workers(kind):
    return {} if kind == "NaiveEngine" else {"num_cpu_workers": 2}


def push(eng, kind, *args, **kwargs):
    """push_sync; on the NaiveEngine an op's error raises at the push: return it (or None)."""
    try:
        eng.push_sync(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001
        assert kind == "NaiveEngine", f"a threaded engine raised at the push: {exc!r}"
        return exc
    return None


def fail_with(exc):
    def op(rc):
        raise exc
    return op


# ---------------------------------------------------------------------------- item 4
@pytest.mark.parametrize("prop", [FnProperty.NORMAL, FnProperty.ASYNC])
@pytest.mark.parametrize("kind", KINDS)
def test_error_seen_at_a_wait_is_not_raised_again_by_wait_for_all(engines, kind, prop):
    eng = engines(kind, **workers(kind))
    if kind != "NaiveEngine":  # start the pool, so ASYNC ops take the run-now path
        eng.push_sync(lambda rc: None, cpu(), (), (eng.new_variable(),), prop)
        wait_all(eng)
    seen, unseen = eng.new_variable(), eng.new_variable()
    e_seen, e_unseen = Boom("seen"), Boom("unseen")
    push(eng, kind, fail_with(e_seen), cpu(), (), (seen,), prop)
    with pytest.raises(Boom) as info:
        wait_var(eng, seen)
    assert info.value is e_seen
    if kind == "NaiveEngine":
        wait_all(eng)
        return
    push(eng, kind, fail_with(e_unseen), cpu(), (), (unseen,), prop)
    with pytest.raises(Boom) as info:
        wait_all(eng)
    assert info.value is e_unseen  # the first failure the user has not seen
    wait_all(eng)
    with pytest.raises(Boom) as info:  # the var itself still raises, every time
        wait_var(eng, seen)
    assert info.value is e_seen


@pytest.mark.parametrize("prop", [FnProperty.NORMAL, FnProperty.ASYNC])
@pytest.mark.parametrize("kind", KINDS)
def test_handled_failures_do_not_keep_arrays_alive(engines, kind, prop):
    # 1,000 failed ops on 1 MB arrays, each error handled at a wait: nothing the errors
    # reference may keep the arrays alive (the op's frames hold them as locals).
    eng = engines(kind, **workers(kind))
    if kind != "NaiveEngine":
        eng.push_sync(lambda rc: None, cpu(), (), (eng.new_variable(),), prop)
        wait_all(eng)
    alive = []
    gc.disable()  # no cycle collector: only references that are really dropped count
    try:
        for i in range(1000):
            big = np.ones(1 << 17)  # 1 MB
            alive.append(weakref.ref(big))
            var = eng.new_variable()

            def op(rc, big=big):
                local_view = big[::2]  # a local of the op's frame referencing the array
                raise Boom(f"failed after {local_view.size}")

            push(eng, kind, op, cpu(), (), (var,), prop)
            del big, op
            try:
                wait_var(eng, var)
            except Boom:
                pass
            else:
                raise AssertionError("the failure was not raised")
            del var
        still = sum(ref() is not None for ref in alive)
    finally:
        gc.enable()
    assert still <= 2, f"{still} of 1000 failed ops' 1 MB arrays are still alive"
    wait_all(eng)


@pytest.mark.parametrize("kind", KINDS)
def test_a_stored_error_keeps_its_type_message_and_traceback(engines, kind):
    eng = engines(kind, **workers(kind))
    var = eng.new_variable()
    err = Boom("original message")

    def failing_body(rc):
        raise err

    push(eng, kind, failing_body, cpu(), (), (var,))
    with pytest.raises(Boom, match="original message") as info:
        wait_var(eng, var)
    assert info.value is err
    # the op's traceback, kept as text (frames would keep its arrays alive)
    printed = "".join(traceback.format_exception(info.value))
    assert "the op's traceback" in printed and "in failing_body" in printed
    assert "raise err" in printed
    wait_all(eng)


# ---------------------------------------------------------------------------- item 5
@pytest.mark.parametrize("prop", [FnProperty.NORMAL, FnProperty.ASYNC])
@pytest.mark.parametrize("kind", KINDS)
def test_overwriting_a_failed_var_completely_makes_it_valid_again(engines, kind, prop):
    eng = engines(kind, **workers(kind))
    y, z, x = eng.new_variable(), eng.new_variable(), eng.new_variable()
    value = {}
    err = Boom("y's op failed")
    push(eng, kind, fail_with(err), cpu(), (), (y,), prop)
    # an ordinary write to y is skipped (it may need y's old contents)
    assert push(eng, kind, lambda rc: value.__setitem__("y", "partial"), cpu(), (), (y,),
                prop) in (None, err)
    # y[...] = 0: overwrites y completely: runs, and y is valid again
    eng.push_sync(lambda rc: value.__setitem__("y", 0), cpu(), (), (y,), prop,
                  overwrites=(y,))
    wait_var(eng, y)
    assert value["y"] == 0
    # later ops on y run normally
    eng.push_sync(lambda rc: value.__setitem__("z", value["y"] + 1), cpu(), (y,), (z,), prop)
    wait_var(eng, z)
    assert value["z"] == 1
    # an overwrite that reads a failed var is skipped and inherits its error
    push(eng, kind, fail_with(Boom("x failed")), cpu(), (), (x,), prop)
    push(eng, kind, lambda rc: value.__setitem__("y", "from x"), cpu(), (x,), (y,), prop,
         overwrites=(y,))
    with pytest.raises(Boom, match="x failed"):
        wait_var(eng, y)
    # an overwrite that fails leaves its own error
    again = Boom("the overwrite failed")
    push(eng, kind, fail_with(again), cpu(), (), (y,), prop, overwrites=(y,))
    with pytest.raises(Boom) as info:
        wait_var(eng, y)
    assert info.value is again
    assert value["y"] == 0
    if kind != "NaiveEngine":  # y's first failure was never raised by a wait: it is now
        with pytest.raises(Boom) as info:
            wait_all(eng)
        assert info.value is err
    wait_all(eng)
    assert_quiescent(eng, [x, y, z])


@pytest.mark.parametrize("kind", KINDS)
def test_overwrite_queued_behind_the_failing_op(engines, kind):
    # Pushed before the failure is known: the rule applies when the op's turn comes.
    eng = engines(kind, **workers(kind))
    y = eng.new_variable()
    value = []

    def slow_failure(rc):
        import time
        time.sleep(0.05)
        raise Boom("slow")

    push(eng, kind, slow_failure, cpu(), (), (y,))
    eng.push_sync(lambda rc: value.append("overwritten"), cpu(), (), (y,), overwrites=(y,))
    wait_var(eng, y)
    assert value == ["overwritten"]
    wait_all(eng) if kind == "NaiveEngine" else pytest.raises(Boom, wait_all, eng)
    wait_all(eng)


@pytest.mark.parametrize("kind", KINDS)
def test_overwrites_must_be_written_and_not_read(engines, kind):
    eng = engines(kind, **workers(kind))
    a, b = eng.new_variable(), eng.new_variable()
    with pytest.raises(ValueError, match="not among the vars the op writes"):
        eng.push_sync(lambda rc: None, cpu(), (), (a,), overwrites=(b,))
    with pytest.raises(ValueError, match="reads"):
        eng.push_sync(lambda rc: None, cpu(), (a,), (a,), overwrites=(a,))
    wait_all(eng)


# ---------------------------------------------------------------------------- item 6
@pytest.mark.parametrize("first", ["a", "b"])
@pytest.mark.parametrize("kind", KINDS)
def test_an_op_inherits_the_earliest_failure_in_push_order(engines, kind, first):
    # Two inputs failed: the op inherits the failure pushed first (the error a serial
    # program would have stopped at), whatever the order of its arguments or of the
    # failures in time.
    eng = engines(kind, **workers(kind))
    a, b = eng.new_variable(), eng.new_variable()
    errors = {"a": Boom("a failed"), "b": Boom("b failed")}
    second = "b" if first == "a" else "a"
    var_of = {"a": a, "b": b}
    push(eng, kind, fail_with(errors[first]), cpu(), (), (var_of[first],))
    push(eng, kind, fail_with(errors[second]), cpu(), (), (var_of[second],))
    for reads, writes in (((a, b), ()), ((b, a), ()), ((a,), (b,)), ((b,), (a,))):
        out = eng.new_variable()
        raised = push(eng, kind, lambda rc: None, cpu(), reads, writes + (out,))
        assert raised in (None, errors[first])
        with pytest.raises(Boom) as info:
            wait_var(eng, out)
        assert info.value is errors[first], (reads, writes)
    try:
        wait_all(eng)
    except Boom:
        pass
    wait_all(eng)


# ---------------------------------------------------------------------------- item 8
@pytest.mark.parametrize("prop", [FnProperty.NORMAL, FnProperty.ASYNC])
@pytest.mark.parametrize("kind", KINDS)
def test_error_note_names_the_op_and_where_it_was_pushed(engines, kind, prop):
    eng = engines(kind, **workers(kind))
    if kind != "NaiveEngine":
        eng.push_sync(lambda rc: None, cpu(), (), (eng.new_variable(),), prop)
        wait_all(eng)
    v, w = eng.new_variable(), eng.new_variable()
    calls = []

    def origin():
        calls.append(1)
        return ("analysis.py", 3)

    push(eng, kind, fail_with(ZeroDivisionError("division by zero")), cpu(), (), (v,), prop,
         name="power", origin=origin)
    push(eng, kind, lambda rc: None, cpu(), (v,), (w,), prop, name="add",
         origin=("other.py", 9))
    for var in (v, w, v):
        with pytest.raises(ZeroDivisionError, match="division by zero") as info:
            wait_var(eng, var)
        # once per exception, however many waits raise it; a skipped op adds no note
        notes = info.value.__notes__
        assert [n for n in notes if n.startswith("raised by")] == [
            "raised by power, pushed at analysis.py:3"]
        assert len(notes) == 2 and notes[0].startswith("the op's traceback")
    assert calls == [1]
    wait_all(eng)


@pytest.mark.parametrize("kind", KINDS)
def test_successful_tiny_ops_never_compute_their_origin(engines, kind):
    eng = engines(kind, **workers(kind))
    eng.push_sync(lambda rc: None, cpu(), (), (eng.new_variable(),), FnProperty.ASYNC)
    wait_all(eng)
    calls = []
    v = eng.new_variable()
    for _ in range(20):
        eng.push_sync(lambda rc: None, cpu(), (), (v,), FnProperty.ASYNC,
                      origin=lambda: calls.append(1))
    wait_all(eng)
    assert calls == []


@pytest.mark.usefixtures("nd_engine")
def test_array_error_note_names_the_op_and_the_line_of_the_user(nd_engine):
    import sys

    import ndengine as nd
    x = nd.arange(3)
    line = sys._getframe().f_lineno + 2
    try:
        z = x ** nd.array([-1, -1, -1])  # the kernel refuses negative integer powers
        z.asnumpy()
    except ValueError as exc:
        error = exc
    else:
        raise AssertionError("no error")
    expected = f"raised by power, pushed at {__file__}:{line}"
    notes = [n for n in getattr(error, "__notes__", ()) if n.startswith("raised by")]
    assert notes == [expected], getattr(error, "__notes__", None)
