"""What an op's failure looks like when it reaches the user, and where it came from.

* `Cancelled`: the error of an op dropped by ``cancel_pending`` (and of the ops that needed its
  results), raised at the next wait on its outputs.
* `ForkedWhilePending`: in a forked child, the error of a var whose write was still in flight in
  the parent at the fork (see threaded.py, "Fork").
* `interrupted`: the error stored on the outputs of an op cut short by Ctrl-C.
* `record_failure`: called once when an op fails, before its error is stored: replaces the
  traceback by a note holding it formatted (frames would keep the op's arrays, and every
  caller's locals, alive as long as the error), and adds the note "raised by NAME, pushed at
  FILE:LINE" when the push gave an origin.
* `caller_origin`: where the first frame outside the ndengine package is, for a push's
  ``origin=``: its code object and instruction offset, made (filename, line) only when an error
  is described (a frame's line number costs more than the rest of the walk); with
  NDENGINE_FULL_STACKS=1 (or true/yes/on), the whole formatted stack instead. Pass the function itself
  (``origin=caller_origin``): the engine calls it only when it must, in the pushing thread: at
  the push of an op that is queued, at the failure of one run at once (the tiny-op path and the
  NaiveEngine), so a tiny op that succeeds pays nothing.
* `running_origin`: from inside a running op, the origin of that op (its block's, or the
  pushing thread's user frame); `origin_location`: an origin as (filename, line), for a
  warning attributed to the user's line.
* `warn_at`: a warning attributed to an origin's line (the FP reports at the wait);
  `warn_at_caller`: to the user's line calling now (a warning NumPy gives at the call).
"""
import concurrent.futures
import os
import sys
import traceback
import warnings
from types import CodeType, FunctionType

from .config import env_bool

__all__ = ["Cancelled", "ForkedWhilePending", "interrupted", "record_failure", "caller_origin",
           "describe_origin", "resolve_origin", "running_origin", "origin_location",
           "warn_at", "warn_at_caller", "NOTE_PREFIX"]

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


def resolve_origin(origin):
    """A push's ``origin`` made concrete: a callable one is called (in the pushing thread)."""
    return origin() if callable(origin) else origin


def describe_origin(origin):
    """``origin`` (None, a string, (filename, line), (code, instruction offset), or a callable
    giving one) as text."""
    origin = resolve_origin(origin)
    if origin is None or isinstance(origin, str):
        return origin
    filename, line = origin_location(origin)
    return f"{filename}:{line}"


def _line_at(code, offset):
    """The source line of the instruction at byte ``offset`` in ``code`` (a frame's f_lasti)."""
    for start, end, line in code.co_lines():
        if start <= offset < end:
            return line
    return code.co_firstlineno


def record_failure(exc, name, origin, caught_here):
    """Prepare ``exc``, the error of a failed op, to be stored; returns the traceback to
    store with it (always None).

    A traceback keeps its frames, and each frame keeps its caller (``f_back``) with all its
    locals once it has finished: the op, its arrays, the worker's or the pushing thread's
    frames. So a stored error keeps no traceback: the op's traceback (``caught_here``: without
    the engine's own frames) becomes a note, formatted, as do those of the exceptions chained
    to it. Its type, message and identity are unchanged. Then the note naming the op and its
    push is added. Each note is added once per exception object."""
    notes = getattr(exc, "__notes__", None) or ()
    tb = exc.__traceback__
    if caught_here:
        while tb is not None and tb.tb_frame.f_code.co_filename.startswith(_ENGINE_DIR):
            tb = tb.tb_next
    if tb is not None:
        _add_note(exc, TRACEBACK_PREFIX + "".join(traceback.format_tb(tb)).rstrip())
    exc.__traceback__ = None
    _strip_chain(exc)
    if not any(isinstance(n, str) and n.startswith(NOTE_PREFIX) for n in notes):
        where = describe_origin(origin)
        if where is not None:
            label = name if isinstance(name, str) else getattr(name, "__name__", "an op")
            _add_note(exc, f"{NOTE_PREFIX}{label}, pushed at {where}")
    return None


