"""bartlett, blackman, hamming, hanning, kaiser, histogram2d, histogramdd,
histogram_bin_edges, packbits and unpackbits against NumPy: one body run with xp=numpy and
xp=ndengine; NumPy's signatures, values, dtypes and errors, and NumPy's documentation
examples."""
import inspect

import numpy as np
import pytest
from hypothesis import given, strategies as st

import ndengine as nd
from ndengine import autograd

from ndarray_helpers import run_xp, shapes
from numpy_doc_examples import run_doc_examples
from stats_helpers import arrays_of

pytestmark = pytest.mark.usefixtures("nd_engine")

WINDOWS = ["bartlett", "blackman", "hamming", "hanning", "kaiser"]
HISTOGRAMS = ["histogram2d", "histogramdd", "histogram_bin_edges"]
BITS = ["packbits", "unpackbits"]
REAL = [np.dtype(d) for d in ("int8", "uint8", "int64", "float32", "float64")]


@pytest.mark.parametrize("name", HISTOGRAMS + BITS)
def test_signature_is_numpys(name):
    assert inspect.signature(getattr(nd, name)) == inspect.signature(getattr(np, name))
    assert name in nd.__all__


@pytest.mark.parametrize("name", WINDOWS)
def test_window_signature_is_numpys_and_ctx(name):
    parameters = list(inspect.signature(getattr(nd, name)).parameters.values())
    assert parameters[-1].name == "ctx" and parameters[-1].kind is inspect.Parameter.KEYWORD_ONLY
    assert inspect.Signature(parameters[:-1]) == inspect.signature(getattr(np, name))
    window = getattr(nd, name)(5, *([2.0] if name == "kaiser" else []), ctx=nd.cpu(0))
    assert window.context == nd.cpu(0) and window.dtype == np.float64


@given(M=st.sampled_from([-2, 0, 1, 2, 5, 4.5, 1.5, 0.5, 17, 40.25, True, np.int8(6),
                          np.float32(7)]),
       name=st.sampled_from(WINDOWS), beta=st.sampled_from([0.0, 2.5, 14]))
def test_windows(M, name, beta):
    extra = (beta,) if name == "kaiser" else ()
    run_xp(lambda xp: getattr(xp, name)(M, *extra), tol="close")


def test_window_errors_and_ndarray_length():
    run_xp(lambda xp: xp.hanning("5"))
    run_xp(lambda xp: xp.kaiser(1 + 2j, 1.0))
    run_xp(lambda xp: xp.bartlett(None))
    run_xp(lambda xp: xp.hamming(xp.array(6)), tol="close")
    run_xp(lambda xp: xp.kaiser(xp.array(6), xp.array(3.0)), tol="close")


@given(data=st.data())
def test_histogram2d(data):
    n = data.draw(st.integers(0, 12))
    x = np.random.default_rng(n).integers(-5, 6, n).astype(data.draw(st.sampled_from(REAL)))
    y = np.arange(len(x), dtype=data.draw(st.sampled_from(REAL)))
    bins = data.draw(st.sampled_from([10, 3, [2, 4], np.array([-5.0, 0, 5]),
                                      [3, np.array([0.0, 2, 8, 20])]]))
    value_range = data.draw(st.sampled_from([None, [[-6, 6], [0, 12]]]))
    density = data.draw(st.sampled_from([None, True]))
    weights = data.draw(st.sampled_from([None, np.linspace(0.5, 2, len(x))]))
    run_xp(lambda xp: xp.histogram2d(
        xp.array(x), xp.array(y), bins=bins, range=value_range, density=density,
        weights=None if weights is None else xp.array(weights)), tol="close")


@given(data=st.data())
def test_histogramdd(data):
    sample = data.draw(arrays_of(REAL, min_dims=2, max_dims=2, lo=-5, hi=5))
    dims = sample.shape[1]
    bins = data.draw(st.sampled_from([4, tuple(range(2, 2 + dims)),
                                      [np.array([-5.0, 0, 5])] * dims]))
    density = data.draw(st.booleans())
    run_xp(lambda xp: xp.histogramdd(xp.array(sample), bins=bins, density=density),
           tol="close")
    columns = [sample[:, i] for i in range(dims)]
    run_xp(lambda xp: xp.histogramdd([xp.array(c) for c in columns], bins=bins), tol="close")


def test_histogramdd_samples_and_errors():
    run_xp(lambda xp: xp.histogramdd(xp.arange(6.0), bins=3))
    run_xp(lambda xp: xp.histogramdd([1.0, 2.0, 4.0], bins=2))
    run_xp(lambda xp: xp.histogramdd(xp.ones((2, 2, 2))))
    run_xp(lambda xp: xp.histogramdd(xp.ones((4, 2)), bins=(2, 3, 4)))
    run_xp(lambda xp: xp.histogramdd(xp.ones((4, 2)), weights=xp.ones(3)))
    run_xp(lambda xp: xp.histogramdd(xp.ones((4, 2)), range=[(0, 1), (2, 1)]))
    run_xp(lambda xp: xp.histogram2d(xp.ones(4), xp.ones(3)))
    run_xp(lambda xp: xp.histogram2d(xp.ones(4), xp.ones(4), bins=xp.array([3, 2])))
    run_xp(lambda xp: xp.histogram2d(xp.ones(4), xp.ones(4), bins=[1.0, 0.0, 2.0]))
    hist, edges = nd.histogramdd(nd.ones((4, 2)), bins=2)
    assert isinstance(edges, list) and all(isinstance(e, nd.NDArray) for e in edges)


