"""NumPy's floating-point error state (``np.errstate``, ``np.seterr``, ``np.seterrcall``) per op:
read at the push, applied where the op runs, its reports surfaced at the wait.

At the push. `state_at_push` reads NumPy's error-state context variable (one get) and maps
the state object found there to an `FPState`, memoised per state object (and per distinct
content, so that a loop entering ``np.errstate`` anew each time makes one FPState).

Where the op runs (any thread). The op's function runs with its FPState's ``run_state`` set
in NumPy's context variable (the run objects of pipeline.py, segment.py and lazy_run.py set it
once for a run of ops under the same state): a category the user set to 'ignore' or 'raise'
stays so ('raise': the op fails with FloatingPointError, stored and raised at the wait like any
op error, with the op's name and the user's line); 'warn', 'call', 'print' and 'log' become
'log' into `_COLLECTOR`, which keeps NumPy's message with the thread that ran the op
(``MESSAGES``). After each op, a non-empty ``MESSAGES`` makes `collect` turn this thread's
messages into one `_Report` per message, kept with the vars the op writes (``KEPT``) and in
``_unseen``, in the order the ops ran.

At the wait. `surface_for(var)` (``wait_to_read``, ``asnumpy`` and every value read built on
them) and `surface_all` (``waitall``, interpreter exit) hand each report to the user once, as
NumPy would have at the call:
    'warn'   RuntimeWarning with NumPy's message, ``warnings.warn_explicit`` at the user's
             line that pushed the op (so ``-W error`` and warning filters apply as there);
    'call'   the callable set by ``np.seterrcall`` (captured at the push) called as NumPy calls
             it: (error name, the flags of every error the op raised);
    'print'  NumPy's line, printed to stdout;
    'log'    NumPy's line, written to the log object set by ``np.seterrcall``.
An op that reads an array whose reports were not surfaced yet passes them on to the arrays it
writes (``inherit``), so a wait on a result surfaces the reports of the ops it came from, and
only those: a report never surfaces at a wait on an unrelated array.

Compiled loops report through the same state (ops/runtime/fp_status.py: they return the processor's
flags, reported as NumPy's loop of the op would); a fused window's generated Numba kernel
returns the flags of the whole window, each error reported as raised by the window's first
op that can raise it (ops/fusion/fp_report.py). A lazy window runs its ops one by one when one of
them was pushed under a state that raises, or when its ops were pushed under different
states (lazy_run.py): each op then reports, or raises, at its own op.
"""
import atexit
import os
import sys
import threading
import warnings

from .. import engine as _engine_mod
from ..engine.errors import origin_location, running_origin, warn_at
from ..ops.runtime import fp_status as _status
from ..ops.fusion.fp_report import ufunc_name

__all__ = ["FPState", "state_at_push", "set_state", "reset_state", "collect", "inherit",
           "pending_ufuncs", "ufunc_name",
           "surface_for", "surface_all", "MESSAGES", "KEPT", "STATES", "get_state", "new_state",
           "DEFAULT"]

get_state, set_state, reset_state = (_status.current_state, _status.set_state,
                                     _status.reset_state)
_CATEGORIES = tuple(category for category, _, _ in _status.CATEGORIES)
_FLAGS = {error: flag for _, error, flag in _status.CATEGORIES}
_CATEGORY_OF = {error: category for category, error, _ in _status.CATEGORIES}
_STATES_LIMIT = 256
_PREFIX = _status.LOG_PREFIX
_SEPARATOR = " encountered in "
MESSAGES = _status.MESSAGES   # (thread ident, NumPy's message): messages of ops running now
_lock = threading.Lock()
KEPT = {}      # var -> [_Report]: reports not surfaced yet, with the vars that hold them
_unseen = {}      # _Report -> None: every report not surfaced yet, in order
_unseen_equal = {}  # _Report.key() -> the _Report not surfaced yet with that key


