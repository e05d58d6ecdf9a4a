"""Where an operation runs (`Context`), what the worker hands it (`RunContext`), and how the
engine should treat it (`FnProperty`)."""
import enum
import functools
import threading

__all__ = ["Context", "cpu", "gpu", "current_context", "set_default_context", "RunContext",
           "FnProperty"]


@functools.total_ordering
class Context:
    """A device: ``cpu(0)``, ``gpu(1)``. Hashable and comparable, so it keys pools and dicts.

    Contexts are interned (``cpu(0) is cpu(0)``): the engine looks pools up by context on every
    push, and identity hashing keeps that lookup in C.

    ``with ndengine.cpu(1): ...`` makes it the default context of the block (per thread).
    """

    __slots__ = ("device_type", "device_id", "__weakref__")
    _DEVICE_TYPES = ("cpu", "gpu")
    _interned = {}
    _stack = None  # a _ContextStack (below): this thread's ``with ctx:`` blocks

    def __new__(cls, device_type, device_id=0):
        if isinstance(device_type, Context):
            return device_type
        key = (device_type, device_id)
        ctx = cls._interned.get(key) if type(device_id) is int else None
        if ctx is not None:
            return ctx
        if device_type not in cls._DEVICE_TYPES:
            raise ValueError(f"unknown device type {device_type!r}; expected 'cpu' or 'gpu'")
        if not isinstance(device_id, int) or isinstance(device_id, bool) or device_id < 0:
            raise ValueError(f"device_id must be a non-negative int, got {device_id!r}")
        ctx = object.__new__(cls)
        ctx.device_type = device_type
        ctx.device_id = device_id
        return cls._interned.setdefault(key, ctx)

    def __lt__(self, other):
        if not isinstance(other, Context):
            return NotImplemented
        return (self.device_type, self.device_id) < (other.device_type, other.device_id)

    def __repr__(self):
        return f"{self.device_type}({self.device_id})"

    def __setattr__(self, name, value):
        if name in ("device_type", "device_id") and hasattr(self, name):
            raise AttributeError("a Context is immutable (contexts are shared)")
        object.__setattr__(self, name, value)

    def __reduce__(self):
        return (Context, (self.device_type, self.device_id))

    def __enter__(self):
        stack = Context._stack.items
        if not stack:  # (the class's empty tuple: this thread's first block)
            stack = Context._stack.items = []
        stack.append(self)
        return self

    def __exit__(self, *exc):
        Context._stack.items.pop()


def cpu(device_id=0):
    """The CPU context (MXNet's ``mx.cpu()``): where arrays live and ops run,
    ``nd.zeros(3, ctx=nd.cpu())``; ``device_id`` names a worker pool of its own."""
    return Context("cpu", device_id)


def gpu(device_id=0):
    """The context of GPU ``device_id`` (MXNet's ``mx.gpu(i)``): arrays made there live in its
    memory (through CuPy) and their ops run on its streams."""
    return Context("gpu", device_id)


class _ContextStack(threading.local):
    """Per thread, the contexts of the ``with ctx:`` blocks it is in, innermost last; a
    thread that never entered one reads the class's empty tuple (no AttributeError raised
    and caught inside ``getattr`` at every op that asks for the current context)."""
    items = ()


Context._stack = _ContextStack()
_DEFAULT = [Context("cpu", 0)]  # the process's default; set_default_context changes it


def current_context():
    """The innermost ``with ctx:`` of this thread, else the process's default context
    (``cpu(0)`` unless ``set_default_context`` chose another)."""
    stack = Context._stack.items
    return stack[-1] if stack else _DEFAULT[0]


def set_default_context(ctx):
    """Make ``ctx`` the context of every thread outside a ``with ctx:`` block (MXNet's
    ``test_utils.set_default_context``: the same script, or test suite, on a GPU). Returns
    the previous default."""
    if not isinstance(ctx, Context):
        raise TypeError(f"ctx must be a Context such as cpu(0) or gpu(0), got {ctx!r}")
    previous, _DEFAULT[0] = _DEFAULT[0], ctx
    return previous


class RunContext:
    """Handed to every op when it runs: the context and the worker's stream (None on the CPU)."""

    __slots__ = ("ctx", "stream")

    def __init__(self, ctx, stream=None):
        self.ctx = ctx
        self.stream = stream

    def __repr__(self):
        return f"RunContext(ctx={self.ctx!r}, stream={self.stream!r})"


class FnProperty(enum.IntEnum):
    """How the engine places an op (MXNet's FnProperty)."""

    NORMAL = 0
    COPY_FROM_GPU = 1  # runs on the GPU's copy pool
    COPY_TO_GPU = 2  # runs on the GPU's copy pool
    CPU_PRIORITIZED = 3  # runs on the pool shared by all CPU devices
    ASYNC = 4  # runs in the pushing thread when ready at push time
