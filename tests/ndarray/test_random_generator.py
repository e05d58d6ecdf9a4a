"""NumPy's Generator API (``ndengine.random.default_rng``): the numbers of
``numpy.random.default_rng(seed)`` for the same seed and calls, under every engine and with
several threads pushing on generators of their own; NumPy's errors at the call. And the legacy
functions with NumPy's signatures (their numbers are ndengine's own: see ndarray/random.py)."""
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ndengine as nd
from ndengine import engine as E

from ndarray_helpers import ENGINE_KINDS

pytestmark = pytest.mark.usefixtures("nd_engine")

HUGE = (1 << 55,)  # no machine can allocate it: MemoryError inside the op

# (method, args, kwargs): calls whose numbers, dtype and shape must be NumPy's
CALLS = [
    ("random", (), {}), ("random", (5,), {}), ("random", ((2, 3),), {"dtype": np.float32}),
    ("standard_normal", (4,), {}), ("standard_normal", (), {"dtype": "float32", "size": 3}),
    ("integers", (10,), {}), ("integers", (0, 10, 6), {}),
    ("integers", (1, 6), {"size": (2, 2), "endpoint": True, "dtype": np.uint8}),
    ("integers", ([0, 10], [5, 20]), {}), ("integers", (0, 2), {"size": 5, "dtype": bool}),
    ("normal", (), {}), ("normal", (1.0, 2.0, (3, 2)), {}), ("normal", ([0, 10], 0.5), {}),
    ("uniform", (), {}), ("uniform", (-1, 1, 4), {}), ("uniform", (0, [1, 2, 3]), {}),
    ("exponential", (), {}), ("exponential", (2.0, 5), {}),
    ("poisson", (), {}), ("poisson", (3.5, (2, 3)), {}), ("poisson", ([1, 100],), {}),
    ("binomial", (10, 0.3), {}), ("binomial", (10, 0.3, 4), {}), ("binomial", ([5, 50], 0.5), {}),
    ("choice", (5,), {}), ("choice", (10, 4), {}), ("choice", (10, 4), {"replace": False}),
    ("choice", ([1.5, 2.5, 3.5],), {"size": (2, 2), "p": [0.2, 0.3, 0.5]}),
    ("choice", (np.arange(12).reshape(4, 3), 2), {"axis": 1}),
    ("choice", (np.arange(12).reshape(4, 3),), {}),
    ("choice", (20, 5), {"replace": False, "shuffle": False}),
    ("permutation", (7,), {}), ("permutation", ([3.0, 1.0, 2.0],), {}),
    ("permutation", (np.arange(12).reshape(3, 4),), {"axis": 1}), ("permutation", (0,), {}),
    ("random", (0,), {}), ("normal", (0, 1, (0, 3)), {}),
]


def _same(got, want):
    want = np.asarray(want)
    assert isinstance(got, nd.NDArray), type(got)
    got = got.asnumpy()
    assert got.shape == want.shape and got.dtype == want.dtype, (got, want)
    np.testing.assert_array_equal(got, want)


def _family(error):
    return next(t for t in (TypeError, ValueError, IndexError, NotImplementedError)
                if isinstance(error, t))


def _as_nd(value):
    return nd.array(value) if isinstance(value, np.ndarray) else value


def test_every_call_gives_numpys_numbers_in_sequence():
    ours, numpys = nd.random.default_rng(12345), np.random.default_rng(12345)
    results = [(getattr(ours, m)(*map(_as_nd, a), **k), getattr(numpys, m)(*a, **k))
               for m, a, k in CALLS]
    for (method, args, kwargs), (got, want) in zip(CALLS, results):
        _same(got, want)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2 ** 32), calls=st.lists(st.sampled_from(CALLS), max_size=8))
def test_random_call_sequences_match_numpy(seed, calls):
    ours, numpys = nd.random.default_rng(seed), np.random.default_rng(seed)
    for method, args, kwargs in calls:
        _same(getattr(ours, method)(*args, **kwargs), getattr(numpys, method)(*args, **kwargs))


