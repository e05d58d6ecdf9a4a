"""Autograd (core/tape.py, ops/gradients/rules.py, ndengine.autograd): central-difference
gradient checks in float64 for every op with a rule, over generated shapes and broadcasting,
and MXNet's API semantics, under all three engines."""
import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import ndengine as nd
from ndengine import autograd
from ndengine.ops.gradients.rules import RULES

pytestmark = pytest.mark.usefixtures("nd_engine")
CHECKS = settings(max_examples=8, deadline=None)


def numeric_gradients(fn, arrays, weights, eps=1e-6):
    """d sum(fn(*arrays) * weights) / d arrays, by central differences (NumPy)."""
    grads = []
    for k, a in enumerate(arrays):
        g = np.zeros_like(a)
        for index in np.ndindex(a.shape):
            values = []
            for step in (eps, -eps):
                shifted = [x.copy() for x in arrays]
                shifted[k][index] += step
                values.append(np.sum(fn(np, *shifted) * weights))
            g[index] = (values[0] - values[1]) / (2 * eps)
        grads.append(g)
    return grads


def check_gradients(fn, *arrays, rtol=1e-5, atol=1e-7):
    """ndengine's backward of ``sum(fn(nd, *arrays) * w)`` against central differences."""
    arrays = [np.array(a, dtype=np.float64) for a in arrays]
    expected_out = fn(np, *arrays)
    weights = np.random.default_rng(7).uniform(0.5, 1.5, np.shape(expected_out))
    variables = [nd.array(a) for a in arrays]
    for v in variables:
        v.attach_grad()
    with autograd.record():
        out = fn(nd, *variables)
        loss = (out * nd.array(weights)).sum()
    loss.backward()
    np.testing.assert_allclose(out.asnumpy(), expected_out, rtol=1e-12)
    for v, g in zip(variables, numeric_gradients(fn, arrays, weights)):
        np.testing.assert_allclose(v.grad.asnumpy(), g, rtol=rtol, atol=atol)


def floats(shape, lo=-2.0, hi=2.0):
    return hnp.arrays(np.float64, shape, elements=st.floats(lo, hi))


BINARY = {"add": None, "subtract": None, "multiply": None, "true_divide": (0.5, 2.0),
          "maximum": None, "minimum": None, "power": (0.5, 2.0)}


@CHECKS
@given(data=st.data())
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_rules_with_broadcasting(name, data):
    a_shape, b_shape = data.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=2, min_dims=0, max_dims=3, min_side=1, max_side=3)).input_shapes
    lo, hi = BINARY[name] or (-2.0, 2.0)
    a = data.draw(floats(a_shape, lo, hi))
    b = data.draw(floats(b_shape, lo, hi))
    if name in ("maximum", "minimum"):  # a tie has no derivative: keep the inputs apart
        assume(not np.isclose(*np.broadcast_arrays(a, b), atol=1e-3).any()
               and not np.isclose(a, 1.5, atol=1e-3).any())
    check_gradients(lambda xp, x, y: getattr(xp, name)(x, y), a, b)
    check_gradients(lambda xp, x: getattr(xp, name)(x, 1.5), a)


UNARY = {"negative": None, "exp": None, "expm1": None, "log": (0.5, 3.0),
         "log1p": (0.0, 3.0), "sqrt": (0.5, 3.0), "square": None, "sin": None, "cos": None,
         "tanh": None, "abs": (0.1, 2.0), "positive": None}


@CHECKS
@given(data=st.data())
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_rules(name, data):
    lo, hi = UNARY[name] or (-2.0, 2.0)
    x = data.draw(floats(data.draw(hnp.array_shapes(min_dims=0, max_dims=3, max_side=3)),
                         lo, hi))
    if name == "abs":
        x = x * np.where(np.arange(x.size).reshape(x.shape) % 2, 1, -1)
    check_gradients(lambda xp, x: getattr(xp, name)(x), x)


