"""The two ways to evaluate a fused program on one block of its iteration space.

``BlockedEvaluator`` (numexpr's approach, no compilation): each node is the registered op's
own plan run (``Operator.plan(...).run``) on 1-D block operands, into small scratch
buffers reused as nodes die; so every node computes exactly what the unfused op computes,
NumPy's SIMD transcendentals included.  Arguments are cast to the op's computation dtype
first (into scratch, not a fresh array per block); the plans are made once per block
length.

``numba_block`` calls a generated kernel (``codegen``) on the block's views: every
node of an element in registers, one pass; it returns the FP flags the kernel raised.

Both write the values of the program's destination nodes (its outputs, the reduced node)
into destination arrays of the block's shape, cast to the destination's dtype.  Scalars
are the call's values: ``prepare_slots`` converts them for a kernel as the registered ops
convert them.
"""
from __future__ import annotations

import numpy as np

from .program import ArraySpec, Leaf, OpNode, Scalar
from ..plans import OpReq
from ..registry import get as get_op

__all__ = ["BlockedEvaluator", "prepare_slots", "numba_block"]

_REQ = [OpReq.WRITE_TO]


class _Step:
    """One node's work on a block: its plan's run and where its operands and result live."""
    __slots__ = ("node", "run", "args", "casts", "one", "dest", "slot", "dtype")

    def __init__(self, node, run, args, casts, one, dest, slot, dtype):
        self.node, self.run, self.args, self.casts = node, run, args, casts
        self.one, self.dest, self.slot, self.dtype = one, dest, slot, dtype


