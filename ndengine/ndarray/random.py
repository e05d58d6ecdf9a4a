"""Random numbers. Each device has one NumPy Generator whose draws are ordered by the engine,
so draws happen in push order: a seeded program gives the same numbers under every engine and
worker count.

How the draws are ordered, and why a failed draw cannot poison the generator: the state of a
device holds ``turn``, an empty NDArray. A draw is an op that reads ``turn`` and writes only its
output; after it, ``random_order`` (an op that does nothing) writes ``turn``. So draw N+1 waits
for order N, which waits for draw N to finish, failed or not. The engine marks failed only the
vars an op writes, and the ops that write ``turn`` cannot fail, so a draw that fails (MemoryError
for its output, say) fails its output alone and the next draws run. Parameters are checked at
the call with NumPy's errors (ops/random.py): a bad one raises there and pushes nothing.

``seed()`` pushes nothing: it replaces the device's state (a new Generator and a new ``turn``).
Draws pushed before it keep the old generator, later ones use the new one, so it lands between
them whatever happened before.

State
    _states       Context -> _DeviceGenerator (generator, turn, engine); replaced, never
                  changed, under _states_lock, and read without it.
    _seed         the last seed() for every device, applied to devices first used later.
A state belongs to the engine that was current when it was made: after ``set_engine`` the next
draw makes a new ``turn`` on the new engine and keeps the generator (the stream goes on).
Fork: the lock is re-created in the child, and each Generator is replaced by one with the same
state (a thread of the parent may have held a Generator's own lock, which cannot be replaced).
"""
import operator
import os
import threading
import weakref

import numpy as np

from .. import engine as _engine_mod
from .. import ops
from ..engine import Context, current_context
from .creation import empty
from ..core import invoke

__all__ = ["seed", "uniform", "normal", "randint"]

_ORDER = ops.get("random_order")


class _DeviceGenerator:
    __slots__ = ("generator", "turn", "engine")

    def __init__(self, generator, ctx, engine):
        self.generator = generator
        self.turn = empty((0,), np.uint8, ctx)  # its var orders the draws; no memory is used
        self.engine = weakref.ref(engine)


_states = {}
_states_lock = threading.Lock()
_seed = [None]  # the last nd.random.seed(), applied to devices first used later


def _new_generator(seed_value, ctx):
    """A device's Generator; seed_value None draws fresh entropy, as numpy.random.default_rng()."""
    entropy = None if seed_value is None else [seed_value, ctx.device_id,
                                               ctx.device_type == "gpu"]
    return np.random.Generator(np.random.PCG64(entropy))


def _state(ctx):
    engine = _engine_mod.get()
    state = _states.get(ctx)
    if state is None or state.engine() is not engine:
        with _states_lock:
            state = _states.get(ctx)
            if state is None or state.engine() is not engine:
                generator = state.generator if state is not None else \
                    _new_generator(_seed[0], ctx)
                state = _states[ctx] = _DeviceGenerator(generator, ctx, engine)
    return state


def seed(seed_value, ctx="all"):
    """Seed the generator of every device (or of one Context), as numpy.random.seed: draws
    pushed after this call give the same numbers every run. ``None`` draws fresh entropy."""
    value = None if seed_value is None else operator.index(seed_value)
    targets = list(_states) if ctx == "all" else [Context(ctx)]
    generators = {target: _new_generator(value, target) for target in targets}  # raises here
    engine = _engine_mod.get()
    with _states_lock:
        if ctx == "all":
            _seed[0] = value
        for target, generator in generators.items():
            _states[target] = _DeviceGenerator(generator, target, engine)


def _draw(op_name, params, shape, dtype, ctx):
    if shape is None:  # NumPy's size=None: the parameters' broadcast shape (0-d for scalars)
        shape = np.broadcast_shapes(*(np.shape(v) for v in params.values() if v is not None))
    ctx = current_context() if ctx is None else Context(ctx)
    state = _state(ctx)
    turn = state.turn
    params = dict(params, shape=shape, dtype=dtype, generator=state.generator)
    out = invoke(ops.get(op_name), [turn], params)[0]  # reads turn: after the earlier draws
    invoke(_ORDER, [], None, out=turn, ctx=ctx)  # writes turn: the next draw waits for it
    return out


def uniform(low=0.0, high=1.0, shape=None, dtype=np.float64, ctx=None):
    return _draw("random_uniform", {"low": low, "high": high}, shape, dtype, ctx)


def normal(loc=0.0, scale=1.0, shape=None, dtype=np.float64, ctx=None):
    return _draw("random_normal", {"loc": loc, "scale": scale}, shape, dtype, ctx)


def randint(low, high=None, shape=None, dtype=np.int64, ctx=None):
    if isinstance(shape, (str, bytes)):  # Generator.integers multiplies the size's entries
        raise TypeError(f"size must be a sequence of integers, not {type(shape).__name__}")
    return _draw("random_randint", {"low": low, "high": high}, shape, dtype, ctx)


def _copy_generator(generator):
    copy = np.random.Generator(np.random.PCG64(0))
    copy.bit_generator.state = generator.bit_generator.state
    return copy


def _after_fork_in_child():
    global _states_lock
    _states_lock = threading.Lock()
    for state in list(_states.values()):
        state.generator = _copy_generator(state.generator)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
