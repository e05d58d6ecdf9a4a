"""Fused element-wise programs: a DAG of registered element-wise ops over arrays and scalars.

A ``FusedProgram`` is what a lazily recorded run of element-wise ops becomes when it is
flushed as one engine op.  Its nodes, in order (a node refers only to earlier nodes):

* ``Leaf``: input array ``i`` of the call (its dtype and shape);
* ``Scalar``: scalar ``j`` of the call: a weak Python ``bool``/``int``/``float`` or a strong
  NumPy scalar.  Only its *type* is part of the program: values are arguments of each run,
  so one compiled kernel serves every value;
* ``OpNode``: a registered element-wise op (``ndengine.ops.get(name)``) applied to earlier
  nodes, with its static params (``dtype=``, ``decimals=``); clip's bounds are scalars.

Every ``OpNode``'s shape and dtype are the registered op's own plan for that signature
(``Operator.plan`` on array specs and the scalars), so NumPy's promotion and NEP 50 rules
are the op's, and so are its per-call value checks (``check``: a weak Python int that does
not fit its dtype raises NumPy's OverflowError before anything runs).  ``computation`` is
the dtype each argument is cast to before the op's scalar function sees it
(``ElementwiseSpec.resolve``).

``outputs`` are node ids materialised into arrays the caller passes (an output may be the
very same array as an input: in-place ``x += y``); ``reduction`` is at most one tail
reduction (sum, mean, max, min, prod over all axes or one axis, keepdims) of one node.
Everything the program cannot do exactly raises ``NotFusible`` when it is built.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..elementwise.power_clip import clip_bounds_are_constant
from ..elementwise.runs import NUMPY_UNARY
from .scalars import EXACT_POWER_EXPONENTS
from ..shapes import broadcast_shapes

__all__ = ["NotFusible", "Leaf", "Scalar", "OpNode", "Reduction", "FusedProgram",
           "FUSIBLE_OPS", "TAIL_REDUCTIONS", "CLIP_BOUNDS", "ArraySpec", "scalar_matches",
           "attribute", "numba_able", "numba_exact", "numpy_loop_computes"]


class NotFusible(ValueError):
    """The expression cannot be fused with results identical to the unfused ops."""


_UNARY = ("negative", "positive", "abs", "exp", "log", "log1p", "expm1", "sqrt", "square",
          "sin", "cos", "tan", "tanh", "arcsin", "arccos", "arctan", "sign", "floor", "ceil",
          "invert", "logical_not", "sigmoid", "relu", "round")
_BINARY = ("add", "subtract", "multiply", "true_divide", "floor_divide", "mod", "maximum",
           "minimum", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
           "bitwise_and", "bitwise_or", "bitwise_xor", "power")
# op name -> number of array/scalar arguments ("copy" is astype: one input, dtype= param)
FUSIBLE_OPS = {**{n: 1 for n in _UNARY}, **{n: 2 for n in _BINARY},
               "where": 3, "clip": 1, "clip_arrays": 3, "copy": 1}
TAIL_REDUCTIONS = ("sum", "mean", "max", "min", "prod")
CLIP_BOUNDS = ("a_min", "a_max")  # clip's params that are the program's scalars


@dataclass(frozen=True)
class ArraySpec:
    """An array's shape and dtype (C-contiguous), what the registered ops' plans read."""
    shape: tuple
    dtype: np.dtype
    strides = None


@dataclass(frozen=True)
class Leaf:
    index: int          # position in the call's arrays
    shape: tuple
    dtype: np.dtype


@dataclass(frozen=True)
class Scalar:
    index: int          # position in the call's scalars
    kind: object        # bool, int or float (weak), or the np.dtype of a NumPy scalar
    shape = ()

    @property
    def weak(self) -> bool:
        return isinstance(self.kind, type)

    @property
    def dtype(self):  # the dtype a strong scalar has; weak ones have none of their own
        return None if self.weak else self.kind


@dataclass(frozen=True, eq=False)
class OpNode:
    name: str
    args: tuple           # node ids
    params: tuple         # static params, sorted (name, value) pairs
    bounds: tuple         # clip: (a_min node id or None, a_max node id or None)
    shape: tuple
    dtype: np.dtype
    computation: tuple    # dtype each argument is cast to
    check: object = field(repr=False, default=None)   # the op plan's per-call check

    def structure(self) -> tuple:
        return (self.name, self.args, self.params, self.bounds, self.dtype, self.computation)


@dataclass(frozen=True)
class Reduction:
    name: str
    node: int
    axis: int | None      # normalised; None: every axis
    keepdims: bool
    shape: tuple          # the result's shape and dtype (the registered op's plan)
    dtype: np.dtype


def scalar_matches(kind, value) -> bool:
    """Whether ``value`` has the type a program's scalar was built with."""
    if isinstance(kind, type):
        return type(value) is kind
    return isinstance(value, np.generic) and value.dtype == kind


