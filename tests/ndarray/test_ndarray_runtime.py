"""The NDArray layer on the engine: deletion order, memory reuse, seeded random numbers,
save/load, errors at the call site and in kernels, NumPy interop, many Python threads."""

import numpy as np
import pytest

import ndengine as nd
from ndengine import engine as E

from engine_helpers import run_threads
from ndarray_helpers import ENGINE_KINDS, drain_errors, raises_anywhere

pytestmark = pytest.mark.usefixtures("nd_engine")


# ---------------------------------------------------------------- seed-003 program
def test_seed_003_program():
    A = nd.full((3, 4), 2.0)
    B = nd.full((3, 4), 2.0)
    B = A + B
    C = A + 2
    del A
    np.testing.assert_array_equal(B.asnumpy(), np.full((3, 4), 4.0))
    np.testing.assert_array_equal(C.asnumpy(), np.full((3, 4), 4.0))


def test_deleting_inputs_of_pending_ops_is_safe():
    outs = []
    for i in range(50):
        a = nd.full((1000,), float(i))
        b = a * 2
        del a  # the pending multiply still reads a's memory
        outs.append(b + 1)
        del b
    for i, o in enumerate(outs):
        np.testing.assert_array_equal(o.asnumpy(), np.full(1000, 2.0 * i + 1))


# ---------------------------------------------------------------- memory
def test_deletion_returns_memory():
    n = 1 << 20  # 8 MiB of float64
    a = nd.ones(n)
    a.wait_to_read()
    nd.waitall()
    base = nd.storage.stats()
    peak = 0
    for _ in range(200):
        t = a * 2  # dropped at the next iteration, no waits
        t.engine_var  # noqa: B018 - pushed now (not fused away: lazy.py never allocates it)
        peak = max(peak, nd.storage.stats()["bytes_in_use"] - base["bytes_in_use"])
    del t
    nd.waitall()
    after = nd.storage.stats()
    assert peak <= 32 * n * 8, f"{peak / 2**20:.0f} MiB in use at the peak"
    assert after["bytes_in_use"] - base["bytes_in_use"] <= 0, (base, after)
    assert after["reuses"] - base["reuses"] >= 150, (base, after)
    assert after["bytes_pooled"] - base["bytes_pooled"] <= 32 * n * 8
    assert after["allocs"] - base["allocs"] <= 32
    np.testing.assert_array_equal(a.asnumpy()[:3], [1.0, 1.0, 1.0])


def test_views_keep_storage_alive():
    x = nd.arange(10.0) * 3
    v = x[2:5]
    del x
    np.testing.assert_array_equal(v.asnumpy(), [6.0, 9.0, 12.0])


# ---------------------------------------------------------------- random
def _draws(seed):
    nd.random.seed(seed)
    u = nd.random.uniform(-2, 3, shape=(50,))
    n = nd.random.normal(1.0, 2.0, shape=(4, 5), dtype=np.float32)
    r = nd.random.randint(0, 10, shape=(30,))
    u2 = nd.random.uniform(shape=7)
    return [x.asnumpy() for x in (u, n, r, u2)]


def test_random_same_under_every_engine_and_worker_count():
    outer = E.get()
    results = {}
    try:
        for kind in ENGINE_KINDS:
            for workers in (1, 2, 4):
                eng = E.create(kind, num_cpu_workers=workers)
                E.set_engine(eng)
                try:
                    results[kind, workers] = _draws(123)
                finally:
                    E.set_engine(outer)
                    eng.notify_shutdown()
    finally:
        E.set_engine(outer)
    reference = results["NaiveEngine", 1]
    for key, draws in results.items():
        for got, want in zip(draws, reference):
            np.testing.assert_array_equal(got, want, err_msg=str(key))


def test_random_seeds_differ_and_repeat():
    a, b, c = _draws(1), _draws(2), _draws(1)
    for x, y in zip(a, c):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a[0], b[0]) and not np.array_equal(a[1], b[1])


