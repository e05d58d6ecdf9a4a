"""Bad inputs: every odd argument of tests/support/bad_input_cases.py gets NumPy's error class at the
call (ndengine's may be a subclass of it), or, where NumPy gives a value, the same value,
shape and dtype; under each of the three engines.

Error classes are compared at NumPy's public level: a private NumPy class (UFuncTypeError)
counts as its first public base (TypeError); public ones (AxisError, DTypePromotionError)
must be matched.

The documented differences below are accepted, and only these:
- NumPy succeeds with a dtype ndengine does not have (complex, float16, strings, objects):
  ndengine raises TypeError ("ndengine does not support dtype ...") at the call.
- ``out=`` a NumPy array: ndengine writes only into NDArrays, and raises TypeError at the
  call whatever NumPy does with it.
- Several bad arguments at once: NumPy and ndengine may check them in another order. Both
  must raise at the call, and ndengine's error must be the one NumPy raises for some of
  those arguments without the others (at their defaults; each alone is matched exactly by
  test_each_bad_argument_alone).
- An operand NumPy takes as an object, string or complex array (None, 1j) where ndengine
  needs numbers: ndengine raises TypeError ("unsupported operand type").
- ``random.randint`` with bounds whose shape does not broadcast to ``shape``: ndengine raises
  ValueError as its uniform and normal do (and NumPy's uniform and normal); NumPy's
  Generator.integers returns numbers for some such sizes.
- NumPy cannot allocate (MemoryError): ndengine takes memory when the op runs, so its
  MemoryError may come at the wait (ndengine's delayed allocation, as MXNet's).
- An integer index array given as an NDArray is read when the op runs (``x[idx]`` does not
  wait), so an index out of bounds raises NumPy's IndexError at the wait.

The number of bad inputs tried is printed at the end of the module (``pytest -s``):
"bad inputs tried: N, mismatches M".
"""
import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bad_input_cases as cases
import ndengine as nd
from ndengine.ops.dtypes import SUPPORTED_DTYPES

pytestmark = pytest.mark.usefixtures("nd_engine")

TRIED = {}  # entry -> bad inputs tried (one per case per engine)
MISMATCHES = []


@pytest.fixture(scope="module", autouse=True)
def _report():
    yield
    print(f"\nbad inputs tried: {sum(TRIED.values())}, mismatches {len(MISMATCHES)} "
          f"(per entry point: {dict(sorted(TRIED.items()))})")


def _numpy_value(value):
    if isinstance(value, (list, tuple)):
        return type(value)(_numpy_value(v) for v in value)
    if isinstance(value, (np.ndarray, np.generic)):
        return ("array", np.array(value, copy=True))
    return ("scalar", type(value), value)


def _nd_value(value):
    if isinstance(value, (list, tuple)):
        return type(value)(_nd_value(v) for v in value)
    if isinstance(value, nd.NDArray):
        return ("array", value.asnumpy())
    if isinstance(value, np.ndarray):
        return ("foreign NumPy array", value)
    if isinstance(value, np.generic):
        return ("array", np.asarray(value))
    return ("scalar", type(value), value)


def _outcome(case, xp):
    """("ok", value), ("raised", exc) at the call, or ("late", exc) at the wait after it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = case.body(xp)
        except Exception as exc:  # noqa: BLE001 - compared below
            if xp is nd:
                try:
                    nd.waitall()
                except Exception as late:  # noqa: BLE001
                    return "late", late  # something was pushed and failed besides
            return "raised", exc
        if xp is np:
            return "ok", _numpy_value(result)
        try:
            value = _nd_value(result)
            nd.waitall()
        except Exception as exc:  # noqa: BLE001
            return "late", exc
        return "ok", value


def _same(expected, got, compare):
    if isinstance(expected, (list, tuple)) and expected[:1] not in (("array",), ("scalar",)):
        if not isinstance(got, type(expected)) or len(got) != len(expected):
            return f"{type(got).__name__} of {len(got) if hasattr(got, '__len__') else '?'}" \
                   f" != NumPy's {type(expected).__name__} of {len(expected)}"
        return next((p for p in (_same(e, g, compare) for e, g in zip(expected, got)) if p), "")
    if got[0] != expected[0]:
        return f"{got[0]} != NumPy's {expected[0]} ({got!r} vs {expected!r})"
    if expected[0] == "scalar":
        if got[1] is not expected[1]:
            return f"{got[1].__name__} != NumPy's {expected[1].__name__}"
        same = got[2] == expected[2] or (got[2] != got[2] and expected[2] != expected[2])
        return "" if same else f"{got[2]!r} != NumPy's {expected[2]!r}"
    want, have = expected[1], got[1]
    if have.shape != want.shape or have.dtype != want.dtype:
        return f"{have.shape} {have.dtype} != NumPy's {want.shape} {want.dtype}"
    if compare == "values" and not np.array_equal(have, want, equal_nan=want.dtype.kind in "fc"):
        return f"values {have!r} != NumPy's {want!r}"
    return ""


_PUBLIC = {getattr(np.exceptions, name) for name in dir(np.exceptions)
           if isinstance(getattr(np.exceptions, name), type)}


def public_class(exc):
    """NumPy's error class as users may name it: private classes count as their base."""
    for cls in type(exc).__mro__:
        if cls in _PUBLIC or cls.__module__ == "builtins":
            return cls
    return Exception


