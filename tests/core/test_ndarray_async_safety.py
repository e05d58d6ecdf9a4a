"""What an op reads is fixed at the call, and what a read returns is one state of the array.

Snapshots: NumPy index arrays, masks, lists and array fill values handed to an op are copied at
the call, so changing them while the op is still queued (the engine held up by a blocking op)
changes nothing. Reads (asnumpy, tolist, str, __array__, save, pickle) are read ops in the
engine: with another thread writing whole new values, every read sees one of them, never a mix.
"""
import contextlib
import copy
import pickle
import threading
import time

import numpy as np
import pytest

import ndengine as nd
from ndengine import engine as _engine
from ndengine.engine import FnProperty

from ndarray_helpers import assert_same

pytestmark = pytest.mark.usefixtures("nd_engine")

BIG = (300, 100)  # float64: over the inline limit, so its ops go to the workers


@contextlib.contextmanager
def engine_held(*arrays, workers=4, seconds=None):
    """Hold the engine up: blocking ops write each array's var and occupy every worker, until
    the block ends (or ``seconds`` have passed). NaiveEngine runs every op at its call, so
    there is nothing to hold."""
    eng = _engine.get()
    if type(eng).__name__ == "NaiveEngine":
        yield
        return
    release = threading.Event()
    if seconds is not None:
        threading.Timer(seconds, release.set).start()
    ctx = nd.cpu(0)
    targets = [x.engine_var for x in arrays] + [eng.new_variable() for _ in range(workers)]
    for var in targets:
        eng.push_sync(lambda run_ctx: release.wait(10), ctx, (), (var,), FnProperty.NORMAL)
    try:
        yield
    finally:
        release.set()


def test_getitem_index_array_is_read_at_the_call():
    base = np.arange(20.0)
    x = nd.array(base)
    index = np.array([3, 1, 4])
    with engine_held(x):
        picked = x[index]
        index[:] = 0
    assert_same(base[[3, 1, 4]], picked.asnumpy())


def test_split_indices_are_read_at_the_call():
    base = np.arange(12.0)
    x = nd.array(base)
    cuts = np.array([2, 5])
    with engine_held(x):
        pieces = nd.split(x, cuts)
        cuts[:] = [7, 9]
    for want, got in zip(np.split(base, [2, 5]), pieces):
        assert_same(want, got.asnumpy())


def test_getitem_mask_and_tuple_lists_are_read_at_the_call():
    base = np.arange(12.0).reshape(3, 4)
    x = nd.array(base)
    mask = base[:, 0] > 2
    rows = [0, 2]
    with engine_held(x):
        masked = x[mask]
        paired = x[rows, [1, 3]]
        mask[:] = True
        rows[:] = [1, 1]
    assert_same(base[base[:, 0] > 2], masked.asnumpy())
    assert_same(base[[0, 2], [1, 3]], paired.asnumpy())


def test_setitem_index_and_value_are_read_at_the_call():
    base = np.zeros(10)
    x = nd.array(base)
    index = np.array([1, 5])
    mask = np.zeros(10, bool)
    mask[7] = True
    value = np.array([2.0, 3.0])
    with engine_held(x):
        x[index] = value
        x[mask] = 9.0
        index[:] = 0
        mask[:] = True
        value[:] = -1
    expected = base.copy()
    expected[[1, 5]] = [2.0, 3.0]
    expected[7] = 9.0
    assert_same(expected, x.asnumpy())


def test_full_array_value_is_read_at_the_call():
    row = np.arange(BIG[1], dtype=np.float64)
    with engine_held():
        filled = nd.full(BIG, row)
        spaced = nd.linspace(row, row + 1, 3)
        row[:] = -1
    original = np.arange(BIG[1], dtype=np.float64)
    assert_same(np.full(BIG, original), filled.asnumpy())
    assert_same(np.linspace(original, original + 1, 3), spaced.asnumpy())


def test_full_takes_an_ndarray_of_any_shape_as_numpy_takes_an_array():
    assert_same(np.full((2, 3), [1, 2, 3]), nd.full((2, 3), nd.array([1, 2, 3])).asnumpy())


