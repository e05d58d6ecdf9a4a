"""Fused element-wise programs on a GPU: one CUDA kernel per program structure, made with
CuPy's ``ElementwiseKernel`` from the same ``FusedProgram`` the CPU's fused kernels come from
(fusion/program.py).

``kernel_for(program, xp)`` returns a `GpuFusedKernel`, called as the CPU's::

    kernel(arrays, scalars, outputs)   # the device's arrays; outputs preallocated

or raises ``NotFusible`` when the program has a node the generator cannot write exactly
(float16 or complex dtypes, integer power, floor division and remainder, a float-to-integer
cast, round to decimals): the caller then runs the ops one by one, each with its GPU plan.
On a fake GPU (``xp`` is NumPy) there is no CUDA: ``kernel_for`` raises NotFusible, and the
window runs op by op on the same GPU path; ``cuda_source`` is what would be compiled, and is
tested as text there.

The kernel: every leaf array is an input (CuPy broadcasts them and follows any strides), each
scalar a typed argument, each output an output; per element, each node is one C expression of
its arguments cast to the node's computation dtypes (``OpNode.computation``: NumPy's loop
choice, made by the registered op's plan), cast to the node's dtype. A tail reduction is the
reduced node written to a temporary, then reduced by the reduction op's own GPU plan. Results
equal the unfused GPU ops' except for the last bits of transcendental functions (CUDA's libm
in both, but a fused kernel may keep a value in a register where the unfused op rounded it to
its dtype in memory: the generator casts every node to its dtype, so it does not).

Overlap: a leaf that overlaps an output through another view (a stencil written in place) is
copied first; the very same view (``x += y``) is safe, each element being read before it is
written by the same thread.
"""
from __future__ import annotations

import numpy as np

from ..fusion.program import Leaf, NotFusible, OpNode, Scalar
from ..plans import OpReq

__all__ = ["kernel_for", "cuda_source", "GpuFusedKernel"]

_C_TYPES = {np.dtype(np.bool_): "bool", np.dtype(np.int8): "signed char",
            np.dtype(np.uint8): "unsigned char", np.dtype(np.int16): "short",
            np.dtype(np.uint16): "unsigned short", np.dtype(np.int32): "int",
            np.dtype(np.uint32): "unsigned int", np.dtype(np.int64): "long long",
            np.dtype(np.uint64): "unsigned long long", np.dtype(np.float32): "float",
            np.dtype(np.float64): "double"}
_WEAK_SCALAR_DTYPES = {bool: np.dtype(np.bool_), int: np.dtype(np.int64),
                       float: np.dtype(np.float64)}

# op name -> C expression of its cast arguments a, b, c (by computation kind where it matters)
_FLOAT_FUNCTIONS = {"exp": "exp(a)", "log": "log(a)", "log1p": "log1p(a)", "expm1": "expm1(a)",
                    "sqrt": "sqrt(a)", "sin": "sin(a)", "cos": "cos(a)", "tan": "tan(a)",
                    "tanh": "tanh(a)", "arcsin": "asin(a)", "arccos": "acos(a)",
                    "arctan": "atan(a)", "floor": "floor(a)", "ceil": "ceil(a)",
                    "sigmoid": "1 / (1 + exp(-a))", "abs": "fabs(a)", "power": "pow(a, b)"}
_ANY = {"negative": "-a", "positive": "a", "square": "a * a", "add": "a + b",
        "subtract": "a - b", "multiply": "a * b", "true_divide": "a / b",
        "equal": "a == b", "not_equal": "a != b", "less": "a < b", "less_equal": "a <= b",
        "greater": "a > b", "greater_equal": "a >= b", "bitwise_and": "a & b",
        "bitwise_or": "a | b", "bitwise_xor": "a ^ b", "invert": "~a",
        "logical_not": "!a", "where": "a ? b : c", "copy": "a"}
_BOOL = {"add": "a || b", "multiply": "a && b", "bitwise_and": "a && b",
         "bitwise_or": "a || b", "bitwise_xor": "a != b", "invert": "!a", "maximum": "a || b",
         "minimum": "a && b", "abs": "a", "floor": "a", "ceil": "a", "sign": "a"}
