"""NumPy's functions called with NDArrays (``__array_function__``): ndengine's function of the
same name, pushed, where there is one; NumPy's on copies otherwise. And the NumPy methods
NDArray adds here: fill, itemsize, flat, view, item(index), __format__, __round__."""
import warnings

import numpy as np
import pytest

import ndengine as nd
from ndengine.core import NDArray
from ndengine.ndarray import interop
from engine_helpers import run_script

from ndarray_helpers import run_xp

pytestmark = pytest.mark.usefixtures("nd_engine")



DISPATCHED = [
    lambda np_, a, b: np_.concatenate([a, b]),
    lambda np_, a, b: np_.concatenate((a, b), axis=1),
    lambda np_, a, b: np_.where(a > 2, a, b),
    lambda np_, a, b: np_.dot(a, b.T),
    lambda np_, a, b: np_.mean(a, axis=0),
    lambda np_, a, b: np_.sum(a, axis=1, keepdims=True),
    lambda np_, a, b: np_.std(a),
    lambda np_, a, b: np_.clip(a, 1, 4),
    lambda np_, a, b: np_.round(a / 3, 2),
    lambda np_, a, b: np_.stack([a, b], axis=-1),
    lambda np_, a, b: np_.max(b, axis=0),
    lambda np_, a, b: np_.argmin(a, axis=1),
    lambda np_, a, b: np_.zeros_like(a),
    lambda np_, a, b: np_.copy(b),
    lambda np_, a, b: np_.broadcast_to(a[0], (3, 3)),
]


@pytest.mark.parametrize("call", DISPATCHED)
def test_numpy_functions_run_ndengines_pushed(call, no_waits):
    a, b = np.arange(6.0).reshape(2, 3), np.linspace(-1, 1, 6).reshape(2, 3)
    x, y = nd.array(a), nd.array(b)
    result = call(np, x, y)  # no wait allowed here
    assert isinstance(result, NDArray)
    no_waits.undo()
    want = call(np, a, b)
    np.testing.assert_allclose(result.asnumpy(), want, rtol=1e-12)
    assert result.dtype == want.dtype and result.shape == want.shape


def test_mixed_numpy_and_ndarray_arguments():
    x = nd.arange(3.0)
    result = np.concatenate([x, np.ones(2)])
    assert isinstance(result, NDArray)
    np.testing.assert_array_equal(result.asnumpy(), [0, 1, 2, 1, 1])
    assert isinstance(np.where(np.array([True, False, True]), x, 0), NDArray)


DISPATCHED = [
    lambda np_, a: np_.median(a, axis=0),
    lambda np_, a: np_.linalg.norm(a),
    lambda np_, a: np_.where(a > 2),
    lambda np_, a: np_.mean(a, where=a > 1),
    lambda np_, a: np_.percentile(a, [25, 75]),
    lambda np_, a: np_.array_equal(a, a),
    lambda np_, a: np_.allclose(a, a + 1e-12),
    lambda np_, a: np_.amax(a, axis=1),
    lambda np_, a: np_.around(a, 1),
    lambda np_, a: np_.concat([a, a]),
    lambda np_, a: np_.histogram(a, bins=3),
    lambda np_, a: np_.isneginf(-a),
]

DISPATCHED += [  # once fallbacks, now ndengine's own
    lambda np_, a: np_.cross(a[:, :3], a[::-1, :3]),
    lambda np_, a: np_.trapezoid(a, axis=0),
    lambda np_, a: np_.sinc(-a),
    lambda np_, a: np_.interp([1.5, 2.5], [1.0, 2.0, 3.0], a[0]),
    lambda np_, a: np_.polyval([1.0, 2.0], a),
    lambda np_, a: np_.histogram2d(a[:, 0], a[:, 1], bins=2),
    lambda np_, a: np_.i0(a),
    lambda np_, a: np_.unwrap(a, axis=0),
    lambda np_, a: np_.emath.sqrt(a - 3),
    lambda np_, a: np_.lib.stride_tricks.sliding_window_view(a, 2, axis=0),
]

FALLBACKS = [  # NumPy functions ndengine does not have
    lambda np_, a: np_.linalg.tensorinv(np_.eye(4).reshape(4, 2, 2) + a[:1, :1], ind=1),
]


def _pairs(got, want):
    return zip(got if isinstance(want, tuple) else [got],
               want if isinstance(want, tuple) else [want])


@pytest.mark.parametrize("call", DISPATCHED)
def test_numpy_functions_ndengine_has_are_its_own(call):
    a = np.arange(12.0).reshape(4, 3) ** 1.5
    got, want = call(np, nd.array(a)), call(np, a)
    for g, w in _pairs(got, want):
        if isinstance(w, np.ndarray):
            assert isinstance(g, NDArray)
            g = g.asnumpy()
        np.testing.assert_allclose(g, w, rtol=1e-12)


@pytest.mark.parametrize("call", FALLBACKS)
def test_functions_ndengine_lacks_run_numpys_on_copies(call):
    a = np.arange(12.0).reshape(4, 3) ** 1.5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", nd.NumPyFallbackWarning)
        got = call(np, nd.array(a))
    want = call(np, a)
    for g, w in _pairs(got, want):
        assert not isinstance(g, NDArray)
        np.testing.assert_array_equal(g, w, strict=True)


