"""A KeyboardInterrupt at any point of a split NumPy call (ops/runtime/parallel.py) leaves no
core slot taken: later split calls still run. A Ctrl-C storm once hung NaiveEngine this way
(the slots were a threading.BoundedSemaphore, whose Python-level acquire an interrupt could
leave half done)."""
import threading

import numpy as np
import pytest

from ndengine.ops.runtime import parallel

SIZE = parallel.PARALLEL_MIN_SIZE * 4


def _split_add(a, b, out):
    parallel.split_run(lambda x, y, o: np.add(x, y, out=o), [a, b, out])


def _runs_within(seconds, fn):
    done = threading.Event()
    errors = []

    def run():
        try:
            fn()
        except BaseException as exc:  # noqa: B902 - reported below
            errors.append(exc)
        done.set()
    threading.Thread(target=run, daemon=True).start()
    finished = done.wait(seconds)
    if errors:
        raise errors[0]
    return finished


@pytest.mark.parametrize("where", ["after_take", "in_kernel"])
def test_an_interrupt_inside_a_split_call_leaves_no_slot_taken(monkeypatch, where):
    a, b = np.ones(SIZE), np.ones(SIZE)
    out = np.empty(SIZE)
    slots = parallel._chunk_slots
    real_take = slots.take
    interrupts = []

    def take_then_interrupt(me):  # the interrupt lands after the slot was taken
        real_take(me)
        if where == "after_take" and threading.get_ident() == main:
            interrupts.append(me)
            raise KeyboardInterrupt

    def kernel(x, y, o):
        if where == "in_kernel" and threading.get_ident() == main:
            interrupts.append(1)
            raise KeyboardInterrupt
        np.add(x, y, out=o)

    main = threading.get_ident()
    monkeypatch.setattr(slots, "take", take_then_interrupt)
    for _ in range(slots.count * 3):  # enough interrupts to leak every slot several times
        with pytest.raises(KeyboardInterrupt):
            parallel.split_run(kernel, [a, b, out])
    assert len(interrupts) == slots.count * 3
    assert slots.holders == []
    monkeypatch.setattr(slots, "take", real_take)
    assert _runs_within(30, lambda: _split_add(a, b, out)), "a later split call hung"
    np.testing.assert_array_equal(out, 2.0)


def test_slots_bound_the_chunks_running_at_once():
    slots = parallel.CoreSlots(2)
    slots.take(1)
    slots.take(2)
    third = threading.Thread(target=slots.take, args=(3,), daemon=True)
    third.start()
    third.join(0.2)
    assert third.is_alive() and sorted(slots.holders) == [1, 2]
    slots.give(1)
    third.join(5)
    assert not third.is_alive() and sorted(slots.holders) == [2, 3]
    slots.forget(2)
    slots.forget(3)
    assert slots.holders == []