def test_random_dtype_shape_ctx_range():
    nd.random.seed(7)
    u = nd.random.uniform(5, 6, shape=(1000,), dtype=np.float32)
    assert u.dtype == np.float32 and u.shape == (1000,) and u.context == nd.current_context()
    v = u.asnumpy()
    assert v.min() >= 5 and v.max() < 6 and len(np.unique(v)) > 900
    n = nd.random.normal(10, 0.5, shape=(100, 100))
    assert n.dtype == np.float64 and n.shape == (100, 100)
    assert abs(n.mean().item() - 10) < 0.05 and abs(n.std().item() - 0.5) < 0.05
    r = nd.random.randint(-3, 4, shape=(2, 500), dtype=np.int32, ctx=nd.cpu(1))
    assert r.dtype == np.int32 and r.shape == (2, 500) and r.context == nd.cpu(1)
    rv = r.asnumpy()
    assert rv.min() == -3 and rv.max() == 3
    assert nd.random.uniform().shape == ()
    with pytest.raises(TypeError):
        nd.random.uniform(shape=3, dtype=np.int32)
    with pytest.raises(TypeError):
        nd.random.randint(0, 5, shape=3, dtype=np.float64)


def test_random_draws_are_ordered_with_seed():
    nd.random.seed(5)
    first = nd.random.uniform(shape=10)
    nd.random.seed(5)
    second = nd.random.uniform(shape=10)
    np.testing.assert_array_equal(first.asnumpy(), second.asnumpy())


# ---------------------------------------------------------------- save and load
def test_save_load_list(tmp_path):
    path = str(tmp_path / "arrays.npz")
    arrays = [nd.arange(6).reshape(2, 3) * 2, nd.array([1.5, -2.0], dtype=np.float32),
              nd.array(True), nd.zeros((0, 3))]
    nd.save(path, arrays)
    loaded = nd.load(path)
    assert isinstance(loaded, list) and len(loaded) == 4
    for got, want in zip(loaded, arrays):
        assert isinstance(got, nd.NDArray) and got.dtype == want.dtype
        np.testing.assert_array_equal(got.asnumpy(), want.asnumpy())
    with np.load(path) as plain:  # plain NumPy reads it too
        np.testing.assert_array_equal(plain["arr_0"], np.arange(6).reshape(2, 3) * 2)
    assert nd.load(path, ctx=nd.cpu(1))[0].context == nd.cpu(1)


def test_save_load_dict(tmp_path):
    path = str(tmp_path / "weights")  # no suffix: written exactly there
    arrays = {"w": nd.ones((3, 3), dtype=np.int8) * 5, "b": nd.array([0.5])}
    nd.save(path, arrays)
    loaded = nd.load(path)
    assert isinstance(loaded, dict) and set(loaded) == {"w", "b"}
    np.testing.assert_array_equal(loaded["w"].asnumpy(), np.full((3, 3), 5, np.int8))
    assert loaded["w"].dtype == np.int8
    with np.load(path) as plain:
        np.testing.assert_array_equal(plain["b"], [0.5])
    plain_path = str(tmp_path / "plain.npz")
    np.savez(plain_path, x=np.arange(3))
    assert set(nd.load(plain_path)) == {"x"}
    nd.save(path, nd.arange(2))  # a single array saves as a list
    assert isinstance(nd.load(path), list)
    with pytest.raises(TypeError):
        nd.save(path, [np.arange(3)])
    with pytest.raises(TypeError):
        nd.save(path, 5)


# ---------------------------------------------------------------- errors at the call site
def _call_site_error(exc_type, match, fn):
    """fn() raises at once, under every engine (no wait involved), and leaves nothing
    pending."""
    with pytest.raises(exc_type, match=match):
        fn()
    nd.waitall()  # clean: nothing was pushed


