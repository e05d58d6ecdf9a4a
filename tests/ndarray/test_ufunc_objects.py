"""ndengine's ufunc objects (``nd.add.reduce``, ``nd.add.outer``, ``nd.add.nin``, ...):
their attributes, methods and errors differential against NumPy's ufuncs, the methods
under all three engines; calling one is calling its module function; pickling by name."""
import copy
import inspect
import itertools
import pickle

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import ndengine as nd
from ndengine import ops
from ndarray_helpers import DTYPES, assert_same, run_xp, values

pytestmark = pytest.mark.usefixtures("nd_engine")

UFUNC_NAMES = sorted(name for name in nd.__all__
                     if isinstance(getattr(np, name, None), np.ufunc))
# NumPy's binary ufuncs with one output: those with every method
BINARY = [name for name in UFUNC_NAMES if getattr(np, name).nin == 2
          and getattr(np, name).nout == 1 and getattr(np, name).signature is None]
UNARY = [name for name in UFUNC_NAMES if getattr(np, name).nin == 1]

dtypes = st.sampled_from(DTYPES)


# -------------------------------------------------------------------- the objects
def test_every_numpy_ufunc_name_is_an_ndengine_ufunc():
    assert {"add", "exp", "divmod", "matmul", "true_divide", "divide"} <= set(UFUNC_NAMES)
    for name in UFUNC_NAMES:
        assert type(getattr(nd, name)) is nd.ufunc, name
    # NumPy's aliases are one object there and here (divide, true_divide), no others
    for a, b in itertools.combinations(UFUNC_NAMES, 2):
        assert (getattr(nd, a) is getattr(nd, b)) == (getattr(np, a) is getattr(np, b)), (a, b)
    assert nd.ufunc is nd.ndarray.ufunc and repr(nd.ufunc) == "<class 'ndengine.ufunc'>"
    assert not isinstance(nd.sigmoid, nd.ufunc)  # not a ufunc in NumPy


@pytest.mark.parametrize("name", UFUNC_NAMES)
def test_attributes_are_numpys(name):
    ours, numpys = getattr(nd, name), getattr(np, name)
    for attribute in ("nin", "nout", "nargs", "signature", "__name__"):
        assert getattr(ours, attribute) == getattr(numpys, attribute), attribute
    assert repr(ours.identity) == repr(numpys.identity)  # value and type (0, 0.0, -inf, None)
    assert repr(ours) == str(ours) == f"<ndengine ufunc '{numpys.__name__}'>"
    assert ours.ntypes == len(ours.types) > 0
    assert [loop for loop in numpys.types if loop in ours.types] == ours.types  # NumPy's order
    assert ours.__doc__ and ours.__doc__ == ours.func.__doc__  # the function's own
    with pytest.raises(AttributeError):  # read-only, as NumPy's
        ours.nin = 3


@pytest.mark.parametrize("name", UFUNC_NAMES)
def test_types_are_the_loops_ndengine_computes(name):
    """Each listed loop is taken by the op, with NumPy's result dtypes; each loop of NumPy's
    left out has a dtype ndengine lacks or is refused by the op at the call."""
    ours, numpys = getattr(nd, name), getattr(np, name)
    op = ops.get(ours.func.__name__)
    for loop in numpys.types:
        inputs = [np.ones((1, 1), np.dtype(code)) for code in loop[:numpys.nin]]
        if loop in ours.types:
            with np.errstate(all="ignore"):
                expected = numpys(*inputs)
            expected = expected if isinstance(expected, tuple) else (expected,)
            assert [dtype for _, dtype in op.infer(*inputs)] == [e.dtype for e in expected], loop
        elif all(a.dtype in ops.SUPPORTED_DTYPES for a in inputs):
            with pytest.raises(TypeError):
                op.infer(*inputs)


