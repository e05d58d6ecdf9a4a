"""NumPy ufuncs on NDArrays (``__array_ufunc__``; ``install()`` sets it on NDArray), and
ndengine's own ufunc objects (``ufunc``: ``ndengine.add.reduce``, ``ndengine.add.nin``).

``np.exp(x)``, ``np.add(x, y, out=z)``, ``numpy_array + x``: run on the engine when ndengine
has the op, through the module function (``out=``, ``dtype=`` and ``casting=`` included). Ufuncs ndengine
lacks (and calls with other ufunc arguments) convert the NDArrays with a wait and give
NumPy's result, unless an NDArray is to be written, which only a pushed op may do.

The ufunc methods (``np.add.reduce(x)``, ``accumulate``, ``reduceat``, ``outer``,
``np.add.at(x, index, values)``) are the pushed op ``ufunc_method``, whose kernel is
NumPy's method itself; index arrays are snapshots taken at the call.

Every ndengine name that NumPy spells as a ufunc (``isinstance(numpy.<name>, numpy.ufunc)``)
is a ``ufunc`` object (``ufunc_objects``, once every module function is made): calling it is
calling its module function (``functools.partial``'s C call of the function, no Python frame
more), its methods push ``ufunc_method`` through the protocol's own path (``ufunc_method``
below), and its attributes are NumPy's ufunc's, but ``types`` lists only the loops whose
input dtypes ndengine's op takes. It pickles by name, as NumPy's ufuncs do.
"""
import functools

import numpy as np

from .. import ops
from ..ops.elementwise import operators as elementwise
from ..core import NDArray, as_operand, invoke
from .arguments import check_out, context_of, defers_to, output_array
from .operators import registered_function

__all__ = ["array_ufunc", "install", "ufunc", "ufunc_method", "ufunc_objects"]

# NumPy ufunc names that differ from our op names
_UFUNC_ALIASES = {"divide": "true_divide", "remainder": "mod", "absolute": "abs"}

# ufunc method -> the keyword arguments of NumPy's that ndengine supports
_METHOD_KWARGS = {"reduce": {"axis", "dtype", "out", "keepdims", "initial"},
                  "accumulate": {"axis", "dtype", "out"},
                  "reduceat": {"axis", "dtype", "out"},
                  "outer": {"dtype", "out"},
                  "at": set()}


def _op_name(ufunc):
    return _UFUNC_ALIASES.get(ufunc.__name__, ufunc.__name__)


def _computes(ufunc):
    """ndengine computes NumPy's ``ufunc``: an element-wise op computing exactly it, or a
    ufunc object of ndengine's for it (matmul)."""
    if ufunc in _OBJECTS:
        return True
    try:
        return elementwise.spec(_op_name(ufunc)).ufunc is ufunc
    except KeyError:
        return False


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """NDArray.__array_ufunc__ (see the module docstring)."""
    outs = kwargs.get("out")
    for x in inputs:  # (the type test first: this runs on every call)
        if type(x) is not NDArray and defers_to(x):
            return NotImplemented
    if outs is not None and any(map(defers_to, outs)):
        return NotImplemented
    if method != "__call__":
        if method in _METHOD_KWARGS and not _computes(ufunc):
            raise TypeError(f"numpy.{ufunc.__name__}.{method} on NDArrays is not supported: "
                            f"ndengine has no kernel for numpy.{ufunc.__name__}")
        return ufunc_method(ufunc, method, inputs, kwargs, f"numpy.{ufunc.__name__}")
    name = _op_name(ufunc)
    writes_ndarray = outs is not None and any(isinstance(o, NDArray) for o in outs)
    if not kwargs or kwargs.keys() <= {"out", "dtype", "casting"}:
        function = registered_function(name)
        if function is not None and (outs is None or (writes_ndarray and all(
                o is None or isinstance(o, NDArray) for o in outs))):
            return function(*inputs, **kwargs)
    if writes_ndarray:
        raise TypeError(f"numpy.{ufunc.__name__}(..., out=NDArray) with "
                        f"{sorted(k for k in kwargs if k != 'out')} is not supported; use the "
                        "ndengine function with out=, dtype= and casting= only")
    converted = [x.asnumpy() if isinstance(x, NDArray) else x for x in inputs]
    return ufunc(*converted, **kwargs)