class BlockedEvaluator:
    """Evaluates a program block by block with the registered ops' plans."""

    def __init__(self, program, dest_nodes):
        self.program = program
        self.dest_nodes = tuple(dest_nodes)
        nodes = program.nodes
        self.ops = {i: get_op(n.name) for i, n in enumerate(nodes) if isinstance(n, OpNode)}
        self.leaf_ids = [i for i, n in enumerate(nodes) if isinstance(n, Leaf)]
        self.scalar_ids = [i for i, n in enumerate(nodes) if isinstance(n, Scalar)]
        self.slot = self._assign_slots()
        self._plans = {}

    def _assign_slots(self) -> dict:
        """A scratch buffer per op node, reused once every reader of its value has run. A
        node never writes over its own operand: LLVM vectorises a Numba loop only when its
        output cannot overlap an input, and an in-place loop ran 3.5x slower (float32)."""
        nodes = self.program.nodes
        last_use = {}
        for i, node in enumerate(nodes):
            if isinstance(node, OpNode):
                for arg in node.args:
                    last_use[arg] = i
        for i in self.dest_nodes:
            last_use[i] = len(nodes)  # written to its destination at the end of the block
        free, slot, count = {}, {}, 0
        for i, node in enumerate(nodes):
            if not isinstance(node, OpNode):
                continue
            spare = free.get(node.dtype)
            if spare:
                slot[i] = spare.pop()
            else:
                slot[i] = count
                count += 1
            for arg in set(node.args):  # freed after its reader's output has a buffer
                if arg in slot and last_use.get(arg) == i:
                    free.setdefault(nodes[arg].dtype, []).append(slot[arg])
        return slot

    def call_params(self, values) -> dict:
        """Each op node's params for a run with these scalar values."""
        program = self.program
        params = {}
        for i, op in self.ops.items():
            node = program.nodes[i]
            if node.params or node.name in ("clip", "clip_arrays"):
                params[i] = program.node_inputs(node, values)[1]
            else:
                params[i] = {}
        return params

    def _make_plans(self, n, ones):
        program = self.program
        nodes = program.nodes
        one = {}
        for i in self.leaf_ids:
            one[i] = ones[nodes[i].index]
        plans = []
        for i, op in self.ops.items():
            node = nodes[i]
            arrays = [a for a in node.args if not isinstance(nodes[a], Scalar)]
            one[i] = all(one[a] for a in arrays)
            inputs, params = program.node_inputs(node, program.scalar_values)
            cast_inputs = list(inputs)
            casts = []
            for pos, arg in enumerate(node.args):
                if isinstance(nodes[arg], Scalar):
                    casts.append(False)
                    continue
                shape = (1,) if one[arg] else (n,)
                inputs[pos] = ArraySpec(shape, nodes[arg].dtype)
                cast_inputs[pos] = ArraySpec(shape, node.computation[pos])
                casts.append(nodes[arg].dtype != node.computation[pos])
            plan = op.plan(cast_inputs, params)
            if plan.outputs[0][1] != node.dtype:  # the op casts differently: let it
                plan = op.plan(inputs, params)
                casts = [False] * len(casts)
            casts = tuple((pos, ("cast", i, pos), node.computation[pos])
                          for pos, cast in enumerate(casts) if cast)
            dest = self.dest_nodes.index(i) if i in self.dest_nodes else -1
            plans.append(_Step(i, plan.run, node.args, casts, one[i] and n > 1, dest,
                               ("slot", self.slot[i]), node.dtype))
        return plans

    def evaluate(self, values, params, leaves, dests, ws, direct) -> None:
        """Fill ``dests`` (arrays of one region's shape) from ``leaves`` (views of that
        shape, by leaf index).  ``direct``: a destination may be written while other nodes
        still read the leaves (no destination shares memory with a leaf)."""
        nodes = self.program.nodes
        n = dests[0].size
        vals = [None] * len(nodes)
        ones = []
        for i in self.leaf_ids:
            leaf = nodes[i]
            view = leaves[leaf.index]
            if view.flags.c_contiguous:
                value = view.reshape(-1)
            elif not any(view.strides):
                value = view[(slice(0, 1),) * view.ndim].reshape(1)
            else:
                value = ws.get(("leaf", i), leaf.dtype, n)
                np.copyto(value.reshape(view.shape), view)
            vals[i] = value
            ones.append(value.size == 1 and n > 1)
        for i in self.scalar_ids:
            vals[i] = values[nodes[i].index]
        key = (n, tuple(ones))
        plans = self._plans.get(key)
        if plans is None:
            if len(self._plans) > 64:
                self._plans.clear()
            plans = self._plans[key] = self._make_plans(n, ones)
        written = [False] * len(dests)
        get = ws.get
        for step in plans:
            operands = [vals[a] for a in step.args]
            for pos, key, dtype in step.casts:
                value = operands[pos]
                buf = get(key, dtype, value.size)
                np.copyto(buf, value, casting="unsafe")
                operands[pos] = buf
            out = None
            if step.one:
                out = get(("one", step.node), step.dtype, 1)
            elif direct and step.dest >= 0:
                dest = dests[step.dest]
                if dest.dtype == step.dtype and dest.flags.c_contiguous:
                    out = dest.reshape(-1)
                    written[step.dest] = True
            if out is None:
                out = get(step.slot, step.dtype, n)
            step.run(operands, [out], _REQ, params[step.node])
            vals[step.node] = out
        for k, i in enumerate(self.dest_nodes):
            if written[k]:
                continue
            dest = dests[k]
            value = vals[i]
            if value.size == n:
                value = value.reshape(dest.shape)
            np.copyto(dest, value if value.size == n else value.reshape(()), casting="unsafe")


# ------------------------------------------------------------------ generated kernels

def _convert(value, dtype, how):
    """A scalar as the registered op converts it (see ``elementwise/runs.scalar_converter``,
    clip's bounds: out-of-range ints clamp), as a NumPy scalar of ``dtype``."""
    weak = not isinstance(value, np.generic)
    if how == "wrap" and weak:
        return np.asarray(value).astype(dtype)[()]
    if how == "bound" and dtype.kind in "iu" and isinstance(value, (int, np.integer)):
        info = np.iinfo(dtype)
        value = min(max(int(value), int(info.min)), int(info.max))
    return np.asarray(value, dtype=dtype)[()]


def prepare_slots(slots, values):
    """The kernel's scalar arguments, or None where a value needs the registered op's own
    handling (a Python int beyond an integer array's range in a comparison)."""
    prepared = []
    try:
        for scalar_id_value, dtype, how in slots:
            prepared.append(_convert(values[scalar_id_value], dtype, how))
    except (OverflowError, ValueError):
        return None
    return prepared


def numba_block(kernel, flat_classes, slot_values, leaves, dests) -> int:
    """One kernel call on one region: leaves as the kernel's layout wants them; returns the
    FP flags it raised."""
    if flat_classes is not None:
        args = [leaf.reshape(-1)[:1] if cls == "one" else leaf.reshape(-1)
                for leaf, cls in zip(leaves, flat_classes)]
        return kernel(*args, *slot_values, *[d.reshape(-1) for d in dests])
    return kernel(*leaves, *slot_values, *dests)
