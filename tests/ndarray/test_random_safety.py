"""nd.random checks its parameters at the call with NumPy's errors, and no failed draw (nor a
bad seed) can break the device's generator: the next draws, and seed(), work as before."""
import numpy as np
import pytest

import ndengine as nd
from ndengine.core import array as core_array

pytestmark = pytest.mark.usefixtures("nd_engine")

HUGE = (1 << 55,)  # float64 elements no machine can allocate: MemoryError inside the op


def _reference(seed, n):
    """The numbers nd.random.uniform(shape=n) gives on the current device right after
    seed(seed): NumPy's PCG64 on a CPU; on a GPU its own generator, seeded the same way."""
    ctx = nd.current_context()
    entropy = [seed, ctx.device_id, ctx.device_type == "gpu"]
    if ctx.device_type == "cpu":
        return np.random.Generator(np.random.PCG64(entropy)).random(n)
    from ndengine.core.gpu import xp
    from ndengine.ops.gpu.random import make_generator
    drawn = make_generator(xp(ctx), entropy).random(n)
    return drawn if isinstance(drawn, np.ndarray) else drawn.get()


def _rng():
    return np.random.default_rng(0)


# (our call, NumPy's call, whether the message must be NumPy's word for word)
BAD_CALLS = {
    "randint low >= high": (lambda: nd.random.randint(5, 3), lambda: _rng().integers(5, 3), True),
    "randint high <= 0": (lambda: nd.random.randint(0), lambda: _rng().integers(0), True),
    "randint negative high": (lambda: nd.random.randint(-3), lambda: np.random.randint(-3), True),
    "randint high out of bounds": (lambda: nd.random.randint(0, 300, dtype=np.uint8),
                                   lambda: _rng().integers(0, 300, dtype=np.uint8), True),
    "randint low out of bounds": (lambda: nd.random.randint(-1, 3, dtype=np.uint8),
                                  lambda: np.random.randint(-1, 3, dtype=np.uint8), True),
    "randint past int64": (lambda: nd.random.randint(0, 2 ** 64),
                           lambda: _rng().integers(0, 2 ** 64), True),
    "randint bool range": (lambda: nd.random.randint(0, 3, dtype=np.bool_),
                           lambda: _rng().integers(0, 3, dtype=np.bool_), True),
    "randint nan": (lambda: nd.random.randint(0, float("nan")),
                    lambda: _rng().integers(0, float("nan")), True),
    "randint float dtype": (lambda: nd.random.randint(0, 3, dtype=np.float64),
                            lambda: np.random.randint(0, 3, dtype=np.float64), True),
    "randint array bounds": (lambda: nd.random.randint([0, 5], 3, shape=2),
                             lambda: _rng().integers([0, 5], 3, size=2), True),
    "uniform high < low": (lambda: nd.random.uniform(2.0, 1.0, shape=3),
                           lambda: _rng().uniform(2.0, 1.0, size=3), True),
    "uniform infinite range": (lambda: nd.random.uniform(0, np.inf),
                               lambda: _rng().uniform(0, np.inf), True),
    "uniform nan": (lambda: nd.random.uniform(0, np.nan), lambda: _rng().uniform(0, np.nan), True),
    "uniform text": (lambda: nd.random.uniform("a"), lambda: _rng().uniform("a"), True),
    "uniform int dtype": (lambda: nd.random.uniform(dtype=np.int32),
                          lambda: _rng().random(dtype=np.int32), False),
    "uniform bool dtype": (lambda: nd.random.uniform(dtype=np.bool_),
                           lambda: _rng().random(dtype=np.bool_), False),
    "uniform params vs shape": (lambda: nd.random.uniform([0, 1], [2, 3], shape=3),
                                lambda: _rng().uniform([0, 1], [2, 3], size=3), False),
    "normal negative scale": (lambda: nd.random.normal(0, -1.0, shape=2),
                              lambda: _rng().normal(0, -1.0, size=2), True),
    "normal negative scale, empty": (lambda: nd.random.normal(0, -1.0, shape=0),
                                     lambda: _rng().normal(0, -1.0, size=0), True),
    "normal int dtype": (lambda: nd.random.normal(dtype=np.int64),
                         lambda: _rng().standard_normal(dtype=np.int64), False),
    "negative shape": (lambda: nd.random.uniform(shape=-1), lambda: _rng().uniform(size=-1),
                       False),
    "negative dimension": (lambda: nd.random.randint(0, 3, shape=(2, -1)),
                           lambda: _rng().integers(0, 3, size=(2, -1)), False),
}


def _error(call):
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - the error is what is compared
        return exc
    raise AssertionError("no error was raised")


