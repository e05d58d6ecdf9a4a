"""Arrays on GPUs: placement, copies on the copy pools, memory, stream order, DLPack.

On a machine whose CuPy finds a GPU these run on it; elsewhere on fake GPUs (NumPy standing in
for CuPy: ndengine/engine/devices.py), which run the same code path."""
import numpy as np
import pytest

import ndengine as nd
from ndengine import profiler
from ndengine.engine import devices

pytestmark = pytest.mark.usefixtures("nd_engine")


@pytest.fixture(scope="session")
def gpus():
    """How many GPUs the tests may use: the real ones, else two fake ones (turned on for the
    rest of the session: GPU contexts keep state, such as their random generators, that a
    switch back to "no GPU" would strand)."""
    if devices.fake_gpu_count() == 0 and devices.device_count() > 0:
        return devices.device_count()
    devices.use_fake_gpus(max(devices.fake_gpu_count(), 2))
    return devices.fake_gpu_count()


def need(gpus, count):
    if gpus < count:
        pytest.skip(f"needs {count} GPUs")


def host_values(n=50_000, dtype=np.float32):
    return np.random.default_rng(0).random(n).astype(dtype)


def test_an_array_placed_on_a_gpu_keeps_its_values_and_context(gpus):
    values = host_values()
    x = nd.array(values, ctx=nd.gpu(0))
    values[:] = -1  # the caller's array may change at once: the copy was taken at the call
    assert x.context == nd.gpu(0)
    np.testing.assert_array_equal(x.asnumpy(), host_values())
    np.testing.assert_array_equal(x[::7].asnumpy(), host_values()[::7])  # a view


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.bool_, np.complex64,
                                   np.float16])
def test_copies_between_every_pair_of_devices(gpus, dtype):
    need(gpus, 2)
    values = host_values(3000).astype(dtype)
    on = {"cpu": nd.array(values)}
    on["gpu0"] = on["cpu"].copyto(nd.gpu(0))
    on["gpu1"] = on["gpu0"].as_in_context(nd.gpu(1))
    on["back"] = on["gpu1"].copyto(nd.cpu())
    target = nd.zeros(values.shape, dtype=dtype, ctx=nd.gpu(0))
    on["gpu1"].copyto(target)  # into an existing array
    for name, x in on.items():
        np.testing.assert_array_equal(x.asnumpy(), values, err_msg=name)
    np.testing.assert_array_equal(target.asnumpy(), values)
    assert on["gpu1"].context == nd.gpu(1) and on["back"].context == nd.cpu(0)


@pytest.mark.parametrize("size", [16, 3000, 300_000])
def test_a_copy_sees_the_ops_still_gathered_before_it(gpus, size):
    # ops on small arrays wait in this thread's window (segment.py, lazy.py) until something
    # needs them: a copy pushed straight to the copy pool must push them first (it read the
    # array's old values on the threaded engines before)
    need(gpus, 2)
    for _ in range(3):
        y = nd.ones(size, ctx=nd.gpu(0)) * 3.0 + 1.0
        np.testing.assert_array_equal(y.as_in_context(nd.cpu()).asnumpy(), 4.0)
        z = nd.ones(size, ctx=nd.gpu(0)) * 5.0
        np.testing.assert_array_equal(z.copyto(nd.gpu(1)).asnumpy(), 5.0)
        target = nd.zeros(size, ctx=nd.gpu(0))
        (nd.ones(size) * 2.0).copyto(target)  # from the CPU, into an existing array
        target *= 3.0
        np.testing.assert_array_equal(target.asnumpy(), 6.0)


def test_copies_run_on_the_gpus_copy_pool(gpus):
    eng = nd.engine.get()
    if eng.kind == "NaiveEngine":
        pytest.skip("the NaiveEngine runs every op in the pushing thread")
    profiler.set_config(engine=eng)
    profiler.reset()
    with profiler.scope():
        x = nd.array(host_values(), ctx=nd.gpu(0))
        x.asnumpy()
        x.copyto(nd.cpu()).wait_to_read()
    workers = {r.name: r.worker for r in profiler.records()}
    assert workers["copy_to_gpu"].startswith(("ndengine-gpu0-copy", "ndengine-copy"))
    assert workers["asnumpy"].startswith(("ndengine-gpu0-copy", "ndengine-copy"))
    assert workers["copyto"].startswith(("ndengine-gpu0-copy", "ndengine-copy"))


def test_storage_is_counted_per_device_and_released(gpus):
    before = nd.storage.stats(nd.gpu(0))
    x = nd.array(host_values(1 << 20), ctx=nd.gpu(0))
    x.wait_to_read()
    during = nd.storage.stats(nd.gpu(0))
    assert during["bytes_in_use"] >= before["bytes_in_use"] + (4 << 20)
    assert nd.storage.stats(nd.cpu(0))["bytes_in_use"] == nd.storage.stats(nd.cpu(0))[
        "bytes_in_use"]
    del x
    nd.waitall()
    after = nd.storage.stats(nd.gpu(0))
    assert after["bytes_in_use"] == before["bytes_in_use"]
    assert after["bytes_pooled"] >= 4 << 20
    nd.storage.release_all(nd.gpu(0))
    assert nd.storage.stats(nd.gpu(0))["bytes_pooled"] == 0