class FusedProgram:
    """A recorded element-wise DAG (see the module docstring).  Build it with
    ``builder.ProgramBuilder``; run it with ``ndengine.ops.fusion.kernel.run`` or ``kernel_for``."""

    def __init__(self, nodes, outputs, reduction, scalar_values):
        self.nodes = tuple(nodes)
        self.outputs = tuple(outputs)
        self.reduction = reduction
        self.scalar_values = tuple(scalar_values)  # the values seen when it was built
        self.leaves = tuple(n for n in self.nodes if isinstance(n, Leaf))
        self.scalars = tuple(n for n in self.nodes if isinstance(n, Scalar))
        shapes = [self.nodes[i].shape for i in self.outputs]
        if reduction is not None:
            shapes.append(self.nodes[reduction.node].shape)
        if not shapes:
            raise NotFusible("a fused program needs an output or a reduction")
        first = shapes[0]
        self.shape = first if all(s == first for s in shapes) else broadcast_shapes(*shapes)
        for i in self.outputs:
            if self.nodes[i].shape != self.shape:
                raise NotFusible(f"output node {i} has shape {self.nodes[i].shape}, not the "
                                 f"program's {self.shape}")
        if reduction is not None and self.nodes[reduction.node].shape != self.shape:
            raise NotFusible("the reduced node must have the program's shape")
        self.size = math.prod(self.shape)
        # clip_arrays nodes whose bounds NumPy's clip loop takes as constants (their rule on a
        # tie of signed zeros is not the bound arrays'): a part of the key, as the leaves'
        # shapes are not
        self.constant_clips = frozenset(
            i for i, n in enumerate(self.nodes) if isinstance(n, OpNode)
            and n.name == "clip_arrays" and self.clip_bounds_constant(n))
        self.key = self._structure_key()
        self.member_names = tuple(n.name for n in self.nodes if isinstance(n, OpNode)) + (
            (reduction.name,) if reduction is not None else ())
        # float power with a scalar exponent: exact when the exponent's value is one NumPy
        # computes without pow (checked per call: ``exact_with``)
        self.power_exponents = tuple(sorted({
            self.nodes[n.args[1]].index for n in self.nodes
            if isinstance(n, OpNode) and n.name == "power" and n.dtype.kind == "f"
            and isinstance(self.nodes[n.args[1]], Scalar)}))
        self.numba_exact = all(numba_exact(n, self.nodes) for n in self.nodes
                               if isinstance(n, OpNode))
        self.numba_able = all(numba_able(n) for n in self.nodes if isinstance(n, OpNode))
        used = {a for n in self.nodes if isinstance(n, OpNode) for a in n.args}
        # leaves nothing reads (the ops that read them were pruned) may not even broadcast
        self.unused_leaves = frozenset(n.index for i, n in enumerate(self.nodes)
                                       if isinstance(n, Leaf) and i not in used)
        self.checks = tuple(i for i, n in enumerate(self.nodes)
                            if isinstance(n, OpNode) and n.check is not None)
        self.widest = max(getattr(getattr(n, "dtype", None), "itemsize", 1) for n in self.nodes)

    def __repr__(self):
        return (f"<FusedProgram {'+'.join(self.member_names)} shape={self.shape} "
                f"outputs={list(self.outputs)}>")

    # ------------------------------------------------------------ what the caller allocates

    @property
    def output_specs(self) -> list:
        """(shape, dtype) of each output array the caller passes, the reduction's last."""
        specs = [(self.shape, self.nodes[i].dtype) for i in self.outputs]
        if self.reduction is not None:
            specs.append((self.reduction.shape, self.reduction.dtype))
        return specs

    def _structure_key(self) -> tuple:
        parts = []
        for node in self.nodes:
            if isinstance(node, Leaf):
                parts.append(("in", node.dtype, len(node.shape)))
            elif isinstance(node, Scalar):
                parts.append(("scalar", node.kind))
            else:
                parts.append(node.structure())
        r = self.reduction
        tail = None if r is None else (r.name, r.node, r.axis, r.keepdims)
        return (tuple(parts), self.outputs, tail, len(self.shape), self.constant_clips)

    # ------------------------------------------------------------ per-call checks

    def node_inputs(self, node: OpNode, values) -> tuple:
        """(inputs, params) for the registered op of ``node``: array specs for arrays, the
        call's scalar values for scalars (what its plan's check reads)."""
        inputs = []
        for arg in node.args:
            source = self.nodes[arg]
            if isinstance(source, Scalar):
                inputs.append(values[source.index])
            else:
                inputs.append(ArraySpec(source.shape, source.dtype))
        params = dict(node.params)
        for name, bound in zip(CLIP_BOUNDS, node.bounds):
            if node.name == "clip":
                params[name] = None if bound is None else values[self.nodes[bound].index]
        if node.name == "clip_arrays":  # the rule of the whole call, not of a block's operands
            params["constant_bounds"] = self.clip_bounds_constant(node)
        return inputs, params

    def clip_bounds_constant(self, node: OpNode) -> bool:
        """Whether NumPy runs clip_arrays ``node`` with its loop for constant bounds."""
        return clip_bounds_are_constant(
            *(getattr(self.nodes[a], "shape", ()) for a in node.args), node.shape)

    def exact_with(self, values) -> bool:
        """Whether the generated kernel computes this call exactly (see ``numba_exact``)."""
        if not self.numba_exact:
            return False
        return all(float(values[i]) in EXACT_POWER_EXPONENTS for i in self.power_exponents)

    def check_values(self, values) -> None:
        """Every node's per-call check on these scalar values (NumPy's errors, at the call);
        the error names the node (``exc.fusion_node``)."""
        if len(values) != len(self.scalars):
            raise TypeError(f"the program takes {len(self.scalars)} scalars, got {len(values)}")
        for scalar, value in zip(self.scalars, values):
            if not scalar_matches(scalar.kind, value):
                raise TypeError(f"scalar {scalar.index} must be {scalar.kind!r} as when the "
                                f"program was built, got {type(value).__name__}")
        for i in self.checks:
            node = self.nodes[i]
            inputs, params = self.node_inputs(node, values)
            try:
                node.check(inputs, params)
            except Exception as exc:
                raise attribute(exc, i, node.name) from None


