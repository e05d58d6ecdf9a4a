"""ndengine.array_api against NumPy's own Array API namespace: each case is one body written
against the standard, run with ``xp=numpy`` and ``xp=ndengine.array_api``; values, dtypes
and shapes must agree. Then the namespace's own members: the NDArray methods, the info
object, the dtype queries and the copy rules."""
import gc
import inspect
import math

import numpy as np
import pytest

import ndengine as nd
import ndengine.array_api as ndx
from ndengine.ops.dtypes import SUPPORTED_DTYPES


def _values(result):
    """Results as NumPy values: NDArrays read, tuples (named or not) and lists element by
    element."""
    if isinstance(result, list):
        return list(map(_values, result))
    if isinstance(result, tuple):
        return type(result)(*map(_values, result)) if hasattr(result, "_fields") \
            else tuple(map(_values, result))
    if isinstance(result, nd.NDArray):
        return result.asnumpy()
    return result


def _assert_same(expected, actual):
    if isinstance(expected, (tuple, list)):
        if hasattr(expected, "_fields"):  # the standard's named results
            assert type(actual).__name__ == type(expected).__name__
        assert getattr(actual, "_fields", None) == getattr(expected, "_fields", None)
        assert len(actual) == len(expected)
        for one_expected, one_actual in zip(expected, actual):
            _assert_same(one_expected, one_actual)
        return
    expected, actual = np.asarray(expected), np.asarray(actual)
    assert actual.dtype == expected.dtype
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=0, equal_nan=True)


def _float(xp):
    return xp.asarray([[0.25, -0.5, 0.75], [0.125, 0.5, -1.0]], dtype=xp.float64)


def _int8(xp):
    return xp.asarray([[3, -1, 7], [0, 5, -8]], dtype=xp.int8)


