"""ndengine.fft differential against NumPy: every transform over drawn shapes, dtypes and
n/s/axes/norm (values, shapes, dtypes; errors of NumPy's type, raised at the call), round trips,
out=, NumPy 2's deprecation warnings for s, NumPy's docstring examples; fftfreq, rfftfreq,
fftshift, ifftshift."""
import inspect
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import ndengine as nd
from ndengine.ndarray.fft import FUNCTIONS_FFT
from ndengine.ops.families.fft import MANY_AXES, ONE_AXIS
from ndarray_helpers import DTYPES, EXTENDED, run_xp, shapes, values
from numpy_doc_examples import run_doc_examples

pytestmark = pytest.mark.usefixtures("nd_engine")

TRANSFORMS = [*ONE_AXIS, *MANY_AXES]
NORMS = [None, "backward", "ortho", "forward"]
# NumPy 2.4's own ifft2, irfft2 and hfft ignore out= (numpy/numpy#30909); ndengine writes it
IGNORES_OUT = ("ifft2", "irfft2", "hfft")


def _public_type(error):
    """AxisError, or the built-in class NumPy's own (UFuncTypeError, ...) derives from."""
    return next(cls for cls in type(error).__mro__
                if cls is np.exceptions.AxisError or cls.__module__ == "builtins")


def compare(body, *args):
    """body(numpy, ...) vs body(ndengine, ...): the same values, or an error of NumPy's type
    that ndengine raises at the call (nothing here waits for the pushed op)."""
    try:
        with np.errstate(all="ignore"):
            body(np, *args)
    except Exception as exc:  # noqa: BLE001 - the oracle's error is the expectation
        with pytest.raises(_public_type(exc)):
            body(nd, *args)
        return
    run_xp(body, *args, tol="close")


def arrays(data, min_dims=0):
    dtype = data.draw(st.sampled_from(DTYPES + EXTENDED), label="dtype")
    shape = data.draw(shapes(min_dims=min_dims, max_dims=3, max_side=5), label="shape")
    return data.draw(values(dtype, shape, lo=-100, hi=100), label="x")


def _axes(data, ndim):
    return data.draw(st.lists(st.integers(-ndim - 1, ndim), max_size=3), label="axes")


@given(data=st.data())
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_one_axis_transforms(data):
    x = arrays(data)
    name = data.draw(st.sampled_from(list(ONE_AXIS)), label="name")
    n = data.draw(st.one_of(st.none(), st.integers(-1, 7)), label="n")
    axis = data.draw(st.integers(-x.ndim - 1, x.ndim), label="axis")
    norm = data.draw(st.sampled_from(NORMS + ["sideways"]), label="norm")
    compare(lambda xp, v: getattr(xp.fft, name)(xp.array(v), n, axis, norm), x)
    compare(lambda xp, v: getattr(xp.fft, name)(xp.array(v), n=n), x)


def _values_or_layout(result, empty_input, xp):
    return xp.zeros_like(result) if empty_input else result


@given(data=st.data())
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_many_axes_transforms(data):
    x = arrays(data)
    name = data.draw(st.sampled_from(list(MANY_AXES)), label="name")
    axes = data.draw(st.one_of(st.none(), st.just(tuple(range(x.ndim))),
                               st.lists(st.integers(-x.ndim - 1, x.ndim), max_size=3)),
                     label="axes")
    s = data.draw(st.one_of(st.none(), st.lists(st.one_of(st.integers(-2, 7), st.none()),
                                                max_size=3)), label="s")
    if s is not None and axes is not None and data.draw(st.booleans(), label="len(s)"):
        s = s[:len(axes)] + [3] * (len(axes) - len(s))  # mostly lengths that agree
    norm = data.draw(st.sampled_from(NORMS + ["sideways"]), label="norm")
    # an empty input padded by ``s`` into a non-empty result: NumPy's values then come from
    # memory its transform never wrote (they change from call to call), so shape and dtype only
    compare(lambda xp, v: _values_or_layout(getattr(xp.fft, name)(xp.array(v), s, axes, norm),
                                            x.size == 0, xp), x)
    if axes is not None:
        compare(lambda xp, v: getattr(xp.fft, name)(xp.array(v), axes=axes), x)


