"""A small SGD optimizer for ``KVStore.set_optimizer`` (MXNet's ``mx.optimizer.SGD`` update).

An optimizer is an updater: ``opt(key, grad, weight)`` updates ``weight`` in place with pushed
array ops. For the 'dask' kind it is pickled to the server and runs there, so its state (the
momentum per key) lives there too.

SGD state, field by field
    learning_rate, momentum, wd, rescale_grad, clip_gradient   the settings (see SGD).
    states     key -> the momentum NDArray of that key (made at its first update; only when
               momentum is not 0).
"""
from ..ndarray import clip, zeros_like

__all__ = ["SGD"]


class SGD:
    """Stochastic gradient descent, with optional momentum and weight decay::

        g = clip(rescale_grad * grad, -clip_gradient, clip_gradient) + wd * weight
        momentum == 0:  weight -= learning_rate * g
        otherwise:      mom = momentum * mom - learning_rate * g;  weight += mom
    """

    def __init__(self, learning_rate=0.01, momentum=0.0, wd=0.0, rescale_grad=1.0,
                 clip_gradient=None):
        if learning_rate <= 0:
            raise ValueError(f"learning_rate must be > 0, got {learning_rate!r}")
        if not 0.0 <= momentum < 1.0:
            raise ValueError(f"momentum must be in [0, 1), got {momentum!r}")
        if clip_gradient is not None and clip_gradient <= 0:
            raise ValueError(f"clip_gradient must be > 0 or None, got {clip_gradient!r}")
        self.learning_rate = float(learning_rate)
        self.momentum = float(momentum)
        self.wd = float(wd)
        self.rescale_grad = float(rescale_grad)
        self.clip_gradient = clip_gradient
        self.states = {}

    def __repr__(self):
        return (f"SGD(learning_rate={self.learning_rate}, momentum={self.momentum}, "
                f"wd={self.wd}, rescale_grad={self.rescale_grad}, "
                f"clip_gradient={self.clip_gradient})")

    def __getstate__(self):
        # Momentum arrays belong to the process that made them: a copy starts afresh.
        state = dict(self.__dict__)
        state["states"] = {}
        return state

    def __call__(self, key, grad, weight):
        self.update(key, grad, weight)

    def update(self, key, grad, weight):
        g = grad * self.rescale_grad if self.rescale_grad != 1.0 else grad
        if self.clip_gradient is not None:
            g = clip(g, -self.clip_gradient, self.clip_gradient)
        if self.wd:
            g = g + self.wd * weight
        if self.momentum == 0.0:
            weight -= self.learning_rate * g
            return
        mom = self.states.get(key)
        if mom is None:
            mom = self.states[key] = zeros_like(weight)
        mom *= self.momentum
        mom -= self.learning_rate * g
        weight += mom
