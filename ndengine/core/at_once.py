"""Which thread may run tiny ops at once: the ownership rule behind segment.py's ``run_now``.

A CPU op on small arrays none of which any pushed or gathered op touches still (their vars are
idle, no open window marks them) may run in the pushing thread at its call, with no var, no
window and no push: nothing pushed before it can be reordered with it, and nothing pushed after
it exists yet. That holds while one thread uses arrays. A second thread could push a write on
an array the moment the first thread's check found it idle, and the engine, which never saw the
op run at once, would let both run together. So ops run at once only in the one thread that has
used arrays so far, the *owner*; the first time another thread uses arrays (a push, a wait, a
value read: `note_thread`), ops stop running at once for good, and that thread first waits for
the op the owner may be running at once just then.

``NDENGINE_RUN_AT_ONCE`` (or ``ndengine.settings(run_at_once=False)``) turns it off: every
op on small arrays is then gathered, as before this existed (tests of gathering use it).

Why that is enough (every step runs under the GIL, which orders these reads and writes):
the owner sets ``_running`` and only then checks that it still owns (``begin``); the other
thread takes ownership away and only then checks ``_running`` (``_claim_or_leave``). Whichever
comes second sees the first: either the owner's check sees the ownership gone (its op is
gathered, after the other thread's), or the other thread sees the op running and waits for it
before it pushes, waits or reads anything.

State
    _enabled  [bool]: whether ops may run at once at all (`set_enabled`).
    _owner    [None | thread ident | MANY]: None until a thread uses arrays; the owner's ident;
              MANY once a second thread did (final, but in a forked child, which starts over).
    _running  [bool]: the owner runs an op at once now.
    _lock     makes the claims (None -> ident, ident -> MANY) one step each.
"""
import os
import threading
import time

from ..engine.config import env_bool

__all__ = ["note_thread", "begin", "end", "set_enabled", "enabled", "MANY"]

MANY = -1
_enabled = [env_bool("NDENGINE_RUN_AT_ONCE", True)]
_owner = [None]
_running = [False]
_lock = threading.Lock()
_get_ident = threading.get_ident


def note_thread():
    """This thread uses arrays: it becomes the owner if none is yet; if another thread is,
    ops stop running at once (after the one running now, if any)."""
    owner = _owner[0]
    if owner != MANY and owner != _get_ident():
        _claim_or_leave()


def _claim_or_leave():
    ident = _get_ident()
    with _lock:
        owner = _owner[0]
        if owner is None:
            _owner[0] = ident
            return
        if owner == ident or owner == MANY:
            return
        _owner[0] = MANY
    while _running[0]:  # the owner's op at once finishes before this thread goes on
        time.sleep(0)


def set_enabled(flag):
    """Let ops run at once (True) or gather them all (False); returns the previous value."""
    previous = _enabled[0]
    _enabled[0] = bool(flag)
    return previous


def enabled():
    return _enabled[0]


def begin():
    """Before an op runs at once: True if this thread may (then `end` must follow), False if
    the op must be gathered."""
    if not _enabled[0]:
        return False
    owner = _owner[0]
    ident = _get_ident()
    if owner != ident:
        if owner != MANY:
            note_thread()  # the first user claims it; a second thread ends it for good
        owner = _owner[0]
        if owner != ident:
            return False
    _running[0] = True
    if _owner[0] != owner:  # taken away meanwhile (see the module docstring)
        _running[0] = False
        return False
    return True


def end():
    _running[0] = False


def _start_over_in_child():
    # only the forking thread lives on: no op runs at once in it now, and it is the only user
    # (another thread may have held the lock at the fork)
    global _lock
    _lock = threading.Lock()
    _owner[0] = None
    _running[0] = False


os.register_at_fork(after_in_child=_start_over_in_child)
