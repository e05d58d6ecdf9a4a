"""Descriptive statistics of 2,000,000 float64 samples: mean, standard deviation, min, max,
median, four percentiles and a 50-bin histogram, gathered into one vector."""
TITLE = "descriptive statistics (2M)"
RTOL, ATOL = 1e-9, 1e-9


def make_data(rng):
    return {"samples": rng.lognormal(0.0, 0.75, size=2_000_000)}


def run(xp, data):
    s = data["samples"]
    summary = xp.stack([s.mean(), s.std(), s.min(), s.max(), xp.median(s)])
    pct = xp.percentile(s, [5.0, 25.0, 75.0, 95.0])
    counts, edges = xp.histogram(s, bins=50, range=(0.0, 10.0))
    return xp.concatenate([summary, pct, counts.astype(s.dtype), edges])
