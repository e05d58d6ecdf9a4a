"""Everyday NumPy scripts run unchanged with ``import ndengine as np``: each script is a function
of ``xp``, run with ``xp=numpy`` and ``xp=ndengine``, and the results compared.
"""
import numpy as np
import pytest

import ndengine as nd

pytestmark = pytest.mark.usefixtures("nd_engine")


def compare(script, *args, rtol=1e-9):
    """script(numpy, *args) vs script(ndengine, *args): a list of results, each the same
    shape and dtype, values within rtol (reductions may sum in another order)."""
    expected = script(np, *args)
    got = script(nd, *args)
    assert len(got) == len(expected)
    for want, have in zip(expected, got):
        assert isinstance(have, nd.NDArray), f"ndengine gave {type(have).__name__}: {have!r}"
        have, want = have.asnumpy(), np.asarray(want)
        assert have.shape == want.shape and have.dtype == want.dtype, (have, want)
        np.testing.assert_allclose(have, want, rtol=rtol, atol=1e-12)


DATA = np.random.default_rng(0).normal(size=(60, 4)) * [1.0, 10.0, 0.1, 3.0] + [0, 5, -2, 1]


# ---------------------------------------------------------------- 1. data normalisation
def normalise(xp, data):
    X = xp.asarray(data)
    z = (X - X.mean(axis=0)) / X.std(axis=0)
    lo, hi = X.min(axis=0), X.max(axis=0)
    scaled = (X - lo) / (hi - lo)
    unit_rows = X / xp.sqrt((X ** 2).sum(axis=1, keepdims=True))
    clipped = xp.clip(z, -2.0, 2.0)
    return [z, scaled, unit_rows, clipped, (xp.abs(z) > 2).sum(axis=0)]


def test_data_normalisation():
    compare(normalise, DATA)


# ---------------------------------------------------------------- 2. Monte-Carlo pricing
def monte_carlo(xp):
    rng = xp.random.default_rng(42)
    s0, strike, rate, sigma, years, n = 100.0, 105.0, 0.05, 0.2, 1.0, 20_000
    z = rng.standard_normal(n)
    final = s0 * xp.exp((rate - 0.5 * sigma ** 2) * years + sigma * np.sqrt(years) * z)
    payoff = xp.maximum(final - strike, 0.0)
    discount = np.exp(-rate * years)
    price = discount * payoff.mean()
    stderr = discount * payoff.std() / np.sqrt(n)
    # an Asian option: 12 monthly steps on 2000 paths, the payoff on the average price
    steps, paths = 12, 2000
    dt = years / steps
    prices = xp.full(paths, s0)
    running = xp.zeros(paths)
    for _ in range(steps):
        shocks = rng.normal(0.0, 1.0, size=paths)
        prices = prices * xp.exp((rate - 0.5 * sigma ** 2) * dt + sigma * np.sqrt(dt) * shocks)
        running += prices
    asian = discount * xp.maximum(running / steps - strike, 0).mean()
    return [price, stderr, asian, xp.asarray(rng.uniform(size=3))]


def test_monte_carlo_pricing():
    compare(monte_carlo)


# ---------------------------------------------------------------- 3. gradient-descent regression
def regression(xp):
    rng = xp.random.default_rng(0)
    n, d = 200, 5
    X = rng.normal(size=(n, d))
    true_w = xp.arange(1, d + 1, dtype=xp.float64)
    y = X @ true_w + 0.1 * rng.standard_normal(n)
    w = xp.zeros(d)
    losses = []
    for step in range(100):
        residual = X @ w - y
        w -= 0.1 * (X.T @ residual) / n
        if step % 10 == 0:
            losses.append(float((residual ** 2).mean()))
    return [w, xp.array(losses), xp.abs(w - true_w).max()]


def test_gradient_descent_regression():
    compare(regression)


def test_gradient_descent_converges_allclose():
    def script(xp):
        w = regression(xp)[0]
        return [xp.asarray(xp.allclose(w, xp.arange(1, 6), atol=0.05))]
    compare(script)


# ---------------------------------------------------------------- 4. image filtering
IMAGE = np.add.outer(np.sin(np.linspace(0, 3, 24)), np.cos(np.linspace(0, 5, 32))) \
    + np.random.default_rng(3).normal(0, 0.1, (24, 32))


def box_filter(xp, image):
    img = xp.asarray(image)
    h, w = img.shape
    padded = xp.zeros((h + 2, w + 2))
    padded[1:-1, 1:-1] = img
    out = xp.zeros_like(img)
    for dy in range(3):
        for dx in range(3):
            out += padded[dy:dy + h, dx:dx + w]
    out /= 9
    gy = img[2:, 1:-1] - img[:-2, 1:-1]
    gx = img[1:-1, 2:] - img[1:-1, :-2]
    edges = xp.sqrt(gx ** 2 + gy ** 2)
    mask = xp.where(out > out.mean(), 1.0, 0.0)
    return [out, edges, mask, (edges > 0.5).sum()]


