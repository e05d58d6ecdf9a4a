"""Creation, data movement, indexing, linalg and random ops against NumPy."""
import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import ndengine.ops as ops
from ndengine.ops import OpReq

FAST = settings(max_examples=int(os.environ.get("NDENGINE_HYPOTHESIS_EXAMPLES", "15")),
                deadline=None)


def apply(name, *inputs, **params):
    return ops.get(name).apply(*inputs, **params)


def test_copy_casts_and_broadcasts():
    x = np.array([1.7, -2.2, 3.9])
    [out] = apply("copy", x, shape=(2, 3), dtype=np.int16)
    np.testing.assert_array_equal(out, np.broadcast_to(x.astype(np.int16), (2, 3)))
    with pytest.raises(ValueError, match=r"\(3,\).*\(2, 2\)"):
        ops.get("copy").infer(x, shape=(2, 2))


def test_copy_into_overlapping_view():
    a = np.arange(10)
    ops.get("copy").kernels["cpu"]([a[:-2]], [a[2:]], [OpReq.WRITE_TO])
    b = np.arange(10)
    b[2:] = b[:-2].copy()
    np.testing.assert_array_equal(a, b)


def test_creation_ops():
    np.testing.assert_array_equal(apply("fill", value=7, shape=(2, 2), dtype=np.uint8)[0],
                                  np.full((2, 2), 7, np.uint8))
    assert apply("fill", value=1.5, shape=3)[0].dtype == np.float64
    for args in [(5,), (1, 10, 3), (0.0, 1.0, 0.1), (10, 0, -3), (2.5, 1, 1)]:
        start, stop, step = (args + (None, 1))[:3] if len(args) == 1 else (args + (1,))[:3]
        expected = np.arange(*args)
        got = apply("arange", start=start, stop=stop, step=step)[0]
        np.testing.assert_array_equal(got, expected)
        assert got.dtype == expected.dtype
    np.testing.assert_array_equal(apply("linspace", start=0, stop=1, num=7, endpoint=False,
                                        dtype=np.float32)[0],
                                  np.linspace(0, 1, 7, endpoint=False, dtype=np.float32))
    np.testing.assert_array_equal(apply("eye", N=3, M=4, k=-1, dtype=np.int32)[0],
                                  np.eye(3, 4, -1, dtype=np.int32))


@FAST
@given(data=st.data())
def test_concatenate_stack_split_match_numpy(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = data.draw(st.integers(1, 3))
    arrays = [data.draw(hnp.arrays(st.sampled_from([np.int8, np.float32, np.float64, bool]), shape))
              for _ in range(n)]
    for name, fn in (("concatenate", np.concatenate), ("stack", np.stack)):
        [got] = apply(name, *arrays, axis=axis)
        expected = fn(arrays, axis=axis)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)
    cuts = data.draw(st.lists(st.integers(0, shape[axis] + 1), max_size=3))
    x = arrays[0]
    op = ops.get("split")
    assert op.count_outputs(x, indices_or_sections=cuts, axis=axis) == len(cuts) + 1
    for got, expected in zip(apply("split", x, indices_or_sections=cuts, axis=axis),
                             np.split(x, cuts, axis=axis)):
        np.testing.assert_array_equal(got, expected)


def test_split_sections_and_errors():
    x = np.arange(12).reshape(3, 4)
    pieces = apply("split", x, indices_or_sections=2, axis=1)
    assert [p.tolist() for p in pieces] == [p.tolist() for p in np.split(x, 2, axis=1)]
    with pytest.raises(ValueError, match="equal division"):
        ops.get("split").infer(x, indices_or_sections=3, axis=1)
    with pytest.raises(ValueError, match=r"differ"):
        ops.get("concatenate").infer(np.ones((2, 3)), np.ones((2, 4)), axis=0)


KEYS = [
    (slice(1, None), Ellipsis), (0,), (None, slice(None, None, -1)),
    (np.array([2, 0, 2]),), (np.array([[True, False, True, True]] * 3),),
    (slice(None), np.array([1, 3])), (np.array([0, 1]), np.array([3, 2])), (Ellipsis, 1),
]


