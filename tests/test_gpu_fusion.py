"""The CUDA text of fused element-wise programs (ops/gpu_fusion.py): checked as text here;
compiled and run against NumPy on a real GPU (tests/test_gpu_arrays.py runs the windows)."""
import numpy as np
import pytest

from ndengine.ops.fusion import ProgramBuilder
from ndengine.ops.fusion_program import ArraySpec, Const, NotFusible
from ndengine.ops.gpu_fusion import cuda_source, kernel_for


def program(build, dtype=np.float32, n=1000):
    b = ProgramBuilder()
    x = b.array(ArraySpec((n,), np.dtype(dtype)))
    return build(b, x)


def test_a_chain_is_one_expression_per_node_cast_to_its_dtype():
    p = program(lambda b, x: b.build(outputs=[b.apply("exp", b.apply("add", b.apply(
        "multiply", x, 0.5), 0.1))]))
    in_params, out_params, body = cuda_source(p)
    assert in_params == "float32 in0, float64 s0, float64 s1"
    assert out_params == "float32 out0"
    assert body.splitlines() == [
        "const float v2 = (float)(((float)in0) * ((float)s0));",
        "const float v4 = (float)(((float)v2) + ((float)s1));",
        "const float v5 = (float)(exp(((float)v4)));",
        "out0 = v5;"]


def test_comparisons_bool_logic_and_nan_aware_choices():
    def build(b, x):
        m = b.apply("greater", x, 0.5)
        n = b.apply("logical_not", m)
        top = b.apply("maximum", x, 0.25)
        return b.build(outputs=[n, top])
    _, out_params, body = cuda_source(program(build))
    assert out_params == "bool out0, float32 out1"
    assert "(bool)(!((bool)v" in body
    assert "!= " in body and "? " in body  # maximum propagates NaN as NumPy's loop


def test_a_tail_reduction_writes_the_reduced_node():
    def build(b, x):
        return b.build(outputs=[], reduction=("sum", b.apply("square", x), None, False))
    _, out_params, body = cuda_source(program(build))
    assert out_params == "float32 reduced" and body.endswith("reduced = v1;")


@pytest.mark.parametrize("name, dtype", [("floor_divide", np.int32), ("mod", np.float64),
                                         ("power", np.int64)])
def test_what_cuda_cannot_compute_exactly_is_not_fused(name, dtype):
    p = program(lambda b, x: b.build(outputs=[b.apply(name, x, Const(3))]), dtype)
    with pytest.raises(NotFusible):
        cuda_source(p)


def test_extended_dtypes_are_not_fused():
    with pytest.raises(NotFusible):
        p = program(lambda b, x: b.build(outputs=[b.apply("exp", x)]), np.float16)
        cuda_source(p)


def test_a_fake_gpu_has_no_cuda_kernel():
    p = program(lambda b, x: b.build(outputs=[b.apply("exp", x)]))
    with pytest.raises(NotFusible, match="fake GPU"):
        kernel_for(p, np)
