"""Floating-point error reports of the loops an op runs, made as NumPy's own loops make them.

NumPy's loops report through NumPy's error state (``np.errstate``), a context variable of the
thread that runs them: an op's run sets it (core/fp_errors.py: the state the op was pushed
under, 'warn'-like modes mapped to 'log' into `COLLECTOR`), and the loops here run under it,
never under a state of their own.

* NumPy's loops (``elementwise.runs``) report by themselves.
* Compiled loops (``elementwise/loops``: each loop clears the processor's FP status flags
  at its start and returns them at its end) return the flags raised; the caller hands set
  flags to `report` with the op's ufunc name, which reports them as NumPy's loop of that
  ufunc would under the current state: 'ignore', 'raise' (FloatingPointError), 'warn',
  'print', 'log', 'call'. Ops for which NumPy never reports (`reports_fp_errors`: max/min,
  comparisons, ...) ignore the flags: the processor raises 'invalid' for their NaN compares.
* A generated fused kernel (``fusion.codegen``) returns the flags of all its ops:
  ``fusion.fp_report`` reports each error under the first op that can raise it (`report_numpy`).
* Helper threads (parallel.HelperThreads) run a caller's chunk under the caller's state
  (`current_state`, `run_under`): their messages go to the caller (`hand_over`).

Module state
    MESSAGES   [(thread ident, NumPy's message)]: the messages NumPy (or `report`) wrote to
               `COLLECTOR` for ops running now; the op's run takes its thread's own
               (core/fp_errors.collect). Empty between ops.
"""
import os
import sys
import threading
import warnings

from numpy._core import umath as _umath

from .fp_flags import X86

__all__ = ["COLLECTOR", "MESSAGES", "take_messages", "report", "report_numpy", "numpy_flags",
           "reports_fp_errors", "current_state", "run_under", "hand_over", "make_state",
           "state_dict", "set_state", "reset_state"]

_context_var = _umath._extobj_contextvar
current_state = _context_var.get
set_state = _context_var.set
reset_state = _context_var.reset
make_state = _umath._make_extobj
state_dict = _umath._get_extobj_dict

# NumPy's categories in the order its loops report them: (category, error name, NumPy's flag)
CATEGORIES = (("divide", "divide by zero", 1), ("over", "overflow", 2),
              ("under", "underflow", 4), ("invalid", "invalid value", 8))
LOG_PREFIX = "Warning: "

# ufuncs whose NumPy loops never report FP errors although the processor's compares set
# 'invalid' on NaN (verified against NumPy under np.errstate(all="raise"))
_SILENT_UFUNCS = frozenset((
    "maximum", "minimum", "fmax", "fmin", "equal", "not_equal", "less", "less_equal",
    "greater", "greater_equal", "isnan", "isinf", "isfinite", "signbit", "sign", "where",
    "clip", "logical_not", "logical_and", "logical_or", "logical_xor", "copysign",
    "absolute", "negative", "positive", "relu", "floor", "ceil", "rint", "trunc", "fix",
    "hypot", "heaviside", "fabs", "conjugate", "spacing", "sigmoid"))


def reports_fp_errors(ufunc_name):
    """Whether NumPy's loop of ``ufunc_name`` reports FP errors (else its flags are ignored)."""
    return ufunc_name not in _SILENT_UFUNCS


class _Collector:
    """NumPy's 'log' target while ops run: keeps each message with the thread that ran it."""

    def write(self, message):
        with _lock:
            MESSAGES.append((_get_ident(), message))


_get_ident = threading.get_ident
_lock = threading.Lock()
COLLECTOR = _Collector()
MESSAGES = []


def _remake_lock_in_child():
    global _lock
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_remake_lock_in_child)


def take_messages():
    """This thread's messages (removed from MESSAGES), in the order they were written."""
    ident = _get_ident()
    with _lock:
        mine = [message for thread, message in MESSAGES if thread == ident]
        if mine:
            MESSAGES[:] = [entry for entry in MESSAGES if entry[0] != ident]
    return mine


def hand_over(owner):
    """This thread ran part of ``owner``'s op (a helper thread): its messages become the
    owner thread's."""
    ident = _get_ident()
    with _lock:
        for i, (thread, message) in enumerate(MESSAGES):
            if thread == ident:
                MESSAGES[i] = (owner, message)


def run_under(state, owner, fn, *args):
    """``fn(*args)`` in a helper thread under ``state``, NumPy's error state of ``owner``, the
    thread whose op it is part of."""
    token = set_state(state)
    try:
        fn(*args)
    finally:
        reset_state(token)
        if MESSAGES:
            hand_over(owner)


def report(flags, ufunc_name):
    """A compiled loop of ``ufunc_name`` returned the processor's FP status ``flags`` (set):
    report them as NumPy's loop would, under this thread's NumPy error state."""
    raised = numpy_flags(flags)
    if raised:
        report_numpy(raised, ufunc_name)


def report_numpy(raised, ufunc_name):
    """Report NumPy's error flags ``raised`` (set; `CATEGORIES`' bits) as NumPy's loop of
    ``ufunc_name`` would, under this thread's NumPy error state."""
    state = state_dict()
    for category, error, flag in CATEGORIES:
        if raised & flag:
            _report_one(state, category, f"{error} encountered in {ufunc_name}", error, raised)


def _report_one(state, category, text, error, raised):
    mode = state[category]
    if mode == "ignore":
        return
    if mode == "raise":
        raise FloatingPointError(text)
    if mode == "warn":
        warnings.warn(text, RuntimeWarning, stacklevel=5)
    elif mode == "print":
        print(f"{LOG_PREFIX}{text}", file=sys.stdout)
    elif mode == "log":
        log = state["call"]
        if log is not None:
            log.write(f"{LOG_PREFIX}{text}\n")
    elif mode == "call":
        call = state["call"]
        if call is not None:
            call(error, raised)


def _x86_flags():
    # MXCSR's exception bits (what ``fp_flags.fp_flags`` returns on x86)
    return {1: 8, 4: 1, 8: 2, 16: 4}   # invalid, divide, overflow, underflow -> NumPy's


def _libm_flags():
    # <fenv.h> on AArch64 (``fp_flags.fp_flags`` elsewhere)
    return {1: 8, 2: 1, 4: 2, 8: 4}


_FLAG_TABLE = tuple((_x86_flags() if X86 else _libm_flags()).items())


def numpy_flags(flags):
    """The processor's FP ``flags`` (``fp_flags``' bits) as NumPy's error flags."""
    raised = 0
    for bit, numpy_flag in _FLAG_TABLE:
        if flags & bit:
            raised |= numpy_flag
    return raised
