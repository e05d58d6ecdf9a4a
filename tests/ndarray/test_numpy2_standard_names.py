"""The names NumPy 2's main namespace takes from the Array API standard: ``device=`` on the
creation functions (NumPy's parameter lists, plus ndengine's ``ctx``), numpy.linalg's
functions over the last axes (cross, diagonal, trace, matrix_transpose, vecdot,
matrix_norm, vector_norm; differential against NumPy) and ``__array_api_version__``."""
import inspect

import numpy as np
import pytest
from hypothesis import given, strategies as st

import ndengine as nd
from ndarray_helpers import FLOATS, run_xp, shapes, values

CREATION_WITH_DEVICE = ("asarray", "arange", "empty", "empty_like", "eye", "full",
                        "full_like", "linspace", "ones", "ones_like", "zeros", "zeros_like")
LINALG_STANDARD = ("cross", "diagonal", "trace", "matrix_transpose", "vecdot", "matrix_norm",
                   "vector_norm")


@pytest.mark.parametrize("name", CREATION_WITH_DEVICE)
def test_creation_takes_numpy_device_keyword(name):
    numpy_parameters = inspect.signature(getattr(np, name)).parameters
    parameters = inspect.signature(getattr(nd, name)).parameters
    assert parameters["device"].kind is inspect.Parameter.KEYWORD_ONLY
    assert numpy_parameters["device"].default is parameters["device"].default is None


@pytest.mark.parametrize("device", ["cpu", nd.cpu(0)])
def test_device_places_the_array(device):
    made = [nd.zeros((2, 3), device=device), nd.ones(2, device=device),
            nd.full(2, 7, device=device), nd.empty((0, 2), device=device),
            nd.arange(4, device=device), nd.linspace(0, 1, 5, device=device),
            nd.eye(3, device=device), nd.asarray([1, 2], device=device),
            nd.zeros_like(nd.ones(2), device=device),
            nd.empty_like(nd.ones(2), device=device)]
    for array, expected in zip(made[:3], [np.zeros((2, 3)), np.ones(2), np.full(2, 7)]):
        np.testing.assert_array_equal(array.asnumpy(), expected)
    assert all(array.context == nd.cpu(0) for array in made)


def test_device_and_ctx_must_agree():
    assert nd.ones(2, device="cpu", ctx=nd.cpu(0)).context == nd.cpu(0)
    with pytest.raises(ValueError, match="different devices"):
        nd.ones(2, device="cpu", ctx=nd.gpu(0))
    with pytest.raises(ValueError, match="unknown device type 'tpu'"):
        nd.zeros(2, device="tpu")


def test_main_namespace_states_the_standard_version():
    assert nd.__array_api_version__ == np.__array_api_version__


@pytest.mark.parametrize("name", LINALG_STANDARD)
def test_linalg_standard_functions_have_numpy_parameters(name):
    function = getattr(nd.linalg, name)
    assert inspect.signature(function) == inspect.signature(getattr(np.linalg, name))
    assert function.__module__ == "ndengine.linalg" and name in nd.linalg.__all__
    assert getattr(nd.array_api.linalg, name) is not None


@pytest.mark.usefixtures("nd_engine")
@given(data=st.data())
def test_linalg_over_last_axes_matches_numpy(data):
    dtype = data.draw(st.sampled_from(FLOATS + [np.dtype(np.int32), np.dtype(np.complex128)]))
    shape = data.draw(shapes(min_dims=2, max_dims=4, max_side=3), label="shape")
    x = data.draw(values(dtype, shape, lo=-9, hi=9), label="x")
    y = data.draw(values(dtype, shape, lo=-9, hi=9), label="y")
    offset = data.draw(st.integers(-2, 2), label="offset")
    axes = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1),
                               st.lists(st.integers(0, len(shape) - 1), min_size=1,
                                        max_size=len(shape), unique=True).map(tuple)),
                     label="axes")
    keepdims = data.draw(st.booleans(), label="keepdims")
    run_xp(lambda xp, u: xp.linalg.diagonal(xp.asarray(u), offset=offset), x)
    run_xp(lambda xp, u: xp.linalg.trace(xp.asarray(u), offset=offset), x)
    run_xp(lambda xp, u: xp.linalg.matrix_transpose(xp.asarray(u)), x)
    run_xp(lambda xp, u, v: xp.linalg.vecdot(xp.asarray(u), xp.asarray(v), axis=-2), x, y,
           tol="close")
    run_xp(lambda xp, u: xp.linalg.matrix_norm(xp.asarray(u), keepdims=keepdims), x,
           tol="close")
    for order in (2, 1, np.inf):
        run_xp(lambda xp, u: xp.linalg.vector_norm(xp.asarray(u), axis=axes,
                                                   keepdims=keepdims, ord=order), x,
               tol="close")


@pytest.mark.usefixtures("nd_engine")
@pytest.mark.parametrize("shapes_", [((4, 3), (4, 3)), ((2, 1, 3), (5, 3)), ((3, 2), (3, 2)),
                                     ((4, 2), (4, 2)), ((3,), (2,))])
def test_linalg_cross_matches_numpy(shapes_):
    rng = np.random.default_rng(0)
    x1, x2 = (rng.standard_normal(s) for s in shapes_)
    axis = 0 if shapes_[0] == (3, 2) else -1
    run_xp(lambda xp, u, v: xp.linalg.cross(xp.asarray(u), xp.asarray(v), axis=axis), x1, x2,
           tol="close")