class FPState:
    """The error state an op was pushed under: ``modes`` (per category, as np.geterr),
    ``call`` (np.geterrcall's), and ``run_state``, NumPy's state object the op runs under."""

    __slots__ = ("modes", "call", "run_state")

    def __init__(self, modes, call):
        self.modes = modes
        self.call = call
        logged = "log" if "call" not in modes.values() else None
        run_modes = {}
        for category, mode in modes.items():
            if mode in ("ignore", "raise"):
                # 'call' reports every error the op raised in its flags: all are logged
                run_modes[category] = mode if mode == "raise" or logged else "log"
            else:
                run_modes[category] = "log"
        self.run_state = _status.make_state(call=_status.COLLECTOR, **run_modes)

    @property
    def raises(self):
        """Whether a category is set to 'raise'."""
        return "raise" in self.modes.values()


STATES = {}      # NumPy's state object -> FPState (memo)
_by_content = {}  # (modes, call) -> FPState
_last = [(None, None)]  # the last (NumPy's state object, FPState) `state_at_push` found


def state_at_push():
    """The FPState of this thread's current NumPy error state."""
    current = get_state()
    last = _last[0]  # (state object, FPState): the one a loop of ops pushes under, no hashing
    if last[0] is current:
        return last[1]
    state = STATES.get(current)
    if state is None:
        state = new_state()
    _last[0] = (current, state)  # one tuple: a thread reading it sees a consistent pair
    return state


def new_state():
    current = get_state()
    extobj = _status.state_dict()
    modes = {category: extobj[category] for category in _CATEGORIES}
    call = extobj.get("call")
    key = (tuple(modes.values()), id(call))
    state = _by_content.get(key)
    if state is None or state.call is not call:
        state = _by_content[key] = FPState(modes, call)
    if len(STATES) >= _STATES_LIMIT:
        STATES.clear()  # one state object per `with np.errstate(...)` entered: bounded here
    STATES[current] = state
    return state


DEFAULT = state_at_push()  # NumPy's default state, as this module found it at import


# ---------------------------------------------------------------- where the op runs
class _Report:
    __slots__ = ("state", "errors", "ufunc", "origin", "flags")

    def __init__(self, state, errors, ufunc, origin, flags):
        self.state = state
        self.errors = errors  # the error names, in NumPy's order ("divide by zero", ...)
        self.ufunc = ufunc
        self.origin = origin
        self.flags = flags

    def key(self):
        return (id(self.state), tuple(self.errors), self.ufunc, self.origin, self.flags)


def collect(state, targets, origin=None, origin_of=None):
    """After an op ran under ``state``: this thread's messages, if any, become reports kept
    with ``targets`` (the vars, chunks or arrays it writes). ``origin``: the op's push (None:
    the op running in this thread, `running_origin`). ``origin_of``: for a fused window, the
    origin of its op of a ufunc name, instead."""
    mine = _status.take_messages()
    if not mine:
        return
    if origin is None and origin_of is None:
        origin = running_origin()
    reports = _reports_of(state, mine, origin, origin_of)
    if not reports:
        return
    if _engine_mod.get().kind == "NaiveEngine":
        _surface(reports)  # the op runs at its push: its reports surface there, as its errors
    else:
        _keep(reports, [_var_of(target) for target in targets])


take_messages = _status.take_messages


def pending_ufuncs():
    """The ufunc names of this thread's messages not collected yet."""
    ident = threading.get_ident()
    names = []
    for owner, message in list(MESSAGES):
        if owner == ident:
            name = message.rstrip("\n").partition(_SEPARATOR)[2]
            if name not in names:
                names.append(name)
    return names


