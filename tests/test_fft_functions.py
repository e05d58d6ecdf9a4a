"""ndengine.fft: fftfreq, rfftfreq, fftshift, ifftshift differential against NumPy; the
transforms are not built yet (no complex dtype) and say so, naming the NumPy call to use."""
import inspect

import numpy as np
import pytest
from hypothesis import given, strategies as st

import ndengine as nd
from ndengine.ndarray.fft import FUNCTIONS_FFT
from ndarray_helpers import DTYPES, run_xp, shapes, values
from numpy_doc_examples import run_doc_examples

pytestmark = pytest.mark.usefixtures("nd_engine")

TRANSFORMS = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "fftn", "ifftn"]


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


@pytest.mark.parametrize("name", TRANSFORMS)
def test_transforms_are_not_built_yet_and_name_the_numpy_call(name):
    with pytest.raises(NotImplementedError, match=rf"numpy\.fft\.{name}\(x\.asnumpy\(\)\)"):
        getattr(nd.fft, name)(nd.ones(4))
    with pytest.raises(TypeError, match="bogus"):  # NumPy's parameters still bind first
        getattr(nd.fft, name)(nd.ones(4), bogus=1)


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq", "fftshift", "ifftshift"])
def test_numpy_doc_examples(name):
    run_doc_examples(getattr(np.fft, name))


def test_signatures_are_numpys():
    for name, function in FUNCTIONS_FFT.items():
        assert inspect.signature(function) == inspect.signature(getattr(np.fft, name))
    assert set(TRANSFORMS) <= set(nd.fft.__all__)
