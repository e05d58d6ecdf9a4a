"""MLP training steps: 784-256-10, batch 256, float32, hand-written forward and backward (ReLU,
softmax cross-entropy), ``W -= lr * g``; --steps steps then one wait, per engine kind, beside
NumPy (and PyTorch eager on the CPU, where torch is importable) in the same run.

    python bench/mlp_step.py [--steps 50] [--repeat 5] [--workers N] [--quick] [--no-torch]
                             [--torch-threads N]

The step is written once, against an ``xp`` namespace, and run with xp=numpy and
xp=ndengine (PyTorch gets a few-line adapter, ``TorchNamespace``). It uses only functions
ndengine has: ``max sum exp log maximum where`` and the operators ``@ .T + - * / > -=``.
ReLU is ``maximum(z, 0)`` and its gradient ``where(z > 0, g, 0)`` (NumPy has no relu);
softmax and its cross-entropy are spelled out. Target (issue 10): not slower than NumPy, on
every engine. Each figure is the best of --repeat runs after a warm-up run, all implementations
timed in interleaved rounds; every run starts from the same weights.
"""
import argparse
import sys

import numpy as np

import ndengine as nd
from common import (KINDS, best_of_interleaved, check_close, header, on_engine, ratio_line,
                    ratio_table, torch_module)
from ndengine import engine

BATCH, IN, HIDDEN, OUT = 256, 784, 256, 10
LR = 0.1
TARGET_RATIO = 1.0  # x NumPy: not slower


def train_step(xp, params, x, onehot, lr):
    """One SGD step in place on ``params`` (W1, b1, W2, b2); returns the batch's mean loss."""
    w1, b1, w2, b2 = params
    batch = x.shape[0]
    # forward
    z1 = x @ w1 + b1
    h = xp.maximum(z1, 0)
    logits = h @ w2 + b2
    shifted = logits - xp.max(logits, axis=1, keepdims=True)
    e = xp.exp(shifted)
    total = xp.sum(e, axis=1, keepdims=True)
    probs = e / total
    loss = -xp.sum(onehot * (shifted - xp.log(total))) / batch
    # backward
    d_logits = (probs - onehot) / batch
    d_w2 = h.T @ d_logits
    d_b2 = xp.sum(d_logits, axis=0)
    d_z1 = xp.where(z1 > 0, d_logits @ w2.T, 0)
    d_w1 = x.T @ d_z1
    d_b1 = xp.sum(d_z1, axis=0)
    for p, g in zip(params, (d_w1, d_b1, d_w2, d_b2)):
        p -= lr * g
    return loss


class TorchNamespace:
    """The few functions train_step calls, on torch tensors."""

    def __init__(self, torch):
        self.torch = torch

    def maximum(self, a, b):
        return self.torch.clamp_min(a, b)

    def max(self, a, axis, keepdims=False):
        return self.torch.amax(a, dim=axis, keepdim=keepdims)

    def sum(self, a, axis=None, keepdims=False):
        if axis is None:
            return self.torch.sum(a)
        return self.torch.sum(a, dim=axis, keepdim=keepdims)

    def exp(self, a):
        return self.torch.exp(a)

    def log(self, a):
        return self.torch.log(a)

    def where(self, cond, a, b):
        return self.torch.where(cond, a, b)


def make_data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((BATCH, IN)).astype(np.float32)
    labels = rng.integers(0, OUT, BATCH)
    onehot = np.zeros((BATCH, OUT), np.float32)
    onehot[np.arange(BATCH), labels] = 1
    params = [(rng.standard_normal((IN, HIDDEN)) * np.sqrt(2 / IN)).astype(np.float32),
              np.zeros(HIDDEN, np.float32),
              (rng.standard_normal((HIDDEN, OUT)) * np.sqrt(2 / HIDDEN)).astype(np.float32),
              np.zeros(OUT, np.float32)]
    return x, onehot, params


def train(xp, convert, data, steps, finish=None):
    """``steps`` steps from the initial weights; returns the last loss as a float."""
    x, onehot, params = data
    x, onehot = convert(x), convert(onehot)
    params = [convert(p.copy()) for p in params]
    loss = None
    for _ in range(steps):
        loss = train_step(xp, params, x, onehot, LR)
    if finish is not None:
        finish()
    return float(loss.item())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--workers", type=int, default=None, help="CPU workers (default: cores)")
    parser.add_argument("--kinds", nargs="+", default=list(KINDS), choices=KINDS)
    parser.add_argument("--quick", action="store_true", help="3 steps, 1 repeat")
    parser.add_argument("--no-torch", action="store_true", help="skip PyTorch even if installed")
    parser.add_argument("--torch-threads", type=int, default=1,
                        help="PyTorch's intra-op threads (0: its own default, one per core)")
    args = parser.parse_args(argv)
    if args.quick:
        args.steps, args.repeat = 3, 1

    header(f"MLP {IN}-{HIDDEN}-{OUT}, batch {BATCH}, float32: {args.steps} SGD steps "
           "(forward, backward, update) then wait")
    data = make_data()
    want = train(np, np.asarray, data, args.steps)
    fns = {"NumPy": lambda: train(np, np.asarray, data, args.steps)}
    engines = {kind: engine.create(kind, num_cpu_workers=args.workers) for kind in args.kinds}
    run_nd = lambda: train(nd, nd.array, data, args.steps, nd.waitall)  # noqa: E731
    for kind, eng in engines.items():
        engine.set_engine(eng)
        check_close(kind, run_nd(), want, rtol=1e-3)  # float32 matmuls: summation order
        fns[kind] = on_engine(eng, run_nd)
    torch = None if args.no_torch else torch_module(args.torch_threads)
    if torch is not None:
        tx = TorchNamespace(torch)
        run_torch = lambda: train(tx, torch.from_numpy, data, args.steps)  # noqa: E731
        check_close("PyTorch", run_torch(), want, rtol=1e-3)
        fns["PyTorch"] = run_torch
    timings = best_of_interleaved(fns, args.repeat)
    print(f"final loss (NumPy): {want:.5f}")
    worst = ratio_table(timings, torch, [("ms/step", lambda s: s / args.steps * 1e3)])
    for eng in engines.values():
        eng.notify_shutdown()
    print(ratio_line("worst ndengine engine, issue 10", worst, TARGET_RATIO))
    return 0


if __name__ == "__main__":
    sys.exit(main())