def test_a_reused_buffer_waits_for_its_last_use_on_the_taking_stream(gpus):
    if not devices.is_fake(nd.gpu(0)):
        pytest.skip("reads the fake streams' logs")
    eng = nd.engine.get()
    x = nd.array(host_values(1 << 18), ctx=nd.gpu(0))
    x.wait_to_read()
    del x  # its buffer goes back to the pool with a fence event
    nd.waitall()
    fences = list(_pool_fences(nd.gpu(0)))
    assert fences, "a freed GPU buffer keeps the event of its last use"
    y = nd.array(host_values(1 << 18), ctx=nd.gpu(0))  # takes that buffer again
    y.wait_to_read()
    waited = [c[2] for s in eng._pools.streams for c in s.calls if c[0] == "wait_event"]
    if eng.kind == "NaiveEngine":  # every op waited for its stream: the fence is done
        assert not _pool_fences(nd.gpu(0))
    else:
        assert any(f in waited for f in fences)
    np.testing.assert_array_equal(y.asnumpy(), host_values(1 << 18))


def _pool_fences(ctx):
    from ndengine.core import storage
    return list(storage._pools[ctx].fences.values())


def test_a_compute_op_waits_on_the_upload_event_of_the_copy_stream(gpus):
    if not devices.is_fake(nd.gpu(0)) or nd.engine.get().kind == "NaiveEngine":
        pytest.skip("reads the fake streams' logs of a threaded engine")
    x = nd.array(host_values(), ctx=nd.gpu(0))
    x.wait_to_read()
    upload = x._chunk.var.device_sync
    assert upload.stream.is_copy  # written by the copy pool's stream
    seen = []
    y = x + 1  # a compute worker's stream reads it

    y.wait_to_read()
    compute = y._chunk.var.device_sync.stream
    assert not compute.is_copy
    waits = [c for c in compute.calls if c[0] == "wait_event" and c[2] is upload.event]
    records = [c for c in compute.calls if c[0] == "record"]
    assert waits and waits[0][1] < records[-1][1]  # waited before the op's own event
    assert not seen
    np.testing.assert_allclose(y.asnumpy(), host_values() + 1)


def test_a_gpu_that_does_not_exist_says_so_at_the_call(gpus):
    with pytest.raises(RuntimeError, match="does not exist"):
        nd.array(host_values(), ctx=nd.gpu(gpus))


def test_dlpack_shares_a_gpu_arrays_memory(gpus):
    x = nd.array(host_values(), ctx=nd.gpu(0))
    kind, device_id = x.__dlpack_device__()
    if devices.is_fake(nd.gpu(0)):
        assert (kind, device_id) == (1, 0)  # a fake GPU's memory is host memory
        shared = np.from_dlpack(x)
    else:
        import cupy
        assert (kind, device_id) == (2, 0)
        shared = cupy.from_dlpack(x).get()
    np.testing.assert_array_equal(shared, host_values())


def test_a_zero_d_gpu_array_and_its_scalar(gpus):
    x = nd.array(np.float32(2.5), ctx=nd.gpu(0))
    assert x.shape == () and x.asnumpy() == np.float32(2.5) and float(x) == 2.5
    assert (x * 2).item() == 5.0


def test_save_and_load_gpu_arrays_through_the_host(gpus, tmp_path):
    values = host_values(1000)
    x = nd.array(values, ctx=nd.gpu(0))
    path = str(tmp_path / "arrays")
    nd.save(path, {"x": x})
    loaded = nd.load(path, ctx=nd.gpu(0))
    assert loaded["x"].context == nd.gpu(0)
    np.testing.assert_array_equal(loaded["x"].asnumpy(), values)


def test_random_draws_on_a_gpu_come_from_its_own_seeded_generator(gpus):
    nd.random.seed(7)
    first = nd.random.uniform(size=(1000,), ctx=nd.gpu(0)).asnumpy()
    nd.random.seed(7)
    again = nd.random.uniform(size=(1000,), ctx=nd.gpu(0)).asnumpy()
    np.testing.assert_array_equal(first, again)  # seeded: the same numbers
    assert 0 <= first.min() and first.max() < 1 and 0.4 < first.mean() < 0.6
    normal = nd.random.normal(2.0, 3.0, size=(20000,), ctx=nd.gpu(0)).asnumpy()
    assert abs(normal.mean() - 2) < 0.1 and abs(normal.std() - 3) < 0.1


def test_a_numpy_generator_gives_numpys_numbers_on_a_gpu(gpus):
    rng = nd.random.default_rng(5)
    with nd.gpu(0):
        drawn = rng.normal(size=(50,))
    np.testing.assert_array_equal(np.asarray(drawn.asnumpy()),
                                  np.random.default_rng(5).normal(size=(50,)))


def test_element_wise_windows_on_a_gpu_give_numpys_values(gpus):
    """A chain of element-wise ops and a tail reduction: one window, one op on the GPU
    (one CUDA kernel on a real GPU, the ops one by one on a fake one)."""
    values = host_values(1 << 18)
    x = nd.array(values, ctx=nd.gpu(0))
    y = x
    for _ in range(3):
        y = nd.exp(nd.sin(y) * 0.5 + 0.1)
    total = (y * y).sum()
    want = values
    for _ in range(3):
        want = np.exp(np.sin(want) * np.float32(0.5) + np.float32(0.1))
    np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-6)
    np.testing.assert_allclose(total.item(), (want * want).sum(), rtol=1e-5)
    mask = (x > 0.5) & (x < 0.75)
    np.testing.assert_array_equal(nd.where(mask, x, -x).asnumpy(),
                                  np.where((values > 0.5) & (values < 0.75), values, -values))
