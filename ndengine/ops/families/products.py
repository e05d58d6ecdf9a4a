"""Products: dot and matmul (NumPy's BLAS does the work; it releases the GIL), and vdot, inner,
outer, tensordot, einsum, kron run by NumPy's own functions (numpy_operators: shapes here, dtypes
probed from NumPy)."""
from __future__ import annotations

import numpy as np

from ..dtypes import check_dtype, promotion_operand, result_type
from .numpy_operators import numpy_operator, stand_in
from ..outputs import detach_overlapping, single_output, write_with_req
from ..plans import Plan
from ..registry import OpReq, add_operator, kernel_run, numpy_backed
from ..shapes import broadcast_shapes, shape_of


def _mismatch(name, a, b, detail):
    return ValueError(f"{name}: shapes {a} and {b} not aligned: {detail}")


def infer_dot(a, b):
    sa, sb = shape_of(a), shape_of(b)
    dtype = result_type(a, b)
    if not sa or not sb:  # a 0-d operand makes dot a multiply
        return [(broadcast_shapes(sa, sb), dtype)]
    contracted_b = 0 if len(sb) == 1 else len(sb) - 2
    if sa[-1] != sb[contracted_b]:
        raise _mismatch("dot", sa, sb, f"{sa[-1]} (dim {len(sa) - 1}) != "
                                       f"{sb[contracted_b]} (dim {contracted_b})")
    return [(sa[:-1] + sb[:contracted_b] + sb[contracted_b + 1:], dtype)]


def infer_matmul(a, b, dtype=None):
    sa, sb = shape_of(a), shape_of(b)
    if not sa or not sb:
        raise ValueError(f"matmul: operands must be at least 1-d, got shapes {sa} and {sb}")
    operands = (promotion_operand(a), promotion_operand(b), None)
    if dtype is not None:  # np.matmul(..., dtype=): NumPy's loop choice and casting error
        dtype = check_dtype(np.matmul.resolve_dtypes(
            operands, signature=(None, None, check_dtype(dtype)), casting="same_kind")[-1])
    else:
        try:
            dtype = check_dtype(np.matmul.resolve_dtypes(operands)[-1])
        except TypeError:
            raise TypeError(f"matmul is not supported for dtypes {a.dtype} and "
                            f"{b.dtype}") from None
    a2 = (1,) + sa if len(sa) == 1 else sa
    b2 = sb + (1,) if len(sb) == 1 else sb
    if a2[-1] != b2[-2]:
        raise _mismatch("matmul", sa, sb, f"core dimension {a2[-1]} != {b2[-2]}")
    try:
        batch = broadcast_shapes(a2[:-2], b2[:-2])
    except ValueError:
        raise ValueError(f"matmul: batch dimensions of shapes {sa} and {sb} "
                         f"do not broadcast") from None
    core = (() if len(sa) == 1 else (a2[-2],)) + (() if len(sb) == 1 else (b2[-1],))
    return [(batch + core, dtype)]


def _as_spelled(array, dtype):
    """``array`` viewed with ``dtype`` when its dtype is equal but spelled otherwise."""
    return array.view(dtype) if array.dtype == dtype and array.dtype.num != dtype.num else array


def _linalg_kernel(numpy_fn, blas_needs_contiguous_out):
    def kernel(inputs, outputs, req, **params):
        out, req = single_output(outputs, req)
        if req is OpReq.NULL:
            return
        a, b = detach_overlapping([np.asarray(v) for v in inputs], [out], allow_same_view=False)

        def compute(target):
            # np.dot(out=) insists on a C-contiguous out of exactly the result dtype, spelled
            # as np.dot spells it (its operands' dtypes promoted): int64 is 'l' or 'q', equal
            # dtypes, so one plan serves both and out may carry the other spelling.
            if blas_needs_contiguous_out:
                target = _as_spelled(target, np.result_type(a.dtype, b.dtype))
            if target.flags.c_contiguous or not blas_needs_contiguous_out:
                numpy_fn(a, b, out=target, **params)
            else:
                target[...] = numpy_fn(a, b, **params)

        write_with_req(out, req, compute)
    return kernel


def _linalg_planner(numpy_fn, blas_needs_contiguous_out):
    """The planner of dot and matmul: the kernel's NumPy call itself where the kernel would
    pass the call straight on (a plain write to a fresh output, no overlap, NumPy's own
    spelling of the result dtype), else the kernel."""
    kernel = _linalg_kernel(numpy_fn, blas_needs_contiguous_out)

    def direct_run(inputs, outputs, req, params):
        numpy_fn(inputs[0], inputs[1], out=outputs[0])

    def plan(op, inputs, params, target, aliases, req):
        outputs = op.general_infer(inputs, params)
        direct = (req in (None, OpReq.WRITE_TO, OpReq.WRITE_INPLACE) and not any(aliases or ())
                  and not params and target is None)
        if blas_needs_contiguous_out:  # np.dot's out must be spelled as its result dtype:
            # one spelling per float dtype, two for some ints ('l', 'q'), whose plan is shared
            direct = direct and outputs[0][1].kind in "fc"
        return Plan(outputs, direct_run if direct else kernel_run(kernel))
    return plan


