"""einops on NDArrays (ndengine/ndarray/einops_backend.py): each body runs with xp=numpy and
xp=ndengine; einops must hand back NDArrays with NumPy's values, under the three engines.
Registration works in either import order (subprocesses)."""
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, strategies as st

from ndarray_helpers import run_xp

einops = pytest.importorskip("einops")

pytestmark = pytest.mark.usefixtures("nd_engine")

DTYPES = [np.float32, np.float64, np.int64, np.int32]


def _array(xp, shape, dtype):
    return xp.asarray(np.arange(np.prod(shape), dtype=dtype).reshape(shape) % 7 - 3)


@given(a=st.integers(1, 3), b=st.integers(1, 4), c=st.integers(1, 5),
       dtype=st.sampled_from(DTYPES))
def test_rearrange(a, b, c, dtype):
    def body(xp):
        x = _array(xp, (a, b, c), dtype)
        return [einops.rearrange(x, "a b c -> c (a b)"),
                einops.rearrange(x, "a b (c one) -> (one b) a c", one=1),
                einops.rearrange(x, "a b c -> b a c 1")]
    run_xp(body)


@pytest.mark.parametrize("reduction", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_reduce(reduction, dtype):
    if reduction == "mean" and np.dtype(dtype).kind != "f":
        pytest.skip("einops refuses mean of integers")

    def body(xp):
        x = _array(xp, (2, 3, 4), dtype)
        return [einops.reduce(x, "a b c -> a c", reduction),
                einops.reduce(x, "a b (c two) -> a b c", reduction, two=2),
                einops.reduce(x, "a b c -> ", reduction)]
    run_xp(body)


def test_repeat_pack_unpack_and_einsum():
    def body(xp):
        x = _array(xp, (2, 3), np.float64)
        y = _array(xp, (3, 4), np.float64)
        packed, shapes = einops.pack([x, einops.repeat(x[:, 0], "a -> a r", r=5)], "a *")
        return [einops.repeat(x, "a b -> a r b", r=3), packed,
                *einops.unpack(packed, shapes, "a *"),
                einops.einsum(x, y, "a b, b c -> a c")]
    run_xp(body)


def test_errors_are_einops_own():
    for xp in (np, __import__("ndengine")):
        with pytest.raises(einops.EinopsError, match="one side"):
            einops.rearrange(_array(xp, (2, 3), np.float64), "a b -> a b c")


@pytest.mark.parametrize("first", ["ndengine", "einops"])
def test_either_import_order_registers(first):
    second = "einops" if first == "ndengine" else "ndengine"
    script = (f"import {first}, {second}\n"
              "import ndengine as nd\n"
              "y = einops.rearrange(nd.ones((2, 3)), 'a b -> b a')\n"
              "assert type(y) is nd.NDArray and y.shape == (3, 2), type(y)\n"
              "import sys\n"  # the one-shot hook is gone once it registered
              "assert not [f for f in sys.meta_path if getattr(f, 'name', '') == 'einops']\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
