"""The 'local' KVStore (ndengine.kv): one process, several devices, under the three engines."""
import numpy as np
import pytest

import ndengine as nd
from ndengine.engine import devices

pytestmark = pytest.mark.usefixtures("nd_engine")

SHAPE = (4, 5)


@pytest.fixture(scope="module")
def gpus():
    """Two GPUs: the real ones, else fake ones (left on, as tests/core/test_gpu_arrays.py does:
    GPU contexts keep state that a switch back would strand)."""
    if devices.fake_gpu_count() == 0 and devices.device_count() >= 2:
        return devices.device_count()
    devices.use_fake_gpus(max(devices.fake_gpu_count(), 2))
    return devices.fake_gpu_count()


def ones(value=1.0, ctx=None, shape=SHAPE):
    return nd.ones(shape, ctx=ctx) * value


def test_create_and_identity():
    kv = nd.kv.create("local")
    assert kv.type == "local" and kv.rank == 0 and kv.num_workers == 1
    kv.barrier()  # one worker: returns at once
    with pytest.raises(ValueError, match="unknown KVStore kind"):
        nd.kv.create("nope")


def test_init_push_pull_single_value():
    kv = nd.kv.create("local")
    kv.init(3, ones(2.0))
    out = nd.zeros(SHAPE)
    kv.pull(3, out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 2.0))
    kv.push(3, ones(5.0))
    kv.pull(3, out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 5.0))


def test_push_of_several_contexts_is_summed_and_pull_broadcasts():
    kv = nd.kv.create("local")
    kv.init("w", nd.zeros(SHAPE))
    ctxs = [nd.cpu(0), nd.cpu(1), nd.cpu(2)]
    kv.push("w", [ones(i + 1, ctx) for i, ctx in enumerate(ctxs)])
    outs = [nd.zeros(SHAPE, ctx=ctx) for ctx in ctxs]
    kv.pull("w", out=outs)
    for out, ctx in zip(outs, ctxs):
        assert out.context == ctx
        np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 6.0))


def test_gpus_push_and_pull(gpus):
    kv = nd.kv.create("local")
    kv.init("g", nd.zeros(SHAPE))
    # uploaded values: on fake GPUs, a copy off the GPU of an array that a GPU op is still
    # writing can read it early (a core issue of its own, not the KVStore's)
    kv.push("g", [nd.array(np.full(SHAPE, 1.0), ctx=nd.gpu(0)),
                  nd.array(np.full(SHAPE, 2.0), ctx=nd.gpu(1))])
    outs = [nd.zeros(SHAPE, ctx=nd.gpu(0)), nd.zeros(SHAPE, ctx=nd.gpu(1)), nd.zeros(SHAPE)]
    kv.pull("g", out=outs)
    for out in outs:
        np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 3.0))


def test_list_keys_and_list_values():
    kv = nd.kv.create("local")
    keys = [5, 7, "nine"]
    kv.init(keys, [ones(k) for k in (5, 7, 9)])
    kv.push(keys, [[ones(1), ones(2)], ones(3), [ones(4)]])
    outs = [nd.zeros(SHAPE), [nd.zeros(SHAPE), nd.zeros(SHAPE)], nd.zeros(SHAPE)]
    kv.pull(keys, out=outs)
    np.testing.assert_array_equal(outs[0].asnumpy(), np.full(SHAPE, 3.0))
    for out in outs[1]:
        np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 3.0))
    np.testing.assert_array_equal(outs[2].asnumpy(), np.full(SHAPE, 4.0))


def test_pushpull_and_broadcast():
    kv = nd.kv.create("local")
    kv.init(1, nd.zeros(SHAPE))
    out = nd.zeros(SHAPE)
    kv.pushpull(1, [ones(1), ones(2)], out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 3.0))
    value = ones(4)
    kv.pushpull(1, value)  # out=None: the result lands in the value
    np.testing.assert_array_equal(value.asnumpy(), np.full(SHAPE, 4.0))
    outs = [nd.zeros(SHAPE), nd.zeros(SHAPE, ctx=nd.cpu(1))]
    kv.broadcast("b", ones(8), out=outs)
    for out in outs:
        np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 8.0))