CASES = {
    "acos": lambda xp: xp.acos(_float(xp)),
    "asin": lambda xp: xp.asin(_float(xp)),
    "atan": lambda xp: xp.atan(_float(xp)),
    "atan2": lambda xp: xp.atan2(_float(xp), xp.flip(_float(xp))),
    "acosh": lambda xp: xp.acosh(xp.abs(_float(xp)) + 1),
    "asinh": lambda xp: xp.asinh(_float(xp)),
    "atanh": lambda xp: xp.atanh(_float(xp) * 0.5),
    "pow": lambda xp: xp.pow(xp.abs(_float(xp)), xp.asarray(1.5)),
    "pow int scalar": lambda xp: xp.pow(_int8(xp), 2),
    "reciprocal": lambda xp: xp.reciprocal(_float(xp)),
    "bitwise_left_shift": lambda xp: xp.bitwise_left_shift(xp.abs(_int8(xp)), 2),
    "bitwise_right_shift": lambda xp: xp.bitwise_right_shift(_int8(xp), 1),
    "bitwise_invert": lambda xp: xp.bitwise_invert(_int8(xp)),
    "int8 + python int": lambda xp: xp.add(_int8(xp), 3),
    "clip scalar bounds": lambda xp: xp.clip(_int8(xp), min=-2, max=4),
    "clip array bounds": lambda xp: xp.clip(_float(xp), min=xp.asarray([0.0, -0.6, 0.1]),
                                            max=xp.asarray(0.3)),
    "clip no bounds": lambda xp: xp.clip(_float(xp)),
    "concat": lambda xp: xp.concat([_float(xp), _float(xp) * 2], axis=1),
    "concat flattened": lambda xp: xp.concat([_float(xp), _float(xp)], axis=None),
    "stack": lambda xp: xp.stack([_float(xp), _float(xp)], axis=-1),
    "permute_dims": lambda xp: xp.permute_dims(xp.reshape(_float(xp), (1, 2, 3)), (2, 0, 1)),
    "matrix_transpose": lambda xp: xp.matrix_transpose(xp.reshape(_int8(xp), (2, 3, 1))),
    "unstack": lambda xp: xp.unstack(_float(xp), axis=1),
    "expand_dims squeeze": lambda xp: xp.squeeze(xp.expand_dims(_float(xp), axis=0), axis=0),
    "moveaxis": lambda xp: xp.moveaxis(xp.reshape(_float(xp), (1, 2, 3)), 0, -1),
    "roll tile repeat": lambda xp: xp.repeat(xp.tile(xp.roll(_int8(xp), 1, axis=1), (2, 1)),
                                             2, axis=0),
    "vecdot": lambda xp: xp.vecdot(_float(xp), xp.flip(_float(xp), axis=0)),
    "vecdot int broadcast": lambda xp: xp.vecdot(_int8(xp), _int8(xp)[0], axis=-1),
    "matmul": lambda xp: xp.matmul(_float(xp), xp.matrix_transpose(_float(xp))),
    "tensordot": lambda xp: xp.tensordot(_float(xp), _float(xp), axes=([1], [1])),
    "cumulative_sum": lambda xp: xp.cumulative_sum(_int8(xp), axis=1, include_initial=True),
    "cumulative_prod": lambda xp: xp.cumulative_prod(_float(xp), axis=0),
    "sum int8": lambda xp: xp.sum(_int8(xp), axis=1, keepdims=True),
    "prod dtype": lambda xp: xp.prod(_int8(xp), dtype=xp.int16),
    "std correction": lambda xp: xp.std(_float(xp), axis=1, correction=1),
    "var": lambda xp: xp.var(_float(xp), axis=(0, 1)),
    "max min mean": lambda xp: (xp.max(_float(xp), axis=0), xp.min(_int8(xp)),
                                xp.mean(_float(xp), axis=1, keepdims=True)),
    "argmax argmin": lambda xp: (xp.argmax(_float(xp), axis=1), xp.argmin(_int8(xp),
                                                                           keepdims=True)),
    "all any": lambda xp: (xp.all(_int8(xp) > -9, axis=0), xp.any(_int8(xp) > 6)),
    "count_nonzero": lambda xp: xp.count_nonzero(_int8(xp), axis=1),
    "diff prepend": lambda xp: xp.diff(_int8(xp), axis=1, prepend=_int8(xp)[:, :1]),
    "nonzero": lambda xp: xp.nonzero(_int8(xp)),
    "where": lambda xp: xp.where(_int8(xp) > 0, _float(xp), 0.0),
    "searchsorted": lambda xp: xp.searchsorted(xp.asarray([1, 3, 3, 7]),
                                               xp.asarray([3, 0, 8]), side="right"),
    "take": lambda xp: xp.take(_float(xp), xp.asarray([2, 0]), axis=1),
    "take_along_axis": lambda xp: xp.take_along_axis(_float(xp),
                                                     xp.argsort(_float(xp), axis=1), axis=1),
    "sort": lambda xp: xp.sort(_float(xp), axis=0),
    "argsort stable": lambda xp: xp.argsort(xp.asarray([2, 1, 2, 0, 1, 2]), stable=True),
    "unique_all": lambda xp: xp.unique_all(xp.asarray([[3.0, 1.0], [1.0, 2.0]])),
    "unique_counts": lambda xp: xp.unique_counts(xp.asarray([3, 1, 1, 2, 3, 3])),
    "unique_inverse": lambda xp: xp.unique_inverse(xp.asarray([[3, 1], [1, 2]])),
    "unique_values nan distinct": lambda xp: xp.unique_values(
        xp.asarray([1.0, xp.nan, xp.nan, 1.0])),
    "creation": lambda xp: (xp.arange(1, 7, 2), xp.zeros((2, 1), dtype=xp.int32),
                            xp.ones(3), xp.full((2,), 1.5), xp.eye(2, 3, k=1),
                            xp.linspace(0, 1, 5, endpoint=False), xp.tril(_float(xp), k=0),
                            xp.triu(_float(xp), k=1), xp.full_like(_int8(xp), 4),
                            xp.zeros_like(_float(xp), dtype=xp.float32)),
    "meshgrid": lambda xp: xp.meshgrid(xp.arange(2), xp.arange(3), indexing="ij"),
    "broadcast": lambda xp: (xp.broadcast_to(_float(xp)[0], (2, 3)),
                             xp.broadcast_arrays(_float(xp), xp.asarray([1.0, 2.0, 3.0]))),
    "astype": lambda xp: xp.astype(_float(xp) * 10, xp.int16),
    "linalg.vector_norm axes": lambda xp: xp.linalg.vector_norm(
        xp.reshape(xp.arange(24, dtype=xp.float64), (2, 3, 4)), axis=(0, 2), keepdims=True),
    "linalg.vector_norm all inf": lambda xp: xp.linalg.vector_norm(_float(xp), ord=xp.inf),
    "linalg.matrix_norm": lambda xp: xp.linalg.matrix_norm(_float(xp), ord=1),
    "linalg.cross": lambda xp: xp.linalg.cross(_float(xp), xp.flip(_float(xp), axis=1)),
    "linalg.diagonal trace": lambda xp: (xp.linalg.diagonal(_float(xp), offset=1),
                                         xp.linalg.trace(_int8(xp), offset=-1)),
    "linalg.solve inv det": lambda xp: (
        xp.linalg.solve(_float(xp)[:, :2], xp.asarray([[1.0], [2.0]])),
        xp.linalg.inv(_float(xp)[:, 1:]), xp.linalg.det(_float(xp)[:, :2])),
    "linalg.outer": lambda xp: xp.linalg.outer(_float(xp)[0], _float(xp)[1]),
    "fft.fftfreq": lambda xp: (xp.fft.fftfreq(6, d=0.5), xp.fft.rfftfreq(5)),
    "fft.fftshift": lambda xp: xp.fft.fftshift(_float(xp), axes=1),
}


