"""N-body, the small-array case: 256 bodies, 20 leapfrog-style steps of all-pairs softened
gravity (a 256 x 256 x 3 difference tensor per step), float64."""
TITLE = "N-body (256 bodies, 20 steps)"
RTOL, ATOL = 1e-8, 1e-10
STEPS = 20
DT = 1e-3
SOFTENING = 1e-2


def make_data(rng):
    return {"pos": rng.normal(size=(256, 3)), "vel": rng.normal(size=(256, 3)) * 0.1,
            "mass": rng.uniform(0.5, 1.5, size=256)}


def run(xp, data):
    pos = data["pos"].copy()
    vel = data["vel"].copy()
    mass = data["mass"]
    for _ in range(STEPS):
        diff = pos[None, :, :] - pos[:, None, :]
        r2 = (diff ** 2).sum(axis=2) + SOFTENING ** 2
        inv_r3 = r2 ** -1.5
        acc = (diff * (inv_r3 * mass[None, :])[:, :, None]).sum(axis=1)
        vel += DT * acc
        pos += DT * vel
    return xp.concatenate([pos, vel])
