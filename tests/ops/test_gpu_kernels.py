"""The gpu kernels (ndengine/ops/gpu/*.py) against the CPU's, NumPy the oracle.

Without a GPU the gpu device is the fake one: its kernels are handed NumPy arrays and run with
xp = numpy, so every op's gpu code runs here and must give the CPU kernel's results. Where
CuPy and a GPU are present, the tests taking ``xp`` run on CuPy arrays too (results copied
back and compared with the CPU's).
"""
import pathlib
import sys
import types

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import ndengine.ops as ops
from ndengine.ops import OpReq
from ndengine.ops import host_fallback
from ndengine.ops.gpu import kernels as gpu_kernels, random as gpu_random
from ndengine.ops.elementwise.operators import spec as elementwise_spec
from ndengine.ops.families.reductions import REDUCTIONS
from ndengine.ops.registry import Operator, numpy_backed

from gpu_samples import F, I, MASK, NANS, RANDOM, SAMPLES, SMALL, V

W, INPLACE, ADD, NULL = OpReq.WRITE_TO, OpReq.WRITE_INPLACE, OpReq.ADD_TO, OpReq.NULL


def _cupy_with_gpu():
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() > 0:
            return cupy
    except Exception:  # noqa: BLE001 - no CuPy, or CuPy without a usable GPU
        pass
    return None


CUPY = _cupy_with_gpu()


@pytest.fixture(params=["numpy", "cupy"])
def xp(request):
    if request.param == "numpy":
        return np
    if CUPY is None:
        pytest.skip("needs CuPy and a GPU")
    return CUPY


def _is_elementwise(name):
    try:
        elementwise_spec(name)
        return True
    except KeyError:
        return False


ELEMENTWISE = sorted(n for n in ops.names() if _is_elementwise(n))
TOLERANCE = {"float16": 2e-3, "float32": 2e-5, "float64": 1e-11, "complex64": 2e-5,
             "complex128": 1e-11}


# ------------------------------------------------------------------ helpers

def device(xp, value):
    return xp.asarray(value) if xp is not np and isinstance(value, np.ndarray) else value


def host(value):
    return value.get() if hasattr(value, "get") and not isinstance(value, np.ndarray) \
        else value


def run(xp, name, inputs, params, dev="gpu", req=None, outputs=None):
    """``name`` planned for ``dev`` and run on xp arrays: the outputs, on the host."""
    op = ops.get(name)
    inputs = [device(xp, v) for v in inputs]
    if xp is np and outputs is None and req is None:
        return op.apply(*inputs, device=dev, **params)
    plan = op.plan(inputs, params, device=dev)
    if plan.check is not None:
        plan.check(inputs, params)
    if outputs is None:
        outputs = [xp.empty(shape, dtype) for shape, dtype in plan.outputs]
    plan.run(inputs, outputs, req or [W] * len(outputs), params)
    return [host(o) for o in outputs]


def assert_close(expected, got, name=""):
    assert got.shape == expected.shape and got.dtype == expected.dtype, \
        f"{name}: {got.dtype}{got.shape} != the CPU's {expected.dtype}{expected.shape}"
    if expected.dtype.kind in "fc":
        rtol = TOLERANCE[expected.dtype.name]
        finite = np.abs(expected[np.isfinite(expected)])
        scale = float(finite.max(initial=1.0))
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * min(scale, 1e30),
                                   equal_nan=True, err_msg=name)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=name)


def cpu_then_gpu(xp, name, inputs, params):
    """The CPU's results or error, then the gpu's: the same (or the same error type)."""
    try:
        with np.errstate(all="ignore"):
            expected = run(np, name, inputs, params, dev="cpu")
    except Exception as exc:  # noqa: BLE001 - the CPU's error is the expectation
        with pytest.raises(type(exc)):
            run(xp, name, inputs, params)
        return None
    got = run(xp, name, inputs, params)
    for e, g in zip(expected, got):
        assert_close(e, g, name)
    return expected