@pytest.mark.parametrize("key", KEYS, ids=range(len(KEYS)))
def test_take_and_assign_index(key):
    x = np.arange(12.0).reshape(3, 4)
    op = ops.get("take_index")
    assert op.infer(x, key=key)[0][0] == x[key].shape
    np.testing.assert_array_equal(op.apply(x, key=key)[0], x[key])

    target = x.copy()
    value = -np.arange(x[key].size, dtype=np.float64).reshape(x[key].shape)
    expected = target.copy()
    expected[key] = value
    ops.get("assign_index").kernels["cpu"]([target, value], [target], [OpReq.WRITE_INPLACE], key=key)
    np.testing.assert_array_equal(target, expected)


def test_index_errors_and_overlapping_assign():
    with pytest.raises(IndexError):
        ops.get("take_index").infer(np.ones((2, 2)), key=(np.array([5]),))
    with pytest.raises(ValueError, match="broadcast"):
        ops.get("assign_index").infer(np.ones((3, 4)), np.ones(3), key=(slice(None),))
    a = np.arange(10)
    expected = a.copy()
    expected[1:] = expected[:-1]
    ops.get("assign_index").kernels["cpu"]([a, a[:-1]], [a], [OpReq.WRITE_INPLACE],
                                           key=slice(1, None))
    np.testing.assert_array_equal(a, expected)


@pytest.mark.parametrize("name", ["dot", "matmul"])
@pytest.mark.parametrize("shapes", [((3, 4), (4, 5)), ((4,), (4,)), ((2, 3, 4), (4,)),
                                    ((4,), (4, 2)), ((2, 3, 4), (2, 4, 2)), ((), (3,))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_linalg_matches_numpy(name, shapes, dtype):
    if name == "matmul" and () in shapes:
        with pytest.raises(ValueError):
            ops.get(name).infer(np.ones(shapes[0], dtype), np.ones(shapes[1], dtype))
        return
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(shapes[0]) * 4).astype(dtype)
    b = (rng.standard_normal(shapes[1]) * 4).astype(dtype)
    expected = getattr(np, name)(a, b)
    [got] = apply(name, a, b)
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    if np.ndim(expected) == 2:  # into a transposed, non-contiguous output
        out = np.empty(expected.shape[::-1], expected.dtype).T
        ops.get(name).kernels["cpu"]([a, b], [out], [OpReq.WRITE_TO])
        np.testing.assert_allclose(out, expected, rtol=1e-5)


def test_linalg_shape_errors_name_both_shapes():
    for name in ("dot", "matmul"):
        with pytest.raises(ValueError, match=r"\(3, 4\).*\(5, 2\)"):
            ops.get(name).infer(np.ones((3, 4)), np.ones((5, 2)))


@pytest.mark.parametrize("name,params,dtype", [
    ("random_uniform", dict(low=-2.0, high=3.0), np.float32),
    ("random_uniform", dict(low=0.0, high=1.0), np.float64),
    ("random_normal", dict(loc=1.0, scale=2.0), np.float64),
    ("random_randint", dict(low=-5, high=7), np.int16),
])
def test_random_ops_are_reproducible_and_in_range(name, params, dtype):
    op = ops.get(name)
    draws = [op.apply(shape=(1000,), dtype=dtype, generator=np.random.default_rng(42), **params)[0]
             for _ in range(2)]
    np.testing.assert_array_equal(draws[0], draws[1])
    assert draws[0].dtype == dtype and draws[0].shape == (1000,)
    generator = np.random.default_rng(42)
    first = op.apply(shape=(5,), dtype=dtype, generator=generator, **params)[0]
    second = op.apply(shape=(5,), dtype=dtype, generator=generator, **params)[0]
    assert not np.array_equal(first, second)  # the caller's generator advances
    if name == "random_uniform":
        assert draws[0].min() >= params["low"] and draws[0].max() < params["high"]
    if name == "random_randint":
        assert draws[0].min() >= -5 and draws[0].max() < 7
    if name == "random_normal":
        expected = np.random.default_rng(42).normal(1.0, 2.0, 1000)
        np.testing.assert_allclose(draws[0], expected, rtol=1e-12)


def test_random_needs_a_generator():
    with pytest.raises(TypeError, match="generator"):
        ops.get("random_uniform").apply(shape=(2,))
