"""dot and matmul: NumPy's BLAS does the work (it releases the GIL)."""
from __future__ import annotations

import numpy as np

from .dtypes import check_dtype, promotion_operand, result_type
from .outputs import detach_overlapping, single_output, write_with_req
from .registry import Operator, OpReq, add_operator
from .shapes import broadcast_shapes, shape_of


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


def _linalg_kernel(numpy_fn, blas_needs_contiguous_out):
    def kernel(inputs, outputs, req, **params):
        out, req = single_output(outputs, req)
        if req is OpReq.NULL:
            return
        a, b = detach_overlapping([np.asarray(v) for v in inputs], [out], allow_same_view=False)

        def compute(target):
            # np.dot(out=) insists on a C-contiguous out of exactly the result dtype.
            if target.flags.c_contiguous or not blas_needs_contiguous_out:
                numpy_fn(a, b, out=target, **params)
            else:
                target[...] = numpy_fn(a, b, **params)

        write_with_req(out, req, compute)
    return kernel


def _matmul_gradient(out_grad, inputs, output, **params):
    a, b = (np.asarray(v) for v in inputs)
    g = np.asarray(out_grad)
    if a.ndim == 2 and b.ndim == 2:
        return [g @ b.T, a.T @ g]
    return [None, None]  # batched / 1-d cases are left to the autograd layer


def register_all() -> None:
    add_operator(Operator("dot", num_inputs=2, kind="other", infer=infer_dot,
                          gradient=_matmul_gradient, doc="numpy.dot")
                 .set_kernel("cpu", _linalg_kernel(np.dot, True)))
    add_operator(Operator("matmul", num_inputs=2, kind="other", infer=infer_matmul,
                          gradient=_matmul_gradient, doc="numpy.matmul")
                 .set_kernel("cpu", _linalg_kernel(np.matmul, False)))