# ------------------------------------------------------------------ (a) coverage

def builtin_names():
    """ndengine's own ops (other tests register ops of their own, which keep a CPU kernel
    only: on a GPU those run on host copies, registry.build_plan)."""
    return [name for name in ops.names()
            if getattr(ops.get(name).kernels.get("cpu"), "__module__", "ndengine.")
            .startswith("ndengine.")]


def test_every_op_has_a_gpu_kernel_from_the_tables():
    for name in builtin_names():
        op = ops.get(name)
        assert "gpu" in op.kernels, f"{name} has no gpu kernel: give it one in ops/gpu/*.py"
        assert op.kernels["gpu"] is op._device_kernels.get("gpu"), name


def test_every_op_has_a_gpu_test():
    covered = set(ELEMENTWISE) | set(REDUCTIONS) | set(SAMPLES) | set(RANDOM)
    missing = sorted(set(builtin_names()) - covered)
    assert not missing, f"no gpu test calls {missing}: add samples to tests/support/gpu_samples.py"


def test_gpu_modules_never_import_cupy():
    paths = sorted(pathlib.Path(gpu_kernels.__file__).parent.glob("*.py"))
    assert len(paths) > 5
    for path in paths:
        text = path.read_text()
        assert "import cupy" not in text and "from cupy" not in text, path.name


# ------------------------------------------------------------------ (b) every op

def _elementwise_call(name):
    """A representative call: float64 arrays broadcast ((4, 6) with (6,)), else int64."""
    op = ops.get(name)
    if name == "clip":
        return [(F,), {"a_min": -0.5, "a_max": 0.5}]
    if name == "clip_arrays":
        return [(F, V[:6] - 1, V[:6]), {}]
    if name == "where":
        return [(MASK, F, -V[:6]), {}]
    if name == "round":
        return [(F * 10,), {"decimals": 1}]
    arity = op.num_inputs
    for values in ((np.abs(F) + 0.25, V[:6] + 2.5, V[:6]), (I, SMALL[:6], SMALL[:6])):
        try:
            op.infer(*values[:arity])
            return [values[:arity], {}]
        except TypeError:
            continue
    raise AssertionError(f"no float64 or int64 call of {name}")


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_elementwise_call(xp, name):
    inputs, params = _elementwise_call(name)
    assert cpu_then_gpu(xp, name, inputs, params) is not None


_DTYPES = [np.dtype(d) for d in ("bool", "int8", "uint8", "int32", "int64", "uint64",
                                 "float16", "float32", "float64", "complex64", "complex128")]


def _values(dtype, shape):
    if dtype.kind == "f":
        elements = st.floats(-50, 50, width=dtype.itemsize * 8)
    elif dtype.kind == "c":
        elements = st.complex_numbers(max_magnitude=50, width=dtype.itemsize * 8)
    else:
        elements = None
    return hnp.arrays(dtype, shape, elements=elements)


@given(data=st.data())
def test_elementwise_generated(xp, data):
    name = data.draw(st.sampled_from(ELEMENTWISE), label="op")
    op = ops.get(name)
    arity = op.num_inputs
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=arity, max_dims=3,
                                                         max_side=4), label="shapes")
    inputs = []
    for shape in shapes.input_shapes:
        dtype = data.draw(st.sampled_from(_DTYPES), label="dtype")
        inputs.append(data.draw(_values(dtype, shape)))
    if arity == 2 and data.draw(st.booleans(), label="a Python scalar"):
        inputs[1] = data.draw(st.sampled_from([2, -1, 0.5, True, 300]), label="scalar")
    params = {}
    if name == "clip":
        params = {"a_min": data.draw(st.sampled_from([None, -1, 0.5])), "a_max": 2.0}
    if name == "round":
        params = {"decimals": data.draw(st.integers(-1, 2))}
    cpu_then_gpu(xp, name, inputs, params)