def test_calling_is_calling_the_module_function():
    x = nd.array(np.arange(4, dtype=np.float32))
    assert inspect.signature(nd.add) == inspect.signature(nd.add.func)
    assert str(inspect.signature(nd.add)) == \
        "(x1, x2, /, out=None, *, casting='same_kind', dtype=None)"
    assert str(inspect.signature(nd.sin)) == "(x, /, out=None, *, casting='same_kind', dtype=None)"
    assert nd.add.func.__name__ == "add" and nd.add.args == () and not nd.add.keywords
    assert_same(np.add(np.arange(4, dtype=np.float32), 1), nd.add(x, 1).asnumpy())
    out = nd.zeros(4, dtype=np.float64)
    assert nd.multiply(x, x, out=out) is out
    with pytest.raises(TypeError, match="where"):  # Python's own error, naming it
        nd.add(x, 1, where=True)
    # NumPy's ufunc on an NDArray runs the same function
    assert_same(nd.true_divide(x, 3).asnumpy(), np.divide(x, 3).asnumpy())


@pytest.mark.parametrize("name", UFUNC_NAMES)
def test_pickle_and_copy_by_name(name):
    ours = getattr(nd, name)
    assert pickle.loads(pickle.dumps(ours)) is ours
    assert copy.copy(ours) is ours and copy.deepcopy(ours) is ours
    cloudpickle = pytest.importorskip("cloudpickle")  # what dask ships functions with
    assert pickle.loads(cloudpickle.dumps(ours)) is ours


# ------------------------------------------------------------------------ methods
def _both_paths(xp, name, method, arrays, **kwargs):
    """``xp.<name>.<method>(*arrays, **kwargs)``; for ndengine also NumPy's ufunc on the
    NDArrays (the protocol), which must give the same."""
    arrays = [xp.asarray(a) for a in arrays]
    result = getattr(getattr(xp, name), method)(*arrays, **kwargs)
    if xp is nd:
        via_numpy = getattr(getattr(np, name), method)(*arrays, **kwargs)
        assert_same(via_numpy.asnumpy(), result.asnumpy())
    return result


def _axis(data, ndim, allow_tuple):
    choices = [st.none()] if allow_tuple else []
    choices.append(st.integers(-ndim - 1, ndim))  # out of range too: NumPy's AxisError
    if allow_tuple and ndim:
        choices.append(st.lists(st.integers(-ndim, ndim - 1), max_size=ndim).map(tuple))
    return data.draw(st.one_of(choices))


@given(data=st.data())
def test_reduce(data):
    name = data.draw(st.sampled_from(BINARY))
    a = data.draw(values(data.draw(dtypes), data.draw(hnp.array_shapes(min_dims=0, max_dims=3,
                                                                       min_side=0, max_side=4))))
    kwargs = {"axis": _axis(data, a.ndim, allow_tuple=True),
              "keepdims": data.draw(st.booleans())}
    if data.draw(st.booleans()):
        kwargs["dtype"] = data.draw(dtypes)
    if data.draw(st.booleans()):
        kwargs["initial"] = data.draw(st.integers(-3, 3))
    run_xp(_both_paths, name, "reduce", [a], tol="close", **kwargs)


@given(data=st.data())
def test_accumulate_and_reduceat(data):
    name = data.draw(st.sampled_from(BINARY))
    a = data.draw(values(data.draw(dtypes), data.draw(hnp.array_shapes(min_dims=1, max_dims=3,
                                                                       min_side=0, max_side=4))))
    axis = _axis(data, a.ndim, allow_tuple=False)
    run_xp(_both_paths, name, "accumulate", [a], tol="close", axis=axis)
    side = a.shape[axis] if -a.ndim <= axis < a.ndim else 1
    indices = data.draw(st.lists(st.integers(-1, side), min_size=1, max_size=5))
    run_xp(lambda xp: _both_paths(xp, name, "reduceat", [a, indices], axis=axis), tol="close")


@given(data=st.data())
def test_outer(data):
    name = data.draw(st.sampled_from(BINARY))
    a, b = (data.draw(values(data.draw(dtypes), data.draw(
        hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3)))) for _ in range(2))
    run_xp(_both_paths, name, "outer", [a, b], tol="close")
    scalar = data.draw(st.integers(-3, 3))
    run_xp(lambda xp: getattr(xp, name).outer(xp.asarray(a), scalar), tol="close")