@pytest.mark.parametrize("case", CASES)
def test_standard_body_computes_what_numpy_computes(case):
    body = CASES[case]
    expected = _values(body(np))
    result = body(ndx)
    pushed = result if isinstance(result, (tuple, list)) else (result,)
    pushed = [one for many in pushed for one in (many if isinstance(many, list) else [many])]
    assert all(isinstance(one, nd.NDArray) for one in pushed)  # computed by ndengine
    _assert_same(expected, _values(result))


def test_sequences_of_arrays_are_lists():
    # the standard (2024.12) says list; NumPy's namespace returns tuples here
    x = ndx.arange(3)
    assert type(ndx.meshgrid(x, x)) is list and len(ndx.meshgrid(x, x)) == 2
    assert type(ndx.broadcast_arrays(x, ndx.asarray(1))) is list
    assert type(ndx.unstack(ndx.reshape(x, (3, 1)))) is tuple


def test_descending_sorts():
    # NumPy's namespace has no descending=; the oracle is Python's stable sorted()
    values = [2, 1, 2, 0, 1, 2, 0]
    order = ndx.argsort(ndx.asarray(values), descending=True).asnumpy()
    np.testing.assert_array_equal(order, sorted(range(len(values)), key=lambda i: -values[i]))
    matrix = np.array([[0.5, -1.0, 2.0], [3.0, 0.0, -2.0]])
    np.testing.assert_array_equal(
        ndx.sort(ndx.asarray(matrix), axis=0, descending=True).asnumpy(),
        -np.sort(-matrix, axis=0))
    columns = ndx.argsort(ndx.asarray(matrix), axis=0, descending=True).asnumpy()
    np.testing.assert_array_equal(columns, np.argsort(-matrix, axis=0, stable=True))


def test_frequencies_in_a_dtype():
    # NumPy's namespace has no dtype= here; the oracle is its float64 result, cast
    result = ndx.fft.fftfreq(6, d=0.5, dtype=ndx.float32)
    _assert_same(np.fft.fftfreq(6, d=0.5).astype(np.float32), result.asnumpy())


