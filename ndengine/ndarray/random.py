"""Random numbers. Each device has one NumPy Generator whose draws are ordered by the engine,
so draws happen in push order: a seeded program gives the same numbers under every engine and
worker count. ``default_rng(seed)`` gives a Generator of one's own (``Generator`` below).

Two APIs, as NumPy has:
- NumPy's Generator API: ``rng = default_rng(seed)``, then ``rng.normal(...)``, ``rng.choice``...
  Each call is a pushed op that calls the very method of a ``numpy.random.Generator`` made by
  ``numpy.random.default_rng(seed)``, with the caller's arguments: the numbers are NumPy's, the
  same as ``numpy.random.default_rng(seed)`` gives for the same calls.
- The legacy functions (``seed``, ``rand``, ``randn``, ``randint``, ``uniform``, ``normal``,
  ``random_sample``, ``choice``, ``permutation``, ``shuffle``), NumPy's signatures (``size=``;
  ``shape=`` is ndengine's older spelling of it). They draw from the device's generator: a
  PCG64 seeded with (seed, device id, is gpu), so each device has its own stream. They do NOT
  give the numbers of ``numpy.random.seed(s)`` (NumPy's legacy MT19937 RandomState): the
  per-device streams, and the numbers seeded programs already rely on, come first. For
  NumPy's numbers, use ``default_rng``.

How the draws are ordered, and why a failed draw cannot poison the generator: the state of a
device holds ``turn``, an empty NDArray. A draw is an op that reads ``turn`` and writes only its
output; after it, ``random_order`` (an op that does nothing) writes ``turn``. So draw N+1 waits
for order N, which waits for draw N to finish, failed or not. The engine marks failed only the
vars an op writes, and the ops that write ``turn`` cannot fail, so a draw that fails (MemoryError
for its output, say) fails its output alone and the next draws run. Parameters are checked at
the call with NumPy's errors (ops/families/random.py): a bad one raises there and pushes nothing.

``seed()`` pushes nothing: it replaces the device's state (a new Generator and a new ``turn``).
Draws pushed before it keep the old generator, later ones use the new one, so it lands between
them whatever happened before.

State
    _states       Context -> _DeviceGenerator (generator, turn, engine); replaced, never
                  changed, under _states_lock, and read without it.
    _seed         the last seed() for every device, applied to devices first used later.
A state belongs to the engine that was current when it was made: after ``set_engine`` the next
draw waits for the draws pushed on the old engine, then makes a new ``turn`` on the new engine
and keeps the generator (the stream goes on).
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
from ..engine import Context, current_context as _current_context
from ..ops.shapes import check_shape as _check_shape
from .creation import empty as _empty
from ..core import NDArray, invoke as _invoke
from ..core.gpu import xp as _device_module
from ..ops.gpu.random import make_generator as _make_generator
from .signatures import signed_function as _signed_function

__all__ = ["seed", "uniform", "normal", "randint", "rand", "randn", "random_sample", "random",
           "choice", "permutation", "shuffle", "default_rng", "Generator"]

_ORDER = ops.get("random_order")
_METHOD = ops.get("random_method")


class _DeviceGenerator:
    __slots__ = ("generator", "turn", "engine", "ctx")

    def __init__(self, generator, ctx, engine):
        self.generator = generator
        self.ctx = ctx
        self.turn = _empty((0,), np.uint8, ctx=ctx)  # its var orders the draws; no memory
        self.engine = weakref.ref(engine)


_states = {}
_states_lock = threading.Lock()
_seed = [None]  # the last nd.random.seed(), applied to devices first used later


def _new_generator(seed_value, ctx):
    """A device's Generator; seed_value None draws fresh entropy, as numpy.random.default_rng().
    A GPU's is its own array module's (CuPy's on a real GPU: the draws run there)."""
    entropy = None if seed_value is None else [seed_value, ctx.device_id,
                                               ctx.device_type == "gpu"]
    if ctx.device_type == "gpu":
        return _make_generator(_device_module(ctx), entropy)
    return np.random.Generator(np.random.PCG64(entropy))


def _state(ctx):
    engine = _engine_mod.get()
    state = _states.get(ctx)
    if state is None or state.engine() is not engine:
        with _states_lock:
            state = _states.get(ctx)
            if state is None or state.engine() is not engine:
                state = _states[ctx] = _DeviceGenerator(
                    _new_generator(_seed[0], ctx), ctx, engine) if state is None else \
                    _moved(state, engine)
    return state


def _moved(state, engine):
    """``state`` on another engine: the same generator, a new turn. The draws pushed on the
    old engine run first (they use the same generator)."""
    old = state.engine()
    if old is not None:
        old.wait_for_var(state.turn.engine_var)
    return _DeviceGenerator(state.generator, state.ctx, engine)


def _device_state(ctx):
    return _state(_current_context() if ctx is None else Context(ctx))


def seed(seed_value=None, ctx="all"):
    """Seed the generator of every device (or of one Context), as numpy.random.seed: draws
    pushed after this call give the same numbers every run (ndengine's numbers, not those of
    NumPy's legacy RandomState). ``None`` draws fresh entropy."""
    value = None if seed_value is None else operator.index(seed_value)
    targets = list(_states) if ctx == "all" else [Context(ctx)]
    generators = {target: _new_generator(value, target) for target in targets}  # raises here
    engine = _engine_mod.get()
    with _states_lock:
        if ctx == "all":
            _seed[0] = value
        for target, generator in generators.items():
            _states[target] = _DeviceGenerator(generator, target, engine)


def _size(size, shape):
    """NumPy's ``size=`` or ndengine's older ``shape=`` (one of them)."""
    if shape is not None:
        if size is not None:
            raise TypeError("give size= or shape=, not both")
        return shape
    return size


def _draw(op_name, params, shape, dtype, ctx):
    if shape is None:  # NumPy's size=None: the parameters' broadcast shape (0-d for scalars)
        shape = np.broadcast_shapes(*(np.shape(v) for v in params.values() if v is not None))
    state = _device_state(ctx)
    turn = state.turn
    # NDArray parameters are read here, at the call, where NumPy's checks of their values
    # raise (the op then holds host values, which a GPU's draw copies in)
    params = {k: v.asnumpy() if isinstance(v, NDArray) else v for k, v in params.items()}
    params.update(shape=shape, dtype=dtype, generator=state.generator)
    out = _invoke(ops.get(op_name), [turn], params)[0]  # reads turn: after the earlier draws
    _invoke(_ORDER, [], None, out=turn, ctx=state.ctx)  # writes turn: the next draw waits for it
    return out


def _frozen(value):
    """A parameter as the op will read it when it runs: NumPy arrays and lists are copied
    now, so later changes by the caller do not reach the queued draw."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, list):
        return np.array(value)
    return value


def _push_method(state, method, values, out=None):
    """Push ``Generator.<method>(**values)`` on ``state``'s generator, after its earlier
    draws; NDArray arguments are the op's inputs (read when it runs)."""
    arrays = {k: v for k, v in values.items() if isinstance(v, NDArray)}
    params = {k: v if method == "shuffle" and k == "x" else _frozen(v)  # shuffled in place
              for k, v in values.items() if k not in arrays}
    params.update(generator=state.generator, method=method, array_params=tuple(arrays))
    turn = state.turn
    result = _invoke(_METHOD, [turn, *arrays.values()], params, out=out)[0]
    _invoke(_ORDER, [], None, out=turn, ctx=state.ctx)
    return result


def _call(state, method, values):
    """A Generator method's arguments (bound, with NumPy's defaults) -> its pushed draw."""
    out = values.pop("out", None)
    if out is not None:  # Generator.random / standard_normal write into out, as NumPy's
        if not isinstance(out, NDArray):
            raise TypeError(f"out must be an NDArray, not {type(out).__name__}")
        if np.dtype(values["dtype"]) != out.dtype:
            raise TypeError(f"Supplied output array has the wrong type. Expected "
                            f"{np.dtype(values['dtype'])}, got {out.dtype}")
        if values["size"] is not None and \
                _check_shape(values["size"]) != out.shape:
            raise ValueError("size must match out.shape when used together")
        values["size"] = out.shape
        _push_method(state, method, values, out=out)
        return out
    if method == "shuffle":
        x = values["x"]
        if isinstance(x, NDArray):
            _push_method(state, method, values, out=x)
        else:  # the caller's own list or NumPy array: shuffled when this returns, as NumPy's
            _push_method(state, method, values).wait_to_read()
        return None
    return _push_method(state, method, values)


# ---------------------------------------------------------------- NumPy's Generator API
# method -> NumPy's parameters (numpy.random.Generator's, for every method ops.families.random runs)
_GENERATOR_SIGNATURES = {
    "random": "size=None, dtype=np.float64, out=None",
    "standard_normal": "size=None, dtype=np.float64, out=None",
    "integers": "low, high=None, size=None, dtype=np.int64, endpoint=False",
    "normal": "loc=0.0, scale=1.0, size=None",
    "uniform": "low=0.0, high=1.0, size=None",
    "exponential": "scale=1.0, size=None",
    "poisson": "lam=1.0, size=None",
    "binomial": "n, p, size=None",
    "choice": "a, size=None, replace=True, p=None, axis=0, shuffle=True",
    "permutation": "x, axis=0",
    "shuffle": "x, axis=0",
}
_generators = weakref.WeakSet()  # for the fork handler


def _generator_method(name, parameters):
    def draw(values):  # the bound arguments, self among them -> the pushed draw
        return _call(values.pop("self")._current(), name, values)
    return _signed_function(
        name, f"self, {parameters}", draw, by_name=True, qualname=f"Generator.{name}",
        module=__name__,
        doc=(f"numpy.random.Generator.{name}, pushed: an NDArray (None for shuffle, which "
             f"shuffles in place); NumPy's numbers for the same state."))


class Generator:
    """NumPy's Generator, its draws pushed in order on the engine: ``Generator(bit_generator)``
    or ``default_rng(seed)``. Each method call is an op that calls the same method of the
    NumPy Generator this object holds (see the module docstring); its results are NDArrays
    on ``ctx`` (the current context when the Generator was made)."""

    __slots__ = ("_ctx", "_state", "_lock", "__weakref__")

    def __init__(self, bit_generator, *, ctx=None):
        if isinstance(bit_generator, np.random.Generator):
            generator = bit_generator  # shared with the caller, as numpy.random.default_rng
        elif isinstance(bit_generator, np.random.BitGenerator):
            generator = np.random.Generator(bit_generator)
        else:
            raise TypeError(f"Generator takes a numpy.random.BitGenerator, not "
                            f"{type(bit_generator).__name__}; use default_rng(seed)")
        self._ctx = _current_context() if ctx is None else Context(ctx)
        self._lock = threading.Lock()
        self._state = _DeviceGenerator(generator, self._ctx, _engine_mod.get())
        _generators.add(self)

    def _current(self):
        """The state on the current engine (a new turn after set_engine; the same stream)."""
        state, engine = self._state, _engine_mod.get()
        if state.engine() is not engine:
            with self._lock:
                state = self._state
                if state.engine() is not engine:
                    state = self._state = _moved(state, engine)
        return state

    def __repr__(self):
        name = type(self._state.generator.bit_generator).__name__
        return f"Generator({name}) on {self._ctx}"

    def __getattr__(self, name):
        if not name.startswith("_") and hasattr(np.random.Generator, name):
            raise AttributeError(
                f"ndengine's Generator does not have {name!r} yet; draw with NumPy and "
                f"convert: nd.array(numpy.random.default_rng(seed).{name}(...))")
        raise AttributeError(f"'Generator' object has no attribute {name!r}")


for _name, _parameters in _GENERATOR_SIGNATURES.items():
    setattr(Generator, _name, _generator_method(_name, _parameters))


def default_rng(seed=None, *, ctx=None):
    """numpy.random.default_rng: a Generator (PCG64) whose numbers are NumPy's for the same
    seed and calls. A Generator is returned as it is; a NumPy Generator is wrapped, and its
    state is then shared with the caller."""
    if isinstance(seed, Generator):
        return seed
    return Generator(np.random.default_rng(seed), ctx=ctx)


# ---------------------------------------------------------------- legacy functions
def uniform(low=0.0, high=1.0, size=None, dtype=np.float64, ctx=None, *, shape=None):
    """numpy.random.uniform, from the device's generator (module docstring); NDArray bounds
    are read at the call (NumPy's checks of the parameters run there)."""
    return _draw("random_uniform", {"low": low, "high": high}, _size(size, shape), dtype, ctx)


def normal(loc=0.0, scale=1.0, size=None, dtype=np.float64, ctx=None, *, shape=None):
    """numpy.random.normal, from the device's generator (module docstring); NDArray ``loc``
    and ``scale`` are read at the call (NumPy's checks of the parameters run there)."""
    return _draw("random_normal", {"loc": loc, "scale": scale}, _size(size, shape), dtype,
                 ctx)


def randint(low, high=None, size=None, dtype=np.int64, ctx=None, *, shape=None):
    """numpy.random.randint, from the device's generator (module docstring); NDArray bounds
    are read at the call (NumPy's checks of the parameters run there)."""
    shape = _size(size, shape)
    if isinstance(shape, (str, bytes)):  # Generator.integers multiplies the size's entries
        raise TypeError(f"size must be a sequence of integers, not {type(shape).__name__}")
    return _draw("random_randint", {"low": low, "high": high}, shape, dtype, ctx)


def rand(*dims, ctx=None):
    """numpy.random.rand(d0, d1, ...): uniform on [0, 1), float64."""
    return _call(_device_state(ctx), "random",
                 {"size": dims or None, "dtype": np.float64})


def randn(*dims, ctx=None):
    """numpy.random.randn(d0, d1, ...): standard normal, float64."""
    return _call(_device_state(ctx), "standard_normal",
                 {"size": dims or None, "dtype": np.float64})


def random_sample(size=None, *, ctx=None, shape=None):
    """numpy.random.random_sample: uniform on [0, 1), float64."""
    return _call(_device_state(ctx), "random",
                 {"size": _size(size, shape), "dtype": np.float64})


def random(size=None, *, ctx=None, shape=None):
    """numpy.random.random (random_sample's other name)."""
    return random_sample(size, ctx=ctx, shape=shape)


def choice(a, size=None, replace=True, p=None, *, ctx=None, shape=None):
    """numpy.random.choice."""
    if isinstance(a, NDArray) and ctx is None:
        ctx = a.context
    return _call(_device_state(ctx), "choice",
                 {"a": a, "size": _size(size, shape), "replace": replace, "p": p})


def permutation(x, *, ctx=None):
    """numpy.random.permutation: a shuffled copy (of ``arange(x)`` for an int)."""
    if isinstance(x, NDArray) and ctx is None:
        ctx = x.context
    return _call(_device_state(ctx), "permutation", {"x": x})


def shuffle(x):
    """numpy.random.shuffle: shuffles ``x`` along its first axis, in place; returns None. A
    list or NumPy array is shuffled on the host, with the CPU's generator."""
    ctx = x.context if isinstance(x, NDArray) else _engine_mod.cpu(0)
    return _call(_device_state(ctx), "shuffle", {"x": x})


def __getattr__(name):
    if not name.startswith("_") and hasattr(np.random, name):
        raise AttributeError(
            f"ndengine.random does not have {name!r} yet; draw with NumPy and convert: "
            f"nd.array(numpy.random.{name}(...)), or use default_rng()")
    raise AttributeError(f"module 'ndengine.random' has no attribute {name!r}")


def _copy_generator(generator):
    if not isinstance(generator, np.random.Generator):
        return generator  # a GPU's: CUDA is not usable in a forked child anyway
    bit_generator = type(generator.bit_generator)()
    bit_generator.state = generator.bit_generator.state
    return np.random.Generator(bit_generator)


def _after_fork_in_child():
    global _states_lock
    _states_lock = threading.Lock()
    for state in list(_states.values()):
        state.generator = _copy_generator(state.generator)
    for rng in list(_generators):
        rng._lock = threading.Lock()
        rng._state.generator = _copy_generator(rng._state.generator)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
