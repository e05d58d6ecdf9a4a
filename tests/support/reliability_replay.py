"""Replaying a random program (reliability_helpers.py) on NumPy and ndengine in lockstep.

After every step (or only at the end) every live array is compared: shape, dtype and values
(exact; "observe" steps within a tolerance scaled to the values). A step must raise on both
or on neither, errors of the same kind; an input wrong in two ways may be reported by either
fault. ndengine raises bad input at the call; an error inside a kernel may come at the next
wait only for a step that makes a new array (NumPy's value-dependent errors, such as integer
to a negative power), never for a write into an existing one (NumPy leaves it unchanged).
"""

import numpy as np

import ndengine as nd
from ndengine.ops import EXTENDED_DTYPES

from reliability_helpers import ERROR_FAMILIES, Mismatch, NumpyArrays, count, namespace


def _close(expected, got):
    """Observed results: float values within a tolerance scaled to the values' size."""
    rtol = 1e-4 if got.dtype == np.float32 else 1e-9
    finite = np.abs(expected[np.isfinite(expected)]) if expected.size else np.zeros(0)
    atol = rtol * (1 + (finite.max() if finite.size else 0))
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)


def compare(expected, got, what, observed=False):
    expected = np.asarray(expected)
    if not isinstance(got, nd.NDArray):
        raise Mismatch(f"{what}: ndengine gave {type(got).__name__}, not an NDArray")
    try:
        values = got.asnumpy()
    except Exception as exc:  # noqa: BLE001
        raise Mismatch(f"{what}: NumPy has a value; waiting for ndengine's raised "
                       f"{type(exc).__name__}: {exc}") from None
    if values.shape != expected.shape:
        raise Mismatch(f"{what}: shape {values.shape} != NumPy's {expected.shape}")
    if values.dtype != expected.dtype:
        raise Mismatch(f"{what}: dtype {values.dtype} != NumPy's {expected.dtype}")
    try:
        # assert_array_equal calls nan+0j and nan+nanj equal: the parts are compared apart
        for exp_part, got_part in _parts(expected, values):
            if observed and got_part.dtype.kind == "f":
                _close(exp_part, got_part)
            else:
                np.testing.assert_array_equal(got_part, exp_part, strict=True)
                _same_signed_zeros(exp_part, got_part)
    except AssertionError as exc:
        raise Mismatch(f"{what}: values differ\n{exc}") from None
    count(comparisons=1)


def _parts(expected, values):
    if values.dtype.kind == "c":
        return [(expected.real, values.real), (expected.imag, values.imag)]
    return [(expected, values)]


def _same_signed_zeros(expected, got):
    """Exact results carry NumPy's zero signs too (1 / result tells -0.0 from 0.0); NaN
    signs are not compared (NumPy's own loops do not fix them)."""
    if got.dtype.kind != "f":
        return
    zeros = expected == 0
    np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(expected[zeros]),
                                  err_msg="signs of zeros differ")


def _family_match(np_exc, nd_exc):
    families = tuple(f for f in ERROR_FAMILIES if isinstance(np_exc, f))
    if isinstance(nd_exc, families):
        return True
    # An input wrong in two ways (a bad cast and shapes that do not broadcast, a bad index
    # and a bad value shape): NumPy and ndengine may check them in a different order.
    shapes_fault = ("broadcast", "shape", "out of bounds", "dimension")
    kinds = (TypeError, ValueError, IndexError, OverflowError)
    return (isinstance(np_exc, kinds) and isinstance(nd_exc, kinds) and
            any(word in str(exc) for word in shapes_fault for exc in (np_exc, nd_exc)))


