"""The public registry: register() of a user op, lookup errors, dtypes, gradients."""
import numpy as np
import pytest

import ndengine.ops as ops
from ndengine.ops import OpReq


def test_public_names():
    for name in ("OpReq", "Operator", "register", "get", "names", "SUPPORTED_DTYPES",
                 "check_dtype", "result_type"):
        assert hasattr(ops, name)
    assert [r.name for r in OpReq] == ["NULL", "WRITE_TO", "WRITE_INPLACE", "ADD_TO"]
    assert {"add", "sum", "dot", "take_index", "random_uniform", "split"} <= set(ops.names())
    assert ops.get("add").kind == "binary" and ops.get("add").num_inputs == 2
    assert ops.get("concatenate").num_inputs is None
    assert ops.get("assign_index").inplace == ((0, 0),)


def test_get_unknown_name_suggests_close_names():
    with pytest.raises(KeyError, match="multiply"):
        ops.get("multipy")


def test_check_dtype_and_result_type():
    assert ops.check_dtype("int16") == np.int16
    for extended in (np.float16, np.complex64, np.complex128):
        assert ops.check_dtype(extended) == extended  # arrays may hold them
    for bad in (object, "U3", np.longdouble, "datetime64[s]"):
        with pytest.raises(TypeError, match="supported: bool, int8"):
            ops.check_dtype(bad)
    assert ops.result_type(np.ones(2, np.float32), 1j) == np.complex64  # weak Python complex
    assert ops.result_type(np.ones(2, np.int8), 1j) == np.complex128
    assert ops.result_type(np.ones(2, np.int8), 1) == np.int8         # weak Python int
    assert ops.result_type(np.ones(2, np.float32), 1.5) == np.float32  # weak Python float
    assert ops.result_type(np.ones(2, np.int8), np.uint8) == np.int16
    assert ops.result_type(np.ones(2, np.int32), 1.0) == np.float64


# ------------------------------------------------------------ a user-registered op

SIGMA = 2.0


def smooth_l1_gradient(out_grad, inputs, output, sigma=SIGMA):
    x = np.asarray(inputs[0])
    slope = np.where(np.abs(x) < 1 / sigma**2, sigma**2 * x, np.sign(x))
    return [np.asarray(out_grad) * slope]


def register_smooth_l1():
    @ops.register("test_smooth_l1", num_inputs=1, kind="unary", replace=True,
                  gradient=smooth_l1_gradient)
    def smooth_l1(inputs, outputs, req, sigma=SIGMA):
        """0.5*(sigma*x)**2 if |x| < 1/sigma**2 else |x| - 0.5/sigma**2"""
        x = np.asarray(inputs[0], dtype=outputs[0].dtype)
        result = np.where(np.abs(x) < 1 / sigma**2, 0.5 * (sigma * x) ** 2,
                          np.abs(x) - 0.5 / sigma**2)
        if req[0] is OpReq.ADD_TO:
            outputs[0] += result
        elif req[0] is not OpReq.NULL:
            outputs[0][...] = result
    return smooth_l1


def test_register_user_op_end_to_end():
    op = register_smooth_l1()
    assert isinstance(op, ops.Operator) and ops.get("test_smooth_l1") is op
    assert op.doc.startswith("0.5*(sigma*x)")
    x = np.linspace(-1, 1, 11, dtype=np.float32)
    [(shape, dtype)] = op.infer(x)                     # default infer: broadcast + result_type
    assert (shape, dtype) == ((11,), np.float32)
    [y] = op.apply(x)
    expected = np.where(np.abs(x) < 0.25, 0.5 * (2 * x) ** 2, np.abs(x) - 0.125)
    np.testing.assert_allclose(y, expected, rtol=1e-6)
    check_gradient(op, np.array([-0.9, -0.2, -0.05, 0.1, 0.3, 0.7]))

    with pytest.raises(ValueError, match="already registered"):
        ops.register("test_smooth_l1")(lambda inputs, outputs, req: None)
    chained = op.set_kernel("gpu", lambda *a, **k: None).set_gradient(smooth_l1_gradient)
    assert chained is op and set(op.kernels) == {"cpu", "gpu"}


def test_default_infer_names_all_shapes():
    op = ops.register("test_ternary_sum", num_inputs=3, replace=True)(lambda i, o, r: None)
    with pytest.raises(ValueError, match=r"\(2,\), \(3,\), \(1,\)"):
        op.infer(np.ones(2), np.ones(3), np.ones(1))
    assert op.infer(np.ones((2, 1), np.int8), np.ones(3, np.int8), 2)[0] == ((2, 3), np.int8)


# ------------------------------------------------ a user's gradient vs finite differences

def check_gradient(op, x, *others, eps=1e-6, **params):
    """Compare a user op's NumPy gradient (op.gradient) for input 0 with central differences
    of sum(op(x)) (built-in ops' gradients are autograd's rules: tests/autograd/test_autograd_rules.py)."""
    x = np.asarray(x, dtype=np.float64)
    [out] = op.apply(x, *others, **params)
    [grad, *_] = op.gradient(np.ones_like(out), [x, *others], out, **params)
    numeric = np.empty_like(x)
    for i in np.ndindex(x.shape):
        plus, minus = x.copy(), x.copy()
        plus[i] += eps
        minus[i] -= eps
        numeric[i] = (op.apply(plus, *others, **params)[0].sum()
                      - op.apply(minus, *others, **params)[0].sum()) / (2 * eps)
    np.testing.assert_allclose(grad, numeric, rtol=1e-4, atol=1e-6)