@given(a=arrays_of(REAL, min_dims=1, max_dims=1, lo=-9, hi=9),
       bins=st.sampled_from([10, 1, 4, "auto", "fd", "sturges", "sqrt",
                             [0.0, 1.0, 5.0]]),
       value_range=st.sampled_from([None, (-3, 3)]))
def test_histogram_bin_edges(a, bins, value_range):
    # values on a grid of 1/8: the data-based widths ("fd": twice the IQR over the cube root
    # of the count) of a few nearly equal values ask NumPy itself for billions of bins (a
    # worker of a 400-example run was killed for its memory)
    if a.dtype.kind == "f":
        a = (np.round(a * 8) / 8).astype(a.dtype)
    run_xp(lambda xp: xp.histogram_bin_edges(xp.array(a), bins, value_range), tol="close")


def test_histogram_bin_edges_errors():
    run_xp(lambda xp: xp.histogram_bin_edges(xp.arange(4.0), "bogus"))
    run_xp(lambda xp: xp.histogram_bin_edges(xp.arange(4.0), "auto", weights=xp.ones(4)))
    run_xp(lambda xp: xp.histogram_bin_edges(xp.arange(4.0), -1))
    run_xp(lambda xp: xp.histogram_bin_edges(xp.arange(4.0), 3, (2, 1)))
    run_xp(lambda xp: xp.histogram_bin_edges(xp.arange(4.0), xp.array([0.0, 1.0, 3.0])))


@given(shape=shapes(max_dims=3), data=st.data())
def test_packbits_and_unpackbits(shape, data):
    dtype = data.draw(st.sampled_from(["uint8", "bool", "int64"]))
    a = np.random.default_rng(len(shape)).integers(0, 256, shape).astype(dtype)
    axis = data.draw(st.sampled_from([None, 0, -1]))
    bitorder = data.draw(st.sampled_from(["big", "little"]))
    run_xp(lambda xp: xp.packbits(xp.array(a), axis=axis, bitorder=bitorder))
    count = data.draw(st.sampled_from([None, 0, 3, 20, -3, -100]))
    if a.size == 0 and count:
        count = None  # NumPy leaves the padding of an empty input unwritten (garbage)
    run_xp(lambda xp: xp.unpackbits(xp.array(a), axis=axis, count=count, bitorder=bitorder))


@pytest.mark.parametrize("axis", [None, 0, -1])
@pytest.mark.parametrize("count", [-100, -32, -33, -1])
def test_unpackbits_with_a_negative_count_the_input_allows(axis, count):
    # a count the real input's bits allow, larger than the small stand-in's (a Hypothesis
    # draw found it: 4x4 uint8, count=-100)
    a = np.random.default_rng(0).integers(0, 256, (4, 4)).astype("uint8")
    run_xp(lambda xp: xp.unpackbits(xp.array(a), axis=axis, count=count))


def test_bits_errors():
    run_xp(lambda xp: xp.packbits(xp.ones(3)))
    run_xp(lambda xp: xp.unpackbits(xp.ones(3, dtype=xp.int8)))
    run_xp(lambda xp: xp.packbits(xp.ones(3, dtype=xp.uint8), bitorder="middle"))
    run_xp(lambda xp: xp.unpackbits(xp.ones(3, dtype=xp.uint8), axis=1))
    run_xp(lambda xp: xp.unpackbits(xp.ones(3, dtype=xp.uint8), count=1.5))


def test_pushed_ones_never_wait(no_waits):
    calls = [lambda xp, a, bits: xp.kaiser(9, 4.0), lambda xp, a, bits: xp.hanning(6),
             lambda xp, a, bits: xp.histogram2d(a, a[::-1], bins=(2, 3)),
             lambda xp, a, bits: xp.histogramdd(xp.stack([a, a * 2], axis=1), bins=3),
             lambda xp, a, bits: xp.histogram_bin_edges(a, 4, range=(0, 2)),
             lambda xp, a, bits: xp.packbits(bits, axis=0),
             lambda xp, a, bits: xp.unpackbits(bits, count=5)]
    a, bits = np.linspace(0.0, 2.0, 7), np.arange(12, dtype=np.uint8)
    results = [call(nd, nd.array(a), nd.array(bits)) for call in calls]
    no_waits.undo()
    for call, got in zip(calls, results):
        run_xp(lambda xp: got if xp is nd else call(np, a, bits), tol="close")


def test_pushed_ops_see_pending_writes():
    x = nd.zeros(8, dtype=np.uint8)
    x[0] = 1
    assert nd.packbits(x).tolist() == [128]
    samples = nd.zeros(4)
    samples[2:] = 3.0
    assert nd.histogram_bin_edges(samples, "sturges").tolist() == \
        np.histogram_bin_edges(np.array([0.0, 0.0, 3.0, 3.0]), "sturges").tolist()


@pytest.mark.parametrize("name", WINDOWS + HISTOGRAMS + BITS)
def test_numpy_doc_examples(name):
    compared = run_doc_examples(getattr(np, name), skip=("plt.", "matplotlib", "fig", "ax."))
    assert compared or name == "histogram2d"  # its examples only assign, then plot


def test_histograms_are_constants_to_autograd():
    x = nd.array([0.2, 0.7, 1.5, 1.9])
    x.attach_grad()
    with autograd.record():
        hist, edges_x, _ = nd.histogram2d(x, x[::-1], bins=2)
        y = (x * 3.0).sum() + hist.sum() + edges_x.sum() + nd.histogram_bin_edges(x, 3).sum()
    y.backward()
    assert x.grad.tolist() == [3.0] * 4