def test_ndarray_arguments_are_read_when_the_draw_runs():
    ours, numpys = nd.random.default_rng(7), np.random.default_rng(7)
    loc = nd.array([0.0, 10.0, 20.0])
    _same(ours.normal(loc, nd.array(0.5)), numpys.normal([0.0, 10.0, 20.0], 0.5))
    _same(ours.choice(nd.arange(10) * 2, 3), numpys.choice(np.arange(10) * 2, 3))
    _same(ours.choice(4, 6, p=nd.array([0.1, 0.2, 0.3, 0.4])),
          numpys.choice(4, 6, p=[0.1, 0.2, 0.3, 0.4]))
    _same(ours.permutation(nd.arange(6.0).reshape(3, 2)),
          numpys.permutation(np.arange(6.0).reshape(3, 2)))
    _same(ours.integers(nd.array([0, 5]), 10), numpys.integers([0, 5], 10))


def test_shuffle_in_place():
    ours, numpys = nd.random.default_rng(3), np.random.default_rng(3)
    x, y = nd.arange(10), np.arange(10)
    assert ours.shuffle(x) is None
    numpys.shuffle(y)
    _same(x, y)
    x, y = nd.arange(12).reshape(3, 4), np.arange(12).reshape(3, 4)
    ours.shuffle(x[:, 1:], axis=1)  # a view: shuffled in the array it views
    numpys.shuffle(y[:, 1:], axis=1)
    _same(x, y)
    mine, theirs = list("abcdef"), list("abcdef")  # a list, in place, as NumPy's
    ours.shuffle(mine)
    numpys.shuffle(theirs)
    assert mine == theirs
    a, b = np.arange(5.0), np.arange(5.0)
    ours.shuffle(a)
    numpys.shuffle(b)
    np.testing.assert_array_equal(a, b)
    _same(ours.random(3), numpys.random(3))  # and the streams go on together


def test_out_argument():
    ours, numpys = nd.random.default_rng(5), np.random.default_rng(5)
    out, want = nd.zeros((2, 3)), np.zeros((2, 3))
    assert ours.random(out=out) is out
    numpys.random(out=want)
    _same(out, want)
    out32 = nd.zeros(4, np.float32)
    ours.standard_normal(4, np.float32, out32)
    _same(out32, numpys.standard_normal(4, np.float32))
    with pytest.raises(TypeError):
        ours.random(out=nd.zeros(3, np.float32))
    with pytest.raises(ValueError):
        ours.random(4, out=nd.zeros(3))
    _same(ours.random(), numpys.random())  # the bad calls drew nothing


BAD_CALLS = [
    ("normal", (0, -1.0, 3), {}), ("integers", (5, 3), {}), ("integers", (0, 300), {"dtype": np.uint8}),
    ("integers", (0, 5), {"dtype": np.float64}), ("random", (), {"dtype": np.int32}),
    ("uniform", ([0, 1], 2, 3), {}), ("choice", (5, 6), {"replace": False}),
    ("choice", ([],), {}), ("choice", (3,), {"p": [0.5, 0.6, 0.1]}),
    ("choice", (np.zeros((2, 3)), 2), {"axis": 2}), ("permutation", (3.0,), {}),
    ("poisson", (-1.0,), {}), ("binomial", (5, 1.5), {}), ("exponential", (-1,), {}),
    ("random", (-1,), {}), ("normal", (0, 1, "a"), {}), ("normal", (), {"sise": 3}),
    ("shuffle", ([1, 2],), {"axis": 1}),
]


@pytest.mark.parametrize("method, args, kwargs", BAD_CALLS)
def test_bad_calls_raise_numpys_error_at_the_call_and_draw_nothing(method, args, kwargs):
    ours, numpys = nd.random.default_rng(1), np.random.default_rng(1)
    with pytest.raises(Exception) as expected:  # noqa: B017 - NumPy's error is the oracle
        getattr(numpys, method)(*args, **kwargs)
    with pytest.raises(Exception) as got:  # noqa: B017
        getattr(ours, method)(*args, **kwargs)
    assert isinstance(got.value, _family(expected.value)), (got.value, expected.value)
    _same(ours.random(4), numpys.random(4))