def test_shape_mismatch_names_both_shapes():
    a, b = nd.ones((2, 3)), nd.ones((4,))
    for fn in (lambda: a + b, lambda: a * b, lambda: nd.maximum(a, b),
               lambda: nd.where(a > 0, a, b)):
        _call_site_error(ValueError, r"\(2, 3\).*\(4,\)", fn)
    _call_site_error(ValueError, r"\(2, 3\).*\(4,\)|\(4,\).*\(2, 3\)", lambda: a @ b)

    def iadd():
        b.__iadd__(a)
    _call_site_error(ValueError, r"\(2, 3\)|\(4,\)", iadd)
    np.testing.assert_array_equal(b.asnumpy(), np.ones(4))  # untouched


@pytest.mark.parametrize("dtype", [object, "U3"])
def test_unsupported_dtype_at_call_site(dtype):
    _call_site_error(TypeError, "support", lambda: nd.zeros(2, dtype=dtype))
    _call_site_error(TypeError, "support", lambda: nd.array(np.zeros(2, dtype=dtype)))
    _call_site_error(TypeError, "support", lambda: nd.ones(2) + np.zeros(2, dtype=dtype))
    _call_site_error(TypeError, "support", lambda: nd.ones(2).astype(dtype))


@pytest.mark.cpu_only
def test_different_contexts_in_one_op():
    a, b = nd.ones(3), nd.ones(3, ctx=nd.cpu(1))
    for fn in (lambda: a + b, lambda: nd.maximum(a, b), lambda: nd.concatenate([a, b]),
               lambda: nd.where(a > 0, a, b), lambda: a.__iadd__(b)):
        _call_site_error(ValueError, r"copyto.*as_in_context|as_in_context", fn)
    np.testing.assert_array_equal((a + b.as_in_context(nd.cpu(0))).asnumpy(), [2, 2, 2])
    np.testing.assert_array_equal((a.copyto(nd.cpu(1)) + b).asnumpy(), [2, 2, 2])


def test_bad_axis_at_call_site():
    a = nd.ones((2, 3))
    for fn in (lambda: a.sum(axis=2), lambda: a.max(axis=-3), lambda: nd.mean(a, axis=(0, 5)),
               lambda: nd.concatenate([a, a], axis=2), lambda: nd.stack([a, a], axis=4),
               lambda: a.argmax(axis=2), lambda: a.squeeze(axis=5)):
        _call_site_error((ValueError, IndexError), "axis|out of bounds|dimension", fn)


def test_other_call_site_errors():
    a = nd.ones((2, 3))
    _call_site_error(ValueError, "reshape|size", lambda: a.reshape(4))
    _call_site_error(ValueError, "negative", lambda: nd.zeros(-1))
    _call_site_error(ValueError, "negative integer powers",
                     lambda: nd.arange(3) ** -1)
    _call_site_error(TypeError, "operand|unsupported", lambda: a + "x")
    _call_site_error(IndexError, "out of bounds", lambda: a[5])
    _call_site_error(ValueError, "empty|zero-size", lambda: nd.zeros(0).max())


# ---------------------------------------------------------------- kernel errors
def test_kernel_error_surfaces_at_every_wait_and_in_dependents():
    x = nd.array([2, 3, 4])
    y = nd.array([1, -1, 2])  # int ** negative int: the kernel refuses, as NumPy does
    z = nd.array([1, 1, 1])
    try:
        z **= y  # NaiveEngine raises here; threaded engines at the next wait
    except ValueError as exc:
        assert "negative integer powers" in str(exc)
        assert isinstance(E.get(), E.NaiveEngine)
    for wait in (z.wait_to_read, z.asnumpy, lambda: print(z), lambda: repr(z), z.tolist,
                 z.wait_to_read):
        with pytest.raises(ValueError, match="negative integer powers"):
            wait()
    # dependents fail too (never garbage)
    with pytest.raises(ValueError, match="negative integer powers"):
        w = z + 1
        w.asnumpy()
    with pytest.raises(ValueError, match="negative integer powers"):
        v = z[1:]
        v.wait_to_read()
    # unrelated arrays are fine
    np.testing.assert_array_equal((x * 2).asnumpy(), [4, 6, 8])
    drain_errors()  # the first waitall after it may raise it; the next one is clean
    nd.waitall()
    # and the library keeps working
    np.testing.assert_array_equal((nd.arange(4) ** 2).asnumpy(), [0, 1, 4, 9])