def _dtypes(value):
    if isinstance(value, (list, tuple)) and value[:1] not in (("array",), ("scalar",)):
        return [d for v in value for d in _dtypes(v)]
    return [value[1].dtype] if value[0] == "array" else []


def _documented(case, got, numpy_value):
    """ndengine's TypeError for a documented difference (see the module docstring)."""
    text = str(got)
    if case.entry == "randint" and isinstance(got, ValueError) and "shape mismatch" in text:
        return True  # NumPy's integers quirk: bounds not broadcastable to the size
    if not isinstance(got, TypeError):
        return False
    if "ndengine does not support dtype" in text:
        return True  # the dtype was a valid NumPy one (else: "does not understand")
    if numpy_value is not None and any(d not in SUPPORTED_DTYPES for d in _dtypes(numpy_value)):
        return True  # NumPy's result has a dtype ndengine does not have (a complex operand)
    if "unsupported operand type" in text and any(
            np.asarray(v).dtype not in SUPPORTED_DTYPES for v in case.args.values()
            if not isinstance(v, (cases.A, cases.AK, str)) and v is not cases.OMIT):
        return True  # an operand NumPy takes as an object, string or complex array
    out = case.args.get("out")
    return "out=ndarray is not supported" in text and isinstance(out, cases.A) and out.foreign


def _error_of_fewer_arguments(case, got):
    """Whether ``got`` is what NumPy raises for some of the case's arguments without the
    others (those at their defaults)."""
    defaults = cases.ENTRIES[case.entry]["defaults"]
    changed = [name for name, value in case.args.items() if value is not defaults[name]]
    for size in range(1, len(changed)):
        for names in itertools.combinations(changed, size):
            fewer = cases.make_case(case.entry, dict(defaults, **{n: case.args[n] for n in names}))
            kind, want = _outcome(fewer, np)
            if kind == "raised" and isinstance(got, public_class(want)):
                return True
    return False


def mismatch(case, combined=False):
    """'' when ndengine does what NumPy does with the case, else what differs; ``combined``:
    several arguments may be bad at once (see the module docstring)."""
    (want_kind, want), (got_kind, got) = _outcome(case, np), _outcome(case, nd)
    if got_kind == "raised" and _documented(case, got, want if want_kind == "ok" else None):
        return ""
    if want_kind == "raised":
        if got_kind == "raised" and isinstance(got, public_class(want)):
            return ""
        if isinstance(want, MemoryError) and isinstance(got, MemoryError):
            return ""  # documented: memory is taken when the op runs
        if got_kind == "late" and isinstance(got, public_class(want)) and any(
                isinstance(v, cases.AK) for v in case.args.values()):
            return ""  # documented: an NDArray index array is read when the op runs
        if combined and got_kind == "raised" and _error_of_fewer_arguments(case, got):
            return ""  # documented: another of the bad arguments reported first
        return f"NumPy raised {type(want).__name__}({want}); ndengine: " + (
            f"{got_kind} {type(got).__name__}({got})" if got_kind != "ok" else f"gave {got!r}")
    if got_kind == "ok":
        return _same(want, got, case.compare)
    return f"NumPy gave {want!r}; ndengine {got_kind} {type(got).__name__}({got})"


def check(cases_, combined=False):
    problems = []
    for case in cases_:
        TRIED[case.entry] = TRIED.get(case.entry, 0) + 1
        problem = mismatch(case, combined)
        if problem:
            MISMATCHES.append(case)
            problems.append(f"{case!r}: {problem}")
    assert not problems, f"{len(problems)} mismatches:\n" + "\n".join(problems)


@pytest.mark.parametrize("entry", sorted(cases.ENTRIES))
def test_each_bad_argument_alone(entry):
    check(cases.one_at_a_time(entry))


def test_known_bad_inputs():
    check(cases.make_case(entry, args) for entry, args in cases.KNOWN)


@pytest.mark.parametrize("entry", sorted(cases.ENTRIES))
@given(data=st.data())
def test_bad_argument_combinations(entry, data):
    check([data.draw(cases.strategy(entry), label="case")], combined=True)


@pytest.mark.slow
@pytest.mark.parametrize("entry", sorted(cases.ENTRIES))
@settings(max_examples=1500)
@given(data=st.data())
def test_bad_argument_combinations_thorough(entry, data):
    check([data.draw(cases.strategy(entry), label="case")], combined=True)
