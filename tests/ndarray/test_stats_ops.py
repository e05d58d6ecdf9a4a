"""The statistics and sorting ops on their own (ndengine.ops): inference from shapes and dtypes
only, with NumPy's errors, on arrays far too big to touch; the kernels on NumPy arrays."""
import collections
import time

import numpy as np
import pytest

from ndengine import ops
from ndengine.ops.families.numpy_functions import stand_ins

Spec = collections.namedtuple("Spec", "shape dtype")
HUGE = Spec((100_000, 300_000), np.dtype("float64"))  # 240 GB: inference must not touch it


@pytest.mark.parametrize("name, inputs, params, expected", [
    ("nansum", [HUGE], {"axis": 0}, [((300_000,), "float64")]),
    ("nanargmax", [HUGE], {"axis": 1, "keepdims": True}, [((100_000, 1), "int64")]),
    ("median", [HUGE], {"axis": (0, 1)}, [((), "float64")]),
    ("quantile", [HUGE], {"q": np.array([0.1, 0.9]), "axis": 1},
     [((2, 100_000), "float64")]),
    ("cumsum", [HUGE], {}, [((30_000_000_000,), "float64")]),
    ("diff", [HUGE, 0], {"n": 2, "arrays": ("prepend",)}, [((100_000, 299_999), "float64")]),
    ("average", [HUGE, Spec((300_000,), np.dtype("int8"))],
     {"axis": 1, "arrays": ("weights",), "returned": True},
     [((100_000,), "float64"), ((100_000,), "float64")]),
    ("histogram", [HUGE], {"bins": 7}, [((7,), "int64"), ((8,), "float64")]),
    ("sort", [HUGE], {"axis": 0}, [((100_000, 300_000), "float64")]),
    ("partition", [HUGE], {"kth": 299_999}, [((100_000, 300_000), "float64")]),
    ("searchsorted", [Spec((300_000,), np.dtype("int32")), HUGE], {},
     [((100_000, 300_000), "int64")]),
    ("any", [HUGE], {"axis": -1}, [((100_000,), "bool")]),
    ("sum_where", [HUGE, Spec((300_000,), np.dtype(bool))], {"arrays": ("where",),
                                                              "initial": 2},
     [((), "float64")]),
])
def test_inference_needs_no_data(name, inputs, params, expected):
    started = time.perf_counter()
    got = ops.get(name).infer(*inputs, **params)
    assert [(s, str(d)) for s, d in got] == expected
    assert time.perf_counter() - started < 1.0


@pytest.mark.parametrize("name, inputs, params, error", [
    ("average", [HUGE, Spec((299_999,), np.dtype("float64"))],
     {"axis": 1, "arrays": ("weights",)}, ValueError),  # a length off by one
    ("sum_where", [HUGE, Spec((299_999,), np.dtype(bool))], {"arrays": ("where",)},
     ValueError),
    ("searchsorted", [Spec((5,), np.dtype("int64")), 1, Spec((4,), np.dtype("int64"))],
     {"arrays": ("sorter",)}, ValueError),
    ("partition", [HUGE], {"kth": 300_000}, ValueError),
    ("partition", [HUGE], {"kth": 1.5}, TypeError),
    ("nanmean", [HUGE], {"axis": 2}, np.exceptions.AxisError),
    ("sort", [HUGE], {"kind": "bogus"}, ValueError),
    ("histogram", [HUGE], {"bins": -1}, ValueError),
    ("quantile", [HUGE], {"q": 1.5}, ValueError),
    ("ptp", [Spec((3,), np.dtype(bool))], {}, TypeError),
])
def test_inference_raises_numpys_errors(name, inputs, params, error):
    with pytest.raises(error):
        ops.get(name).infer(*inputs, **params)


def test_stand_ins_keep_unequal_lengths_unequal():
    a, b, c = stand_ins([Spec((1000, 3, 0, 1), np.dtype("int8")),
                         Spec((3, 999), np.dtype("float32")), 2.5])
    assert a.shape == (4, 2, 0, 1) and b.shape == (2, 3) and c == 2.5
    assert a.dtype == np.int8 and (b == 1).all()


def test_kernels_on_numpy_arrays():
    x = np.array([[3.0, np.nan, 1.0], [2.0, 5.0, 4.0]])
    np.testing.assert_array_equal(ops.get("nansum").apply(x, axis=1)[0], np.nansum(x, 1))
    hist, edges = ops.get("histogram").apply(np.arange(10.0), bins=3)
    np.testing.assert_array_equal(hist, [3, 3, 4])
    np.testing.assert_array_equal(ops.get("unique").apply(np.array([3, 1, 3]), count=2)[0],
                                  [1, 3])
    with pytest.raises(RuntimeError, match="changed"):  # planned for 3 values, found 2
        ops.get("unique").apply(np.array([3, 1, 3]), count=3)
    out = np.array([5, 3, 1, 4])
    ops.get("sort").kernels["cpu"]([out], [out], [ops.OpReq.WRITE_INPLACE])
    np.testing.assert_array_equal(out, [1, 3, 4, 5])  # sorted in place