def test_a_draw_failing_in_its_op_leaves_the_stream_going():
    ours, numpys = nd.random.default_rng(9), np.random.default_rng(9)
    try:
        ours.random(HUGE).wait_to_read()
    except MemoryError:  # NaiveEngine: at the call; the others: at the wait
        pass
    _same(ours.random(3), numpys.random(3))
    try:
        nd.waitall()
    except MemoryError:
        pass


def test_threads_with_generators_of_their_own():
    seeds = list(range(6))
    results = {}

    def work(seed):
        rng = nd.random.default_rng(seed)
        results[seed] = [rng.normal(size=50), rng.integers(0, 100, 20), rng.permutation(30),
                         rng.choice(10, 5, replace=False), rng.uniform(size=(3, 3))]

    threads = [threading.Thread(target=work, args=(s,)) for s in seeds]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for seed in seeds:
        numpys = np.random.default_rng(seed)
        for got, want in zip(results[seed], [numpys.normal(size=50), numpys.integers(0, 100, 20),
                                             numpys.permutation(30),
                                             numpys.choice(10, 5, replace=False),
                                             numpys.uniform(size=(3, 3))]):
            _same(got, want)


def test_one_generator_pushed_from_many_threads_keeps_push_order():
    rng = nd.random.default_rng(11)
    lock = threading.Lock()
    order = []

    def work():
        for _ in range(20):
            with lock:  # the push order is the order recorded
                order.append(rng.random(7))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    want = np.random.default_rng(11).random(7 * len(order)).reshape(len(order), 7)
    np.testing.assert_array_equal(np.stack([x.asnumpy() for x in order]), want)


def test_stream_goes_on_across_engines():
    rng, numpys = nd.random.default_rng(21), np.random.default_rng(21)
    first = rng.random(5)  # pushed on this engine: it draws first, wherever it runs
    _same(first, numpys.random(5))
    rng.random(100_000)  # still running, maybe, when the engine changes
    numpys.random(100_000)
    outer = E.get()
    for kind in ENGINE_KINDS:
        engine = E.create(kind, num_cpu_workers=3)
        E.set_engine(engine)
        try:
            _same(rng.normal(size=4), numpys.normal(size=4))
        finally:
            E.set_engine(outer)
            engine.notify_shutdown()
    _same(rng.random(3), numpys.random(3))


def test_same_numbers_under_every_engine_and_worker_count():
    outer = E.get()
    for kind in ENGINE_KINDS:
        for workers in (1, 4):
            engine = E.create(kind, num_cpu_workers=workers)
            E.set_engine(engine)
            try:
                ours, numpys = nd.random.default_rng(99), np.random.default_rng(99)
                results = [(getattr(ours, m)(*a, **k), getattr(numpys, m)(*a, **k))
                           for m, a, k in CALLS]
                for got, want in results:
                    _same(got, want)
            finally:
                E.set_engine(outer)
                engine.notify_shutdown()


def test_constructors_and_names():
    rng = nd.random.default_rng(4)
    assert nd.random.default_rng(rng) is rng
    assert isinstance(rng, nd.random.Generator) and "PCG64" in repr(rng)
    _same(nd.random.Generator(np.random.MT19937(4)).random(3),
          np.random.Generator(np.random.MT19937(4)).random(3))
    _same(nd.random.default_rng(np.random.SeedSequence(8)).random(2),
          np.random.default_rng(np.random.SeedSequence(8)).random(2))
    assert nd.random.default_rng(ctx=nd.cpu(1)).random(2).context == nd.cpu(1)
    assert nd.random.default_rng().random(3).shape == (3,)  # fresh entropy
    with pytest.raises(TypeError):
        nd.random.Generator(5)
    with pytest.raises(AttributeError, match="does not have 'beta' yet"):
        rng.beta  # noqa: B018
    with pytest.raises(AttributeError, match="numpy.random.gumbel"):
        nd.random.gumbel  # noqa: B018
    assert not hasattr(rng, "no_such_method") and not hasattr(nd.random, "no_such")


