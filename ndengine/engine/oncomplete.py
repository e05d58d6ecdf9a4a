"""How an async op ends: the ``on_complete`` the executor hands its function, and what happens
when the function raises instead. An async op holds its vars until ``on_complete`` is called,
from any thread; its block completes then (``Executor.complete`` with ``claim``, which sets the
block's ``waiter`` so that a second call raises).

`OnComplete`, field by field (set once, at the op's start)
    runner       the `Runner` that ran the op's function (running.py): its ``report_block``,
                 ``complete``, ``lock`` and ``failures`` are all this module uses.
    block        the op's block.
    hook, start  the run hook in effect when the op started and its start stamp (hook None: no
                 report).
    raised       the error comes from the engine's own catch around the op's function, not
                 from the op: its note says "raised by" (errors.py).
"""
from .errors import record_failure

__all__ = ["OnComplete", "async_raised"]


class OnComplete:
    """The on_complete handed to an async fn: call it once, with an exception on failure."""

    __slots__ = ("runner", "block", "hook", "start", "raised")

    def __init__(self, runner, block, hook, start, raised=False):
        self.runner = runner
        self.block = block
        self.hook = hook
        self.start = start
        self.raised = raised  # the error was caught by the engine around the op's fn

    def __call__(self, error=None):
        runner, block = self.runner, self.block
        if block.waiter is not None:
            raise RuntimeError(f"on_complete of {block!r} was called twice")
        if error is not None and not isinstance(error, BaseException):
            error = RuntimeError(f"on_complete was called with a non-exception: {error!r}")
        if self.hook is not None:
            runner.report_block(self.hook, block, self.start, error is not None)
        traceback = None
        if error is not None:
            traceback = record_failure(error, block.name or block.fn, block.origin,
                                       self.raised)
        runner.complete(block, error, traceback, block.seq, error is not None, None, block,
                        claim=True)


def async_raised(runner, block, exc, hook, start):
    """An async fn raised: that is its failure, unless it had already called on_complete,
    in which case the error is kept for wait_for_all rather than lost."""
    with runner.lock:
        done = block.waiter is not None
        if done:
            runner.failures.errors.append((exc, record_failure(
                exc, block.name or block.fn, block.origin, True)))
    if not done:
        OnComplete(runner, block, hook, start, True)(exc)