_INTEGER = {"abs": "(a < 0 ? -a : a)", "floor": "a", "ceil": "a", "sign": "(a > 0) - (a < 0)",
            "maximum": "(a > b ? a : b)", "minimum": "(a < b ? a : b)"}
# NaN-propagating choices, as NumPy's loops
_FLOAT = {"maximum": "(a != a ? a : (b != b ? b : (a >= b ? a : b)))",
          "minimum": "(a != a ? a : (b != b ? b : (a <= b ? a : b)))",
          "sign": "(a != a ? a : (a > 0 ? 1 : (a < 0 ? -1 : 0)))",
          "relu": "(a != a ? a : (a > 0 ? a : 0))",
          "round": "rint(a)"}


def _c_type(dtype) -> str:
    try:
        return _C_TYPES[np.dtype(dtype)]
    except KeyError:
        raise NotFusible(f"no CUDA fusion for dtype {dtype}") from None


def _expression(node: OpNode) -> str:
    """The C expression of ``node`` over its cast arguments ``a``, ``b``, ``c``."""
    name = node.name
    kind = node.computation[0].kind if node.computation else node.dtype.kind
    if name == "round" and dict(node.params).get("decimals", 0) != 0:
        raise NotFusible("round to decimals")
    if name == "copy" and node.computation[0].kind == "f" and node.dtype.kind in "iub":
        raise NotFusible("a float to integer cast (undefined for NaN and out of range)")
    if name == "power" and kind != "f":
        raise NotFusible("integer power")
    if name in ("floor_divide", "mod"):
        raise NotFusible(f"{name} (Python's rounding rules)")
    if kind == "b" and name in _BOOL:
        return _BOOL[name]
    if kind in "iu" and name in _INTEGER:
        return _INTEGER[name]
    if kind == "f" and name in _FLOAT:
        return _FLOAT[name]
    if kind == "f" and name in _FLOAT_FUNCTIONS:
        return _FLOAT_FUNCTIONS[name]
    if name in _ANY:
        return _ANY[name]
    if name == "relu":
        return "(a > 0 ? a : 0)"
    raise NotFusible(f"no CUDA expression for {name} on {kind!r} values")


def _clip_expression(node: OpNode, lo: str | None, hi: str | None) -> str:
    """clip in NumPy's order (the lower bound, then the upper); NaN stays NaN."""
    expression = "a"
    if lo is not None:
        expression = f"({expression} < {lo} ? {lo} : {expression})"
    if hi is not None:
        expression = f"({expression} > {hi} ? {hi} : {expression})"
    if node.dtype.kind == "f":
        expression = f"(a != a ? a : {expression})"
    return expression


def cuda_source(program):
    """(in_params, out_params, body): the ElementwiseKernel text of ``program``."""
    nodes = program.nodes
    inputs, names = [], {}
    for i, node in enumerate(nodes):
        if isinstance(node, Leaf):
            names[i] = f"in{node.index}"
            inputs.append((node.index, f"{np.dtype(node.dtype).name} in{node.index}"))
            _c_type(node.dtype)
    scalars = []
    for i, node in enumerate(nodes):
        if isinstance(node, Scalar):
            dtype = _WEAK_SCALAR_DTYPES[node.kind] if node.weak else np.dtype(node.dtype)
            names[i] = f"s{node.index}"
            scalars.append((node.index, f"{dtype.name} s{node.index}"))
            _c_type(dtype)
    lines = []
    for i, node in enumerate(nodes):
        if not isinstance(node, OpNode):
            continue
        out_type = _c_type(node.dtype)
        casts = [f"({_c_type(c)}){names[a]}" for a, c in zip(node.args, node.computation)]
        if node.name == "clip":
            computation = _c_type(node.computation[0])
            bounds = []
            for label, bound in zip(("lo", "hi"), node.bounds):
                if bound is None:
                    bounds.append(None)
                    continue
                bounds.append(f"{label}{i}")
                lines.append(f"const {computation} {label}{i} = ({computation}){names[bound]};")
            expression = _clip_expression(node, *bounds)
        else:
            expression = _expression(node)
        for letter, cast in zip("abc", casts):
            expression = _substitute(expression, letter, cast)
        lines.append(f"const {out_type} v{i} = ({out_type})({expression});")
        names[i] = f"v{i}"
    outs = []
    for k, i in enumerate(program.outputs):
        outs.append(f"{np.dtype(nodes[i].dtype).name} out{k}")
        lines.append(f"out{k} = {names[i]};")
    if program.reduction is not None:
        node = program.reduction.node
        outs.append(f"{np.dtype(nodes[node].dtype).name} reduced")
        lines.append(f"reduced = {names[node]};")
    in_params = ", ".join([text for _, text in sorted(inputs)] +
                          [text for _, text in sorted(scalars)])
    return in_params, ", ".join(outs), "\n".join(lines)


