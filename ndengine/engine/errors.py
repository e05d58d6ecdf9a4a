"""What an op's failure looks like when it reaches the user, and where it came from.

* `Cancelled`: the error of an op dropped by ``cancel_pending`` (and of the ops that needed its
  results), raised at the next wait on its outputs.
* `ForkedWhilePending`: in a forked child, the error of a var whose write was still in flight in
  the parent at the fork (see threaded.py, "Fork").
* `interrupted`: the error stored on the outputs of an op cut short by Ctrl-C.
* `record_failure`: called once when an op fails, before its error is stored: drops the
  engine's own frame from the traceback, clears the locals of the op's finished frames (so a
  kept error does not keep the op's arrays alive; file, line and function stay for printing),
  and adds the note "raised by NAME, pushed at FILE:LINE" when the push gave an origin.
* `caller_origin`: the (filename, line) of the first frame outside the ndengine package, for a
  push's ``origin=``; with NDENGINE_FULL_STACKS=1, the whole formatted stack instead.
"""
import concurrent.futures
import os
import sys
import traceback

__all__ = ["Cancelled", "ForkedWhilePending", "interrupted", "record_failure", "caller_origin",
           "describe_origin", "NOTE_PREFIX"]

NOTE_PREFIX = "raised by "
_ENGINE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_getframe = sys._getframe


class Cancelled(concurrent.futures.CancelledError):
    """The op was dropped by ``cancel_pending()`` before it started; its outputs hold no value.

    A subclass of concurrent.futures.CancelledError, the standard library's "this work was
    cancelled before it ran" (what Future.result() raises), and so an ordinary Exception:
    ``except Exception`` handlers see it, unlike asyncio's BaseException-based one."""


class ForkedWhilePending(RuntimeError):
    """In a forked child: a write to this var was in flight in the parent at the fork."""


def interrupted(interrupt):
    """The error stored on the outputs of an op stopped by Ctrl-C, and its traceback."""
    error = RuntimeError("this array's computation was interrupted (KeyboardInterrupt)")
    # A fresh KeyboardInterrupt as the cause: the user's one carries the pushing thread's
    # frames, which must not outlive the push in a stored error.
    error.__cause__ = type(interrupt)() if isinstance(interrupt, KeyboardInterrupt) else None
    return error, None


def describe_origin(origin):
    """``origin`` (None, a string, or (filename, line)) as text, or None."""
    if origin is None or isinstance(origin, str):
        return origin
    filename, line = origin
    return f"{filename}:{line}"


def record_failure(exc, name, origin, caught_here):
    """Prepare ``exc``, the error of a failed op, to be stored; returns its traceback.

    ``caught_here``: exc was caught by the engine around the op's function, so the first
    traceback entry is the engine's own frame, still running: it is dropped (it would keep the
    op, and so its arrays, alive); the op's frames below it have finished: their locals are
    cleared. The note naming the op is added once per exception object."""
    tb = exc.__traceback__
    if caught_here:  # idempotent: only the engine's frames are dropped
        while tb is not None and tb.tb_frame.f_code.co_filename.startswith(_ENGINE_DIR):
            tb = tb.tb_next
        exc.__traceback__ = tb
    _clear_chain(exc)
    where = describe_origin(origin)
    if where is not None:
        notes = getattr(exc, "__notes__", None)
        if not notes or not any(isinstance(n, str) and n.startswith(NOTE_PREFIX)
                                for n in notes):
            label = name if isinstance(name, str) else getattr(name, "__name__", "an op")
            try:
                exc.add_note(f"{NOTE_PREFIX}{label}, pushed at {where}")
            except Exception:  # noqa: BLE001 - an exception class that refuses notes
                pass
    return tb


def _clear_chain(exc):
    seen = set()
    while exc is not None and id(exc) not in seen and len(seen) < 16:
        seen.add(id(exc))
        if exc.__traceback__ is not None:
            traceback.clear_frames(exc.__traceback__)  # skips frames still running
        exc = exc.__cause__ or exc.__context__


def _full_stack(frame):
    return "\n" + "".join(traceback.format_stack(frame)).rstrip()


_FULL_STACKS = os.environ.get("NDENGINE_FULL_STACKS", "") not in ("", "0")


def caller_origin():
    """Where the user's code called into ndengine: (filename, line) of the first frame
    outside the package, above the caller of this function. Never keeps the frame."""
    frame = _getframe(2)
    while frame is not None:
        code = frame.f_code
        if not code.co_filename.startswith(_PACKAGE_DIR):
            if _FULL_STACKS:
                return _full_stack(frame)
            return code.co_filename, frame.f_lineno
        frame = frame.f_back
    return None
