"""Central-difference checks (float64) of the gradient rules of medians and quantiles, the
nan- and where- reductions, nancumprod, linalg.lstsq (``MORE_CASES``), and of the complex
ones, the FFTs and linalg.eig/eigvals (``COMPLEX_CASES``), with PyTorch's convention: for a
real loss L the gradient of a complex z is dL/dRe(z) + i dL/dIm(z). A complex result is
checked through the real loss ``sum(w * abs(y + c) ** 2)`` (random ``w`` > 0 and complex
``c``), which reads both parts of every element. tests/autograd/test_autograd_rules.py's coverage
check reads both tables. Under all three engines."""
import numpy as np
import pytest

import ndengine as nd
from ndengine import autograd

from test_autograd import check_gradients

pytestmark = pytest.mark.usefixtures("nd_engine")

RNG = np.random.default_rng(23)


def rand(*shape, lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, shape)


def crand(*shape):
    return rand(*shape) + 1j * rand(*shape)


def distinct(*shape):
    return RNG.permutation(np.arange(np.prod(shape), dtype=np.float64)).reshape(shape) / 3 - 1


def with_nan(a, *positions):
    a = a.copy()
    for p in positions or (1,):
        a.flat[p] = np.nan
    return a


MASK = np.array([True, False, True, True])

MORE_CASES = {
    "nanprod": [(lambda xp, x: xp.nanprod(x, axis=1), [with_nan(rand(2, 3))]),
                (lambda xp, x: xp.nanprod(x, axis=0, where=MASK, initial=1.5, keepdims=True),
                 [with_nan(rand(3, 4), 0, 6)])],
    "nanstd": [(lambda xp, x: xp.nanstd(x, axis=1, ddof=1), [with_nan(rand(2, 4))]),
               (lambda xp, x: xp.nanstd(x, where=MASK, correction=1), [with_nan(rand(2, 4))])],
    "nanvar": [(lambda xp, x: xp.nanvar(x), [with_nan(rand(2, 4))]),
               (lambda xp, x, m: xp.nanvar(x, axis=1, keepdims=True, mean=m),
                [with_nan(rand(2, 4)), rand(2, 1)])],
    "nancumprod": [(lambda xp, x: xp.nancumprod(x, axis=1), [with_nan(rand(2, 3, lo=0.5,
                                                                               hi=1.5))]),
                   (lambda xp, x: xp.nancumprod(x), [with_nan(rand(2, 2, lo=0.5, hi=1.5), 2)])],
    "nansum": [(lambda xp, x: xp.nansum(x, axis=1, where=MASK), [with_nan(rand(2, 4))])],
    "nanmean": [(lambda xp, x: xp.nanmean(x, axis=1, where=MASK), [with_nan(rand(2, 4))])],
    "nanmax": [(lambda xp, x: xp.nanmax(x, axis=1, where=MASK, initial=-9.0),
                [with_nan(distinct(2, 4), 2)])],
    "prod_where": [(lambda xp, x: xp.prod(x, axis=1, where=MASK, initial=2.0), [rand(2, 4)]),
                   (lambda xp, x: xp.prod(x, where=MASK[:, None], keepdims=True),
                    [rand(4, 2, lo=0.5, hi=1.5)])],
    "std_where": [(lambda xp, x: xp.std(x, axis=1, ddof=1, where=MASK), [rand(2, 4)]),
                  (lambda xp, x, m: xp.std(x, axis=0, where=MASK[:, None], mean=m),
                   [rand(4, 3), rand(3)])],
    "var_where": [(lambda xp, x: xp.var(x, where=MASK, correction=1), [rand(3, 4)]),
                  (lambda xp, x, m: xp.var(x, axis=1, keepdims=True, mean=m),
                   [rand(2, 4), rand(2, 1)])],
    "median": [(lambda xp, x: xp.median(x, axis=1), [distinct(3, 4)]),
               (lambda xp, x: xp.median(x), [distinct(3, 3)]),
               (lambda xp, x: xp.median(x, axis=(0, 2), keepdims=True), [distinct(2, 3, 2)])],
    "nanmedian": [(lambda xp, x: xp.nanmedian(x, axis=0, keepdims=True),
                   [with_nan(distinct(4, 3), 1, 4)]),
                  (lambda xp, x: xp.nanmedian(x), [with_nan(distinct(2, 4))])],
    "quantile": [(lambda xp, x: xp.quantile(x, 0.3, axis=1), [distinct(2, 5)]),
                 (lambda xp, x, q: xp.quantile(x, q, axis=(0, 2)),
                  [distinct(2, 3, 2), np.array([0.13, 0.71, 0.5])]),
                 *[(lambda xp, x, m=m: xp.quantile(x, [0.0, 0.21, 0.64, 1.0], axis=0, method=m),
                    [distinct(5, 2)])
                   for m in ("linear", "weibull", "hazen", "median_unbiased", "normal_unbiased",
                             "interpolated_inverted_cdf", "midpoint", "lower", "higher",
                             "nearest")]],
    "percentile": [(lambda xp, x: xp.percentile(x, [10, 63], axis=0, method="hazen"),
                    [distinct(5, 2)]),
                   (lambda xp, x, q: xp.percentile(x, q, keepdims=True), [distinct(2, 3),
                                                                          np.array(37.0)])],
    "nanquantile": [(lambda xp, x, q: xp.nanquantile(x, q, axis=1),
                     [with_nan(distinct(2, 5), 3), np.array([[0.2], [0.77]])]),
                    (lambda xp, x: xp.nanquantile(x, 0.6, axis=0, method="weibull"),
                     [with_nan(distinct(4, 2), 0, 5)])],
    "nanpercentile": [(lambda xp, x: xp.nanpercentile(x, 40, method="midpoint"),
                       [with_nan(distinct(2, 5), 3)]),
                      (lambda xp, x, q: xp.nanpercentile(x, q, axis=1), [with_nan(distinct(2, 4)),
                                                                         np.array([15.0, 80.0])])],
    "linalg.lstsq": [(lambda xp, a, b: xp.linalg.lstsq(a, b)[0], [rand(4, 2), rand(4)]),
                     (lambda xp, a, b: xp.linalg.lstsq(a, b)[1] + xp.linalg.lstsq(a, b)[3].sum(),
                      [rand(4, 2), rand(4, 3)]),
                     (lambda xp, a, b: xp.linalg.lstsq(a, b)[0], [rand(2, 4), rand(2, 2)]),
                     (lambda xp, a, b: xp.linalg.lstsq(a, b)[0], [rand(3, 3) + 2 * np.eye(3),
                                                                  rand(3, 1)])],
}


