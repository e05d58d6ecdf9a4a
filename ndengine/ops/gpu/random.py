"""gpu kernels of the random ops, drawing from the device's own generator.

The CPU kernels (``ops/families/random.py``) draw from the ``generator`` param, a
``numpy.random.Generator`` the NDArray layer keeps per device.  On a GPU the draws must come
from a generator of the device's array module: ``cupy.random.Generator``
(``cupy.random.default_rng``); on the fake device (NumPy arrays) NumPy's.  The kernels
check that the generator matches the arrays' module (``device_generator``): the caller
(the core layer) must pass the device's generator for a gpu context; ``make_generator``
makes one from the same entropy the CPU's are seeded with.  The ops layer cannot do it
alone: a generator is state the caller owns and orders (``random_order``), so a
NumPy Generator handed to a CuPy draw is refused with a TypeError saying so, never
silently replaced; except that a NumPy Generator's draws for a GPU array
(``nd.random.default_rng(seed)``, whose numbers are promised to be NumPy's) are made on the
host by the CPU kernel and copied in (``_numpy_drawn``).

uniform, normal and randint (the ``RANDOM_TABLE`` rows) make the CPU draws' calls
(``Generator.random``, ``standard_normal``, ``integers``: CuPy's Generator has them, with
``dtype``) and scale them as the CPU's do, in the output dtype, with array parameters as xp
arrays of that dtype (``DRAWS``).  ``random_method`` calls the generator's method where it has one;
CuPy's Generator lacks ``normal``, ``choice``, ``permutation`` and ``shuffle``, which get
xp twins over its ``random``/``integers``/``standard_normal`` draws (``TWINS``: the same
distributions, not NumPy's bit streams, which no device generator reproduces anyway).
"""
from __future__ import annotations

import math

import numpy as np

from .kernels import device_value, host_run, module_of, quiet, write_value
from ..plans import OpReq
from ..families.random import RANDOM_TABLE
from ..shapes import normalize_axis_index

__all__ = ["planners", "device_generator", "make_generator", "DRAWS", "TWINS"]

_NULL = OpReq.NULL


def make_generator(xp, entropy=None):
    """A generator of ``xp`` seeded from ``entropy`` (what the CPU's ``PCG64`` takes):
    NumPy's ``Generator(PCG64(entropy))``, or CuPy's ``Generator(XORWOW(seed))`` with the
    seed NumPy's ``SeedSequence(entropy)`` derives."""
    if xp is np:
        return np.random.Generator(np.random.PCG64(entropy))
    seed = int(np.random.SeedSequence(entropy).generate_state(1, np.uint64)[0])
    return xp.random.Generator(xp.random.XORWOW(seed))


def device_generator(xp, params):
    """The call's generator, which must be ``xp``'s (see the module docstring)."""
    generator = params.get("generator")
    if not isinstance(generator, xp.random.Generator):
        raise TypeError(f"random ops on a {'GPU' if xp is not np else 'NumPy'} array need "
                        f"param generator={xp.__name__}.random.Generator (the device's own; "
                        f"ndengine.ops.gpu.random.make_generator makes one), got "
                        f"{type(generator).__name__}")
    return generator


# ------------------------------------------------------------------ uniform/normal/randint

def _in(xp, value, dtype):
    """A parameter in the output dtype: a NumPy scalar, or an xp array (array params)."""
    if np.ndim(value):
        return xp.asarray(value, dtype=dtype)
    return dtype.type(value)


def _uniform(xp, generator, shape, dtype, low=0.0, high=1.0, **_):
    u = generator.random(shape, dtype=dtype)
    low, high = _in(xp, low, dtype), _in(xp, high, dtype)
    return low + (high - low) * u


def _normal_draw(xp, generator, shape, dtype, loc=0.0, scale=1.0, **_):
    z = generator.standard_normal(shape, dtype=dtype)
    return _in(xp, loc, dtype) + _in(xp, scale, dtype) * z


def _randint(xp, generator, shape, dtype, low, high=None, **_):
    return generator.integers(device_value(xp, low), device_value(xp, high), size=shape,
                              dtype=dtype)


DRAWS = {"random_uniform": _uniform, "random_normal": _normal_draw,
         "random_randint": _randint}


def _numpy_drawn(xp, cpu_plan, inputs, outputs, req, params):
    """A NumPy Generator's draw for a device (``nd.random.default_rng(seed)`` on a GPU): drawn
    on the host by the CPU plan, so the numbers stay NumPy's, then copied in. True if so."""
    if xp is np or not isinstance(params.get("generator"), np.random.Generator):
        return False
    host_run(xp, cpu_plan.run, inputs, outputs, req, params)
    return True


