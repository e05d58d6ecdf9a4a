"""Operands NumPy takes through its object loop: None with an operator (== and != compare
each element with None; the other operators raise NumPy's error, the element's Python type
named), and ufuncs of Python scalars only (two Python ints compared: NumPy's object loop),
with and without out=."""
import itertools
import operator
import re

import numpy as np
import pytest

import ndengine as nd
from ndarray_helpers import run_xp

pytestmark = pytest.mark.usefixtures("nd_engine")

_DTYPES = ["bool", "int64", "uint8", "float32", "complex128"]
_OPERATORS = ["eq", "ne", "lt", "le", "gt", "ge", "add", "sub", "mul", "truediv", "floordiv",
              "mod", "pow", "and_", "or_", "xor", "lshift", "rshift", "matmul"]
_IN_PLACE = ["iadd", "isub", "imul", "itruediv", "ipow", "iand", "ilshift"]


def _with_none(python_operator, reflected, dtype, shape):
    def body(xp):
        x = xp.ones(shape, dtype=dtype)
        return python_operator(None, x) if reflected else python_operator(x, None)
    return body


def _same_outcome(body):
    """NumPy's result (its values, dtype, shape), or its error's type and message."""
    try:
        body(np)
    except Exception as numpy_error:  # noqa: BLE001 - the oracle's error is the expectation
        with pytest.raises(type(numpy_error), match=f"^{re.escape(str(numpy_error))}$"):
            body(nd)
        return
    run_xp(lambda xp: xp.asarray(body(xp)))


@pytest.mark.parametrize("reflected", [False, True], ids=["array_none", "none_array"])
@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("name", _OPERATORS)
def test_an_operator_with_none(name, dtype, reflected):
    _same_outcome(_with_none(getattr(operator, name), reflected, dtype, (2, 3)))


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("name", _IN_PLACE)
def test_an_in_place_operator_with_none(name, dtype):
    _same_outcome(_with_none(getattr(operator, name), False, dtype, (3,)))


@pytest.mark.parametrize("name", ["eq", "ne", "lt", "add"])
def test_a_zero_d_or_empty_array_with_none(name):
    _same_outcome(_with_none(getattr(operator, name), False, "int64", ()))
    if name != "add":  # NumPy's empty object array: ndengine has no object dtype
        _same_outcome(_with_none(getattr(operator, name), False, "int64", (0,)))


def test_divmod_with_none():
    _same_outcome(lambda xp: divmod(xp.arange(3), None))
    _same_outcome(lambda xp: divmod(None, xp.arange(3)))


_UFUNCS = ["add", "subtract", "multiply", "true_divide", "power", "maximum", "equal",
           "not_equal", "less", "greater_equal", "logical_and", "arctan2"]
_SCALARS = [3, -2, 2.5, True, 1j]
_OUTS = [None, "bool", "int8", "int64", "float32", "complex128"]


@pytest.mark.parametrize("out_dtype", _OUTS, ids=str)
@pytest.mark.parametrize("first, second", list(itertools.product(_SCALARS, repeat=2)), ids=repr)
@pytest.mark.parametrize("ufunc", _UFUNCS)
def test_a_ufunc_of_python_scalars(ufunc, first, second, out_dtype):
    def body(xp):
        if out_dtype is None:
            return xp.asarray(getattr(xp, ufunc)(first, second))
        out = xp.zeros(3, dtype=out_dtype)
        assert getattr(xp, ufunc)(first, second, out=out) is out
        return out
    run_xp(body)