@CHECKS
@given(data=st.data())
@pytest.mark.parametrize("name", ["sum", "mean", "max", "min"])
def test_reduction_rules(name, data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=4))
    x = np.random.default_rng(data.draw(st.integers(0, 99))).permutation(
        np.arange(np.prod(shape), dtype=np.float64)).reshape(shape) / 3  # distinct: no ties
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1),
                               st.just(tuple(range(len(shape))))))
    keepdims = data.draw(st.booleans())
    check_gradients(lambda xp, x: getattr(xp, name)(x, axis=axis, keepdims=keepdims), x)


def test_matmul_views_where_clip_and_astype():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    check_gradients(lambda xp, x, y: x @ y, a, b)
    check_gradients(lambda xp, x, y: xp.dot(x, y), a, b)
    check_gradients(lambda xp, x, y: xp.tanh(x @ y + 0.5).T, a, b)
    check_gradients(lambda xp, x: x[1:, ::2] * x[:2, 1::2], a)
    check_gradients(lambda xp, x: x.reshape(2, 6)[:, 3], a)
    check_gradients(lambda xp, x: xp.where(x > 0, x * 2, x * x), a)
    check_gradients(lambda xp, x: xp.clip(x, -0.5, 0.7), a + 0.013)
    stacked = rng.standard_normal((2, 3, 4))
    check_gradients(lambda xp, x, y: xp.matmul(x, y), stacked, b)


def test_joins_indexing_and_moves():
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((1, 3))
    check_gradients(lambda xp, x, y: xp.concatenate([x, y, x], axis=0) * 1.5, a, b)
    check_gradients(lambda xp, x, y: xp.concatenate([x.T, y.T], axis=1), a, b)
    check_gradients(lambda xp, x, y: xp.concatenate([x, y], axis=None), a, b)
    check_gradients(lambda xp, x: xp.stack([x, x * 2], axis=1), a)
    check_gradients(lambda xp, x: x[np.array([1, 0, 1])] * 2, a)  # a repeated row adds up
    check_gradients(lambda xp, x: x[np.array([[0, 1], [1, 1]]), np.array([2, 0])], a)
    check_gradients(lambda xp, x: xp.roll(x, 2, axis=1) * xp.roll(x, -1), a)
    check_gradients(lambda xp, x: xp.pad(x, ((1, 0), (2, 1))), a)
    check_gradients(lambda xp, x: xp.pad(x, 1), a)
    check_gradients(lambda xp, x: xp.repeat(x, 2), a)
    check_gradients(lambda xp, x: xp.repeat(x, 3, axis=1), a)
    check_gradients(lambda xp, x: sum(xp.split(x, 3, axis=1)[k] * (k + 1) for k in range(3)),
                    a)


def test_rules_cover_the_differentiable_ops():
    for name in ("add", "multiply", "exp", "tanh", "sum", "mean", "matmul", "where", "power"):
        assert name in RULES


# ---------------------------------------------------------------- the API

def test_record_pause_and_modes():
    assert not autograd.is_recording() and not autograd.is_training()
    with autograd.record():
        assert autograd.is_recording() and autograd.is_training()
        with autograd.pause():
            assert not autograd.is_recording() and not autograd.is_training()
        with autograd.predict_mode():
            assert not autograd.is_training()
    with autograd.record(train_mode=False):
        assert autograd.is_recording() and not autograd.is_training()
    assert not autograd.is_recording()


def test_grad_req_add_accumulates_and_write_replaces():
    x = nd.array([1.0, 2.0])
    x.attach_grad(grad_req="add")
    for _ in range(3):
        with autograd.record():
            y = (x * 3).sum()
        y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [9.0, 9.0])
    x.attach_grad()  # write
    for _ in range(2):
        with autograd.record():
            y = (x * x).sum()
        y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 4.0])


def test_retain_graph_head_grads_and_grad():
    x = nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with autograd.record():
        y = x * x
    y.backward(nd.array([1.0, 0.0, 2.0]), retain_graph=True)
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 0.0, 12.0])
    y.backward()  # the tape was kept
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 4.0, 6.0])
    with pytest.raises(ValueError, match="not recorded"):
        y.backward()  # now it is gone
    with autograd.record():
        z = (nd.sin(x) * x).sum()
    (dx,) = autograd.grad(z, [x])
    xs = x.asnumpy()
    np.testing.assert_allclose(dx.asnumpy(), np.cos(xs) * xs + np.sin(xs))