def test_calls_return_before_the_values_exist():
    """push and pull are pushed ops: pull's out is ready only at its wait."""
    kv = nd.kv.create("local")
    big = (300, 300)
    kv.init("x", nd.zeros(big))
    grad = nd.ones(big)
    for _ in range(5):
        grad = nd.sqrt(grad * grad) + 0.0  # some work still pending at the push
    kv.push("x", grad, priority=-3)
    out = nd.zeros(big)
    kv.pull("x", out=out, priority=5)
    np.testing.assert_array_equal(out.asnumpy(), np.ones(big))


def test_updater_runs_on_the_aggregate_and_updates_the_stored_value():
    kv = nd.kv.create("local")
    calls = []

    def updater(key, grad, weight):
        calls.append(key)
        weight += grad * 2

    kv.set_updater(updater)
    kv.init("u", ones(1.0))
    kv.push("u", [ones(1.0), ones(2.0)])
    kv.push("u", ones(0.5))
    out = nd.zeros(SHAPE)
    kv.pull("u", out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 1.0 + 6.0 + 1.0))
    assert calls == ["u", "u"]
    with pytest.raises(TypeError, match="callable"):
        kv.set_updater(3)


def test_sgd_optimizer_matches_the_formula():
    kv = nd.kv.create("local")
    kv.set_optimizer(nd.kv.SGD(learning_rate=0.1, momentum=0.9, wd=0.01))
    w0 = np.linspace(-1, 1, 20, dtype=np.float32).reshape(SHAPE)
    kv.init(0, nd.array(w0))
    w, mom = w0.astype(np.float64), np.zeros(SHAPE)
    out = nd.zeros(SHAPE)
    for step in range(3):
        grad = np.full(SHAPE, step + 1.0, np.float32)
        kv.push(0, nd.array(grad))
        mom = 0.9 * mom - 0.1 * (grad + 0.01 * w)
        w = w + mom
    kv.pull(0, out=out)
    np.testing.assert_allclose(out.asnumpy(), w, rtol=1e-5)
    with pytest.raises(ValueError, match="learning_rate"):
        nd.kv.SGD(learning_rate=0)


def test_sgd_plain_and_clipped():
    kv = nd.kv.create("local")
    kv.set_optimizer(nd.kv.SGD(learning_rate=0.5, rescale_grad=0.5, clip_gradient=1.0))
    kv.init("p", nd.zeros(SHAPE))
    kv.push("p", ones(10.0))  # 10 * 0.5 = 5, clipped to 1
    out = nd.zeros(SHAPE)
    kv.pull("p", out=out)
    np.testing.assert_allclose(out.asnumpy(), np.full(SHAPE, -0.5))


def test_errors_raise_at_the_call():
    kv = nd.kv.create("local")
    out = nd.zeros(SHAPE)
    with pytest.raises(KeyError, match="never initialised"):
        kv.pull("missing", out=out)
    with pytest.raises(KeyError, match="never initialised"):
        kv.push("missing", out)
    kv.init("k", nd.zeros(SHAPE))
    with pytest.raises(ValueError, match="already initialised"):
        kv.init("k", nd.zeros(SHAPE))
    with pytest.raises(ValueError, match="shape"):
        kv.push("k", nd.zeros((2, 2)))
    with pytest.raises(ValueError, match="shape"):
        kv.pull("k", out=nd.zeros((5, 4)))
    with pytest.raises(ValueError, match="shape"):
        kv.push("k", [nd.zeros(SHAPE), nd.zeros((1,))])  # nothing pushed: checked first
    with pytest.raises(TypeError, match="ints or strings"):
        kv.init(1.5, nd.zeros(SHAPE))
    with pytest.raises(TypeError, match="out="):
        kv.pull("k")
    with pytest.raises(ValueError, match="2 keys"):
        kv.push(["k", "k"], nd.zeros(SHAPE))
    with pytest.raises(TypeError, match="NDArrays"):
        kv.push("k", np.zeros(SHAPE))
    kv.pull("k", out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.zeros(SHAPE))
    kv.close()
    with pytest.raises(nd.kv.KVStoreError, match="closed"):
        kv.pull("k", out=out)


def test_values_of_another_dtype_are_cast_to_the_keys():
    kv = nd.kv.create("local")
    kv.init("f", nd.zeros(SHAPE, dtype=np.float32))
    kv.push("f", [nd.ones(SHAPE, dtype=np.float64), nd.ones(SHAPE, dtype=np.int32)])
    out = nd.zeros(SHAPE, dtype=np.float64)
    kv.pull("f", out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 2.0))