@given(data=st.data())
def test_round_trips(data):
    dtype = data.draw(st.sampled_from([np.float32, np.float64, np.complex64, np.complex128]),
                      label="dtype")
    x = data.draw(values(dtype, data.draw(shapes(min_dims=1, min_side=1), label="shape"),
                         lo=-100, hi=100), label="x")
    norm = data.draw(st.sampled_from(NORMS), label="norm")
    n = x.shape[-1]
    rtol = 1e-4 if x.dtype in (np.float32, np.complex64) else 1e-9
    bodies = [lambda xp, v: xp.fft.ifft(xp.fft.fft(xp.array(v), norm=norm), norm=norm),
              lambda xp, v: xp.fft.ifftn(xp.fft.fftn(xp.array(v), norm=norm), norm=norm)]
    if x.dtype.kind == "f":
        bodies += [lambda xp, v: xp.fft.irfft(xp.fft.rfft(xp.array(v), norm=norm), n,
                                              norm=norm),
                   lambda xp, v: xp.fft.irfftn(xp.fft.rfftn(xp.array(v), norm=norm), x.shape,
                                               tuple(range(x.ndim)), norm=norm),
                   lambda xp, v: xp.fft.hfft(xp.fft.ihfft(xp.array(v), norm=norm), n,
                                             norm=norm)]
    for body in bodies:
        got = run_xp(body, x, tol="close")
        np.testing.assert_allclose(got, x, rtol=rtol, atol=rtol * 100 * x.size)


@pytest.mark.parametrize("name", TRANSFORMS)
def test_out_receives_the_result(name):
    x = np.linspace(-1, 1, 24).reshape(2, 3, 4)
    if {**ONE_AXIS, **MANY_AXES}[name] != "r2c":
        x = x * (1 - 2j)
    expected = getattr(np.fft, name)(x)
    out = nd.zeros(expected.shape, expected.dtype)
    got = getattr(nd.fft, name)(nd.array(x), out=out)
    assert got is out
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-12, atol=1e-12)
    narrower = nd.zeros(expected.shape, np.complex64 if expected.dtype.kind == "c"
                        else np.float32)
    getattr(nd.fft, name)(nd.array(x), out=(narrower,))  # same_kind, as NumPy casts
    np.testing.assert_allclose(narrower.asnumpy(), expected, rtol=1e-5, atol=1e-5)
    wrong = [np.zeros(expected.shape[:-1] + (9,), expected.dtype),
             np.zeros(expected.shape, np.int64)]
    for bad in wrong:
        if name in IGNORES_OUT:  # NumPy does not look at it; ndengine refuses it
            with pytest.raises((ValueError, TypeError)):
                getattr(nd.fft, name)(nd.array(x), out=nd.array(bad))
            continue
        compare(lambda xp, v, o: getattr(xp.fft, name)(xp.array(v), out=xp.array(o)), x, bad)


@pytest.mark.parametrize("name", ["fft", "ifft", "fftn", "fft2", "ifftn"])
def test_out_may_be_the_input(name):
    x = np.arange(12.0).reshape(3, 4) * (1 + 1j)
    a = nd.array(x)
    assert getattr(nd.fft, name)(a, out=a) is a
    np.testing.assert_allclose(a.asnumpy(), getattr(np.fft, name)(x), rtol=1e-12)