def test_higher_order_with_create_graph():
    x = nd.array([0.5, 2.0])
    x.attach_grad()
    with autograd.record():
        y = (x * x * x).sum()
        dx = autograd.grad(y, x, create_graph=True)  # 3x^2, itself recorded
        z = dx.sum()
    z.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 6 * x.asnumpy())


def test_in_place_writes_into_recorded_arrays_raise_and_detach_stops_gradients():
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = x * 2
        with pytest.raises(RuntimeError, match="in-place"):
            y += 1
        z = (y.detach() * x).sum()
    z.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 4.0])  # y.detach() is a constant


def test_a_user_function_with_its_own_backward():
    class Cube(autograd.Function):
        def forward(self, x):
            self.save_for_backward(x)
            return x * x * x

        def backward(self, dy):
            (x,) = self.saved_tensors
            return dy * 3 * x * x

    x = nd.array([1.0, -2.0])
    x.attach_grad()
    with autograd.record():
        y = Cube()(x).sum()
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [3.0, 12.0])


def test_backward_lets_each_recorded_array_go_once_its_gradient_ran():
    import gc
    import weakref
    seen = {}

    class Probe(autograd.Function):  # the first op recorded: its backward runs last
        def forward(self, x):
            return x * 1.0

        def backward(self, dy):
            gc.collect()
            seen["alive"] = [ref() is not None for ref in refs]
            return dy

    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = Probe()(x) * 2
        z = nd.tanh(y) * 3
        loss = z.sum()
    refs = [weakref.ref(y), weakref.ref(z)]
    del y, z
    loss.backward()
    assert seen["alive"] == [False, False]  # gone before the backward finished
    expected = 6 * (1 - np.tanh(2 * x.asnumpy()) ** 2)
    np.testing.assert_allclose(x.grad.asnumpy(), expected)


def test_a_quantiles_gradient_goes_to_the_order_statistics_it_interpolates():
    x = nd.array([3.0, 1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = nd.quantile(x, 0.3).sum()  # sorted 1, 2, 3: position 0.6, 0.4 * 1 + 0.6 * 2
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [0.0, 0.4, 0.6])


# ---------------------------------------------------------------- users' ops

def register_smooth_l1(name):
    """The README's "Your own operator" example: a Numba kernel and a NumPy gradient."""
    from numba import njit
    from ndengine.ops import OpReq

    @njit(nogil=True)
    def smooth_l1_loop(x, out, sigma2):
        for i in range(x.size):
            v = x[i]
            if v > 1.0 / sigma2:
                out[i] = v - 0.5 / sigma2
            elif v < -1.0 / sigma2:
                out[i] = -v - 0.5 / sigma2
            else:
                out[i] = 0.5 * v * v * sigma2

    def smooth_l1_gradient(out_grad, inputs, output, sigma=1.0):
        x, s2 = np.asarray(inputs[0]), sigma * sigma
        return [out_grad * np.where(np.abs(x) < 1.0 / s2, s2 * x, np.sign(x))]

    @nd.register_op(name, kind="unary", gradient=smooth_l1_gradient, replace=True)
    def smooth_l1(inputs, outputs, req, sigma=1.0):
        x = np.ascontiguousarray(inputs[0]).reshape(-1)
        result = np.empty(x.shape, outputs[0].dtype)
        smooth_l1_loop(x, result, sigma * sigma)
        if req[0] is OpReq.ADD_TO:
            outputs[0][...] += result.reshape(outputs[0].shape)
        elif req[0] is not OpReq.NULL:
            outputs[0][...] = result.reshape(outputs[0].shape)
    return smooth_l1


def test_a_registered_op_with_a_numpy_gradient_is_differentiable():
    register_smooth_l1("test_autograd_smooth_l1")
    xs = np.linspace(-3, 3, 7).reshape(1, 7) * np.array([[1.0], [0.3]])
    for sigma in (1.0, 2.0):
        x = nd.array(xs)
        x.attach_grad()
        with autograd.record():
            y = nd.test_autograd_smooth_l1(nd.tanh(x), sigma=sigma)
            loss = (y * nd.arange(14.0).reshape(2, 7)).sum()
        loss.backward()
        t, s2 = np.tanh(xs), sigma * sigma
        slope = np.where(np.abs(t) < 1 / s2, s2 * t, np.sign(t))
        np.testing.assert_allclose(x.grad.asnumpy(),
                                   np.arange(14.0).reshape(2, 7) * slope * (1 - t * t))


def test_a_users_gradient_with_broadcasting_scalars_and_no_gradient():
    def gradient(out_grad, inputs, output):
        a, b, c = inputs  # out = a * b + c
        return [out_grad * b, out_grad * a, None]  # broadcast shapes: summed down

    @nd.register_op("test_autograd_fma", num_inputs=3, gradient=gradient, replace=True)
    def fma(inputs, outputs, req):
        a, b, c = inputs
        outputs[0][...] = np.asarray(a) * np.asarray(b) + c

    a, b = nd.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), nd.array([[2.0], [3.0]])
    c = nd.array([1.0, 1.0, 1.0])
    for v in (a, b, c):
        v.attach_grad()
    with autograd.record():
        loss = (nd.test_autograd_fma(a, b, c) + nd.test_autograd_fma(a, 2.0, 0.5)).sum()
    loss.backward()
    np.testing.assert_array_equal(a.grad.asnumpy(), [[4.0, 4.0, 4.0], [5.0, 5.0, 5.0]])
    np.testing.assert_array_equal(b.grad.asnumpy(), [[6.0], [15.0]])
    np.testing.assert_array_equal(c.grad.asnumpy(), [0.0, 0.0, 0.0])  # None: no gradient
    with autograd.record():  # no second order through a NumPy gradient: said so
        y = nd.test_autograd_fma(a, b, c).sum()
        (da,) = autograd.grad(y, [a], create_graph=True)
        z = (da * da).sum()
    with pytest.raises(TypeError, match="user_gradient has no gradient rule"):
        z.backward()