def test_a_function_written_against_the_namespace_takes_ndarrays():
    def standardize(x):
        xp = x.__array_namespace__()
        return (x - xp.mean(x, axis=0)) / xp.std(x, axis=0, correction=1)

    values = np.arange(12, dtype=np.float64).reshape(4, 3) ** 1.5
    result = standardize(nd.array(values))
    assert isinstance(result, nd.NDArray)
    _assert_same(standardize(values), result.asnumpy())


@pytest.mark.cpu_only
def test_array_members():
    x = nd.array(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    assert x.__array_namespace__() is nd  # as NumPy's arrays answer numpy
    assert x.__array_namespace__(api_version="2024.12") is nd
    with pytest.raises(ValueError, match="unsupported"):
        x.__array_namespace__(api_version="2019.01")
    assert x.device == x.context == nd.cpu(0)
    assert x.to_device(nd.cpu(0)) is x
    moved = x.to_device(nd.cpu(1))
    assert moved.device == nd.cpu(1)
    np.testing.assert_array_equal(moved.asnumpy(), x.asnumpy())
    np.testing.assert_array_equal(x.mT.asnumpy(), x.asnumpy().mT)
    assert complex(nd.array(np.float64(2.5))) == 2.5 + 0j
    with pytest.raises(TypeError):
        complex(x)


def test_namespace_info():
    info = ndx.__array_namespace_info__()
    supported = {np.dtype(dtype).name for dtype in SUPPORTED_DTYPES}
    standard = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                "uint64", "float32", "float64", "complex64", "complex128"}
    assert set(info.dtypes()) == supported & standard
    assert set(info.dtypes(kind="unsigned integer")) == {
        name for name in supported if name.startswith("uint")}
    assert set(info.dtypes(kind=("bool", "real floating"))) == {
        name for name in supported if name == "bool" or name.startswith("float")} & standard
    assert info.default_device() in info.devices()
    defaults = info.default_dtypes()
    assert defaults["real floating"] == np.float64 and defaults["indexing"] == np.int64
    assert ("complex floating" in defaults) == ("complex128" in supported)
    assert info.capabilities()["data-dependent shapes"] is True
    for name, dtype in info.dtypes().items():
        assert getattr(ndx, name) == dtype


def test_namespace_constants_and_version():
    assert ndx.__array_api_version__ == "2024.12"
    assert (ndx.e, ndx.pi, ndx.newaxis) == (math.e, math.pi, None)
    assert math.isinf(ndx.inf) and math.isnan(ndx.nan)
    assert {"fft.fft", "real", "imag"} & set(ndx.MISSING) == {
        name for name in ("fft.fft", "real", "imag")
        if not hasattr(ndx.fft if "." in name else ndx, name.split(".")[-1])}


DTYPE_NAMES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
               "uint64", "float32", "float64"]
KINDS = ["bool", "signed integer", "unsigned integer", "integral", "real floating",
         "complex floating", "numeric", ("bool", "real floating"), "int8"]


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_dtype_queries(name):
    dtype = getattr(ndx, name)
    for kind in KINDS:
        numpy_kind = getattr(np, kind) if kind == "int8" else kind
        ours_kind = getattr(ndx, kind) if kind == "int8" else kind
        assert ndx.isdtype(dtype, ours_kind) == np.isdtype(getattr(np, name), numpy_kind)
    for other in DTYPE_NAMES:
        assert ndx.can_cast(dtype, getattr(ndx, other)) == np.can_cast(
            getattr(np, name), getattr(np, other))
        if name != "bool" and other != "bool":
            assert ndx.result_type(dtype, getattr(ndx, other)) == np.result_type(
                getattr(np, name), getattr(np, other))
    x = ndx.zeros(2, dtype=dtype)
    assert ndx.can_cast(x, ndx.float64) == np.can_cast(getattr(np, name), np.float64)
    scalar = True if name == "bool" else 1
    assert ndx.result_type(x, scalar) == np.result_type(getattr(np, name), scalar)
    info = ndx.finfo if name.startswith("float") else (None if name == "bool" else ndx.iinfo)
    if info is not None:
        assert info(x).max == info(dtype).max == (np.finfo if info is ndx.finfo
                                                  else np.iinfo)(getattr(np, name)).max