def test_shape_assignment_lets_pending_ops_finish_with_the_old_shape():
    base = np.arange(6.0)
    x = nd.array(base)
    with engine_held(x, seconds=0.3):
        y = x * 1
        z = y + 1  # queued, pushed with y of shape (6,)
        y.shape = (2, 3)  # waits for z (and the hold)
        w = y.sum(axis=1)
        v = y[1] * 10
    assert_same(base + 1, z.asnumpy())
    assert_same(base.reshape(2, 3).sum(axis=1), w.asnumpy())
    assert_same(base[3:] * 10, v.asnumpy())


# ---------------------------------------------------------------- reads in serial order
def _parse_str(text):
    for mark in "[],":
        text = text.replace(mark, " ")
    return np.array(text.replace("...", " ").split(), float)


READERS = {
    "asnumpy": lambda x: x.asnumpy(),
    "tolist": lambda x: np.array(x[:1 << 14].tolist()),  # a view: reads the whole chunk's var
    "__array__": lambda x: np.asarray(x),
    "str": lambda x: _parse_str(str(x)),
    "repr": lambda x: _parse_str(repr(x).split("(", 1)[1].split("shape=")[0].split("ctx=")[0]),
    "pickle": lambda x: pickle.loads(pickle.dumps(x)).asnumpy(),
}


def torn_reads(read, seconds=0.4, size=1 << 18):
    """Read ``x`` in this thread while another writes whole new values into it (x[...] = k,
    k = 1, 2, ...; each write waited for, so reads do not queue behind thousands of writes).
    Returns (reads, list of reads that mixed two writes)."""
    x = nd.zeros(size)
    stop = threading.Event()
    written = [0]
    errors = []

    def writer():
        try:
            while not stop.is_set():
                written[0] += 1
                x[...] = float(written[0])
                x.wait_to_read()
        except BaseException as exc:  # noqa: B902 - reported by the main thread
            errors.append(exc)

    thread = threading.Thread(target=writer)
    thread.start()
    reads, torn = 0, []
    start = time.perf_counter()
    try:
        while time.perf_counter() - start < seconds or (written[0] < 30 and
                                                        time.perf_counter() - start < 5):
            values = read(x)
            reads += 1
            if not (values == values.flat[0]).all():
                torn.append(np.unique(values))
    finally:
        stop.set()
        thread.join()
    assert not errors, errors
    return reads, torn


@pytest.mark.parametrize("reader", sorted(READERS))
def test_reads_see_one_state_while_another_thread_writes(reader):
    reads, torn = torn_reads(READERS[reader])
    assert reads >= 3
    assert not torn, f"{len(torn)} of {reads} reads mixed two writes, e.g. {torn[0]}"


def test_save_reads_one_state(tmp_path):
    path = tmp_path / "x.npz"

    def read(x):
        nd.save(path, [x])
        return nd.load(path)[0].asnumpy()
    reads, torn = torn_reads(read)
    assert not torn, f"{len(torn)} of {reads} saves mixed two writes"


def test_read_raises_the_error_of_a_failed_write():
    try:
        x = nd.array([1, 2, 3]) ** nd.array([1, -1, 2])  # int ** negative int fails in the kernel
    except ValueError:
        return  # NaiveEngine runs the op, and raises, at the call
    for _ in range(2):
        with pytest.raises(ValueError):
            x.asnumpy()
    nd.waitall()  # the error was raised at a wait already: waitall does not repeat it


# ---------------------------------------------------------------- pickle and copies
def test_pickle_and_copies_of_pending_arrays():
    before = nd.storage.stats()["bytes_in_use"]
    base = np.arange(BIG[0] * BIG[1], dtype=np.float64).reshape(BIG)
    x = nd.array(base)
    with engine_held(x, seconds=0.3):  # pickling waits for y: the hold ends by itself
        y = x * 2  # pending
        restored = pickle.loads(pickle.dumps(y))
    deep, shallow = copy.deepcopy(y), copy.copy(y)
    assert deep.context == shallow.context == y.context  # copies stay on the device
    y += 1  # the copies have storage of their own
    assert restored.context == nd.cpu(0)  # unpickled on the host
    for c in (restored, deep, shallow):
        assert type(c) is nd.NDArray and c.context in (nd.cpu(0), x.context)
        assert c._chunk is not y._chunk
        assert_same(base * 2, c.asnumpy())
    del x, y, restored, deep, shallow, c
    nd.waitall()
    stats = nd.storage.stats()
    assert stats["bytes_in_use"] >= 0
    assert stats["bytes_in_use"] <= before + 0  # every buffer went back to the pool