def _snapshot(value):
    """An index or index array as it is now (NumPy copies index arrays at the call)."""
    if isinstance(value, NDArray):
        return value.asnumpy()
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, tuple):
        return tuple(_snapshot(v) for v in value)
    if isinstance(value, list):
        array = np.array(value)  # an empty list indexes nothing: integers, as in NumPy
        return array.astype(np.intp) if array.size == 0 else array
    return value


def ufunc_method(ufunc, method, inputs, kwargs, caller):
    """NumPy's ``ufunc.<method>(*inputs, **kwargs)`` as the pushed op ``ufunc_method`` (the
    protocol's path and ndengine's ufunc objects' methods); ``caller`` names the ufunc in
    errors (``numpy.add``, ``ndengine.add``)."""
    if method not in _METHOD_KWARGS:
        raise TypeError(f"{caller}.{method} is not supported on NDArrays")
    unsupported = sorted(set(kwargs) - _METHOD_KWARGS[method])
    if unsupported:
        raise TypeError(f"{caller}.{method} on NDArrays does not support the argument(s) "
                        f"{', '.join(unsupported)}")
    if method == "outer" and ufunc.nin == 2 and ufunc.nout != 1:  # (a unary one: NumPy's error)
        raise TypeError(f"{caller}.outer of a ufunc with {ufunc.nout} outputs is not "
                        f"supported on NDArrays; {caller}(A[(..., *[None] * B.ndim)], B) "
                        "computes the same")
    op = ops.get("ufunc_method")
    if method == "at":
        return _ufunc_at(op, ufunc, *inputs)
    arrays = list(inputs)
    params = {"ufunc": ufunc, "method": method}
    if method == "reduceat":
        params["indices"] = np.asarray(_snapshot(arrays.pop(1)))
    out = output_array(kwargs.pop("out", None), f"{ufunc.__name__}.{method}")
    if kwargs.get("dtype") is not None:
        kwargs["dtype"] = ops.check_dtype(kwargs["dtype"])
    params.update(kwargs)
    ctx = context_of(arrays, out)  # a list alone: the current context, as array() takes
    operands = [as_operand(a, ctx) for a in arrays]
    if method != "outer":  # reduce & co. take an array (outer keeps Python scalars weak)
        operands = [a if isinstance(a, NDArray) else as_operand(np.asarray(a), ctx)
                    for a in operands]
    if out is None:
        return invoke(op, operands, params, ctx=ctx)[0]
    check_out(out, ctx, f"{ufunc.__name__}.{method}")
    params["out_dtype"] = out.dtype
    invoke(op, operands, params, out=out, ctx=ctx)
    return out


def _ufunc_at(op, ufunc, target, index, *values):
    """``ufunc.at(target, index, *values)``: writes ``target`` in place, returns None."""
    index = _snapshot(index)
    if not isinstance(target, NDArray):  # a NumPy target with NDArray values: NumPy's call
        ufunc.at(target, index, *[v.asnumpy() if isinstance(v, NDArray) else v
                                  for v in values])
        return None
    ctx = target.context
    operands = [as_operand(v, ctx) for v in values]
    invoke(op, [target, *operands], {"ufunc": ufunc, "method": "at", "index": index},
           out=target)
    return None

# ------------------------------------------------------------------ ndengine's ufuncs
_OBJECTS = {}  # NumPy's ufunc -> ndengine's ufunc object for it