def _reports_of(state, messages, origin, origin_of=None):
    """One report per ufunc named in ``messages``, its errors in NumPy's order; categories
    logged only for 'call''s flags and set to 'ignore' are dropped."""
    by_ufunc = {}
    for message in messages:
        text = message[len(_PREFIX):].rstrip("\n") if message.startswith(_PREFIX) else message
        error, _, ufunc = text.partition(_SEPARATOR)
        errors = by_ufunc.setdefault(ufunc, [])
        if error not in errors:  # one report per error, however many blocks raised it
            errors.append(error)
    reports = []
    for ufunc, errors in by_ufunc.items():
        if origin_of is not None:
            origin = origin_of(ufunc)
        flags = 0
        for error in errors:
            flags |= _FLAGS.get(error, 0)
        shown = [e for e in errors if state.modes.get(_CATEGORY_OF.get(e)) != "ignore"]
        if shown:
            reports.append(_Report(state, shown, ufunc, origin, flags))
    return reports


def _var_of(target):
    """The var of an array or chunk (the chunk itself while it has none: a small array's var
    is made at its first use); None for a scalar operand."""
    chunk = getattr(target, "_chunk", None)
    if chunk is not None:
        target = chunk
    elif not hasattr(target, "var"):
        return None
    var = target.var
    return target if var is None else var


def _keep(reports, variables):
    """Keep ``reports`` with ``variables``; a report equal to one not surfaced yet (the same
    errors of the same ufunc, pushed at the same line under the same state: a loop) is that
    one, so that a loop's reports do not pile up."""
    with _lock:
        for i, report in enumerate(reports):
            report = reports[i] = _unseen_equal.setdefault(report.key(), report)
            _unseen[report] = None
        for var in variables:
            if var is not None:
                KEPT.setdefault(var, []).extend(reports)


def inherit(reads, writes):
    """An op read ``reads`` and wrote ``writes`` (vars, chunks or arrays): the reports still
    kept with what it read are kept with what it wrote too."""
    with _lock:
        inherited = []
        for target in reads:
            reports = KEPT.get(_var_of(target))
            if reports:
                inherited.extend(r for r in reports if r in _unseen)
        if not inherited:
            return
        for target in writes:
            var = _var_of(target)
            if var is None:
                continue
            held = KEPT.setdefault(var, [])
            held.extend(r for r in inherited if r not in held)


# ---------------------------------------------------------------- at the wait
def surface_for(chunk):
    """A wait on an array of ``chunk`` returned: surface the reports kept with its var (or
    with the chunk, kept while it had no var yet), each once."""
    with _lock:
        reports = KEPT.pop(chunk, None) or []
        var = chunk._var  # (None: no var was made; a wait makes none)
        if var is not None:
            reports += KEPT.pop(var, None) or []
        if not reports:
            return
        reports = [r for r in reports if _unseen.pop(r, 0) is None]
        for report in reports:
            _unseen_equal.pop(report.key(), None)
    _surface(reports)


def surface_all():
    """``waitall`` (and interpreter exit): surface every report not surfaced yet."""
    with _lock:
        reports = list(_unseen)
        _unseen.clear()
        _unseen_equal.clear()
        KEPT.clear()
    _surface(reports)


def _surface(reports):
    for report in reports:
        for error in report.errors:
            _surface_one(report, error)


def _surface_one(report, error):
    state = report.state
    mode = state.modes.get(_CATEGORY_OF.get(error), "warn")
    text = f"{error}{_SEPARATOR}{report.ufunc}"
    if mode == "call":
        call = state.call
        if call is not None:
            call(error, report.flags)
        return
    if mode == "log":
        if state.call is not None:
            state.call.write(f"{_PREFIX}{text}\n")
        return
    if mode == "print":
        print(f"{_PREFIX}{text}", file=sys.stdout)
        return
    if not warn_at(report.origin, text):
        warnings.warn(text, RuntimeWarning, stacklevel=4)


def _surface_at_exit():
    try:
        surface_all()
    except Exception:  # noqa: BLE001 - a warning made an error at exit: nothing to raise into
        pass


def _remake_lock_in_child():
    global _lock
    _lock = threading.Lock()


atexit.register(_surface_at_exit)
os.register_at_fork(after_in_child=_remake_lock_in_child)
