"""Errors NumPy raises at the call come at the call, with NumPy's type and message, on every
engine: allocations that can never be backed (MemoryError), in-place and ``out=`` results that
cannot be cast (NumPy's UFuncTypeError, before the shapes are looked at), scalar negative
integer exponents. Every check runs with no op pushed (``pending`` stays 0)."""
import itertools
import operator
import os

import numpy as np
import pytest

import ndengine as nd
from ndengine.core import storage

pytestmark = pytest.mark.usefixtures("nd_engine")

_CASTING_ERROR = np._core._exceptions.UFuncTypeError


def _numpy_error(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the oracle's error, whatever it is
        return exc
    return None


def _pending(eng):
    return eng._executor.pending + eng._executor.pending_now


def _raises_at_call_like_numpy(eng, ours, theirs):
    """``ours()`` raises NumPy's error of ``theirs()`` (type and message) with nothing
    pushed."""
    expected = _numpy_error(theirs)
    assert expected is not None
    nd.waitall()
    before = _pending(eng)
    with pytest.raises(type(expected)) as info:
        ours()
    assert type(info.value) is type(expected)
    assert str(info.value) == str(expected)
    assert _pending(eng) == before


# ------------------------------------------------------------------ allocations
_HUGE = 2 ** 40  # elements: 8 TiB of float64, more than any machine's memory and swap


@pytest.mark.parametrize("make, numpy_make", [
    (lambda: nd.zeros((_HUGE,)), lambda: np.zeros((_HUGE,))),
    (lambda: nd.ones((2 ** 20, 2 ** 21)), lambda: np.ones((2 ** 20, 2 ** 21))),
    (lambda: nd.empty((2 ** 20, 2 ** 20), dtype=np.int8),
     lambda: np.empty((2 ** 20, 2 ** 20), dtype=np.int8)),
    (lambda: nd.broadcast_to(nd.zeros(1), (_HUGE,)) + 1,
     lambda: np.broadcast_to(np.zeros(1), (_HUGE,)) + 1),
], ids=["zeros", "ones-2d", "empty-int8", "broadcast-add"])
def test_allocation_that_can_never_succeed_raises_numpys_memory_error_at_the_call(
        nd_engine, make, numpy_make):
    _raises_at_call_like_numpy(nd_engine, make, numpy_make)


def test_host_memory_bound_is_physical_memory_and_more():
    """The rule behind the MemoryError at the call: larger than physical memory and swap."""
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert physical <= storage.host_memory_bytes() == storage.HOST_MEMORY_BYTES < 8 * _HUGE
    assert nd.zeros((2 ** 20,)).shape == (2 ** 20,)  # far under it: made as usual


# ------------------------------------------------------------------ casting
_OPERATORS = ["iadd", "isub", "imul", "itruediv", "ifloordiv", "imod", "ipow", "iand", "ior",
              "ixor", "ilshift", "irshift"]
_DTYPES = [np.bool_, np.int8, np.int64, np.uint16, np.float32, np.float64, np.complex128]
_SHAPES = [((3,), (3,)), ((3,), (4,)), ((2, 3), (3,)), ((3,), (2, 3))]  # (target, operand)


def _values(shape, dtype):
    return (np.arange(int(np.prod(shape))).reshape(shape) % 3 + 1).astype(dtype)


@pytest.mark.parametrize("name", _OPERATORS)
def test_in_place_operator_errors_match_numpy_over_dtypes_and_shapes(nd_engine, name):
    """Every pair of dtypes and shapes: where NumPy raises, ndengine raises the same type
    at the call, and for a cast it cannot make NumPy's UFuncTypeError and message, even when
    the shapes do not broadcast either: the cast is checked first."""
    method = getattr(operator, name)
    raised = casts = 0
    for (target_shape, shape), target_dtype, dtype in itertools.product(
            _SHAPES, _DTYPES, _DTYPES):
        theirs_target = _values(target_shape, target_dtype)
        theirs_operand = _values(shape, dtype)
        expected = _numpy_error(lambda: method(theirs_target.copy(), theirs_operand))
        ours = nd.array(_values(target_shape, target_dtype))
        operand = nd.array(theirs_operand)
        if expected is None:
            continue
        raised += 1
        with pytest.raises(Exception) as info:
            method(ours, operand)
        where = f"{name} {target_dtype.__name__}{target_shape} <- {dtype.__name__}{shape}"
        assert type(info.value) is type(expected), where
        if isinstance(expected, _CASTING_ERROR):
            casts += 1
            assert str(info.value) == str(expected), where
            assert isinstance(info.value, _CASTING_ERROR), where
    assert casts > 0 and raised > casts  # some cast errors, some shape errors


@pytest.mark.parametrize("fn, args", [
    ("add", (np.float64, np.float64)), ("subtract", (np.float64, np.int64)),
    ("multiply", (np.complex128, np.float64)), ("true_divide", (np.int64, np.int64)),
    ("power", (np.float32, np.float64)), ("maximum", (np.float64, np.int8)),
    ("negative", (np.float64,)), ("abs", (np.float64,)), ("sqrt", (np.int64,)),
    ("floor", (np.float32,)),
])
@pytest.mark.parametrize("out_dtype", [np.int64, np.bool_, np.uint8])
@pytest.mark.parametrize("out_shape", [(3,), (4,)])
def test_out_argument_casting_error_is_numpys(nd_engine, fn, args, out_dtype, out_shape):
    values = [_values((3,), dtype) for dtype in args]
    _raises_at_call_like_numpy(
        nd_engine,
        lambda: getattr(nd, fn)(*[nd.array(v) for v in values],
                                out=nd.zeros(out_shape, dtype=out_dtype)),
        lambda: getattr(np, fn)(*values, out=np.zeros(out_shape, dtype=out_dtype)))


@pytest.mark.parametrize("which", [0, 1])
def test_divmod_out_casting_error_names_the_output_as_numpy(nd_engine, which):
    def outs(zeros):
        return tuple(zeros(3, dtype=np.int64) if i == which else zeros(3) for i in (0, 1))
    _raises_at_call_like_numpy(
        nd_engine, lambda: nd.divmod(nd.array([1.5, 2.0, 3.0]), 1.0, out=outs(nd.zeros)),
        lambda: np.divmod(np.array([1.5, 2.0, 3.0]), 1.0, out=outs(np.zeros)))


# ------------------------------------------------------------------ value checks
@pytest.mark.parametrize("exponent", [-1, np.int64(-2), np.int8(-1)])
def test_scalar_negative_integer_exponent_raises_at_the_call(nd_engine, exponent):
    base = np.array([2, 3])
    _raises_at_call_like_numpy(nd_engine, lambda: nd.array(base) ** exponent,
                               lambda: base ** exponent)
    _raises_at_call_like_numpy(nd_engine, lambda: nd.power(nd.array(base), exponent),
                               lambda: np.power(base, exponent))


def test_array_negative_integer_exponent_raises_by_the_wait(nd_engine):
    """A value check that needs the exponent's values: at the call on the NaiveEngine, at
    the wait on the threaded engines (documented in power's docstring)."""
    expected = _numpy_error(lambda: np.array([2, 3]) ** np.array([1, -1]))
    with pytest.raises(ValueError) as info:
        (nd.array([2, 3]) ** nd.array([1, -1])).wait_to_read()
    assert str(info.value) == str(expected)
    assert "wait" in nd.power.__doc__