class ufunc(functools.partial):  # noqa: N801 - NumPy's name for the type
    """An ndengine ufunc: ``ndengine.add(x1, x2)`` is the module function itself, as fast
    (a ``functools.partial`` of it with no bound argument: its C call adds no Python frame);
    ``reduce``, ``accumulate``, ``reduceat``, ``outer`` and ``at`` are NumPy's methods as
    pushed ops; ``nin``, ``nout``, ``nargs``, ``identity``, ``signature``, ``types`` and
    ``ntypes`` are NumPy's ufunc's (``types``: the loops whose input dtypes ndengine takes).
    """
    __module__ = "ndengine"  # the public name of the type: ndengine.ufunc

    def __new__(cls, function, numpy_ufunc):
        self = super().__new__(cls, function)
        # as NumPy's ufunc names itself (true_divide: 'divide'); pickled by that name
        self.__name__ = numpy_ufunc.__name__
        self.__doc__ = function.__doc__
        self._numpy = numpy_ufunc
        return self

    def __repr__(self):
        return f"<ndengine ufunc {self.__name__!r}>"

    __str__ = __repr__

    def __reduce__(self):  # by name: ``pickle.loads(pickle.dumps(nd.add)) is nd.add``
        return self.__name__

    nin = property(lambda self: self._numpy.nin, doc="the number of inputs")
    nout = property(lambda self: self._numpy.nout, doc="the number of outputs")
    nargs = property(lambda self: self._numpy.nargs, doc="nin + nout")
    identity = property(lambda self: self._numpy.identity,
                        doc="the value of an empty reduction (None: it has none)")
    signature = property(lambda self: self._numpy.signature,
                         doc="the core signature of a generalized ufunc, else None")
    ntypes = property(lambda self: len(self.types), doc="len(types)")

    @functools.cached_property
    def types(self):
        """NumPy's loops (``'ff->f'``) whose input dtypes ndengine's op takes, in NumPy's
        order (its own loops on object, datetime or long double dtypes are left out)."""
        return [loop for loop in self._numpy.types if _takes(self.func, loop[:self.nin])]

    def reduce(self, array, axis=0, dtype=None, out=None, keepdims=False,
               initial=np._NoValue, where=True):
        """As ``numpy.ufunc.reduce`` (``where=`` is refused): NumPy's method, pushed."""
        kwargs = {"axis": axis, "dtype": dtype, "out": out, "keepdims": keepdims}
        if initial is not np._NoValue:
            kwargs["initial"] = initial
        if where is not True:
            kwargs["where"] = where  # refused, by name
        return self._method("reduce", (array,), kwargs)

    def accumulate(self, array, axis=0, dtype=None, out=None):
        """As ``numpy.ufunc.accumulate``: NumPy's method, pushed."""
        return self._method("accumulate", (array,), {"axis": axis, "dtype": dtype, "out": out})

    def reduceat(self, array, indices, axis=0, dtype=None, out=None):
        """As ``numpy.ufunc.reduceat`` (indices read at the call): NumPy's method, pushed."""
        return self._method("reduceat", (array, indices),
                            {"axis": axis, "dtype": dtype, "out": out})

    def outer(self, A, B, /, **kwargs):  # noqa: N803 - NumPy's parameter names
        """As ``numpy.ufunc.outer`` (``dtype=``, ``out=``): NumPy's method, pushed."""
        return self._method("outer", (A, B), kwargs)

    def at(self, a, indices, b=None, /):
        """As ``numpy.ufunc.at``: writes ``a`` (an NDArray: a pushed op) in place, returns
        None (indices read at the call)."""
        return self._method("at", (a, indices) if b is None else (a, indices, b), {})

    def _method(self, method, inputs, kwargs):
        return ufunc_method(self._numpy, method, inputs, kwargs, f"ndengine.{self.__name__}")


def _takes(function, input_codes):
    """Whether the op of ``function`` takes inputs of these dtype codes (its dtype checks,
    at the call, on one-element arrays; without an op of that name: the dtypes ndengine
    holds)."""
    dtypes = [np.dtype(code) for code in input_codes]
    if any(d not in ops.SUPPORTED_DTYPES for d in dtypes):
        return False
    name = getattr(function, "__name__", None)
    if name not in ops.names() or ops.get(name).num_inputs != len(dtypes):
        return True
    try:
        ops.get(name).infer(*(np.empty((1, 1), d) for d in dtypes))
    except TypeError:
        return False
    return True


def ufunc_objects(namespace):
    """``{name: ufunc object}`` for the functions of ``namespace`` (a module's names) that
    NumPy spells as ufuncs; names of one function (``divide``, ``true_divide``) share one."""
    made, objects = {}, {}  # id(function) -> its object; name -> object
    for name, function in namespace.items():
        numpy_ufunc = getattr(np, name, None)
        if isinstance(numpy_ufunc, np.ufunc) and callable(function) \
                and not isinstance(function, ufunc):
            if id(function) not in made:
                made[id(function)] = _OBJECTS[numpy_ufunc] = ufunc(function, numpy_ufunc)
            objects[name] = made[id(function)]
    return objects


def install():
    """NumPy's ufuncs on NDArrays: sets ``NDArray.__array_ufunc__``."""
    NDArray.__array_ufunc__ = array_ufunc
