"""1-D heat equation, explicit Euler: ``u[1:-1] += a*(u[2:] - 2*u[1:-1] + u[:-2])`` for
``steps`` steps, ends held at zero.  ``heat_large`` and ``heat_small`` run it at two sizes:
2,000,000 points for 20 steps (bandwidth-bound) and 1,000 points for 2,000 steps (per-op
overhead-bound: the issue's <= 1x NumPy row)."""
RTOL, ATOL = 1e-9, 1e-12
ALPHA = 0.25


def make_heat_data(rng, points, steps):
    u = rng.random(points)
    u[0] = u[-1] = 0.0
    return {"u": u, "steps": steps}


def run(xp, data):
    u = data["u"].copy()
    a = ALPHA
    for _ in range(data["steps"]):
        u[1:-1] += a * (u[2:] - 2 * u[1:-1] + u[:-2])
    return u
