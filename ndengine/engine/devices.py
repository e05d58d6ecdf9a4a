"""GPUs as the engine sees them: which exist, their streams and events, and the order of work
across streams (MXNet's asynchronous GPU engine: writers tag a var with an event, readers on
another stream wait on it; no worker blocks on its stream).

Real GPUs are CuPy's. Fake GPUs stand in for them where there is no GPU (CI, a laptop): with
``NDENGINE_FAKE_GPUS=N`` in the environment (read at import) or ``use_fake_gpus(N)``,
``gpu(0)`` to ``gpu(N-1)`` are fake devices. The engine runs their ops exactly as a real
GPU's: a compute pool with a stream per worker, a copy pool with its own streams, the same
waits and events; the arrays above use NumPy in place of CuPy. A `FakeStream` runs nothing
(the op's NumPy code has finished when the op returns), but it keeps, in ``calls``, every
record, wait and synchronize asked of it, in order, with global sequence numbers, so that
the ordering rules below are tested on any machine. ``check(ctx)`` raises the clear error
of a GPU context that cannot be used (no CuPy, CuPy but no GPU, an id beyond the count).

Cross-stream order, per var: ``ThreadedVar.device_sync`` is None until a GPU op touches the
var, then a `DeviceSync`, field by field:
    stream, event   the stream of the last GPU op that wrote the var, and the event recorded
                    on it after that op's work (None, None: the last write ran on the host).
    readers         {stream: event} for GPU ops that read the var since that write, each
                    event recorded after the reading op's work on its stream.
Rules (the engine calls them around every op, while the op holds its vars' grants, so a
writer is alone on its vars; readers of one var may run at once, hence ``_readers_lock``):
    before a GPU op on stream S (`order_on`): S waits on the write event of every var the
        op reads or writes unless recorded on S itself; for a var it writes, also on every
        reader's event of another stream (a write must not overtake a read: WAR).
    after it (`record_on`): one event E recorded on S; a read var gets readers[S] = E; a
        written var becomes DeviceSync(S, E) (its readers are gone: they came before).
    a host op or a wait on a var (`sync_host`): synchronises those events on the host
        (``event.synchronize()``): only that var's last write and reads, never the device.
Invariant: every GPU op that touched a var since its last write is covered by ``event`` or
one of ``readers``, so the next op on any stream is ordered after all of them.
"""
import itertools
import threading

from .config import env_int

__all__ = ["DeviceSync", "FakeStream", "FakeEvent", "use_fake_gpus", "fake_gpu_count",
           "is_fake", "check", "stream_factory", "current_stream", "order_on", "record_on",
           "sync_host", "synchronize", "order_before", "after_gpu_op", "device_count", "STREAM_METHODS", "check_stream",
           "checked_stream_factory"]

_VARIABLE = "NDENGINE_FAKE_GPUS"
# read at import: a bad value fails here
_fake_gpus = [env_int(_VARIABLE, 0, minimum=0, what="a number of fake GPUs >= 0")]
_checked = set()  # contexts found usable (a real GPU is asked once per context)