@pytest.mark.parametrize("name", list(MANY_AXES))
def test_s_gives_numpys_deprecation_warnings(name):
    x = np.ones((3, 4))
    deprecated = [{"s": (None, 4), "axes": (0, 1)}]
    if not name.endswith("2"):  # fft2 & co. default to axes=(-2, -1)
        deprecated.append({"s": (3, 4)})
    for kwargs in deprecated:
        expected = None
        for xp in (np, nd):
            with pytest.warns(DeprecationWarning, match="NumPy 2.0"):
                result = getattr(xp.fft, name)(xp.array(x), **kwargs)
            if expected is None:
                expected = result
        np.testing.assert_allclose(result.asnumpy(), expected, rtol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # s with axes and no None: no warning
        getattr(nd.fft, name)(nd.array(x), s=(3, 4), axes=(0, 1)).wait_to_read()


ERRORS = [  # (name, input dtype, keyword arguments): NumPy raises, ndengine at the call
    ("fft", float, {"n": 0}), ("ifft", float, {"n": -1}), ("fft", float, {"axis": 2}),
    ("fft", float, {"n": 4, "axis": -3}), ("rfft", float, {"norm": "sideways"}),
    ("fft", float, {"n": 4.0}), ("fft", float, {"axis": 1.0}), ("irfft", float, {"axis": 0}),
    ("rfft", complex, {}), ("ihfft", complex, {"n": 3}), ("hfft", complex, {"norm": "x"}),
    ("rfftn", complex, {"s": (0, 4), "axes": (0, 1)}),  # the dtype error comes first
    ("fftn", float, {"s": (2,), "axes": (0, 1)}),
    ("ifftn", float, {"s": (-2, 4), "axes": (0, 1)}), ("rfftn", float, {"axes": ()}),
    ("irfftn", float, {"axes": ()}), ("fftn", float, {"axes": (0, 2)}),
    ("fftn", float, {"s": (3, 4), "axes": (0, 2)}), ("fftn", float, {"axes": 0}),
    ("irfft2", complex, {"norm": "sideways"}), ("fftn", float, {"s": 3, "axes": (0,)}),
]


@pytest.mark.parametrize("name, dtype, kwargs", ERRORS, ids=str)
def test_errors_at_the_call(name, dtype, kwargs):
    x = np.ones((1, 4), dtype)
    with pytest.raises(Exception):  # noqa: B017 - the case must be an error in NumPy
        getattr(np.fft, name)(x, **kwargs)
    compare(lambda xp, v: getattr(xp.fft, name)(xp.array(v), **kwargs), x)


@pytest.mark.parametrize("name", TRANSFORMS)
@pytest.mark.parametrize("dtype", DTYPES + EXTENDED, ids=str)
def test_every_dtype(name, dtype):
    x = (np.arange(12).reshape(3, 4) % 5).astype(dtype)
    compare(lambda xp, v: getattr(xp.fft, name)(xp.array(v)), x)
    one_axis = {"axis": 0} if name in ONE_AXIS else {"axes": (0,)}
    compare(lambda xp, v: getattr(xp.fft, name)(xp.array(v), **one_axis), x)


def test_the_transform_reads_after_pending_writes():
    a = nd.zeros((128, 128))  # large: pushed to the engine, not run in the calling thread
    a += 1
    spectrum = nd.fft.rfft2(a)
    a += 1  # written after the transform was pushed: the transform reads the ones
    np.testing.assert_allclose(spectrum.asnumpy(), np.fft.rfft2(np.ones((128, 128))))
    assert spectrum.dtype == np.complex128


@given(n=st.integers(-2, 9), d=st.sampled_from([1.0, 0.1, 2, -0.5, np.float32(0.25), 0]))
def test_sample_frequencies(n, d):
    for name in ("fftfreq", "rfftfreq"):
        run_xp(lambda xp: getattr(xp.fft, name)(n, d), tol="close")
    run_xp(lambda xp: xp.fft.fftfreq(n, d=d, device="cpu"), tol="close")
    run_xp(lambda xp: xp.fft.rfftfreq(2.5))
    run_xp(lambda xp: xp.fft.fftfreq(4, device="gpu"))


@given(data=st.data())
def test_shifts(data):
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    x = data.draw(values(dtype, data.draw(shapes(max_dims=3, max_side=5))), label="x")
    axes = data.draw(st.one_of(st.none(), st.integers(-x.ndim - 1, x.ndim),
                               st.lists(st.integers(-x.ndim - 1, x.ndim), max_size=3)),
                     label="axes")
    for name in ("fftshift", "ifftshift"):
        run_xp(lambda xp, v: getattr(xp.fft, name)(xp.array(v), axes), x)
    run_xp(lambda xp, v: xp.fft.ifftshift(xp.fft.fftshift(xp.array(v), axes), axes), x)


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq", "fftshift", "ifftshift",
                                  *TRANSFORMS])
def test_numpy_doc_examples(name):
    run_doc_examples(getattr(np.fft, name))


def test_signatures_are_numpys():
    for name, function in FUNCTIONS_FFT.items():
        assert inspect.signature(function) == inspect.signature(getattr(np.fft, name))
    assert set(TRANSFORMS) <= set(nd.fft.__all__)
    assert set(np.fft.__all__) <= set(nd.fft.__all__)