def test_image_box_filter():
    compare(box_filter, IMAGE)


def test_image_box_filter_edge_padded():
    def script(xp, image):
        img = xp.asarray(image)
        h, w = img.shape
        padded = xp.pad(img, 1, mode="edge")
        out = sum(padded[dy:dy + h, dx:dx + w] for dy in range(3) for dx in range(3)) / 9
        return [out]
    compare(script, IMAGE)


# ---------------------------------------------------------------- 5. descriptive statistics
SAMPLE = np.random.default_rng(5).gamma(2.0, 1.5, size=1000)


def statistics(xp, sample):
    x = xp.asarray(sample)
    mean, std = x.mean(), x.std()
    z = (x - mean) / std
    skew = (z ** 3).mean()
    kurtosis = (z ** 4).mean() - 3
    table = x.reshape(100, 10)
    return [mean, std, x.var(ddof=1), x.min(), x.max(), x.argmax(), skew, kurtosis,
            (x > mean).mean(), ((x > 1) & (x < 3)).sum(), table.mean(axis=0),
            table.std(axis=1), table.max(axis=1) - table.min(axis=1)]


def test_descriptive_statistics():
    compare(statistics, SAMPLE)


def test_descriptive_statistics_median_and_percentiles():
    def script(xp, sample):
        x = xp.asarray(sample)
        q1, q3 = xp.percentile(x, [25, 75])
        return [xp.median(x), q3 - q1]
    compare(script, SAMPLE)


# ---------------------------------------------------------------- 6. minibatch SGD
def minibatch_sgd(xp):
    rng = xp.random.default_rng(1)
    n, d, batch = 256, 3, 32
    X = rng.normal(size=(n, d))
    true_w = xp.array([1.5, -2.0, 0.5])
    y = (X @ true_w + 0.3 * rng.standard_normal(n) > 0).astype(xp.float64)
    w, b = xp.zeros(d), 0.0
    for epoch in range(3):
        order = rng.permutation(n)
        for start in range(0, n, batch):
            idx = order[start:start + batch]
            xb, yb = X[idx], y[idx]
            p = 1.0 / (1.0 + xp.exp(-(xb @ w + b)))
            grad = p - yb
            w = w - 0.5 * (xb.T @ grad) / len(idx)
            b = b - 0.5 * grad.mean()
    accuracy = ((1.0 / (1.0 + xp.exp(-(X @ w + b))) > 0.5) == (y > 0.5)).mean()
    return [w, xp.asarray(b), accuracy]


def test_minibatch_sgd():
    compare(minibatch_sgd)


# ---------------------------------------------------------------- 7. k-means
BLOBS = np.concatenate([np.random.default_rng(k).normal(center, 0.5, size=(30, 2))
                        for k, center in enumerate([(0, 0), (5, 5), (0, 6)])])


def kmeans(xp, points, k=3):
    X = xp.asarray(points)
    rng = xp.random.default_rng(7)
    centers = X[rng.choice(len(X), k, replace=False)]
    for _ in range(10):
        d2 = ((X[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2)
        labels = d2.argmin(axis=1)
        onehot = (labels[:, None] == xp.arange(k)).astype(xp.float64)
        centers = (onehot.T @ X) / onehot.sum(axis=0)[:, None]
    inertia = d2.min(axis=1).sum()
    return [centers, labels, inertia]


def test_kmeans():
    compare(kmeans, BLOBS)


def test_kmeans_with_linalg_norm():
    def script(xp, points):
        X = xp.asarray(points)
        centers = X[:3]
        labels = xp.linalg.norm(X[:, None, :] - centers[None], axis=2).argmin(axis=1)
        return [labels]
    compare(script, BLOBS)


# ---------------------------------------------------------------- 8. heat equation
def heat(xp):
    x, dx = xp.linspace(0, 1, 51, retstep=True)
    u = xp.exp(-100 * (x - 0.5) ** 2)
    u[0] = u[-1] = 0.0
    alpha = 0.4  # dt * k / dx**2, stable below 0.5
    for _ in range(200):
        u[1:-1] = u[1:-1] + alpha * (u[2:] - 2 * u[1:-1] + u[:-2])
    plate = xp.zeros((20, 20))
    plate[0, :] = 100.0
    for _ in range(100):
        plate[1:-1, 1:-1] += 0.2 * (plate[2:, 1:-1] + plate[:-2, 1:-1] + plate[1:-1, 2:]
                                    + plate[1:-1, :-2] - 4 * plate[1:-1, 1:-1])
    return [u, plate, u.sum() * dx]


def test_heat_equation_stencil():
    compare(heat)


def test_heat_equation_periodic_with_roll():
    def script(xp):
        u = xp.exp(-100 * (xp.linspace(0, 1, 50, endpoint=False) - 0.5) ** 2)
        for _ in range(50):
            u = u + 0.4 * (xp.roll(u, 1) - 2 * u + xp.roll(u, -1))
        return [u]
    compare(script)