@pytest.mark.parametrize("name", sorted(MORE_CASES))
def test_rule_matches_central_differences(name):
    for fn, arrays in MORE_CASES[name]:
        check_gradients(fn, *arrays, rtol=1e-5, atol=1e-7)


# ---------------------------------------------------------------- complex values

def _loss(xp, y, w, c):
    if xp is np:
        return np.sum(w * np.abs(y + c) ** 2)
    return (nd.abs(y + nd.array(c)) ** 2 * nd.array(w)).sum()


def numeric_gradients(fn, arrays, w, c, eps=1e-6):
    """dL/dRe + i dL/dIm of L = _loss(fn(*arrays)) by central differences (a real array:
    dL/dx)."""
    grads = []
    for k, a in enumerate(arrays):
        g = np.zeros(a.shape, a.dtype)
        for index in np.ndindex(a.shape):
            for unit in ((1, 1j) if a.dtype.kind == "c" else (1,)):
                values = []
                for step in (eps, -eps):
                    shifted = [x.copy() for x in arrays]
                    shifted[k][index] += step * unit
                    values.append(_loss(np, fn(np, *shifted), w, c))
                g[index] += (values[0] - values[1]) / (2 * eps) * unit
        grads.append(g)
    return grads


def check_complex(fn, *arrays, rtol=1e-5, atol=1e-7):
    """ndengine's backward of ``sum(w * abs(fn(nd, *arrays) + c) ** 2)`` against central
    differences; each gradient keeps its input's dtype (a real input's is real)."""
    arrays = [np.array(a) for a in arrays]
    expected = fn(np, *arrays)
    w = np.random.default_rng(7).uniform(0.5, 1.5, np.shape(expected))
    c = np.random.default_rng(8).uniform(-1, 1, np.shape(expected)) * (1 + 1j) + 0.3j
    variables = [nd.array(a) for a in arrays]
    for v in variables:
        v.attach_grad()
    with autograd.record():
        out = fn(nd, *variables)
        loss = _loss(nd, out, w, c)
    loss.backward()
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-10, atol=1e-12)
    for v, a, g in zip(variables, arrays, numeric_gradients(fn, arrays, w, c)):
        assert v.grad.dtype == a.dtype
        np.testing.assert_allclose(v.grad.asnumpy(), g, rtol=rtol, atol=atol)