@pytest.mark.filterwarnings("ignore:Degrees of freedom:RuntimeWarning")
@given(data=st.data())
def test_reduction_generated(xp, data):
    name = data.draw(st.sampled_from(sorted(REDUCTIONS)), label="op")
    dtype = data.draw(st.sampled_from(_DTYPES), label="dtype")
    x = data.draw(_values(dtype, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0,
                                                   max_side=4)), label="x")
    axes = st.none() | st.integers(-x.ndim - 1, x.ndim)
    if name not in ("argmax", "argmin") and x.ndim:
        axes = axes | st.lists(st.integers(0, x.ndim - 1), min_size=1, max_size=x.ndim,
                               unique=True).map(tuple)
    params = {"axis": data.draw(axes, label="axis"),
              "keepdims": data.draw(st.booleans(), label="keepdims")}
    if name in ("std", "var"):
        params["ddof"] = data.draw(st.integers(0, 1), label="ddof")
    cpu_then_gpu(xp, name, [x], params)


def _sample_ids():
    return [pytest.param(name, i, id=f"{name}-{i}") for name, calls in SAMPLES.items()
            for i in range(len(calls))]


# on a real GPU, results that are right up to an order or a sign: compared as such
_ORDERLESS = {"linalg.eig": lambda r: [np.sort_complex(r[0])],
              "linalg.eigvals": lambda r: [np.sort_complex(r[0])],
              "linalg.eigh": lambda r: [r[0], np.abs(r[1])],
              "linalg.svd": lambda r: [np.abs(r[0]), r[1], np.abs(r[2])],
              "linalg.qr": lambda r: [np.abs(r[0]), np.abs(r[1])],
              "partition": lambda r: [np.sort(r[0], axis=1)],
              "argpartition": lambda r: [np.sort(np.take_along_axis(F, r[0], 0), axis=0)]}


@pytest.mark.parametrize("name, index", _sample_ids())
def test_sample_call(xp, name, index):
    inputs, params = SAMPLES[name][index]
    expected = run(np, name, inputs, params, dev="cpu")
    got = run(xp, name, inputs, params)
    if xp is not np and name in _ORDERLESS:
        expected, got = _ORDERLESS[name](expected), _ORDERLESS[name](got)
    assert len(got) == len(expected)
    for e, g in zip(expected, got):
        assert_close(np.asarray(e), np.asarray(g), name)


@pytest.mark.parametrize("name", sorted(RANDOM))
def test_random_draws_equal_the_cpus_with_the_same_generator(name):
    for inputs, params in RANDOM[name]:
        if name == "random_order":
            assert [o.shape for o in run(np, name, inputs, params)] == [(0,)]
            continue
        expected = run(np, name, inputs, dict(params, generator=np.random.default_rng(7)),
                       dev="cpu")
        got = run(np, name, inputs, dict(params, generator=np.random.default_rng(7)))
        for e, g in zip(expected, got):
            np.testing.assert_array_equal(g, e, strict=True)


def test_random_on_the_devices_generator(xp):
    generator = gpu_random.make_generator(xp, [5, 0, True])
    for name in ("random_uniform", "random_normal", "random_randint"):
        for inputs, params in RANDOM[name]:
            [out] = run(xp, name, inputs, dict(params, generator=generator))
            assert out.shape == params["shape"]
    [u] = run(xp, "random_uniform", [], {"low": 2.0, "high": 3.0, "shape": (1000,),
                                          "generator": generator})
    assert 2.0 <= u.min() and u.max() < 3.0 and abs(u.mean() - 2.5) < 0.05
    for inputs, params in RANDOM["random_method"]:
        [out] = run(xp, "random_method", inputs, dict(params, generator=generator))
    assert sorted(out.tolist()) == list(range(6))  # the permutation


def test_random_refuses_another_modules_generator():
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        run(np, "random_uniform", [], {"shape": (2,), "generator": object()})


