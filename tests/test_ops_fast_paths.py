"""The lean per-call paths (cached plans, memoised infer) give what the full paths give.

Behaviour only (no timing): repeated calls, cached scalar operands, overlap,
casts and errors must match NumPy and the first (uncached) call.
"""
import numpy as np
import pytest

import ndengine.ops as ops
from ndengine.ops import OpReq


def kernel(name, inputs, out, req=OpReq.WRITE_TO, **params):
    with np.errstate(all="ignore"):
        ops.get(name).kernels["cpu"](list(inputs), [out], [req], **params)
    return out


class Spec:
    """A non-NumPy array spec: list shape with NumPy ints, dtype given as a string."""

    def __init__(self, shape, dtype):
        self.shape = [np.int64(n) for n in shape]
        self.dtype = dtype


class TrustedSpec:
    """An array type registered with ops.register_array_type: canonical dtype and shape."""

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)


ops.register_array_type(TrustedSpec)


@pytest.mark.parametrize("name", ["add", "true_divide", "less", "exp", "negative"])
def test_registered_array_types_infer_as_numpy_arrays_do(name):
    op = ops.get(name)
    for dtype in ["int8", "uint16", "float32", "float64", "bool"]:
        for _ in range(2):  # the second round uses the cached plans
            array, spec = np.ones((2, 3), dtype), TrustedSpec((2, 3), dtype)
            args = [[array], [spec]] if op.num_inputs == 1 else [[array, 3], [spec, 3]]
            try:
                want = op.infer(*args[0])
            except (TypeError, ValueError) as exc:
                with pytest.raises(type(exc)):
                    op.infer(*args[1])
                continue
            assert op.infer(*args[1]) == want
            if op.num_inputs == 2:
                assert op.infer(spec, spec) == op.infer(array, array)
                assert op.infer(2.5, spec) == op.infer(2.5, array)
                with pytest.raises(ValueError, match=r"\(2, 3\).*\(4,\)"):
                    op.infer(spec, TrustedSpec((4,), dtype))


def test_repeated_scalar_operands_keep_their_sign_and_value():
    x = np.full(8, -0.0)
    for _ in range(3):  # the second round hits the per-plan constant cache
        assert np.signbit(kernel("add", [x, 0.0], np.empty(8))).sum() == 0
        assert np.signbit(kernel("add", [x, -0.0], np.empty(8))).all()
        np.testing.assert_array_equal(kernel("add", [x, 2.5], np.empty(8)), x + 2.5)
        np.testing.assert_array_equal(kernel("subtract", [7, x], np.empty(8)), 7 - x)
    i = np.arange(6, dtype=np.uint8)
    for _ in range(2):
        np.testing.assert_array_equal(kernel("add", [i, 250], np.empty(6, np.uint8)), i + 250)


def test_out_of_range_python_int_raises_every_time():
    x = np.arange(4, dtype=np.uint8)
    ops.get("add").infer(x, 3)  # builds the plan
    for _ in range(2):
        with pytest.raises(OverflowError):
            ops.get("add").infer(x, 300)
        with pytest.raises(OverflowError):
            kernel("add", [x, -1], np.empty(4, np.uint8))


def test_infer_of_non_numpy_specs_gives_python_ints_and_numpy_dtypes():
    for _ in range(2):
        [(shape, dtype)] = ops.get("multiply").infer(Spec((2, 3), "float32"), 2)
        assert shape == (2, 3) and all(type(n) is int for n in shape)
        assert dtype == np.float32 and isinstance(dtype, np.dtype)
        [(shape, dtype)] = ops.get("sum").infer(Spec((2, 3), "int16"), axis=1)
        assert shape == (2,) and all(type(n) is int for n in shape) and dtype == np.int64
    with pytest.raises(TypeError, match="float16"):
        ops.get("exp").infer(Spec((2,), "float16"))
    with pytest.raises(TypeError, match="float16"):
        ops.get("where").infer(np.ones(2, np.float16), np.ones(2), np.ones(2))