COMPLEX_CASES = {
    "fft.fft": [(lambda xp, x: xp.fft.fft(x), [rand(2, 5)]),
                (lambda xp, x: xp.fft.fft(x, n=3, axis=0, norm="ortho"), [crand(4, 2)]),
                (lambda xp, x: xp.fft.fft(x, n=6, norm="forward"), [crand(2, 4)])],
    "fft.ifft": [(lambda xp, x: xp.fft.ifft(x, n=5), [crand(3)]),
                 (lambda xp, x: xp.fft.ifft(x, axis=0), [rand(3, 2)])],
    "fft.rfft": [(lambda xp, x: xp.fft.rfft(x), [rand(2, 6)]),
                 (lambda xp, x: xp.fft.rfft(x, n=5, norm="ortho"), [rand(2, 6)]),
                 (lambda xp, x: xp.fft.rfft(x, n=8, axis=0, norm="forward"), [rand(5, 2)])],
    "fft.irfft": [(lambda xp, x: xp.fft.irfft(x), [crand(2, 4)]),
                  (lambda xp, x: xp.fft.irfft(x, n=7, norm="ortho"), [crand(3)]),
                  (lambda xp, x: xp.fft.irfft(x, n=4, norm="forward"), [crand(5)]),
                  (lambda xp, x: xp.fft.irfft(x, n=5), [rand(4)])],
    "fft.hfft": [(lambda xp, x: xp.fft.hfft(x), [crand(4)]),
                 (lambda xp, x: xp.fft.hfft(x, n=5, norm="ortho"), [crand(2, 4)]),
                 (lambda xp, x: xp.fft.hfft(x, n=3, axis=0), [rand(3, 2)])],
    "fft.ihfft": [(lambda xp, x: xp.fft.ihfft(x), [rand(6)]),
                  (lambda xp, x: xp.fft.ihfft(x, n=5, axis=0, norm="forward"), [rand(4, 2)])],
    "fft.fft2": [(lambda xp, x: xp.fft.fft2(x), [crand(2, 3, 2)]),
                 (lambda xp, x: xp.fft.fft2(x, s=(4, 2), axes=(0, 2)), [rand(3, 2, 3)])],
    "fft.ifft2": [(lambda xp, x: xp.fft.ifft2(x, norm="ortho"), [crand(3, 3)])],
    "fft.fftn": [(lambda xp, x: xp.fft.fftn(x), [rand(2, 3, 2)]),
                 (lambda xp, x: xp.fft.fftn(x, s=(3,), axes=(0,), norm="forward"),
                  [crand(2, 2)])],
    "fft.ifftn": [(lambda xp, x: xp.fft.ifftn(x, s=(2, 5), axes=(1, 0)), [crand(3, 4)])],
    "fft.rfft2": [(lambda xp, x: xp.fft.rfft2(x), [rand(3, 4)])],
    "fft.rfftn": [(lambda xp, x: xp.fft.rfftn(x, s=(3, 5), axes=(0, 1), norm="ortho"),
                   [rand(2, 4, 2)]),
                  (lambda xp, x: xp.fft.rfftn(x), [rand(2, 3, 4)])],
    "fft.irfft2": [(lambda xp, x: xp.fft.irfft2(x), [crand(3, 3)])],
    "fft.irfftn": [(lambda xp, x: xp.fft.irfftn(x, s=(2, 5), axes=(1, 0), norm="forward"),
                    [crand(3, 2)]),
                   (lambda xp, x: xp.fft.irfftn(x), [rand(2, 3)])],
    # eigenvectors through abs (each one's phase is arbitrary), distinct eigenvalues
    "linalg.eig": [(lambda xp, a: xp.abs(xp.linalg.eig(a)[1]) + xp.linalg.eig(a)[0][..., None, :],
                    [crand(3, 3)]),
                   (lambda xp, a: xp.abs(xp.linalg.eig(a + 0.8 * a.T)[1])
                    * xp.linalg.eig(a + 0.8 * a.T)[0], [rand(3, 3) + np.diag([2.0, 0.0, -2.0])]),
                   (lambda xp, a: xp.linalg.eig(a)[0], [crand(2, 2, 2)])],
    "linalg.eigvals": [(lambda xp, a: xp.linalg.eigvals(a), [crand(2, 3, 3)]),
                       (lambda xp, a: xp.linalg.eigvals(a + a.T) ** 2,
                        [rand(3, 3) + np.diag([2.0, 0.0, -2.0])])],
}


@pytest.mark.parametrize("name", sorted(COMPLEX_CASES))
def test_complex_rule_matches_central_differences(name):
    for fn, arrays in COMPLEX_CASES[name]:
        check_complex(fn, *arrays)