# vdot, inner, outer, tensordot, einsum, kron ----------------------------------

def _size(shape):
    return int(np.prod(shape))


def vdot_shapes(a, b):
    if _size(shape_of(a)) != _size(shape_of(b)):
        raise ValueError(f"vdot: arrays of {_size(shape_of(a))} and {_size(shape_of(b))} "
                         "elements")
    return [()]


def inner_shapes(a, b):
    sa, sb = shape_of(a), shape_of(b)
    if not sa or not sb:  # a 0-d operand makes inner a multiply
        return [broadcast_shapes(sa, sb)]
    if sa[-1] != sb[-1]:
        raise _mismatch("inner", sa, sb, f"{sa[-1]} (dim {len(sa) - 1}) != "
                                          f"{sb[-1]} (dim {len(sb) - 1})")
    return [sa[:-1] + sb[:-1]]


def outer_shapes(a, b):
    return [(_size(shape_of(a)), _size(shape_of(b)))]


def tensordot_shapes(a, b, *, axes=2):
    """numpy.tensordot's own reading of ``axes``, with its errors."""
    sa, sb = shape_of(a), shape_of(b)
    try:
        iter(axes)
    except TypeError:
        axes_a, axes_b = list(range(-axes, 0)), list(range(0, axes))
    else:
        axes_a, axes_b = axes
    axes_a = list(axes_a) if hasattr(axes_a, "__len__") else [axes_a]
    axes_b = list(axes_b) if hasattr(axes_b, "__len__") else [axes_b]
    if len(axes_a) != len(axes_b) or any(sa[i] != sb[j] for i, j in zip(axes_a, axes_b)):
        raise ValueError("shape-mismatch for sum")
    axes_a = [i + len(sa) if i < 0 else i for i in axes_a]
    axes_b = [j + len(sb) if j < 0 else j for j in axes_b]
    return [tuple(n for i, n in enumerate(sa) if i not in axes_a)
            + tuple(n for j, n in enumerate(sb) if j not in axes_b)]


def _einsum_arguments(subscripts, operands):
    if isinstance(subscripts, str):
        return (subscripts, *operands)
    arguments = []  # the interleaved form: operand, its sublist, ..., [output sublist]
    for operand, sublist in zip(operands, subscripts):
        arguments += [operand, list(sublist)]
    if len(subscripts) > len(operands):
        arguments.append(list(subscripts[-1]))
    return tuple(arguments)


def einsum_shapes(*operands, subscripts, **options):
    """NumPy parses the subscripts (einsum_path on zero-strided stand-ins: no work, its
    errors); its explicit form gives each label's size."""
    path = np.einsum_path(*_einsum_arguments(subscripts, [stand_in(x) for x in operands]),
                          optimize=False)[1]
    line = next(text for text in path.splitlines() if "Complete contraction:" in text)
    inputs, output = line.split(":", 1)[1].strip().split("->")
    sizes = {}
    for term, operand in zip(inputs.split(","), operands):
        shape = shape_of(operand)
        for label, n in zip(term[::-1], shape[::-1]):
            sizes[label] = n if sizes.get(label, 1) == 1 else sizes[label]
    return [tuple(sizes.get(label, 1) for label in output)]


def einsum_call(function, inputs, params):
    params = dict(params)
    return function(*_einsum_arguments(params.pop("subscripts"), inputs), **params)


def kron_shapes(a, b):
    sa, sb = shape_of(a), shape_of(b)
    ndim = max(len(sa), len(sb))
    if len(sa) < len(sb):
        sa = (1,) * (ndim - len(sa)) + sa  # numpy.kron: a gets b's ndim first
    if not sa or not sb:
        return [broadcast_shapes(sa, sb)]
    sb = (1,) * (ndim - len(sb)) + sb
    return [tuple(m * n for m, n in zip(sa, sb))]


def register_all() -> None:
    add_operator(numpy_backed("dot", num_inputs=2, kind="other", infer=infer_dot,
                              planner=_linalg_planner(np.dot, True), doc="numpy.dot"))
    add_operator(numpy_backed("matmul", num_inputs=2, kind="other", infer=infer_matmul,
                              planner=_linalg_planner(np.matmul, False), doc="numpy.matmul"))
    products = {"vdot": (np.vdot, vdot_shapes, None), "inner": (np.inner, inner_shapes, None),
                "outer": (np.outer, outer_shapes, None),
                "tensordot": (np.tensordot, tensordot_shapes, None),
                "einsum": (np.einsum, einsum_shapes, einsum_call),
                "kron": (np.kron, kron_shapes, None)}
    for name, (function, shapes, call) in products.items():
        numpy_operator(name, function, shapes, dtypes="probe",
                       **({"call": call} if call else {}),
                       doc=f"numpy.{name}, run by NumPy inside the pushed op")