class _BareGenerator:
    """A generator with CuPy's methods only (no normal, choice, permutation, shuffle)."""

    def __init__(self, seed):
        self._generator = np.random.default_rng(seed)
        for method in ("random", "integers", "standard_normal"):
            setattr(self, method, getattr(self._generator, method))


def test_random_method_twins():
    twins, g = gpu_random.TWINS, _BareGenerator(3)
    assert sorted(twins["permutation"](np, g, 10).tolist()) == list(range(10))
    rows = np.arange(12).reshape(4, 3)
    shuffled = rows.copy()
    twins["shuffle"](np, g, shuffled)
    assert sorted(map(tuple, shuffled.tolist())) == sorted(map(tuple, rows.tolist()))
    picks = twins["choice"](np, g, 5, size=(3,), replace=False)
    assert len(set(picks.tolist())) == 3 and set(picks.tolist()) <= set(range(5))
    weighted = twins["choice"](np, g, np.array([10, 20, 30]), size=2000, p=[0.0, 0.25, 0.75])
    assert 10 not in weighted and 0.7 < (weighted == 30).mean() < 0.8
    heavy = twins["choice"](np, g, 4, size=(2,), replace=False, p=np.array([0, 0, 0.5, 0.5]))
    assert sorted(heavy.tolist()) == [2, 3]
    assert twins["normal"](np, g, loc=3.0, scale=0.0, size=4).tolist() == [3.0] * 4


# ------------------------------------------------------------------ (c) OpReq and views

FAMILIES = [  # one call per kernel family
    ("add", (F, V[:6]), {}), ("sigmoid", (F,), {}), ("divmod", (I, SMALL[:6]), {}),
    ("where", (MASK, F, 1.0), {}), ("sum", (F,), {"axis": 0}), ("cumsum", (F,), {"axis": 1}),
    ("tile", (SMALL,), {"reps": 2}), ("concatenate", (F, F), {"axis": 0}),
    ("dot", (F, F.T), {}), ("arange", (), {"start": 1, "stop": 7}),
    ("nanquantile", (NANS,), {"q": 0.5, "axis": 0}), ("take_index", (F,), {"key": MASK}),
    ("linalg.inv", (np.eye(3) * 2,), {}), ("isclose", (F, F, 1e-5, 1e-8), {}),
]