def test_asarray_and_astype_copy_rules():
    x = ndx.asarray([1.0, 2.0])
    assert ndx.asarray(x) is x and ndx.asarray(x, copy=False) is x
    copied = ndx.asarray(x, copy=True)
    copied[0] = 5.0
    assert x[0] == 1.0
    with pytest.raises(ValueError):
        ndx.asarray(x, dtype=ndx.float32, copy=False)
    assert ndx.asarray(x, dtype=ndx.float32).dtype == np.float32
    assert ndx.asarray(x, device=nd.cpu(1)).device == nd.cpu(1)
    assert ndx.astype(x, ndx.float64, copy=False) is x
    assert ndx.astype(x, ndx.float64) is not x
    assert ndx.astype(x, ndx.int32, device=nd.cpu(1)).device == nd.cpu(1)


def test_dlpack_exchange():
    values = np.arange(6, dtype=np.int32).reshape(2, 3)
    imported = ndx.from_dlpack(values)
    assert isinstance(imported, nd.NDArray)
    np.testing.assert_array_equal(imported.asnumpy(), values)
    x = nd.array(values) * 2
    np.testing.assert_array_equal(np.from_dlpack(x), values * 2)  # waits for the multiply
    assert x.__dlpack_device__() == (1, 0)
    assert ndx.from_dlpack(x) is x and nd.from_dlpack is ndx.from_dlpack


def test_dlpack_shares_memory_both_ways():
    """Zero copy: an imported NumPy array and ndengine's array are one memory; an exported
    array's storage stays alive (never back in the pool) while the consumer holds it."""
    values = np.arange(6.0).reshape(2, 3)
    shared = nd.from_dlpack(values)
    shared *= 2
    shared.wait_to_read()
    np.testing.assert_array_equal(values, np.arange(6.0).reshape(2, 3) * 2)
    values[0, 0] = 100
    assert shared.asnumpy()[0, 0] == 100
    x = nd.arange(1 << 16, dtype=np.float64) + 1  # a pool chunk
    exported = np.from_dlpack(x)
    assert np.shares_memory(exported, np.from_dlpack(x))
    x[0] = -1
    x.wait_to_read()
    assert exported[0] == -1
    del x
    gc.collect()
    others = [nd.zeros(1 << 16) for _ in range(4)]  # would take a freed buffer
    nd.waitall()
    assert exported[0] == -1 and exported[1] == 2
    del others
    copied = np.from_dlpack(nd.arange(3.0), copy=True)
    np.testing.assert_array_equal(copied, [0.0, 1.0, 2.0])
    # memory that cannot be shared is copied, or refused with copy=False
    strided = np.arange(10.0)[::2]
    np.testing.assert_array_equal(nd.from_dlpack(strided).asnumpy(), strided)
    with pytest.raises(BufferError):
        nd.from_dlpack(strided, copy=False)
    read_only = np.arange(3.0)
    read_only.flags.writeable = False
    assert nd.from_dlpack(read_only).asnumpy().tolist() == [0.0, 1.0, 2.0]


def test_signatures_are_the_standards():
    assert str(inspect.signature(ndx.acos)) == "(x, /)"
    assert str(inspect.signature(ndx.atan2)) == "(x1, x2, /)"
    assert str(inspect.signature(ndx.sort)) == "(x, /, *, axis=-1, descending=False, stable=True)"
    assert str(inspect.signature(ndx.reshape)) == "(x, /, shape, *, copy=None)"
    assert str(inspect.signature(ndx.linalg.trace)) == "(x, /, *, offset=0, dtype=None)"
    assert ndx.concat.__module__ == "ndengine.array_api"