def _substitute(expression, letter, replacement):
    """Replace the argument ``letter`` (a whole word) in ``expression``."""
    out, i = [], 0
    while i < len(expression):
        ch = expression[i]
        before = expression[i - 1] if i else " "
        after = expression[i + 1] if i + 1 < len(expression) else " "
        if ch == letter and not (before.isalnum() or before == "_") \
                and not (after.isalnum() or after == "_"):
            out.append(f"({replacement})")
        else:
            out.append(ch)
        i += 1
    return "".join(out)


class GpuFusedKernel:
    """One program structure's CUDA kernel (see the module docstring)."""

    def __init__(self, program, xp):
        self.program = program
        self.xp = xp
        in_params, out_params, body = cuda_source(program)
        self.source = body
        self.kernel = xp.ElementwiseKernel(in_params, out_params, body,
                                           f"ndengine_fused_{len(program.nodes)}")
        self.scalar_dtypes = []
        for node in program.scalars:
            self.scalar_dtypes.append(_WEAK_SCALAR_DTYPES[node.kind] if node.weak
                                      else np.dtype(node.dtype))
        self.calls = 0

    def stats(self):
        return {"evaluator": "cuda", "calls": self.calls}

    def __call__(self, arrays, scalars, outputs, **_):
        program, xp = self.program, self.xp
        program.check_values(scalars)  # NumPy's errors for the values, before anything runs
        leaves = [self._detached(a, outputs) for a in arrays]
        values = [dtype.type(v) for dtype, v in zip(self.scalar_dtypes, scalars)]
        targets = list(outputs)
        reduction = program.reduction
        reduced = None
        if reduction is not None:
            node = program.nodes[reduction.node]
            reduced = xp.empty(program.shape, node.dtype)
            targets = targets[:-1] + [reduced]
        self.kernel(*leaves, *values, *targets)
        if reduction is not None:
            from ..registry import get as get_op
            params = {"axis": reduction.axis, "keepdims": reduction.keepdims}
            op = get_op(reduction.name)
            plan = op.plan([reduced], params, device="gpu")
            plan.run([reduced], [outputs[-1]], [OpReq.WRITE_TO], params)
        self.calls += 1

    def _detached(self, array, outputs):
        xp = self.xp
        for out in outputs:
            if array is out:
                continue
            same = (array.data.ptr == out.data.ptr and array.shape == out.shape
                    and array.strides == out.strides)
            if not same and xp.may_share_memory(array, out):
                return array.copy()
        return array


_kernels = {}  # program structure key -> GpuFusedKernel, or the NotFusible it raised
_KERNELS_LIMIT = 1024


def kernel_for(program, xp):
    """The CUDA kernel of ``program``'s structure (cached), or NotFusible (see the module
    docstring; always on a fake GPU, whose ``xp`` is NumPy)."""
    if xp is np:
        raise NotFusible("a fake GPU has no CUDA: its windows run op by op")
    key = program.key
    found = _kernels.get(key)
    if found is None:
        try:
            found = GpuFusedKernel(program, xp)
        except NotFusible as exc:
            found = exc
        if len(_kernels) >= _KERNELS_LIMIT:
            _kernels.clear()
        _kernels[key] = found
    if isinstance(found, NotFusible):
        raise found
    kernel = GpuFusedKernel.__new__(GpuFusedKernel)  # the same compiled kernel, this program
    kernel.__dict__.update(found.__dict__)
    kernel.program = program
    return kernel
