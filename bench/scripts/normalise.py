"""Feature normalisation: z-score every column of a 200,000 x 50 float64 matrix, then clip
outliers to +-3 standard deviations."""
TITLE = "feature normalisation (200k x 50)"
RTOL, ATOL = 1e-9, 1e-9


def make_data(rng):
    return {"x": rng.normal(3.0, 2.0, size=(200_000, 50)) * rng.uniform(0.5, 4.0, size=50)}


def run(xp, data):
    x = data["x"]
    mean = x.mean(axis=0)
    std = x.std(axis=0)
    z = (x - mean) / std
    return xp.clip(z, -3.0, 3.0)
