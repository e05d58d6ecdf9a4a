"""Full-batch logistic regression by gradient descent: 100,000 samples x 32 features,
float64, 30 steps of ``w -= lr * X.T @ (sigmoid(X @ w) - y) / n``; returns the weights and
the final mean log-loss."""
TITLE = "logistic regression (100k x 32, 30 it)"
RTOL, ATOL = 1e-8, 1e-10
STEPS = 30
LR = 0.5


def make_data(rng):
    x = rng.normal(size=(100_000, 32))
    true_w = rng.normal(size=32)
    y = (x @ true_w + rng.normal(size=100_000) > 0).astype("float64")
    return {"x": x, "y": y}


def run(xp, data):
    x, y = data["x"], data["y"]
    n = x.shape[0]
    w = xp.zeros(x.shape[1])
    for _ in range(STEPS):
        p = 1.0 / (1.0 + xp.exp(-(x @ w)))
        w -= LR * (x.T @ (p - y)) / n
    p = 1.0 / (1.0 + xp.exp(-(x @ w)))
    loss = -xp.mean(y * xp.log(p) + (1 - y) * xp.log(1 - p))
    return xp.concatenate([w, loss[None]])
