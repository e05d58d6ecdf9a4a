"""Shared helpers of the NumPy-fidelity tests (tests/test_fidelity_*.py): results compared
with NumPy's bit for bit (the sign of a zero, a NaN's payload and sign bit)."""
import numpy as np

_UNSIGNED_OF_SIZE = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def as_bits(array: np.ndarray) -> np.ndarray:
    """The array's elements as unsigned integers of their bits (a complex element: two, its
    real and imaginary parts); other dtypes as they are."""
    array = np.ascontiguousarray(array)
    if array.dtype.kind == "f":
        return array.view(_UNSIGNED_OF_SIZE[array.dtype.itemsize])
    if array.dtype.kind == "c":
        return array.view(_UNSIGNED_OF_SIZE[array.dtype.itemsize // 2])
    return array


def assert_same_bits(expected, got, what=""):
    """``got`` (an NDArray or NumPy array) has NumPy's result ``expected``: its dtype, shape
    and bits."""
    expected = np.asarray(expected)
    got = got.asnumpy() if hasattr(got, "asnumpy") else np.asarray(got)
    assert (got.dtype, got.shape) == (expected.dtype, expected.shape), \
        f"{what}: {got.dtype} {got.shape}, NumPy's {expected.dtype} {expected.shape}"
    expected_bits, got_bits = as_bits(expected).reshape(-1), as_bits(got).reshape(-1)
    differ = np.nonzero(expected_bits != got_bits)[0]
    assert differ.size == 0, (f"{what}: at {differ[:8]}, NumPy's {expected_bits[differ[:8]]}, "
                              f"ndengine's {got_bits[differ[:8]]}")
