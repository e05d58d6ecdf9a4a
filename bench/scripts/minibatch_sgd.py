"""Minibatch softmax SGD with momentum (64 features, 10 classes, 256-row batches, one epoch
of 20,480 rows): the step is bench/sgd_step.py's ``sgd_epoch`` (that benchmark owns it), run
here with the epoch's order as an ``xp`` array, as ``import ndengine as np`` code has it."""
import numpy as np

from sgd_step import CLASSES, make_data as sgd_data, sgd_epoch

TITLE = "minibatch softmax SGD (256x64)"
RTOL, ATOL = 1e-4, 1e-5
ROWS = 20_480


def make_data(rng):
    x, y, order, w0 = sgd_data(ROWS, seed=int(rng.integers(1 << 31)))
    return {"x": x, "y": y, "order": order, "w0": w0}


def run(xp, data):
    w = data["w0"].copy()
    b = xp.zeros(CLASSES, dtype=np.float32)
    return sgd_epoch(xp, data["x"], data["y"], data["order"], w, b, xp.zeros_like(w),
                     xp.zeros_like(b))