TRACEBACK_PREFIX = "the op's traceback (most recent call last):\n"


def _add_note(exc, note):
    try:
        exc.add_note(note)
    except Exception:  # noqa: BLE001 - an exception class that refuses notes
        pass


def _strip_chain(exc):
    """The exceptions chained to exc keep their tracebacks as notes, not as frames."""
    seen = {id(exc)}
    chained = exc.__cause__ or exc.__context__
    while chained is not None and id(chained) not in seen and len(seen) < 16:
        seen.add(id(chained))
        if chained.__traceback__ is not None:
            _add_note(chained, TRACEBACK_PREFIX
                      + "".join(traceback.format_tb(chained.__traceback__)).rstrip())
            chained.__traceback__ = None
        chained = chained.__cause__ or chained.__context__


def running_origin():
    """From inside an op's function: the origin of the op running in this thread (for a
    report the op makes while it runs). A block run by ``Runner.execute`` (a worker, or a thread
    running queued blocks) has its origin resolved at its push; an op run at its push in the
    pushing thread has the user's frame above it. Walks frames: call it on a rare path only."""
    frame = _getframe(_OWN_FRAME)
    while frame is not None:
        code = frame.f_code
        if code.co_name == "execute" and code.co_filename == _EXECUTOR_FILE:
            block = frame.f_locals.get("block")
            return None if block is None else block.origin
        frame = frame.f_back
    return caller_origin(1)


def origin_location(origin):
    """(filename, line) of ``origin`` (see `describe_origin`), or None when it names none
    (no origin, or a whole formatted stack)."""
    origin = resolve_origin(origin)
    if origin is None or isinstance(origin, str):
        return None
    filename, line = origin
    if isinstance(filename, CodeType):
        filename, line = filename.co_filename, _line_at(filename, line)
    return filename, line


_EXECUTOR_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "running.py")


def _full_stack(frame):
    return "\n" + "".join(traceback.format_stack(frame)).rstrip()


_IN_PACKAGE = {}  # filename -> whether it is one of the package's (a lookup costs less)
_FULL_STACKS = env_bool("NDENGINE_FULL_STACKS", False)


def caller_origin(inside=0):
    """Where the user's code called into ndengine: (code, instruction offset) of the first
    frame outside the package (`describe_origin` makes it FILE:LINE). Never keeps the frame.
    ``inside``: how many frames, the caller's first, are known to be the package's: skipped
    without making frame objects of them, which costs most of the walk."""
    frame = _getframe(_OWN_FRAME + inside)
    while True:
        code = frame.f_code
        filename = code.co_filename
        in_package = _IN_PACKAGE.get(filename)
        if in_package is None:
            in_package = _IN_PACKAGE[filename] = filename.startswith(_PACKAGE_DIR)
        if not in_package:
            break
        frame = frame.f_back
        if frame is None:
            return None
    if _FULL_STACKS:
        return _full_stack(frame)
    return code, frame.f_lasti


_REGISTRIES = {}  # filename -> warnings registry (the "default" action: once per location)


def warn_at(origin, message, category=RuntimeWarning):
    """Warn as from the user's line ``origin`` (`caller_origin`'s), with
    ``warnings.warn_explicit``: filters, ``-W error`` and "once per location" apply as they
    would there. False when ``origin`` names no line (the caller warns otherwise)."""
    location = origin_location(origin)
    if location is None:
        return False
    filename, line = location
    warnings.warn_explicit(message, category, filename, line,
                           registry=_REGISTRIES.setdefault(filename, {}))
    return True


def warn_at_caller(message, category=RuntimeWarning):
    """Warn as NumPy does at a call, at the user's line that called into ndengine (a warning
    NumPy gives at the call itself, not about the values: "Mean of empty slice")."""
    if not warn_at(caller_origin(), message, category):
        warnings.warn(message, category, stacklevel=2)


# This module is part of the compiled core (compiled.py): compiled, its functions push no
# frame, so the caller's frame is _getframe(0); interpreted, _getframe(1)
_OWN_FRAME = 1 if isinstance(caller_origin, FunctionType) else 0
