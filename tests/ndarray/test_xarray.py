"""xarray on NDArrays (a duck array: ``x.__array_namespace__()`` is ``ndengine``): the calls
that needed names ndengine's namespace lacked (``xr.dot``: einsum; ``rolling``:
``lib.stride_tricks.sliding_window_view``; ``pad``; ``quantile``) give NDArrays with NumPy's
values."""
import numpy as np
import pytest

import ndengine as nd

xr = pytest.importorskip("xarray")

pytestmark = pytest.mark.usefixtures("nd_engine")

_CALLS = {
    "dot": lambda a, b: xr.dot(a, b),
    "rolling_mean": lambda a, b: a.rolling(y=2).mean(),
    "rolling_sum_centered": lambda a, b: a.rolling(y=3, center=True).sum(),
    "quantile": lambda a, b: a.quantile(0.5, dim="y"),
    "pad": lambda a, b: a.pad(y=1),
    "transpose_sum": lambda a, b: (a.T * 2).sum("x"),
    "where_mean": lambda a, b: a.where(a > 3).mean("y"),
    "concat": lambda a, b: xr.concat([a, a], dim="x"),
}


@pytest.mark.parametrize("call", sorted(_CALLS))
def test_xarray_calls_on_ndarrays_match_numpy(call):
    values, weights = np.arange(12.0).reshape(3, 4) ** 1.5, np.linspace(0.5, 2.0, 4)
    got = _CALLS[call](xr.DataArray(nd.array(values), dims=("x", "y")),
                       xr.DataArray(nd.array(weights), dims=("y",)))
    want = _CALLS[call](xr.DataArray(values, dims=("x", "y")),
                        xr.DataArray(weights, dims=("y",)))
    assert isinstance(got.data, nd.NDArray), type(got.data)
    assert got.dims == want.dims
    np.testing.assert_allclose(np.asarray(got.data), want.data, rtol=1e-12, equal_nan=True)


def test_sliding_window_view_is_a_view_with_numpys_geometry():
    values = np.arange(24.0).reshape(4, 6)
    x = nd.array(values)
    for window, axis in (((2, 3), None), ((2, 2), None), (2, 0), ((2, 3), (1, 0))):
        got = nd.lib.stride_tricks.sliding_window_view(x, window, axis=axis)
        want = np.lib.stride_tricks.sliding_window_view(values, window, axis=axis)
        assert got.base is x and got.shape == want.shape
        np.testing.assert_array_equal(got.asnumpy(), want)
    with pytest.raises(ValueError):
        nd.lib.stride_tricks.sliding_window_view(x, 7, axis=1)  # NumPy's error