@pytest.mark.parametrize("fn, arrays", [
    # a filter in the frequency domain: rfft, a complex product, irfft
    (lambda xp, x, h: xp.fft.irfft(xp.fft.rfft(x) * h, n=6), [rand(2, 6), crand(4)]),
    # holomorphic ops pass g times the conjugate derivative; conjugate passes conj(g)
    (lambda xp, z, h: xp.exp(z * xp.conjugate(h)) / (h + 2) @ h, [crand(2, 3), crand(3)]),
    (lambda xp, z, x: xp.sqrt(z + 3) ** 2.5 - x * z * z, [crand(3), rand(3)]),
    (lambda xp, x: xp.sin(x * (1 + 2j)), [rand(2, 2)]),  # a real input: the real part
    # products read the other operand's conjugate; vdot conjugates its first
    (lambda xp, a, b: xp.tensordot(a, b, ([1, 0], [0, 2])), [crand(2, 3), crand(3, 2, 2)]),
    (lambda xp, a, b: xp.dot(a, b), [crand(2, 3), crand(2, 3, 2)]),
    (lambda xp, a, b, c: xp.einsum("ij,jk,k->i", a, b, c) + xp.linalg.multi_dot([a, b, c]),
     [crand(2, 3), crand(3, 2), crand(2)]),
    (lambda xp, a, b: xp.kron(a, b).sum() + xp.outer(a, b)[0] * xp.vdot(a, b[:2])
     + xp.inner(a, b[:2]), [crand(2), crand(3)]),
    (lambda xp, x: xp.prod(x, axis=1) + xp.cumprod(x)[4:], [crand(2, 3)]),
], ids=["filter", "exp-divide-matmul", "power-multiply", "real-input", "tensordot", "dot",
        "einsum-multi_dot", "kron-outer-vdot-inner", "prod-cumprod"])
def test_complex_chains_follow_pytorchs_convention(fn, arrays):
    check_complex(fn, *arrays)


def test_variants_without_a_gradient_refuse_clearly():
    x = nd.array(distinct(3, 4))
    x.attach_grad()
    for make, error, message in [
            (lambda: nd.quantile(x, 0.3, method="inverted_cdf"), NotImplementedError,
             "method='inverted_cdf'"),
            (lambda: nd.percentile(x, 30, method="closest_observation"), NotImplementedError,
             "closest_observation"),
            (lambda: nd.abs(nd.fft.fftn(x, axes=(0, 0))), NotImplementedError, "repeated"),
            (lambda: nd.linalg.lstsq(x * 1j, x[:, 0]), NotImplementedError,
             "linalg.lstsq of complex"),
            (lambda: nd.linalg.inv(x[:, :3] * 1j), NotImplementedError, "linalg.inv of complex"),
    ]:
        with autograd.record():
            y = make()
            y = (y[0] if isinstance(y, tuple) else y).sum()
        with pytest.raises(error, match=message):
            y.backward()


def test_second_order_through_the_new_rules():
    """nanprod, a median and an FFT of a complex input, differentiated twice."""
    values = np.array([0.3, 0.9, -0.6])
    x = nd.array(values)
    x.attach_grad()
    with autograd.record():
        spectrum = nd.fft.fft(x * (1 + 1j))
        y = nd.nanprod(x) + nd.median(x * x) + (nd.abs(spectrum) ** 2).sum() / 6
        (dx,) = autograd.grad(y, [x], create_graph=True)
        z = (dx * nd.array([1.0, 2.0, 3.0])).sum()
    z.backward()
    # y = x0 x1 x2 + x2^2 (the median of the squares) + sum(x^2) (Parseval: |1 + i|^2 / 2)
    x0, x1, x2 = values
    expected = np.array([2 + 2 * x2 + 3 * x1, x2 + 4 + 3 * x0, x1 + 2 * x0 + 12])
    np.testing.assert_allclose(x.grad.asnumpy(), expected, rtol=1e-10)


def test_a_users_numpy_gradient_has_no_second_order():
    """user_gradient, the op a registered NumPy gradient runs as, is NOT_BUILT: no second order."""
    def gradient(out_grad, inputs, output):
        return [3 * np.asarray(inputs[0]) ** 2 * out_grad]

    @nd.register_op("test_autograd_numeric_cube", kind="unary", gradient=gradient, replace=True)
    def cube(inputs, outputs, req):
        outputs[0][...] = np.asarray(inputs[0]) ** 3

    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = nd.test_autograd_numeric_cube(x).sum()
        (dx,) = autograd.grad(y, [x], create_graph=True)
        z = dx.sum()
    np.testing.assert_allclose(dx.asnumpy(), [3.0, 12.0])
    with pytest.raises(TypeError, match="user_gradient has no gradient rule"):
        z.backward()
