"""Random numbers. Each device has one NumPy Generator whose state is an engine var that every
random op on the device writes, so draws happen in push order: a seeded program gives the same
numbers under every engine and worker count."""
import threading

import numpy as np

from .. import engine as _engine_mod
from .. import ops
from ..engine import Context, current_context
from .ndarray import NDArray, invoke

__all__ = ["seed", "uniform", "normal", "randint"]


class _DeviceGenerator:
    __slots__ = ("generator", "var")

    def __init__(self, seed_value):
        self.generator = np.random.Generator(np.random.PCG64(seed_value))
        self.var = _engine_mod.get().new_variable()


_states = {}
_states_lock = threading.Lock()
_seed = [None]  # the last nd.random.seed(), applied to devices first used later


def _state(ctx):
    state = _states.get(ctx)
    if state is None:
        with _states_lock:
            state = _states.get(ctx)
            if state is None:
                state = _states[ctx] = _DeviceGenerator(_seed_for(ctx))
    return state


def _seed_for(ctx):
    if _seed[0] is None:
        return None  # fresh entropy, as numpy.random.default_rng()
    return [_seed[0], ctx.device_id, ctx.device_type == "gpu"]


def seed(seed_value, ctx="all"):
    """Seed the generator of every device (or of one Context): the reseed is pushed as a
    write of the generator var, so it lands between the draws pushed before and after it."""
    if ctx == "all":
        _seed[0] = int(seed_value)
        targets = list(_states)
    else:
        targets = [Context(ctx)]
    for target in targets:
        state = _state(target)
        value = [int(seed_value), target.device_id, target.device_type == "gpu"]

        def reseed(run_ctx, state=state, value=value):
            state.generator.bit_generator.state = np.random.PCG64(value).state

        _engine_mod.get().push_sync(reseed, target, (), (state.var,), name="random_seed")


def _draw(op_name, params, shape, dtype, ctx):
    ctx = current_context() if ctx is None else Context(ctx)
    state = _state(ctx)
    params = dict(params, shape=(shape,) if isinstance(shape, int) else tuple(shape),
                  dtype=dtype, generator=state.generator)
    out = invoke(ops.get(op_name), [], params, ctx=ctx, extra_writes=(state.var,))[0]
    return out


def uniform(low=0.0, high=1.0, shape=(), dtype=np.float64, ctx=None):
    return _draw("random_uniform", {"low": low, "high": high}, shape, dtype, ctx)


def normal(loc=0.0, scale=1.0, shape=(), dtype=np.float64, ctx=None):
    return _draw("random_normal", {"loc": loc, "scale": scale}, shape, dtype, ctx)


def randint(low, high=None, shape=(), dtype=np.int64, ctx=None):
    return _draw("random_randint", {"low": low, "high": high}, shape, dtype, ctx)