def test_shape_queries_do_not_wait(no_waits):
    x = nd.zeros((2, 3), np.float32)
    assert np.shape(x) == (2, 3) and np.ndim(x) == 2 and np.size(x) == 6
    assert np.size(x, 1) == 3 and not np.iscomplexobj(x) and np.isrealobj(x)
    assert np.result_type(x, np.int64) == np.float64
    assert np.can_cast(x, np.float64)


def test_save_is_numpys_npy(tmp_path):
    path = tmp_path / "x.npy"
    np.save(path, nd.arange(4))
    np.testing.assert_array_equal(np.load(path), np.arange(4))


def test_writing_into_an_ndarray_copy_is_refused(monkeypatch):
    x = nd.zeros(4)
    for name in ("copyto", "putmask"):  # as if ndengine lacked them (it has them all now)
        monkeypatch.delattr(nd, name)
    with pytest.raises(TypeError, match="copy"):
        np.copyto(x, 1.0)
    with pytest.raises(TypeError, match="copy"):
        np.putmask(nd.zeros((2, 2)), [[True, False], [False, True]], 1)
    monkeypatch.undo()
    with pytest.raises(TypeError, match="out=NDArray"):
        np.ldexp(x, 1, out=nd.zeros(4), where=np.ones(4, bool))  # an argument ndengine lacks
    np.testing.assert_array_equal(x.asnumpy(), np.zeros(4))
    np.put(x, [0], 5)  # ndengine has put: a pushed write into x itself
    np.testing.assert_array_equal(x.asnumpy(), [5, 0, 0, 0])
    square = nd.zeros((2, 2))
    np.fill_diagonal(square, 1)  # and fill_diagonal
    np.testing.assert_array_equal(square.asnumpy(), np.eye(2))
    np.copyto(np.zeros(4), x)  # reading an NDArray into NumPy's own array is fine


class _Foreign:
    def __array_function__(self, func, types, args, kwargs):
        return NotImplemented


def test_other_array_types_are_left_to_numpy():
    with pytest.raises(TypeError):
        np.concatenate([nd.zeros(2), _Foreign()])


def test_ufuncs_still_dispatch_through_array_ufunc():
    result = np.exp(nd.arange(3.0))
    assert isinstance(result, NDArray)
    np.testing.assert_allclose(result.asnumpy(), np.exp(np.arange(3.0)))


# ---------------------------------------------------------------- methods
@pytest.mark.parametrize("value", [3, 2.7, -1, True, None, 300, [5], [1, 2], np.float32(1.5),
                                   "a", np.array(2.5)])
@pytest.mark.parametrize("dtype", ["float64", "int8", "uint8", "bool"])
def test_fill(value, dtype):
    def body(xp):
        x = xp.arange(4).astype(dtype)
        x[1:3].fill(value)
        return x
    run_xp(body, any_error=True)


def test_itemsize_nbytes_tolist_item():
    for dtype in ("int8", "uint16", "float32", "float64", "bool"):
        x, a = nd.zeros((2, 3), dtype), np.zeros((2, 3), dtype)
        assert (x.itemsize, x.nbytes) == (a.itemsize, a.nbytes)
    a = np.arange(6.0).reshape(2, 3)
    x = nd.array(a)
    assert x.tolist() == a.tolist()
    for args in [(), (4,), (-1,), (1, 2), ((0, 1),)]:
        if args == ():
            assert nd.array(2.5).item() == 2.5
            continue
        assert x.item(*args) == a.item(*args) and type(x.item(*args)) is float
    for bad in [(6,), (-7,), (1, 5), (1.0,), (1, 2, 3)]:
        with pytest.raises(Exception) as want:  # noqa: B017
            a.item(*bad)
        with pytest.raises(type(want.value)):
            x.item(*bad)


FLAT_READS = [4, -1, slice(1, 5), slice(None, None, -2), [0, 5, 2], np.array([1, 3])]


@pytest.mark.parametrize("key", FLAT_READS)
def test_flat_reads(key):
    run_xp(lambda xp: xp.array(np.arange(12.0).reshape(3, 4)).T.flat[key])


@pytest.mark.parametrize("key, value", [(4, 99), (slice(0, 4), [1, 2]), ([0, 5, 7], 7.5),
                                        (slice(None), np.arange(12)), ([1, 2], [3, 4]),
                                        (slice(2, 5), [9, 8, 7])])
def test_flat_writes(key, value):
    def body(xp):
        x = xp.array(np.zeros((3, 4)))
        view = x[:, 1:].T  # not contiguous: flat order is the view's C order
        view.flat[key] = value
        return x
    run_xp(body)


