"""The heat stencil on 2,000,000 points, 20 steps."""
from .heat_stencil import ATOL, RTOL, make_heat_data, run  # noqa: F401 - the script's API

TITLE = "heat stencil (2M pts, 20 steps)"


def make_data(rng):
    return make_heat_data(rng, 2_000_000, 20)