def attribute(exc: BaseException, node_id: int, name: str) -> BaseException:
    """``exc`` marked with the node that raised it."""
    exc.fusion_node = node_id
    exc.fusion_op = name
    if hasattr(exc, "add_note"):
        exc.add_note(f"(raised by fused node {node_id}: {name})")
    return exc


# ------------------------------------------------------------ what each evaluator can do

_NUMPY_BACKED = frozenset(NUMPY_UNARY)  # float loops are NumPy's SIMD ones, not libm's


def numba_able(node: OpNode) -> bool:
    """Whether the generated Numba kernel can compute ``node`` at all."""
    if node.name == "round":
        return dict(node.params).get("decimals", 0) == 0
    if node.name == "copy":  # float -> int casts of NaN/inf/out of range are undefined in LLVM
        return not (node.computation[0].kind == "f" and node.dtype.kind in "iub")
    return True


def numpy_loop_computes(name: str, dtype: np.dtype) -> bool:
    """Whether the registered op ``name`` with result ``dtype`` runs NumPy's own loop (its SIMD
    transcendentals), which a generated kernel does not reproduce bit for bit: a program with
    such a node runs on the blocked evaluator."""
    return name in _NUMPY_BACKED and dtype.kind == "f"


def numba_exact(node: OpNode, nodes) -> bool:
    """Whether the Numba kernel's result for ``node`` is the registered op's bit for bit:
    not for the ops the registered op runs with NumPy's SIMD transcendentals (libm differs
    by an ulp or two), nor float power of an array exponent; float power of a scalar
    exponent only for the values ``EXACT_POWER_EXPONENTS`` (decided per call)."""
    if not numba_able(node):
        return False
    if numpy_loop_computes(node.name, node.dtype):
        return False
    if node.name == "power" and node.dtype.kind == "f":
        return isinstance(nodes[node.args[1]], Scalar)
    return True