def use_fake_gpus(count):
    """Make ``gpu(0)`` to ``gpu(count - 1)`` fake GPUs (NumPy standing in for CuPy); 0 makes
    GPU contexts real again. Call it before any array is placed on a GPU."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise ValueError(f"count must be an int >= 0, got {count!r}")
    _fake_gpus[0] = count
    _checked.clear()


def fake_gpu_count():
    return _fake_gpus[0]


def is_fake(ctx):
    """Whether ``ctx`` is a fake GPU (False for the CPU and for real GPUs)."""
    return ctx.device_type == "gpu" and _fake_gpus[0] > 0


def device_count():
    """How many GPUs there are: the fake ones when fake GPUs are on, else CuPy's count (0
    without CuPy or without a GPU)."""
    if _fake_gpus[0]:
        return _fake_gpus[0]
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount()
    except Exception:  # noqa: BLE001 - no CuPy, no driver, no device: none usable
        return 0


def check(ctx):
    """Raise the error that says why ``ctx`` (a GPU context) cannot be used, if it cannot."""
    if ctx in _checked:
        return
    fake = _fake_gpus[0]
    if fake:
        if ctx.device_id >= fake:
            raise RuntimeError(f"{ctx} does not exist: {fake} fake GPU"
                               f"{'s' if fake > 1 else ''} ({_VARIABLE}={fake})")
        _checked.add(ctx)
        return
    try:
        import cupy
    except ImportError:
        raise RuntimeError(
            f"{ctx} needs CuPy, which is not installed: pip install 'ndengine[gpu]' "
            f"(or set {_VARIABLE}=1 to run the GPU code path on the CPU)") from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # noqa: BLE001 - CuPy's message names the driver problem
        raise RuntimeError(f"{ctx}: CuPy is installed but finds no usable GPU ({exc})") from exc
    if ctx.device_id >= count:
        raise RuntimeError(f"{ctx} does not exist: CuPy sees {count} GPU"
                           f"{'' if count == 1 else 's'}")
    _checked.add(ctx)


# ---------------------------------------------------------------- fake streams and events
_sequence = itertools.count(1)
_current = threading.local()


class FakeEvent:
    """An event of a fake stream: complete when recorded (the work before it has run)."""

    __slots__ = ("stream", "seq", "synchronized")

    def __init__(self, stream, seq):
        self.stream = stream
        self.seq = seq
        self.synchronized = 0

    done = True

    def synchronize(self):
        self.synchronized += 1
        self.stream.calls.append(("event_synchronize", next(_sequence), self))

    def __repr__(self):
        return f"<FakeEvent {self.seq} of {self.stream!r}>"


class FakeStream:
    """A fake GPU's stream: runs nothing, logs what is asked of it (``calls``: (what, seq,
    event) in order). ``with stream:`` makes it this thread's current stream, as CuPy's."""

    def __init__(self, ctx, is_copy):
        self.ctx = ctx
        self.is_copy = is_copy
        self.calls = []
        self.syncs = 0

    def __repr__(self):
        return f"<FakeStream {self.ctx}{' copy' if self.is_copy else ''} {id(self):#x}>"

    def record(self):
        event = FakeEvent(self, next(_sequence))
        self.calls.append(("record", event.seq, event))
        return event

    def wait_event(self, event):
        self.calls.append(("wait_event", next(_sequence), event))

    def synchronize(self):
        self.syncs += 1
        self.calls.append(("synchronize", next(_sequence), None))

    def __enter__(self):
        stack = getattr(_current, "stack", None)
        if stack is None:
            stack = _current.stack = []
        stack.append(self)
        return self

    def __exit__(self, *exc):
        _current.stack.pop()


# The stream protocol: what the engine calls on a stream that a ``stream_factory`` made.
STREAM_METHODS = {
    "record": "record() -> an event recorded after the work queued so far, whose "
              "synchronize() blocks the host until that work has run",
    "wait_event": "wait_event(event): work queued afterwards waits for the event",
    "synchronize": "synchronize(): block the host until all work queued so far has run",
}


def check_stream(stream, what):
    """Raise TypeError naming the methods of the stream protocol that ``stream`` (a stream, or
    the class of the streams) lacks; ``what`` says what it is, for the message."""
    missing = [name for name in STREAM_METHODS if not callable(getattr(stream, name, None))]
    if missing:
        raise TypeError(
            f"{what} lacks the stream method{'s' if len(missing) > 1 else ''} "
            f"{', '.join(missing)}; a stream needs " + "; ".join(STREAM_METHODS.values()))


def checked_stream_factory(factory, default):
    """``factory`` (None: ``default``) if it can make streams: a callable
    ``factory(ctx, is_copy)`` returning a new stream for one worker on the GPU ``ctx``
    (``is_copy``: for a copy worker), called when that worker's pool starts. A class is
    checked here, at the engine's creation; any other factory's streams as it makes them
    (``check_stream``: TypeError at the push that started the pool, before any op used it)."""
    if factory is None:
        return default
    if not callable(factory):
        raise TypeError(f"stream_factory must be a callable (ctx, is_copy) -> stream, "
                        f"got {factory!r}")
    if isinstance(factory, type):
        check_stream(factory, f"stream_factory {factory.__name__} (a class: its instances "
                              "are the streams)")
    return factory


def stream_factory(ctx, is_copy):
    """A stream for one worker on ``ctx`` (MXNet gives each GPU worker its own): a CuPy
    non-blocking stream on a real GPU, a `FakeStream` on a fake one."""
    check(ctx)
    if is_fake(ctx):
        return FakeStream(ctx, is_copy)
    import cupy
    try:
        with cupy.cuda.Device(ctx.device_id):
            return cupy.cuda.Stream(non_blocking=True)
    except Exception as exc:
        raise RuntimeError(f"cannot use {ctx}: {exc}") from exc


def current_stream(ctx):
    """The stream the calling thread works on for ``ctx`` (inside a GPU op: its worker's)."""
    if is_fake(ctx):
        stack = getattr(_current, "stack", None)
        return stack[-1] if stack else None
    import cupy
    return cupy.cuda.get_current_stream()


# ---------------------------------------------------------------- the ordering rules
class DeviceSync:
    """See the module docstring."""

    __slots__ = ("stream", "event", "readers")

    def __init__(self, stream, event):
        self.stream = stream
        self.event = event
        self.readers = {}


_readers_lock = threading.Lock()


def order_on(stream, reads, writes):
    """Before a GPU op on ``stream``: wait on the events it must follow (module docstring)."""
    for var in reads:
        sync = var.device_sync
        if sync is not None and sync.event is not None and sync.stream is not stream:
            stream.wait_event(sync.event)
    for var in writes:
        sync = var.device_sync
        if sync is not None:
            if sync.event is not None and sync.stream is not stream:
                stream.wait_event(sync.event)
            for reader, event in list(sync.readers.items()):
                if reader is not stream:
                    stream.wait_event(event)


def record_on(stream, reads, writes):
    """After a GPU op on ``stream``: tag what it read and wrote with one new event."""
    event = stream.record()
    if reads:
        with _readers_lock:
            for var in reads:
                sync = var.device_sync
                if sync is None:
                    sync = var.device_sync = DeviceSync(None, None)
                sync.readers[stream] = event
    for var in writes:
        var.device_sync = DeviceSync(stream, event)
    return event


def sync_host(reads, writes, clear=True):
    """Before a host op or after a wait: synchronise, on the host, the GPU work on these vars
    (the last write of each; for written vars, the reads since it too). ``clear``: the host
    op writes ``writes`` next, which leaves nothing on them to wait for."""
    for var in reads:
        sync = var.device_sync
        if sync is not None and sync.event is not None:
            sync.event.synchronize()
    for var in writes:
        sync = var.device_sync
        if sync is not None:
            if sync.event is not None:
                sync.event.synchronize()
            for event in list(sync.readers.values()):
                event.synchronize()
            if clear:
                var.device_sync = None


def synchronize(stream):
    """Block the host until the work queued on ``stream`` has run (a stream without
    ``synchronize`` has nothing to wait for)."""
    sync = getattr(stream, "synchronize", None)
    if sync is not None:
        sync()


def order_before(stream, reads, writes, streams):
    """Before an op runs: on a GPU ``stream``, wait on the events it must follow; on the host
    (``stream`` None), synchronise the GPU work on its vars, once the engine made GPU streams
    at all (``streams``, its list of them: while it is empty there is nothing to wait for)."""
    if stream is not None:
        order_on(stream, reads, writes)
    elif streams:
        sync_host(reads, writes)


def after_gpu_op(stream, reads, writes, wait):
    """After a GPU op's function returned: its work is queued on ``stream``. Tag its vars with
    an event and go on (the threaded engines), or, with ``wait`` (the NaiveEngine, whose op
    errors raise at the push), wait for the stream."""
    if wait:
        synchronize(stream)
    else:
        record_on(stream, reads, writes)