def test_a_registered_op_without_a_gradient_says_how_to_give_one():
    @nd.register_op("test_autograd_no_gradient", kind="unary", replace=True)
    def double(inputs, outputs, req):
        outputs[0][...] = np.asarray(inputs[0]) * 2

    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = nd.test_autograd_no_gradient(x).sum()
    with pytest.raises(TypeError, match=r"test_autograd_no_gradient has no gradient rule.*"
                       r"gradient=g"):
        y.backward()


def test_an_mlp_trained_with_backward_follows_the_hand_written_numpy_one():
    rng = np.random.default_rng(0)
    X, labels = rng.standard_normal((32, 5)), rng.integers(0, 3, 32)
    Y = np.eye(3)[labels]
    W1, W2 = rng.standard_normal((5, 8)) * 0.5, rng.standard_normal((8, 3)) * 0.5
    w1, w2 = nd.array(W1), nd.array(W2)
    for w in (w1, w2):
        w.attach_grad()
    xs, ys = nd.array(X), nd.array(Y)
    for _ in range(5):
        # NumPy, by hand
        h = np.tanh(X @ W1)
        p = np.exp(h @ W2)
        p /= p.sum(1, keepdims=True)
        expected = -(Y * np.log(p)).sum() / len(X)
        dlogits = (p - Y) / len(X)
        dW2 = h.T @ dlogits
        dW1 = X.T @ ((dlogits @ W2.T) * (1 - h * h))
        W1, W2 = W1 - 0.5 * dW1, W2 - 0.5 * dW2
        # ndengine, by autograd
        with autograd.record():
            hn = nd.tanh(xs @ w1)
            e = nd.exp(hn @ w2)
            pn = e / e.sum(1, keepdims=True)
            loss = -(ys * nd.log(pn)).sum() / len(X)
        loss.backward()
        np.testing.assert_allclose(loss.item(), expected, rtol=1e-10)
        with autograd.pause():
            w1 -= 0.5 * w1.grad
            w2 -= 0.5 * w2.grad
    np.testing.assert_allclose(w1.asnumpy(), W1, rtol=1e-9)
