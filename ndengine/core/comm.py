"""Communication ops: asynchronous engine ops whose work finishes elsewhere (a remote server, a
network library's callback), for ndengine.kv.

`push_transfer` pushes ONE async engine op (``push_async``) that reads some CPU arrays and
writes others. When it runs, its function gets NumPy views of the arrays it reads and a
``deliver`` callback; the op is over when ``deliver`` is called, from any thread (a dask event
loop's, typically). Until then the engine keeps the arrays' vars: nothing writes what is being
sent, and nothing reads what is still to be received, so communication overlaps whatever
computation does not touch those arrays, and a wait on a received array waits for the transfer
and raises its error.

`Link` is an ordering token: every op pushed with the same link writes its var, so those ops
run one after another in push order (MXNet's per-key communication buffer var), even when they
share no array.

Link, field by field
    _var       the engine var the ops pushed with the link write; handed to the engine's
               ``delete_variable`` when the link dies (after every op pushed on it).

The pending op of a transfer holds the arrays it reads and writes (its closure), so their
memory lives until ``deliver`` ran.
"""
import numpy as np

from .. import engine as _engine_mod
from ..engine import FnProperty, cpu
from . import segment as _segment
from .array import NDArray

__all__ = ["Link", "push_transfer"]


class Link:
    """An ordering token for `push_transfer`: the ops pushed with one link run in push order."""

    __slots__ = ("_var", "__weakref__")

    def __init__(self):
        self._var = _engine_mod.get().new_variable()

    def __del__(self):
        try:
            _engine_mod.get().delete_variable(_nothing, cpu(), self._var)
        except BaseException:  # noqa: B902 - at interpreter exit the engine may be gone
            pass


def _nothing(run_ctx):
    pass


def push_transfer(fn, reads=(), writes=(), links=(), priority=0, name="transfer"):
    """Push an async op that reads the CPU NDArrays ``reads`` and writes the CPU NDArrays
    ``writes`` (and the vars of ``links``, `Link` objects: it runs after every op pushed
    earlier with one of them); returns at once.

    When the op runs: ``fn(inputs, deliver)``, with ``inputs`` NumPy views of ``reads`` (valid,
    and not written by anyone, until ``deliver`` is called). ``deliver(outputs=None,
    error=None)``, called once from any thread, finishes the op: ``outputs`` (one array-like
    per target, cast as ``copyto`` casts) are copied into ``writes``; ``error`` (an exception)
    fails the op instead, and every array it writes raises it at its next wait. An exception
    raised by ``fn`` itself, or by the copy, fails the op the same way.
    """
    for x in (*reads, *writes):
        if not isinstance(x, NDArray):
            raise TypeError(f"{name}: expected NDArrays, got {type(x).__name__}")
        if x.context.device_type != "cpu":
            raise ValueError(f"{name}: communication arrays must be on the CPU, got one on "
                             f"{x.context} (copy it with .as_in_context(cpu()) first)")
    reads, writes = list(reads), list(writes)
    # Gathered or lazily recorded ops on these arrays reach the engine before this op.
    _segment.flush_before(reads, writes)
    read_vars = [x._chunk.var for x in reads]
    write_vars = [x._chunk.var for x in writes]
    # A target that is also a source is written, not overwritten: the engine counts a var in
    # both lists as a write, and the send has finished reading it before a reply can land.
    overwrites = [v for v in write_vars if not any(v is r for r in read_vars)]
    write_vars.extend(link._var for link in links)

    def run(run_ctx, on_complete):
        finished = []

        def deliver(outputs=None, error=None):
            if finished:  # a second call would complete the op twice
                return
            finished.append(True)
            if error is None and writes:
                try:
                    if outputs is None or len(outputs) != len(writes):
                        raise RuntimeError(f"{name}: expected {len(writes)} received values")
                    for target, values in zip(writes, outputs):
                        np.copyto(target._data(), values, casting="unsafe")
                except BaseException as exc:  # noqa: B902 - the op's failure, not ours
                    error = exc
            on_complete(error)

        try:
            fn([x._data() for x in reads], deliver)
        except BaseException as exc:  # noqa: B902 - fails the op and its targets
            if finished:
                raise
            finished.append(True)
            on_complete(exc)

    _engine_mod.get().push_async(run, cpu(), read_vars, write_vars, FnProperty.ASYNC,
                                 priority, name, None, _engine_mod.caller_origin,
                                 overwrites)
