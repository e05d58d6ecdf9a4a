"""k-means (Lloyd): 50,000 points in 8 dimensions, 16 clusters, 5 iterations; distances by
broadcasting, labels by argmin, each centre the mean of its points (a boolean mask per
cluster, as such scripts are usually written)."""
TITLE = "k-means (50k x 8, k=16, 5 it)"
RTOL, ATOL = 1e-9, 1e-9
K = 16
ITERATIONS = 5


def make_data(rng):
    centres = rng.uniform(-20, 20, size=(K, 8))
    points = centres[rng.integers(0, K, size=50_000)] + rng.normal(size=(50_000, 8))
    return {"points": points, "start": points[:K].copy()}


def run(xp, data):
    x = data["points"]
    centres = data["start"].copy()
    for _ in range(ITERATIONS):
        dist = ((x[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
        labels = dist.argmin(axis=1)
        for k in range(K):
            members = x[labels == k]
            if len(members):
                centres[k] = members.mean(axis=0)
    return centres
