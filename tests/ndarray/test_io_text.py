"""NumPy's text and archive I/O with NDArrays (ndengine/ndarray/io.py): loadtxt and
genfromtxt read through NumPy and return NDArrays (one body, xp=numpy and xp=ndengine);
savetxt, savez and savez_compressed take NDArrays; load reads NumPy's .npy and .npz."""
import inspect
import io

import numpy as np
import pytest

import ndengine as nd

from ndarray_helpers import run_xp

pytestmark = pytest.mark.usefixtures("nd_engine")

TEXT = "# a comment\n1 2 3\n4 5 6\n-7 8.5 9\n"
CSV_WITH_GAPS = "1,2,3\n4,,6\n7,8,\n"


@pytest.mark.parametrize("name", ["loadtxt", "genfromtxt"])
def test_readers_have_numpys_signatures(name):
    assert inspect.signature(getattr(nd, name)) == inspect.signature(getattr(np, name))
    assert name in nd.__all__


@pytest.mark.parametrize("kwargs", [{}, {"dtype": np.float32}, {"usecols": (0, 2)},
                                    {"unpack": True}, {"skiprows": 2, "ndmin": 2},
                                    {"usecols": 1, "ndmin": 0}, {"skiprows": 1, "max_rows": 1}])
def test_loadtxt_as_numpy(kwargs):
    run_xp(lambda xp: xp.loadtxt(io.StringIO(TEXT), **kwargs))


def test_loadtxt_errors_and_like_as_numpy():
    run_xp(lambda xp: xp.loadtxt(io.StringIO("1 2\n3 x\n")))  # ValueError, as NumPy
    run_xp(lambda xp: xp.loadtxt(io.StringIO(TEXT), dtype=np.int64))
    for loadtxt in (nd.loadtxt, np.loadtxt):  # NumPy hands like=NDArray to ndengine's
        got = loadtxt(io.StringIO(TEXT), like=nd.zeros(1))
        assert isinstance(got, nd.NDArray)
        np.testing.assert_array_equal(got.asnumpy(), np.loadtxt(io.StringIO(TEXT)))


@pytest.mark.parametrize("kwargs", [{}, {"filling_values": -1}, {"dtype": np.int16,
                                                                 "filling_values": 0},
                                    {"usecols": (0, 1), "skip_header": 1}])
def test_genfromtxt_as_numpy(kwargs):
    run_xp(lambda xp: xp.genfromtxt(io.StringIO(CSV_WITH_GAPS), delimiter=",", **kwargs))


def test_genfromtxt_results_ndengine_cannot_hold_are_errors():
    with pytest.raises(TypeError, match="no masked arrays"):
        nd.genfromtxt(io.StringIO(CSV_WITH_GAPS), delimiter=",", usemask=True)
    with pytest.raises(TypeError, match="does not support dtype"):
        nd.genfromtxt(io.StringIO("a,b\n1,2\n"), delimiter=",", names=True)


def test_savers_take_ndarrays(tmp_path):
    x, y = nd.arange(6.0).reshape(2, 3), nd.arange(4, dtype=np.int16)
    for name in ("savetxt", "savez", "savez_compressed"):
        assert getattr(nd, name) is getattr(np, name)
    text = io.StringIO()
    nd.savetxt(text, x, fmt="%.1f", delimiter=",")
    assert text.getvalue() == "0.0,1.0,2.0\n3.0,4.0,5.0\n"
    for save in (nd.savez, nd.savez_compressed):
        path = tmp_path / f"{save.__name__}.npz"
        save(path, x, y=y)
        with np.load(path) as data:
            np.testing.assert_array_equal(data["arr_0"], x.asnumpy())
            assert data["y"].dtype == np.int16
        loaded = nd.load(path)
        assert set(loaded) == {"arr_0", "y"} and isinstance(loaded["y"], nd.NDArray)
        np.testing.assert_array_equal(loaded["y"].asnumpy(), y.asnumpy(), strict=True)


def test_load_reads_numpys_npy(tmp_path):
    path = tmp_path / "a.npy"
    np.save(path, nd.arange(5, dtype=np.uint8))
    loaded = nd.load(path)
    assert isinstance(loaded, nd.NDArray)
    np.testing.assert_array_equal(loaded.asnumpy(), np.arange(5, dtype=np.uint8), strict=True)