# ---------------------------------------------------------------- the legacy functions
LEGACY = [
    ("rand", (), {}), ("rand", (2, 3), {}), ("randn", (4,), {}), ("randn", (), {}),
    ("randint", (5,), {}), ("randint", (0, 10, (2, 2)), {}), ("randint", (0, 3), {"size": 4}),
    ("random_sample", (), {}), ("random_sample", ((2, 2),), {}), ("random", (3,), {}),
    ("choice", (5, 3), {}), ("choice", ([1.5, 2.5],), {"size": 4, "p": [0.5, 0.5]}),
    ("choice", (5, 5), {"replace": False}), ("permutation", (6,), {}),
    ("permutation", ([1.0, 2.0, 3.0],), {}), ("normal", (0, 1, 3), {}),
    ("normal", (), {"size": (2, 2)}), ("uniform", (-1, 1), {"size": 5}), ("uniform", (), {}),
]


@pytest.mark.parametrize("name, args, kwargs", LEGACY)
def test_legacy_functions_have_numpys_results_shape_and_dtype(name, args, kwargs):
    nd.random.seed(0)
    got = getattr(nd.random, name)(*args, **kwargs)
    want = np.asarray(getattr(np.random, name)(*args, **kwargs))
    assert got.shape == want.shape and got.dtype == want.dtype
    nd.random.seed(0)  # and a seed makes them repeat
    np.testing.assert_array_equal(getattr(nd.random, name)(*args, **kwargs).asnumpy(),
                                  got.asnumpy())


def _host(values):
    return values if isinstance(values, np.ndarray) else values.get()


def test_legacy_streams_are_ndengines_per_device_streams():
    from ndengine.core.gpu import xp
    from ndengine.ops.gpu.random import make_generator
    nd.random.seed(3)
    ctx = nd.current_context()  # PCG64 on a CPU; the device's own generator on a GPU
    stream = make_generator(xp(ctx), [3, ctx.device_id, ctx.device_type == "gpu"])
    np.testing.assert_array_equal(nd.random.rand(4).asnumpy(), _host(stream.random(4)))
    np.testing.assert_array_equal(nd.random.randn(2, 2).asnumpy(),
                                  _host(stream.standard_normal((2, 2))))
    np.testing.assert_array_equal(nd.random.uniform(size=3).asnumpy(), stream.random(3))


def test_legacy_size_and_shape_spellings():
    assert nd.random.uniform(size=(2, 3)).shape == (2, 3)
    assert nd.random.uniform(shape=(2, 3)).shape == (2, 3)
    assert nd.random.normal(0, 1, 4).shape == (4,)
    assert nd.random.randint(0, 5, shape=3).shape == (3,)
    assert nd.random.random_sample(shape=2).shape == (2,)
    with pytest.raises(TypeError):
        nd.random.uniform(size=2, shape=2)


def test_legacy_shuffle_permutation_choice():
    nd.random.seed(5)
    x = nd.arange(10)
    assert nd.random.shuffle(x) is None
    assert sorted(x.asnumpy().tolist()) == list(range(10))
    values = [1, 2, 3]
    nd.random.shuffle(values)
    assert sorted(values) == [1, 2, 3]
    y = nd.arange(8.0, ctx=nd.cpu(1))
    p = nd.random.permutation(y)
    assert p.context == nd.cpu(1) and sorted(p.asnumpy().tolist()) == list(range(8))
    c = nd.random.choice(nd.arange(5) * 10, 3, replace=False)
    assert len(set(c.asnumpy().tolist())) == 3 and all(v % 10 == 0 for v in c.asnumpy())


@pytest.mark.parametrize("call", [
    lambda r: r.choice(5, 6, replace=False), lambda r: r.randint(5, 3),
    lambda r: r.normal(0, -1, 3), lambda r: r.rand(2.5), lambda r: r.permutation(3.0),
    lambda r: r.uniform(0, 1, -1)])
def test_legacy_errors_are_numpys(call):
    with pytest.raises(Exception) as expected:  # noqa: B017
        call(np.random)
    with pytest.raises(_family(expected.value)):
        call(nd.random)
