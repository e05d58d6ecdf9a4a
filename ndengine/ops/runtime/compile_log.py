"""What the process spent compiling: one log record per compile, and one notice per process
once the total passes a second.

Every compile ndengine starts (a deferred Numba loop, a fused kernel) reports here through
``record``: the ``ndengine.compile`` logger gets an INFO record naming what was compiled and
how long it took (or a WARNING on ``ndengine.fallback`` when it failed and a slower path stands
in), and the seconds are added to the process's total. When the total first passes
``NOTICE_AFTER_SECONDS``, one `CompileTimeNotice` is raised through ``warnings``.

Why a warning and not only a log record: the library configures no logging (it adds a
``NullHandler`` to the ``ndengine`` logger, which also keeps Python's last-resort handler from
printing its WARNING records), so a record reaches only users who set logging up. A warning is
shown by default once, in scripts, notebooks and pytest's summary alike, and is silenced the
way every Python user knows: ``warnings.filterwarnings("ignore", category=CompileTimeNotice)``.
It is raised on the thread that compiled (the compile thread, mostly); where the filters turn
it into an error (``-W error``) it is logged instead: a notice must never fail a compile.

State, module-wide (under ``_lock``): ``_total`` seconds compiled, ``_compiles`` their count,
``_noticed`` whether the notice was given.
"""
from __future__ import annotations

import logging
import threading
import warnings

__all__ = ["CompileTimeNotice", "record", "totals", "NOTICE_AFTER_SECONDS"]

logger = logging.getLogger("ndengine.compile")
fallback_logger = logging.getLogger("ndengine.fallback")

NOTICE_AFTER_SECONDS = 1.0  # total compile time that earns the notice, once per process

_lock = threading.Lock()
_total = 0.0
_compiles = 0
_noticed = False


class CompileTimeNotice(UserWarning):
    """ndengine has spent more than about a second compiling in this process (once per process):
    the first calls of new (op, dtype) pairs pay for it; a second run loads them from disk."""


def record(what: str, seconds: float, error: BaseException | None = None,
           fallback: str | None = None) -> None:
    """Report one compile of ``what`` that took ``seconds``; ``error``: why it failed, and
    ``fallback``: what runs instead (logged on ``ndengine.fallback``)."""
    global _total, _compiles, _noticed
    if error is None:
        logger.info("compiled %s in %.3f s", what, seconds)
    else:
        fallback_logger.warning("compiling %s failed after %.3f s (%s: %s); %s", what, seconds,
                                type(error).__name__, error, fallback or "the call raises")
    with _lock:
        _total += seconds
        _compiles += 1
        due = not _noticed and _total > NOTICE_AFTER_SECONDS
        _noticed = _noticed or due
        total = _total
    if due:
        _notice(total)


def _notice(total: float) -> None:
    message = (f"ndengine has spent {total:.1f} s compiling Numba code in this process (each "
               "new op and dtype pair compiles once it is called often, in the background: "
               "NumPy's loop runs meanwhile). A second run "
               "loads them from the on-disk cache; a larger NDENGINE_JIT_AFTER compiles fewer "
               "loops of short scripts. The 'ndengine.compile' logger at INFO lists each "
               "compile; warnings.filterwarnings('ignore', category=ndengine.CompileTimeNotice) "
               "silences this notice.")
    try:  # placed at "ndengine", not at a line of this file: no user code called it
        warnings.warn_explicit(message, CompileTimeNotice, "ndengine", 0, module="ndengine")
    except Exception:  # noqa: BLE001 - filters made it an error: log it, never fail a compile
        logger.warning(message)


def totals() -> dict:
    """Seconds spent compiling in this process, how many compiles, whether noticed."""
    with _lock:
        return {"seconds": round(_total, 4), "compiles": _compiles, "noticed": _noticed}