def _device_draw(cpu_plan, inputs, outputs, req, params):
    """The arrays' module for a draw the device's generator makes, or None when nothing is
    left to do: no output is written (the stream only advances for written outputs), or a
    NumPy Generator drew it on the host (``_numpy_drawn``)."""
    if OpReq(req[0]) is _NULL:
        return None
    xp = module_of(inputs, outputs)
    if _numpy_drawn(xp, cpu_plan, inputs, outputs, req, params):
        return None
    return xp


def _random_planner(draw):
    def planner(op, inputs, params, cpu_plan):
        def run(inputs, outputs, req, params):
            out = outputs[0]
            xp = _device_draw(cpu_plan, inputs, outputs, req, params)
            if xp is None:
                return
            r = OpReq(req[0])
            generator = device_generator(xp, params)
            rest = {k: v for k, v in params.items() if k not in ("generator", "shape", "dtype")}
            write_value(xp, out, r, draw(xp, generator, out.shape, out.dtype, **rest))
        return run
    return planner


def _order_planner(op, inputs, params, cpu_plan):
    def run(inputs, outputs, req, params):
        pass  # its only effect is the write of its output's var (see ops/families/random.py)
    return run


# ------------------------------------------------------------------ Generator methods

def _size(size):
    return () if size is None else (tuple(size) if np.ndim(size) else (int(size),))


def _normal(xp, generator, loc=0.0, scale=1.0, size=None):
    shape = _size(size) if size is not None else np.broadcast_shapes(np.shape(loc),
                                                                      np.shape(scale))
    return loc + scale * generator.standard_normal(shape)


def _order(xp, generator, n):
    """A uniformly random permutation of range(n): the order of n uniform draws."""
    return xp.argsort(generator.random(n))


def _permutation(xp, generator, x, axis=0):
    if isinstance(x, (int, np.integer)):
        return _order(xp, generator, max(int(x), 0))
    x = xp.asarray(x)
    axis = normalize_axis_index(axis, x.ndim)
    return xp.take(x, _order(xp, generator, x.shape[axis]), axis=axis)


def _shuffle(xp, generator, x, axis=0):
    axis = normalize_axis_index(axis, x.ndim)
    x[...] = xp.take(x, _order(xp, generator, x.shape[axis]), axis=axis)


def _choice(xp, generator, a, size=None, replace=True, p=None, axis=0, shuffle=True):
    population = None if isinstance(a, (int, np.integer)) else xp.asarray(a)
    n = int(a) if population is None else population.shape[axis]
    shape = _size(size)
    count = math.prod(shape)
    if p is not None:
        p = xp.asarray(p, dtype=np.float64)
    if replace and p is None:
        picks = generator.integers(0, n, size=shape)
    elif replace:
        cdf = xp.cumsum(p)
        picks = xp.searchsorted(cdf / cdf[-1], generator.random(shape), side="right")
        picks = xp.minimum(picks, n - 1)
    elif p is None:
        picks = _order(xp, generator, n)[:count].reshape(shape)
    else:  # weighted, without replacement: the count largest u ** (1 / p) (Efraimidis)
        with quiet(xp):  # a zero weight: key -inf, never picked
            keys = xp.log(generator.random(n)) / p
        picks = xp.argsort(-keys)[:count].reshape(shape)
    if population is None:
        return picks
    return xp.take(population, picks, axis=axis)


TWINS = {"normal": _normal, "permutation": _permutation, "shuffle": _shuffle,
         "choice": _choice}


def _method_planner(op, inputs, params, cpu_plan):
    def run(inputs, outputs, req, params):
        out = outputs[0]
        xp = _device_draw(cpu_plan, inputs, outputs, req, params)
        if xp is None:
            return
        r = OpReq(req[0])
        if params["method"] == "shuffle" and "x" not in params.get("array_params", ()) \
                and xp is np:  # a host list or NumPy array, on a fake GPU: the host's draw
            cpu_plan.run(inputs, outputs, req, params)
            return
        values = {k: v for k, v in params.items()
                  if k not in ("generator", "method", "array_params")}
        method = params["method"]
        array_params = params.get("array_params", ())
        values = device_value(xp, values)
        values.update(zip(array_params, inputs[1:]))
        generator = device_generator(xp, params)
        if method == "shuffle":
            if "x" not in array_params:
                raise TypeError("random_method shuffle on a device shuffles device arrays "
                                "only (a NumPy array or a list stays on the host)")
            values["x"] = out  # the array itself, written in place
        found = getattr(generator, method, None)
        if found is None:
            twin = TWINS[method]

            def call(**values):
                return twin(xp, generator, **values)
        else:
            call = found
        if method == "shuffle":
            call(**values)
            return
        write_value(xp, out, r, call(**values))
    return run


def planners() -> dict:
    found = {name: _random_planner(DRAWS[name]) for name, _, _, _ in RANDOM_TABLE}
    found["random_method"] = _method_planner
    found["random_order"] = _order_planner
    return found