def test_flat_iteration_and_assignment():
    a = np.arange(6).reshape(2, 3)
    x = nd.array(a)
    assert len(x.flat) == 6
    assert [v.item() for v in x.T.flat] == list(a.T.flat)
    np.testing.assert_array_equal(np.asarray(x.T.flat), np.asarray(a.T.flat))
    np.testing.assert_array_equal(x.flat.copy().asnumpy(), a.flat.copy())
    x.flat = 7
    np.testing.assert_array_equal(x.asnumpy(), np.full((2, 3), 7))
    x.flat = [1, 2]  # repeated, as NumPy's
    a.flat = [1, 2]
    np.testing.assert_array_equal(x.asnumpy(), a)
    assert x.flat.base is x


def test_view_shares_memory():
    x = nd.arange(6.0)
    for v in (x.view(), x.view(np.float64), x.view(nd.NDArray), x.view(type=nd.NDArray)):
        assert v is not x and v.shape == x.shape
    v = x.view()
    v[0] = 100
    assert x[0].item() == 100
    assert x.view(np.int64).dtype == np.int64


@pytest.mark.parametrize("dtype", [None, np.int32, np.uint8, np.float64, np.int16, np.bool_])
@pytest.mark.parametrize("select", [lambda m: m, lambda m: m[1:, 1:3], lambda m: m.T,
                                    lambda m: m[:, :3], lambda m: m[::2]])
def test_view_as_another_dtype_is_numpys(dtype, select):
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    run_xp(lambda xp: select(xp.array(a)).view(dtype))

    def written_through(xp):
        x = xp.array(a)
        v = x.view(np.int32)
        v[1, 2] = 7  # the same bytes
        return x
    run_xp(written_through)


@pytest.mark.parametrize("spec", ["", ".4f", ".2e", "8.3f", "+", ">10", "g"])
@pytest.mark.parametrize("value", [3.14159265, -2.5, 1e-7])
def test_format_of_a_0d_array_is_its_elements(spec, value):
    assert format(nd.array(value), spec) == format(np.float64(value), spec)
    assert f"{nd.array(np.float32(value)):{spec}}" == f"{np.float32(value):{spec}}"


@pytest.mark.parametrize("spec", ["", "d", "5d", "+", "x", ".2f", ","])
def test_format_of_a_0d_int_array_is_its_elements(spec):
    assert format(nd.array(-1234), spec) == format(np.int64(-1234), spec)
    assert format(nd.array(True), "") == format(np.bool_(True), "")


def test_format_of_arrays_is_numpys():
    a = np.arange(3.0)
    assert format(nd.array(a)) == format(a) and f"{nd.array(a)}" == f"{a}"
    with pytest.raises(TypeError):
        format(a, ".2f")
    with pytest.raises(TypeError):
        format(nd.array(a), ".2f")


@pytest.mark.parametrize("value", [2.5, 3.5, -2.567, 1234.5678, 7, np.float32(2.345)])
def test_round_of_a_0d_array_is_a_numpy_scalars(value):
    x, s = nd.array(value), np.asarray(value)[()]
    assert round(x) == round(s) and type(round(x)) is int
    for digits in (0, 1, 2, -1):
        got = round(x, digits)
        assert isinstance(got, NDArray) and got.shape == ()
        assert got.item() == round(s, digits).item() and got.dtype == np.asarray(
            round(s, digits)).dtype
    loss = (nd.arange(4.0) ** 2).mean()
    assert f"{loss:.4f}" == "3.5000" and round(loss, 2).item() == 3.5


def test_round_of_an_array_is_numpys_type_error():
    run_xp(lambda xp: round(xp.arange(3.0), 2))


@pytest.mark.parametrize("sep", ["", ","])
def test_tofile_and_tobytes_are_numpys(tmp_path, sep):
    a = np.arange(12, dtype=np.int16).reshape(3, 4)[:, 1:]
    x = nd.array(a) * 3
    x.tofile(str(tmp_path / "nd.bin"), sep=sep)
    (a * 3).tofile(str(tmp_path / "np.bin"), sep=sep)
    assert (tmp_path / "nd.bin").read_bytes() == (tmp_path / "np.bin").read_bytes()
    assert x.tobytes() == (a * 3).tobytes() and x.T.tobytes("F") == (a * 3).T.tobytes("F")


def test_a_fallback_warns_once_per_function_at_the_callers_line(monkeypatch):
    monkeypatch.setattr(interop, "_warned", set())
    x = nd.array(np.eye(4).reshape(4, 2, 2))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        np.linalg.tensorinv(x, ind=1)
        np.linalg.tensorinv(x, ind=1)
        np.exp(x)  # ndengine's own: no warning
    fallbacks = [w for w in caught if w.category is nd.NumPyFallbackWarning]
    assert len(fallbacks) == 1 and "numpy.linalg.tensorinv" in str(fallbacks[0].message)
    assert fallbacks[0].filename == __file__


def test_fallback_warnings_can_be_turned_off():
    result = run_script("""
        import warnings, numpy as np, ndengine as nd
        warnings.simplefilter("error")
        np.linalg.tensorinv(nd.array(np.eye(4).reshape(4, 2, 2)), ind=1)
        print("quiet")
    """, env={"NDENGINE_FALLBACK_WARNINGS": "0"}, timeout=120)
    assert result.returncode == 0 and "quiet" in result.stdout, result.stderr[-2000:]