def replay(lines, compare_each=True):
    """Run the program on NumPy and ndengine in lockstep; raise Mismatch at the first
    difference (values, dtypes, shapes, or the kind of error)."""
    np_ns, nd_ns = namespace(np), namespace(nd)
    np_ns["v"], nd_ns["v"] = NumpyArrays(), []
    count(programs=1)
    for number, (line, observe) in enumerate(lines):
        where = f"step {number} `{line}`"
        np_exc = nd_exc = None
        with np.errstate(all="ignore"):  # thread-safe, unlike warnings.catch_warnings
            try:
                exec(line, np_ns)  # noqa: S102
            except Exception as exc:  # noqa: BLE001
                np_exc = exc
        try:
            with np.errstate(all="ignore"):  # pushed under NumPy's state, as the NumPy run
                exec(line, nd_ns)  # noqa: S102
        except Mismatch:
            raise
        except Exception as exc:  # noqa: BLE001
            nd_exc = exc
        count(steps=1)
        extended = np_exc is None and observe is False and len(np_ns["v"]) and \
            line.startswith("v.append") and np_ns["v"][-1].dtype in EXTENDED_DTYPES
        if np_exc is None and nd_exc is not None and (
                observe and np.asarray(np_ns["r"]).dtype in EXTENDED_DTYPES or extended):
            # NumPy's result is float16 or complex (exp of int8): an op that does not
            # compute them yet must say so at the call
            if not (isinstance(nd_exc, TypeError) and "does not support dtype" in str(nd_exc)):
                raise Mismatch(f"{where}: NumPy gives {np.asarray(np_ns['r'] if observe else np_ns['v'][-1]).dtype}"
                               f", ndengine should compute it or raise a clear TypeError, got "
                               f"{nd_exc!r}")
            if not observe:
                np_ns["v"].pop()
            count(expected_errors=1)
            continue
        if np_exc is not None:
            if nd_exc is None:
                # ndengine checks input at the call; a kernel error comes at the next wait
                deferred = _wait_for_error(nd_ns, line, observe)
                if deferred is None or not _family_match(np_exc, deferred):
                    raise Mismatch(f"{where}: NumPy raised {type(np_exc).__name__}: {np_exc}; "
                                   f"ndengine did not (at the call; at the wait: "
                                   f"{deferred!r})")
                if not (observe or line.startswith("v.append")):
                    raise Mismatch(f"{where}: NumPy raised {type(np_exc).__name__}: {np_exc} "
                                   "at the call and left the arrays as they were; ndengine "
                                   "raised nothing at the call, its kernel failed with "
                                   f"{type(deferred).__name__}: {deferred} and the array it "
                                   "writes stays failed")
                count(deferred_errors=1)
                _drop_result(nd_ns, line, observe)
            elif not _family_match(np_exc, nd_exc):
                raise Mismatch(f"{where}: NumPy raised {type(np_exc).__name__}: {np_exc}; "
                               f"ndengine raised {type(nd_exc).__name__}: {nd_exc}")
            else:
                count(expected_errors=1)
        elif nd_exc is not None:
            raise Mismatch(f"{where}: NumPy succeeded; ndengine raised "
                           f"{type(nd_exc).__name__}: {nd_exc}") from nd_exc
        if len(np_ns["v"]) != len(nd_ns["v"]):
            raise Mismatch(f"{where}: {len(np_ns['v'])} arrays on NumPy, "
                           f"{len(nd_ns['v'])} on ndengine")
        if observe and np_exc is None:
            compare(np_ns["r"], nd_ns["r"], f"{where}: r", observed=True)
            del np_ns["r"], nd_ns["r"]
        if compare_each or np_exc is not None:
            compare_all(np_ns["v"], nd_ns["v"], where)
    compare_all(np_ns["v"], nd_ns["v"], "at the end")


def compare_all(np_arrays, nd_arrays, where):
    for k, (expected, got) in enumerate(zip(np_arrays, nd_arrays)):
        compare(expected, got, f"{where}: v[{k}]")


def _wait_for_error(ns, line, observe):
    """The error of a step whose kernel failed, raised at a wait on its result."""
    target = ns.get("r") if observe else (ns["v"][-1] if line.startswith("v.append") and
                                          ns["v"] else None)
    if target is None:
        for arr in ns["v"]:
            try:
                arr.wait_to_read()
            except Exception as exc:  # noqa: BLE001
                return exc
        return None
    try:
        target.wait_to_read()
    except Exception as exc:  # noqa: BLE001
        return exc
    return None


def _drop_result(ns, line, observe):
    if observe:
        ns.pop("r", None)
    elif line.startswith("v.append"):
        ns["v"].pop()
