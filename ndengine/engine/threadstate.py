"""What the engine keeps per thread (``tls``), field by field
    executor   the `Executor` whose ops this thread is running (a worker all its life, a
               pushing thread while it runs a block inline), else None: a wait from inside an
               op is caught (``Executor.in_op``) and a nested push skips back-pressure.
    pusher     this thread's `Pusher` (made at its first push): the count of the blocks it
               pushed that are still pending, so that a fork waits for the forking thread's
               own blocks only (lifecycle.py).
Both are reset in a forked child (the executor's ``after_fork_in_child``).
"""
import threading

__all__ = ["tls", "Pusher", "this_pusher"]


class _ThreadState(threading.local):
    executor = None  # class defaults: a missing attribute on a local costs an exception
    pusher = None


tls = _ThreadState()


class Pusher:
    """``pending``: blocks this thread pushed and not finished (under the engine lock)."""

    __slots__ = ("pending",)

    def __init__(self):
        self.pending = 0


def this_pusher():
    pusher = tls.pusher
    if pusher is None:
        pusher = tls.pusher = Pusher()
    return pusher
