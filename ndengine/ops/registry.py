"""The operator registry: what an op is, how to add one, how to look one up."""
from __future__ import annotations

import difflib
import enum
import os
import threading
from typing import Callable

import numpy as np

from .dtypes import check_dtype, is_array_spec, is_python_scalar, result_type
from .shapes import broadcast_shapes, shape_of

_INFER_MEMO_LIMIT = 4096  # per operator; cleared when full

KINDS = ("unary", "binary", "reduce", "creation", "random", "other")
DEVICES = ("cpu", "gpu")


class OpReq(enum.Enum):
    """How a kernel writes one output (MXNet's OpReqType)."""
    NULL = 0           # write nothing
    WRITE_TO = 1       # overwrite the output buffer
    WRITE_INPLACE = 2  # overwrite; the buffer is shared with an input
    ADD_TO = 3         # out += result


class Operator:
    """A registered operator: shape/dtype inference, kernels per device, metadata.

    ``infer(*inputs, **params)`` returns one ``(shape, dtype)`` per output.
    A kernel is called as ``kernel(inputs, outputs, req, **params)``.

    ``fast_infer(inputs, params)``, when given, is tried first on every
    ``infer`` call: it handles the common cases (inputs of supported dtypes,
    equal shapes, Python scalars) from per-signature caches and returns exactly
    what the full path would, or None to fall back to the full path (which
    also raises every error).

    ``infer_key(inputs, params)``, when given, memoises the full path: it
    returns a hashable key such that equal keys always infer the same result
    (e.g. (dtype, shape, axis, keepdims)), or None for "do not memoise".  Only
    successful results are stored; errors are raised by the full path each time.
    """

    def __init__(self, name: str, *, num_inputs=1, num_outputs=1, kind="other",
                 infer: Callable | None = None, inplace=(), gradient=None,
                 write_mode=OpReq.WRITE_TO, doc=None, fast_infer: Callable | None = None,
                 infer_key: Callable | None = None):
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        self.name = name
        self.num_inputs = num_inputs
        self.num_outputs = num_outputs
        self.kind = kind
        self._infer = infer or default_infer
        self.kernels: dict[str, Callable] = {}
        self.inplace = tuple(tuple(pair) for pair in inplace)
        self.gradient = gradient
        self.write_mode = OpReq(write_mode)
        self.doc = doc
        self.fast_infer = fast_infer
        self.infer_key = infer_key
        self._infer_memo: dict = {}

    def __repr__(self):
        return f"<Operator {self.name} kind={self.kind} devices={sorted(self.kernels)}>"

    def count_outputs(self, *inputs, **params) -> int:
        if callable(self.num_outputs):
            return int(self.num_outputs(*inputs, params))
        return self.num_outputs

    def infer(self, *inputs, **params) -> list[tuple[tuple, np.dtype]]:
        """Output (shape, dtype) pairs; raises on bad shapes, dtypes or params."""
        fast = self.fast_infer
        if fast is not None:
            results = fast(inputs, params)
            if results is not None:
                return results
        return self.infer_general(inputs, params)

    def infer_general(self, inputs, params) -> list[tuple[tuple, np.dtype]]:
        """``infer`` without its lean path: for callers that tried ``fast_infer`` first."""
        key_of = self.infer_key
        if key_of is not None:
            key = key_of(inputs, params)
            if key is not None:
                memo = self._infer_memo
                try:
                    found = memo.get(key)
                except TypeError:  # unhashable parameter: no memo
                    return self._full_infer(inputs, params)
                if found is not None:
                    return list(found)
                results = self._full_infer(inputs, params)
                if len(memo) >= _INFER_MEMO_LIMIT:
                    memo.clear()
                memo[key] = tuple(results)
                return results
        return self._full_infer(inputs, params)

    def _full_infer(self, inputs, params) -> list[tuple[tuple, np.dtype]]:
        if self.num_inputs is not None and len(inputs) != self.num_inputs:
            raise TypeError(f"{self.name} takes {self.num_inputs} inputs, got {len(inputs)}")
        for value in inputs:
            if is_array_spec(value):
                check_dtype(value.dtype)
            elif not is_python_scalar(value):
                raise TypeError(f"{self.name}: inputs must be array specs or Python "
                                f"bool/int/float, got {type(value).__name__}")
        results = self._infer(*inputs, **params)
        return [(tuple(int(n) for n in shape), check_dtype(dtype)) for shape, dtype in results]

    def set_kernel(self, device: str, kernel: Callable) -> "Operator":
        if device not in DEVICES:
            raise ValueError(f"device must be one of {DEVICES}, got {device!r}")
        self.kernels[device] = kernel
        return self

    def set_gradient(self, gradient: Callable) -> "Operator":
        self.gradient = gradient
        return self

    def apply(self, *inputs, device="cpu", **params) -> list[np.ndarray]:
        """Infer, allocate NumPy outputs and run the kernel now (for tests and eager use)."""
        specs = self.infer(*inputs, **params)
        outputs = [np.empty(shape, dtype) for shape, dtype in specs]
        self.kernels[device](list(inputs), outputs, [OpReq.WRITE_TO] * len(outputs), **params)
        return outputs


def default_infer(*inputs, **params):
    """One output: inputs broadcast together, NumPy 2 result_type (weak Python scalars)."""
    shape = broadcast_shapes(*(shape_of(v) for v in inputs))
    return [(shape, result_type(*inputs))]


_registry: dict[str, Operator] = {}
_registry_lock = threading.Lock()


def _new_registry_lock_in_child():
    # A fork copies the lock in whatever state another thread held it: the child's only
    # thread would block forever on its first registration.
    global _registry_lock
    _registry_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_registry_lock_in_child)


def add_operator(op: Operator, *, replace=False) -> Operator:
    with _registry_lock:
        if op.name in _registry and not replace:
            raise ValueError(f"operator {op.name!r} is already registered; "
                             f"pass replace=True to override it")
        _registry[op.name] = op
    return op


def register(name: str, *, num_inputs=1, num_outputs=1, kind="other", infer=None,
             inplace=(), gradient=None, write_mode=OpReq.WRITE_TO, device="cpu",
             doc=None, replace=False):
    """Decorator: register the decorated function as ``name``'s kernel for ``device``.

    Returns the Operator, so ``op.set_kernel("gpu", fn).set_gradient(g)`` chains.
    """
    def decorate(kernel: Callable) -> Operator:
        op = Operator(name, num_inputs=num_inputs, num_outputs=num_outputs, kind=kind,
                      infer=infer, inplace=inplace, gradient=gradient,
                      write_mode=write_mode, doc=doc or kernel.__doc__)
        op.set_kernel(device, kernel)
        return add_operator(op, replace=replace)
    return decorate


def get(name: str) -> Operator:
    try:
        return _registry[name]
    except KeyError:
        close = difflib.get_close_matches(name, list(_registry), n=5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise KeyError(f"no operator named {name!r}{hint} "
                       f"(ndengine.ops.names() lists all {len(_registry)})") from None


def names() -> list[str]:
    return sorted(_registry)