@pytest.mark.parametrize("case", sorted(BAD_CALLS))
def test_bad_parameters_raise_numpys_error_at_the_call(case):
    ours, numpys, same_message = BAD_CALLS[case]
    expected = _error(numpys)
    got = _error(ours)  # at the call: under every engine, nothing was pushed
    assert type(got) is type(expected), (got, expected)
    if same_message:
        assert str(got) == str(expected)
    else:
        # the same statement, with our function's name or the shapes involved
        assert str(got).split(" for ")[0].split(":")[0].split(".")[0] == \
            str(expected).split(" for ")[0].split(":")[0].split(".")[0], (got, expected)
    nd.waitall()  # and nothing failed on the engine


@pytest.mark.parametrize("case", sorted(BAD_CALLS))
def test_a_bad_call_leaves_the_generator_working(case):
    nd.random.seed(3)
    with pytest.raises(Exception):  # noqa: B017 - the error itself is checked above
        BAD_CALLS[case][0]()
    np.testing.assert_array_equal(nd.random.uniform(shape=5).asnumpy(), _reference(3, 5))
    nd.random.seed(4)  # and seed() still reaches the generator
    np.testing.assert_array_equal(nd.random.uniform(shape=5).asnumpy(), _reference(4, 5))


def test_empty_draws_accept_what_numpy_accepts():
    # NumPy draws nothing and checks no bounds for an empty size: neither do we
    assert _rng().integers(5, 3, size=0).shape == (0,)
    x = nd.random.randint(5, 3, shape=0)
    assert x.shape == (0,) and x.dtype == np.int64 and x.asnumpy().shape == (0,)


def test_a_draw_failing_inside_its_op_fails_only_its_output(nd_engine, monkeypatch):
    # past the call-time bound (physical memory and swap) the draw raises at the call: lifted
    # here, so that the allocation fails inside the op
    monkeypatch.setattr(core_array, "_host_bytes", float("inf"))
    nd.random.seed(3)
    with pytest.raises(MemoryError):  # NaiveEngine raises at the call, the others at the wait
        huge = nd.random.uniform(shape=HUGE)
        after = nd.random.uniform(shape=5)  # pushed before the failure happened
        huge.wait_to_read()
    if nd_engine.kind != "NaiveEngine":
        np.testing.assert_array_equal(after.asnumpy(), _reference(3, 5))
        nd.waitall()  # the error was raised at a wait already: waitall does not repeat it
    then = nd.random.uniform(shape=10).asnumpy()
    if nd_engine.kind == "NaiveEngine":
        np.testing.assert_array_equal(then, _reference(3, 10))
    else:
        np.testing.assert_array_equal(then, _reference(3, 15)[5:])
    nd.random.seed(3)
    np.testing.assert_array_equal(nd.random.uniform(shape=5).asnumpy(), _reference(3, 5))


def test_many_failed_draws_in_flight_do_not_disturb_the_stream():
    nd.random.seed(8)
    draws, failed = [], 0
    for i in range(6):
        try:
            if i % 2:
                nd.random.normal(shape=HUGE)
            draws.append(nd.random.uniform(shape=3))
        except MemoryError:  # NaiveEngine: at the call
            failed += 1
            draws.append(nd.random.uniform(shape=3))
    values = np.concatenate([d.asnumpy() for d in draws])
    np.testing.assert_array_equal(values, _reference(8, 18))
    try:
        nd.waitall()
    except MemoryError:
        failed += 1
    assert failed >= 1
    nd.waitall()


@pytest.mark.parametrize("bad_seed, error", [(-1, ValueError), (1.5, TypeError),
                                             ("a", TypeError)])
def test_a_bad_seed_raises_at_the_call_and_breaks_nothing(bad_seed, error):
    nd.random.seed(3)
    first = nd.random.uniform(shape=2)
    with pytest.raises(error):
        nd.random.seed(bad_seed)
    with pytest.raises(error):
        nd.random.seed(bad_seed, ctx=nd.cpu(0))
    rest = nd.random.uniform(shape=3)  # the seed(3) stream goes on
    np.testing.assert_array_equal(np.concatenate([first.asnumpy(), rest.asnumpy()]),
                                  _reference(3, 5))


def test_seed_lands_between_pending_draws():
    nd.random.seed(5)
    before = nd.random.uniform(shape=(300, 300))  # large: runs on a worker, after the call
    nd.random.seed(6)
    after = nd.random.uniform(shape=4)
    np.testing.assert_array_equal(before.asnumpy().ravel(), _reference(5, 90000))
    np.testing.assert_array_equal(after.asnumpy(), _reference(6, 4))