def test_memoised_reduction_infer_still_checks_params():
    x = np.ones((2, 3))
    assert ops.get("sum").infer(x, axis=1) == [((2,), np.float64)]
    with pytest.raises(TypeError):
        ops.get("sum").infer(x, axis=1.0)
    assert ops.get("sum").infer(x, axis=1, keepdims=True) == [((2, 1), np.float64)]
    with pytest.raises(np.exceptions.AxisError):
        ops.get("sum").infer(x, axis=2)


def test_contiguous_cases_match_numpy_repeatedly():
    a = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
    b = np.linspace(1, 2, 12, dtype=np.float32).reshape(3, 4)
    i32 = np.arange(12, dtype=np.int32).reshape(3, 4)
    cond = (np.arange(12) % 3 == 0).reshape(3, 4)
    for _ in range(2):
        np.testing.assert_array_equal(kernel("add", [a, b], np.empty_like(a)), a + b)
        np.testing.assert_array_equal(kernel("add", [i32, b], np.empty((3, 4))), i32 + b)
        np.testing.assert_array_equal(kernel("multiply", [i32, 1.5], np.empty((3, 4))), i32 * 1.5)
        np.testing.assert_array_equal(kernel("less", [a, 0.5], np.empty((3, 4), bool)), a < 0.5)
        np.testing.assert_array_equal(kernel("where", [cond, a, b], np.empty_like(a)),
                                      np.where(cond, a, b))
        np.testing.assert_array_equal(
            kernel("where", [cond.astype(np.int8), i32, a], np.empty((3, 4))),
            np.where(cond.astype(np.int8), i32, a))
        np.testing.assert_array_equal(kernel("negative", [i32], np.empty_like(i32)), -i32)
        np.testing.assert_array_equal(kernel("sum", [a], np.empty((), np.float32)), a.sum())
        np.testing.assert_array_equal(kernel("max", [a], np.empty(4, np.float32), axis=-2),
                                      a.max(axis=0))
        np.testing.assert_array_equal(kernel("copy", [a], np.empty((3, 4), np.int16)),
                                      a.astype(np.int16))
        np.testing.assert_array_equal(
            kernel("fill", [], np.empty(5, np.uint8), value=3.7, shape=(5,), dtype=np.uint8),
            np.full(5, 3, np.uint8))


def test_clip_both_bounds_two_pass_matches_numpy():
    x = np.array([-2.0, -0.0, 0.0, 0.5, np.nan, 3.0, np.inf, -np.inf], np.float32)
    for lo, hi in [(-1.0, 1.0), (0.0, 0.0), (-0.0, 2.0), (1.0, -1.0), (float("nan"), 1.0)]:
        for _ in range(2):
            got = kernel("clip", [x], np.empty_like(x), a_min=lo, a_max=hi)
            expected = np.clip(x, np.float32(lo), np.float32(hi))
            np.testing.assert_array_equal(got, expected)
            np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))
    ints = np.arange(-5, 5, dtype=np.int8)
    np.testing.assert_array_equal(kernel("clip", [ints], np.empty_like(ints), a_min=-2, a_max=300),
                                  np.clip(ints, -2, 127))
    inplace = x.copy()
    kernel("clip", [inplace], inplace, OpReq.WRITE_INPLACE, a_min=-1.0, a_max=1.0)
    np.testing.assert_array_equal(inplace, np.clip(x, -1, 1))


def test_overlapping_views_still_detached():
    for _ in range(2):
        a = np.arange(10.0)
        expected = a.copy()
        expected[1:] = expected[:-1] * 2.0
        kernel("multiply", [a[:-1], 2.0], a[1:], OpReq.WRITE_INPLACE)
        np.testing.assert_array_equal(a, expected)
        b = np.arange(10.0)
        expected = np.exp(b[2:])
        kernel("exp", [b[2:]], b[:-2], OpReq.WRITE_INPLACE)
        np.testing.assert_array_equal(b[:-2], expected)
        c = np.arange(6.0)
        kernel("sum", [c], c[2:3].reshape(()), axis=0)
        assert c[2] == 15.0
        d = np.arange(6.0)
        kernel("where", [d > 2, d[::-1].copy(), d], d)
        np.testing.assert_array_equal(d, np.where(np.arange(6.0) > 2, np.arange(6.0)[::-1], np.arange(6.0)))
