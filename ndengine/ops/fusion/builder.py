"""Building a fused program op by op: ``ProgramBuilder`` (see ``program`` for what it builds).

Each ``apply`` plans its node with the registered op (its dtype rules and errors, its
per-call check run on the scalars seen), records the dtypes the op casts its arguments to,
and refuses (``NotFusible``) what the fused evaluators could not compute as the unfused ops
do; ``build`` drops the nodes no output or reduction needs.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..dtypes import EXTENDED_DTYPES, check_dtype, is_array_spec
from ..elementwise import operators as _elementwise
from .program import (
    CLIP_BOUNDS, FUSIBLE_OPS, TAIL_REDUCTIONS, ArraySpec, FusedProgram, Leaf, NotFusible, OpNode,
    Reduction, Scalar, attribute)
from ..registry import get as get_op
from ..shapes import normalize_axes, shape_of

__all__ = ["ProgramBuilder", "Const"]

_STATIC_PARAMS = {"copy": ("dtype",), "round": ("decimals",)}
_UFUNC_PARAMS = ("dtype",)  # NumPy's dtype= of the element-wise ops
_WEAK_TYPES = (bool, int, float)


def _scalar_kind(value):
    kind = type(value)
    if kind in _WEAK_TYPES:
        return kind
    if isinstance(value, np.generic):
        return check_dtype(value.dtype)
    raise TypeError(f"a fused program's scalar must be a Python bool/int/float or a NumPy "
                    f"scalar, got {kind.__name__}")


_COMPUTATIONS: dict = {}  # (op, input kinds, params) -> computation dtypes


def _computation(name, inputs, params, out_dtype):
    """The dtypes the op casts its inputs to (decided by types alone, so memoised)."""
    try:
        key = (name, tuple(np.dtype(v.dtype) if is_array_spec(v) else type(v) for v in inputs),
               tuple(sorted(params.items(), key=lambda kv: kv[0])) if name != "clip" else
               tuple((k, type(v)) for k, v in sorted(params.items(), key=lambda kv: kv[0])))
        found = _COMPUTATIONS.get(key)
    except TypeError:  # an unhashable param: not kept
        key, found = None, None
    if found is None:
        found = _resolve_computation(name, inputs, params)
        if key is not None and len(_COMPUTATIONS) < 4096:
            _COMPUTATIONS[key] = found
    return found


def _resolve_computation(name, inputs, params):
    if name == "copy":
        return (check_dtype(inputs[0].dtype) if is_array_spec(inputs[0])
                else np.asarray(inputs[0]).dtype,)
    spec = _elementwise.spec(name)
    computation, _ = spec.resolve(inputs, params)
    return tuple(np.dtype(d) for d in computation)


class ProgramBuilder:
    """Records a fused program op by op::

        b = ProgramBuilder()
        x = b.array(a)                         # a leaf: input array 0 (any array spec)
        y = b.apply("multiply", x, 1.0001)     # scalars inline: weak Python or NumPy
        z = b.apply("add", y, 0.5)
        program = b.build(outputs=[z])         # or reduction=("sum", z, None, False)

    ``apply`` infers each node with the registered op's plan (raising its errors) and
    refuses what cannot be fused exactly (``NotFusible``).
    """

    def __init__(self):
        self.nodes: list = []
        self._arrays = 0
        self._scalar_values: list = []

    def array(self, spec) -> int:
        """A leaf for the next input array (anything with .shape and .dtype)."""
        if not is_array_spec(spec) or isinstance(spec, np.generic):
            raise TypeError(f"array() takes an array spec, got {type(spec).__name__}")
        self.nodes.append(Leaf(self._arrays, shape_of(spec), check_dtype(spec.dtype)))
        self._arrays += 1
        return len(self.nodes) - 1

    def scalar(self, value) -> int:
        """A scalar argument (its value may change from run to run, its type may not)."""
        self.nodes.append(Scalar(len(self._scalar_values), _scalar_kind(value)))
        self._scalar_values.append(value)
        return len(self.nodes) - 1

    def apply(self, name: str, *args, **params) -> int:
        """Node ``name(*args, **params)``; an arg is a node id (from ``array``/``scalar``/
        ``apply``), a float, bool or NumPy scalar, or ``Const(value)`` (needed for a
        Python int, which would read as a node id); clip takes ``a_min``/``a_max`` as values or None."""
        nodes, values = len(self.nodes), len(self._scalar_values)
        try:
            return self._apply(name, args, params)
        except BaseException:  # a refused op leaves the program as it was
            del self.nodes[nodes:], self._scalar_values[values:]
            raise

    def _apply(self, name, args, params) -> int:
        if name not in FUSIBLE_OPS:
            raise NotFusible(f"{name} is not an element-wise op the fuser knows")
        if len(args) != FUSIBLE_OPS[name]:
            raise TypeError(f"{name} takes {FUSIBLE_OPS[name]} arguments, got {len(args)}")
        ids = tuple(self._node_id(a) for a in args)
        bounds = (None, None)
        static = {}
        for key, value in params.items():
            if name == "clip" and key in CLIP_BOUNDS:
                continue
            if key not in _STATIC_PARAMS.get(name, _UFUNC_PARAMS):
                raise NotFusible(f"{name}: param {key!r} is not fusible")
            if value is not None:
                static[key] = check_dtype(value) if key == "dtype" else value
        if name == "clip":
            bounds = tuple(None if params.get(k) is None else self._bound(params[k])
                           for k in CLIP_BOUNDS)
        if name == "copy" and "dtype" not in static:
            raise NotFusible("copy without dtype= is a plain copy: nothing to fuse")
        node_id = len(self.nodes)
        inputs, op_params = self._inputs(name, ids, bounds, static)
        op = get_op(name)
        try:
            plan = op.plan(inputs, op_params)
            if plan.check is not None:
                plan.check(inputs, op_params)
        except Exception as exc:
            raise attribute(exc, node_id, name) from None
        ((shape, dtype),) = plan.outputs
        computation = _computation(name, inputs, op_params, dtype)
        if {np.dtype(dtype), *computation} & EXTENDED_DTYPES:  # NumPy's loops, op by op
            raise NotFusible(f"{name}: float16 and complex are not fused")
        node = OpNode(name, ids, tuple(sorted(static.items(), key=lambda kv: kv[0])), bounds,
                      tuple(shape), np.dtype(dtype), computation, plan.check)
        self._refuse_inexact(node, inputs)
        self.nodes.append(node)
        return node_id

    def _node_id(self, value) -> int:
        if isinstance(value, Const):
            return self.scalar(value.value)
        if type(value) is int:  # a node id (a Python int scalar is Const(n))
            if 0 <= value < len(self.nodes):
                return value
            raise IndexError(f"no node {value}")
        if type(value) in (bool, float) or isinstance(value, np.generic):
            return self.scalar(value)
        raise TypeError(f"an argument must be a node id, a scalar or Const(value), "
                        f"got {type(value).__name__}")

    def _bound(self, value) -> int:
        return self.scalar(value.value if isinstance(value, Const) else value)

    def _inputs(self, name, ids, bounds, static):
        values = self._scalar_values
        inputs = []
        for i in ids:
            node = self.nodes[i]
            inputs.append(values[node.index] if isinstance(node, Scalar)
                          else ArraySpec(node.shape, node.dtype))
        params = dict(static)
        if name == "clip":
            for key, bound in zip(CLIP_BOUNDS, bounds):
                params[key] = None if bound is None else values[self.nodes[bound].index]
        return inputs, params

    def _refuse_inexact(self, node: OpNode, inputs) -> None:
        if node.name == "power" and node.computation[1].kind == "i" and not isinstance(
                self.nodes[node.args[1]], Scalar):
            # NumPy refuses a negative integer exponent only after looking at the data; a
            # fused pass would have written part of its outputs by then
            raise NotFusible("integer power with an array exponent")
        if node.name == "round" and dict(node.params).get("decimals", 0) != 0 and any(
                isinstance(self.nodes[a], Scalar) for a in node.args):
            raise NotFusible("round of a scalar")

    def build(self, outputs=(), reduction=None) -> FusedProgram:
        """The program: ``outputs`` node ids; ``reduction``: (name, node id, axis, keepdims)
        or None.  Nodes that no output or reduction needs are dropped."""
        outputs = tuple(int(i) for i in outputs)
        for i in outputs:
            if not isinstance(self.nodes[i], OpNode):
                raise NotFusible("an output must be an op node (a leaf is already an array)")
        tail = None
        if reduction is not None:
            tail = self._reduction(*reduction)
        return _pruned(self.nodes, outputs, tail, self._scalar_values)

    def _reduction(self, name, node_id, axis=None, keepdims=False):
        if name not in TAIL_REDUCTIONS:
            raise NotFusible(f"{name} is not a fusible tail reduction")
        node = self.nodes[node_id]
        if isinstance(node, Scalar):
            raise NotFusible("a reduction of a scalar")
        if type(keepdims) is not bool:
            raise NotFusible("keepdims must be a bool")
        if axis is not None and type(axis) is not int:
            raise NotFusible("a fused reduction takes axis None or one int")
        spec = ArraySpec(node.shape, node.dtype)
        params = {"axis": axis, "keepdims": keepdims}
        plan = get_op(name).plan([spec], params)  # its errors: AxisError, empty max, ...
        if plan.check is not None:
            plan.check([spec], params)
        ((shape, dtype),) = plan.outputs
        if axis is not None:
            (axis,) = normalize_axes(axis, len(node.shape))
        return Reduction(name, node_id, axis, keepdims, tuple(shape), np.dtype(dtype))


@dataclass(frozen=True)
class Const:
    """An inline scalar argument of ``ProgramBuilder.apply``: ``Const(2)`` (a weak int)."""
    value: object


def _pruned(nodes, outputs, reduction, scalar_values) -> FusedProgram:
    """The program without nodes nothing needs, ids renumbered (leaves and scalars keep
    their call positions)."""
    needed = set(outputs)
    if reduction is not None:
        needed.add(reduction.node)
    for i in range(len(nodes) - 1, -1, -1):
        node = nodes[i]
        if i in needed and isinstance(node, OpNode):
            needed.update(node.args)
            needed.update(b for b in node.bounds if b is not None)
    keep = [i for i, n in enumerate(nodes) if i in needed or not isinstance(n, OpNode)]
    if len(keep) == len(nodes):
        return FusedProgram(nodes, outputs, reduction, scalar_values)
    new_id = {old: new for new, old in enumerate(keep)}
    renumbered = []
    for old in keep:
        node = nodes[old]
        if isinstance(node, OpNode):
            node = OpNode(node.name, tuple(new_id[a] for a in node.args), node.params,
                          tuple(None if b is None else new_id[b] for b in node.bounds),
                          node.shape, node.dtype, node.computation, node.check)
        renumbered.append(node)
    if reduction is not None:
        reduction = Reduction(reduction.name, new_id[reduction.node], reduction.axis,
                              reduction.keepdims, reduction.shape, reduction.dtype)
    return FusedProgram(renumbered, [new_id[i] for i in outputs], reduction, scalar_values)
