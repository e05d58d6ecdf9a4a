"""Autograd training step: the MLP of mlp_step.py (784-256-10, batch 256, float32, ReLU,
softmax cross-entropy, ``W -= lr * g``), its backward pass computed by ``ndengine.autograd``
(record, backward) rather than written by hand, per engine kind, beside the hand-written
NumPy step and PyTorch eager's autograd where torch is importable, in the same run.

    python bench/autograd_step.py [--steps 50] [--repeat 5] [--quick] [--no-torch]

Every implementation starts from the same weights and must reach the same final loss. Issue
14 asks for the numbers, not a target: the figure to watch is autograd's cost over the
hand-written backward (``mlp_step.py`` measures that one on ndengine).
"""
import argparse
import sys

import numpy as np

import ndengine as nd
from common import (KINDS, best_of_interleaved, check_close, header, on_engine, ratio_table,
                    torch_module)
from mlp_step import LR, TorchNamespace, make_data, train
from ndengine import autograd, engine


def loss_of(xp, params, x, onehot):
    """The forward pass and its mean loss, written once against a namespace (ndengine, or
    PyTorch through mlp_step's TorchNamespace)."""
    w1, b1, w2, b2 = params
    h = xp.maximum(x @ w1 + b1, 0)
    logits = h @ w2 + b2
    shifted = logits - xp.max(logits, axis=1, keepdims=True)
    total = xp.sum(xp.exp(shifted), axis=1, keepdims=True)
    return -xp.sum(onehot * (shifted - xp.log(total))) / x.shape[0]


def autograd_step(params, x, onehot, lr):
    """One SGD step, gradients by ``ndengine.autograd``; returns the batch's mean loss."""
    with autograd.record():
        loss = loss_of(nd, params, x, onehot)
    loss.backward()
    with autograd.pause():
        for p in params:
            p -= lr * p.grad
    return loss


def train_autograd(data, steps):
    x, onehot, params = data
    x, onehot = nd.array(x), nd.array(onehot)
    params = [nd.array(p.copy()) for p in params]
    for p in params:
        p.attach_grad()
    loss = None
    for _ in range(steps):
        loss = autograd_step(params, x, onehot, LR)
    nd.waitall()
    return float(loss.item())


def train_torch(torch, data, steps):
    x, onehot, params = data
    x, onehot = torch.from_numpy(x), torch.from_numpy(onehot)
    params = [torch.from_numpy(p.copy()).requires_grad_() for p in params]
    xp = TorchNamespace(torch)
    loss = None
    for _ in range(steps):
        loss = loss_of(xp, params, x, onehot)
        loss.backward()
        with torch.no_grad():
            for p in params:
                p -= LR * p.grad
                p.grad = None
    return float(loss.item())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--kinds", nargs="+", default=list(KINDS), choices=KINDS)
    parser.add_argument("--quick", action="store_true", help="3 steps, 1 repeat")
    parser.add_argument("--no-torch", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.steps, args.repeat = 3, 1
    header(f"MLP training step with autograd: {args.steps} steps, forward + backward + update")
    data = make_data()
    want = train(np, np.asarray, data, args.steps)
    fns = {"NumPy": lambda: train(np, np.asarray, data, args.steps)}
    for kind in args.kinds:
        eng = engine.create(kind)
        engine.set_engine(eng)
        run = lambda: train_autograd(data, args.steps)  # noqa: E731
        check_close(kind, run(), want, rtol=1e-3)
        fns[kind] = on_engine(eng, run)
    torch = None if args.no_torch else torch_module()
    if torch is not None:
        check_close("PyTorch", train_torch(torch, data, args.steps), want, rtol=1e-3)
        fns["PyTorch"] = lambda: train_torch(torch, data, args.steps)
    timings = best_of_interleaved(fns, args.repeat)
    ratio_table(timings, torch, [("ms/step", lambda s: s / args.steps * 1e3)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