@pytest.mark.parametrize("name, inputs, params", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_add_to_and_null(xp, name, inputs, params):
    expected = run(np, name, inputs, params, dev="cpu")
    outputs = [xp.ones(e.shape, e.dtype) for e in expected]
    got = run(xp, name, inputs, params, req=[ADD] * len(outputs), outputs=outputs)
    for e, g in zip(expected, got):
        assert_close(np.add(np.ones(e.shape, e.dtype), e, dtype=e.dtype), g, name)
    outputs = [xp.full(e.shape, 7, e.dtype) for e in expected]
    got = run(xp, name, inputs, params, req=[NULL] * len(outputs), outputs=outputs)
    for e, g in zip(expected, got):
        np.testing.assert_array_equal(g, np.full(e.shape, 7, e.dtype))


@pytest.mark.parametrize("name, inputs, params", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_non_contiguous_outputs(xp, name, inputs, params):
    expected = run(np, name, inputs, params, dev="cpu")
    bases = [xp.full(e.shape + (2,), 5, e.dtype) for e in expected]
    views = [b[..., 0] for b in bases]  # every other element: strided
    got = run(xp, name, inputs, params, outputs=views)
    for e, g, b in zip(expected, got, bases):
        assert_close(e, g, name)
        np.testing.assert_array_equal(host(b[..., 1]), np.full(e.shape, 5, e.dtype))


def _kernel(xp, name, inputs, outputs, req, **params):
    ops.get(name).kernels["gpu"](inputs, outputs, req, **params)


def test_in_place_on_the_very_same_view(xp):
    x = xp.asarray(F.copy())
    _kernel(xp, "add", [x, 1.5], [x], [INPLACE])
    np.testing.assert_array_equal(host(x), F + 1.5)
    _kernel(xp, "sigmoid", [x], [x], [INPLACE])
    np.testing.assert_allclose(host(x), 1 / (1 + np.exp(-(F + 1.5))), rtol=1e-12)
    y = xp.asarray(F.copy())
    _kernel(xp, "sort", [y], [y], [INPLACE], axis=1)
    np.testing.assert_array_equal(host(y), np.sort(F, axis=1))
    z = xp.asarray(I.copy())
    _kernel(xp, "divmod", [z, 4], [z, xp.empty_like(z)], [INPLACE, W])
    np.testing.assert_array_equal(host(z), I // 4)


def test_inputs_overlapping_the_output_are_read_first(xp):
    base = xp.asarray(np.arange(10.0))
    _kernel(xp, "add", [base[1:], base[1:]], [base[:-1]], [W])  # out lags the input by one
    np.testing.assert_array_equal(host(base), np.r_[2 * np.arange(1.0, 10.0), 9.0])
    base = xp.asarray(np.arange(10.0))
    _kernel(xp, "copy", [base[::-1]], [base], [W])  # a reversed copy onto itself
    np.testing.assert_array_equal(host(base), np.arange(10.0)[::-1])
    base = xp.asarray(np.arange(12.0))
    _kernel(xp, "cumsum", [base[2:]], [base[:-2]], [W], axis=0)
    np.testing.assert_array_equal(host(base[:-2]), np.cumsum(np.arange(2.0, 12.0)))
    square = xp.asarray(F[:, :4].copy())
    _kernel(xp, "matmul", [square, square.T], [square], [W])
    np.testing.assert_allclose(host(square), F[:, :4] @ F[:, :4].T, rtol=1e-12)


# ------------------------------------------------------------------ (d) host fallback

def test_host_fallback_table():
    for name, entry in gpu_kernels.HOST_FALLBACK.items():
        op = ops.get(name)  # every entry is a registered op
        if entry.when is None:
            assert op._device_planners["gpu"] is gpu_kernels.host_planner, name
        assert "CuPy" in entry.reason


class _DeviceArray(np.ndarray):
    """A stand-in for a CuPy array: its type's module says cupy, ``get()`` copies it out."""

    def get(self):
        return np.array(self)


_DeviceArray.__module__ = "cupy.fake"
_FAKE_XP = types.SimpleNamespace(__name__="cupy", copyto=np.copyto,
                                 asarray=lambda a: np.asarray(a).view(_DeviceArray))


@pytest.mark.parametrize("req", [W, ADD, NULL])
def test_host_run_copies_in_and_back(req):
    op = ops.get("nanquantile")
    x = NANS.view(_DeviceArray)
    plan = op.plan([NANS], {"q": 0.5, "axis": 1}, device="cpu")
    out = np.full(4, 2.0).view(_DeviceArray)
    gpu_kernels.host_run(_FAKE_XP, plan.run, [x], [out], [req], {"q": 0.5, "axis": 1})
    expected = np.nanquantile(NANS, 0.5, axis=1)
    wanted = {W: expected, ADD: expected + 2.0, NULL: np.full(4, 2.0)}[req]
    np.testing.assert_array_equal(np.asarray(out), wanted)


def test_host_fallback_ops_run_through_the_host(monkeypatch):
    calls = []
    real = gpu_kernels.host_run

    def spy(*args):
        calls.append(args[1])
        real(*args)
    monkeypatch.setattr(host_fallback, "host_run", spy)
    for name in gpu_kernels.HOST_FALLBACK:
        ops.get(name)._forget_plans()
        calls.clear()
        for inputs, params in SAMPLES[name]:
            expected = run(np, name, inputs, params, dev="cpu")
            for e, g in zip(expected, run(np, name, inputs, params)):
                assert_close(e, g, name)
        assert calls, f"{name} did not run on the host"
        ops.get(name)._forget_plans()


def test_xp_function_and_accepts():
    def svd(a, full_matrices=True):
        return a
    fake = types.SimpleNamespace(__name__="fakecupy", sum=np.sum,
                                 linalg=types.SimpleNamespace(svd=svd))
    assert gpu_kernels.xp_function(np, np.nanquantile) is np.nanquantile
    assert gpu_kernels.xp_function(fake, np.linalg.svd) is svd
    assert gpu_kernels.xp_function(fake, np.nanquantile) is None  # missing: the host runs it
    assert gpu_kernels.accepts(svd, ["full_matrices"])
    assert not gpu_kernels.accepts(svd, ["hermitian"])
    assert gpu_kernels.accepts(lambda a, **kw: a, ["anything"])


# ------------------------------------------------------------------ the registry

def test_array_module(monkeypatch):
    assert gpu_kernels.array_module(np.ones(2)) is np and gpu_kernels.array_module(3) is np
    fake = types.SimpleNamespace(empty=lambda shape, dtype: np.empty(shape, dtype))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    device_array = np.ones(3).view(_DeviceArray)
    assert gpu_kernels.array_module(device_array) is fake
    assert gpu_kernels.inputs_module([1.0, device_array]) is fake
    allocated = []
    fake.empty = lambda shape, dtype: allocated.append(shape) or np.empty(shape, dtype)
    ops.get("exp").apply(device_array, device="gpu")  # outputs made by the inputs' module
    assert allocated == [(3,)]


def test_gpu_plans_reuse_the_cpu_inference():
    x = np.arange(6, dtype=np.int8)
    op = ops.get("add")
    cpu_plan = op.plan([x, 3], {}, device="cpu")
    gpu_plan = op.plan([x, 3], {}, device="gpu")
    assert gpu_plan.outputs == cpu_plan.outputs and gpu_plan.check is cpu_plan.check
    assert gpu_plan.run is not cpu_plan.run
    with pytest.raises(OverflowError):  # the CPU's error, at the call
        op.apply(x, 300, device="gpu")
    with pytest.raises(ValueError):
        ops.get("matmul").apply(np.ones((2, 3)), np.ones((2, 3)), device="gpu")
    with pytest.raises(TypeError, match="does not support dtype"):
        ops.get("sigmoid").apply(np.ones(2, np.int8), device="gpu")  # float16: refused


def test_a_users_gpu_kernel_overrides_the_tables():
    op = numpy_backed("test_gpu_double", num_inputs=1, infer=lambda x: [(x.shape, x.dtype)])
    op.set_kernel("cpu", lambda inputs, outputs, req: np.multiply(inputs[0], 2, out=outputs[0]))
    op.set_device_planner("gpu", lambda op, inputs, params, cpu_plan: cpu_plan.run)
    np.testing.assert_array_equal(op.apply(V, device="gpu")[0], 2 * V)
    op.set_kernel("gpu", lambda inputs, outputs, req: np.multiply(inputs[0], 3, out=outputs[0]))
    np.testing.assert_array_equal(op.apply(V, device="gpu")[0], 3 * V)
    # a user's op with a CPU kernel only: it runs there, on host copies of the values
    user = Operator("test_gpu_plain")
    user.set_kernel("cpu", lambda inputs, outputs, req: np.negative(inputs[0], out=outputs[0]))
    np.testing.assert_array_equal(user.apply(V, device="gpu")[0], -V)
    nothing = Operator("test_gpu_nothing")  # no kernel at all: NotImplementedError
    with pytest.raises(NotImplementedError, match="no gpu kernel"):
        nothing.apply(V, device="gpu")
    with pytest.raises(ValueError):
        user.set_device_planner("cpu", lambda *a: None)