def test_kernel_error_out_of_place():
    def body():
        z = nd.arange(3) ** nd.array([1, -2, 0])
        z.asnumpy()
    raises_anywhere(ValueError, body, match="negative integer powers")
    nd.waitall()
    np.testing.assert_array_equal((nd.arange(3) ** nd.array([1, 2, 0])).asnumpy(), [0, 1, 1])


def test_waitall_raises_kernel_error_once():
    y = None
    with pytest.raises(ValueError, match="negative integer powers"):
        y = nd.arange(3) ** nd.array([-1, -1, -1])  # nobody waits for the result (kept:
        # a dead element-wise result on a GPU, or of large CPU arrays, is never computed)
        nd.waitall()  # threaded engines raise it here (NaiveEngine at the push)
    nd.waitall()  # the error was raised once: clean from now on
    nd.waitall()
    del y


# ---------------------------------------------------------------- NumPy interop
def test_numpy_ufuncs_on_ndarrays():
    a = np.array([0.5, 1.0, 2.0])
    x = nd.array(a)
    r = np.exp(x)
    assert isinstance(r, nd.NDArray)
    np.testing.assert_allclose(r.asnumpy(), np.exp(a))
    r = np.ones(3) + x
    assert isinstance(r, nd.NDArray)
    np.testing.assert_array_equal(r.asnumpy(), 1 + a)
    r = a * x
    assert isinstance(r, nd.NDArray)
    np.testing.assert_array_equal(r.asnumpy(), a * a)
    r = np.maximum(x, 1.0)
    assert isinstance(r, nd.NDArray)
    np.testing.assert_array_equal(r.asnumpy(), np.maximum(a, 1.0))
    r = np.divide(x, 2)
    assert isinstance(r, nd.NDArray)
    r = np.absolute(-x)
    assert isinstance(r, nd.NDArray)
    np.testing.assert_array_equal(r.asnumpy(), a)
    assert isinstance(a < x, nd.NDArray)


def test_numpy_functions_without_ndengine_ops_fall_back():
    a = np.array([3.0, 1.0, 2.0])
    x = nd.array(a) * 1
    np.testing.assert_array_equal(np.asarray(x), a)
    np.testing.assert_array_equal(np.sort(x), np.sort(a))  # via __array__: a NumPy result
    np.testing.assert_array_equal(np.cumsum(x), np.cumsum(a))
    np.testing.assert_allclose(np.linalg.norm(x), np.linalg.norm(a))
    np.testing.assert_array_equal(np.hypot(x, x), np.hypot(a, a))  # no hypot op: NumPy's
    assert np.allclose(x, a)
    np.testing.assert_array_equal(np.concatenate([x, x]), np.concatenate([a, a]))
    for fn in (np.sum, np.mean, np.max, np.min, np.prod, np.std, np.var, np.argmax):
        got = fn(x)
        np.testing.assert_allclose(np.asarray(got), fn(a), err_msg=fn.__name__)
    assert np.sum(nd.array([1, 2]), dtype=np.float32).dtype == np.float32
    assert np.exp(x, out=x) is x  # a pushed write into x, as NumPy writes into out
    np.testing.assert_allclose(x.asnumpy(), np.exp(a))
    with pytest.raises(TypeError, match="not supported"):
        np.sum(x, out=np.zeros(()))


# ---------------------------------------------------------------- many Python threads
def test_many_threads():
    results = {}

    def work(i):
        base = np.arange(1000, dtype=np.float64) + i
        x = nd.array(base)
        acc = nd.zeros(1000)
        for k in range(30):
            acc += x * k
            if k % 10 == 0:
                acc.wait_to_read()
            y = acc[::2].sum()
        results[i] = (acc.asnumpy(), y.item())

    run_threads(work, 4)
    for i in range(4):
        base = np.arange(1000, dtype=np.float64) + i
        expected = base * sum(range(30))
        np.testing.assert_allclose(results[i][0], expected)
        np.testing.assert_allclose(results[i][1], expected[::2].sum())