@given(data=st.data())
def test_at(data):
    name = data.draw(st.sampled_from(BINARY))
    dtype = data.draw(dtypes)
    a = data.draw(values(dtype, data.draw(hnp.array_shapes(min_dims=1, max_dims=2,
                                                           min_side=1, max_side=4))))
    n = a.shape[0]
    index = data.draw(st.lists(st.integers(-n, n - 1), max_size=6))
    b = data.draw(values(dtype, (len(index),) + a.shape[1:]))

    def body(xp):
        target = xp.array(a)
        assert getattr(xp, name).at(target, index, xp.asarray(b)) is None
        return target
    run_xp(body, tol="close")


def test_methods_into_out_and_with_dtype():
    x = np.arange(12, dtype=np.int8).reshape(3, 4) * 20

    def body(xp):
        out = xp.zeros(4, dtype=np.int8)
        assert xp.add.reduce(xp.asarray(x), axis=0, out=out) is out
        acc = xp.zeros((3, 4))
        assert xp.multiply.accumulate(xp.asarray(x), dtype=np.float64, out=acc) is acc
        return [out, acc, xp.add.reduceat(xp.asarray(x), [0, 2], axis=1, dtype=np.int64),
                xp.subtract.outer(xp.asarray(x[0]), xp.asarray(x[:, 1]), dtype=np.float32)]
    run_xp(body)


# ------------------------------------------------------------------------- errors
def _error(body):
    """NumPy's error for ``body(numpy)`` and ndengine's for ``body(ndengine)``: same kind."""
    run_xp(body)
    with pytest.raises(Exception):  # noqa: B017, PT011 - the kind is run_xp's check
        body(np)


@pytest.mark.parametrize("name", UNARY)
def test_methods_of_a_unary_ufunc_raise_numpys_errors(name):
    x = [1.0, 2.0]
    _error(lambda xp: getattr(xp, name).outer(xp.asarray(x), xp.asarray(x)))
    _error(lambda xp: getattr(xp, name).reduce(xp.asarray(x)))
    _error(lambda xp: getattr(xp, name).accumulate(xp.asarray(x)))


def test_methods_raise_numpys_errors():
    empty = np.zeros((0, 2))
    _error(lambda xp: xp.maximum.reduce(xp.asarray(empty)))  # no identity
    run_xp(lambda xp: xp.add.reduce(xp.asarray(empty)))  # identity 0: zeros
    _error(lambda xp: xp.add.at(xp.zeros(3), [0]))  # second operand needed
    _error(lambda xp: xp.add.at(xp.zeros(3), [5], 1.0))  # index out of range
    _error(lambda xp: xp.divmod.reduce(xp.ones(3)))  # two outputs
    _error(lambda xp: xp.divmod.at(xp.ones(3), [0], 1.0))
    _error(lambda xp: xp.add.reduce(xp.ones((2, 2)), axis=(0, 0)))  # duplicate axis
    _error(lambda xp: xp.add.reduceat(xp.ones(4), [0, 7]))
    with pytest.raises(RuntimeError, match="signature"):  # NumPy's own, for a gufunc
        nd.matmul.reduce(nd.ones((2, 2, 2)))
    with pytest.raises(TypeError, match="signature"):
        nd.matmul.outer(nd.ones(2), nd.ones(2))


def test_what_ndengine_does_not_support_is_named():
    x = nd.ones(3)
    with pytest.raises(TypeError, match=r"ndengine\.add\.reduce .*where"):
        nd.add.reduce(x, where=x > 0)
    with pytest.raises(TypeError, match=r"ndengine\.divmod\.outer .*2 outputs"):
        nd.divmod.outer(x, x)
    with pytest.raises(TypeError, match="out=ndarray"):  # writes go into NDArrays only
        nd.add.reduce(x, out=np.zeros(()))
    with pytest.raises(TypeError, match="casting"):
        nd.add.outer(x, x, casting="unsafe")
