"""The heat stencil on 1,000 points, 2,000 steps (issue 28's own row: <= 1x NumPy)."""
from .heat_stencil import ATOL, RTOL, make_heat_data, run  # noqa: F401 - the script's API

TITLE = "heat stencil (1k pts, 2000 steps)"


def make_data(rng):
    return make_heat_data(rng, 1_000, 2_000)
