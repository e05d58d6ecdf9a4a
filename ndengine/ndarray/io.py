"""save and load (NumPy's .npz format, so the files open without ndengine too), and NumPy's
text and archive readers and writers (``IO``).

``save(path, arrays)`` is MXNet's: a list or dict of NDArrays in one .npz, which ``load``
gives back as it was; ``load`` reads NumPy's files too: a .npz as a dict of NDArrays, a .npy
as an NDArray.

``loadtxt`` and ``genfromtxt`` are NumPy's readers with NumPy's parameter lists:
NumPy parses the file, and its result becomes NDArrays (each array of a tuple, for
``unpack=True``). ``like=`` is accepted and changes nothing (the result is an NDArray either
way). What ndengine has no storage for is an error at the call, not a silent change: a
structured or string dtype (TypeError naming it) and ``genfromtxt(..., usemask=True)``'s masked
array (numpy.ma is left out).

``savetxt``, ``savez`` and ``savez_compressed`` are NumPy's own: they take NDArrays through
NumPy's ``__array_function__`` protocol, which writes NumPy copies of their values (a wait).
``fromregex`` is left out: its result is always a structured array, which ndengine cannot
hold. ``memmap`` is left out too: a NumPy array over a mapped file, whose writes the engine
could not order with the ops that read it.
"""
import numpy as np

from .creation import array
from .signatures import numpy_function
from ..core import NDArray

__all__ = ["save", "load", "IO"]

_KIND_KEY = "__ndengine_container__"  # "list" or "dict": what load gives back


def save(path, arrays):
    """Save a list or dict of NDArrays (waits for them) to ``path`` (.npz)."""
    if isinstance(arrays, NDArray):
        arrays = [arrays]
    if isinstance(arrays, dict):
        if _KIND_KEY in arrays:
            raise ValueError(f"{_KIND_KEY!r} is reserved")
        payload = {str(k): _values(v) for k, v in arrays.items()}
        kind = "dict"
    elif isinstance(arrays, (list, tuple)):
        payload = {f"arr_{i}": _values(v) for i, v in enumerate(arrays)}
        kind = "list"
    else:
        raise TypeError(f"save takes an NDArray, or a list or dict of them, not "
                        f"{type(arrays).__name__}")
    payload[_KIND_KEY] = np.array(kind)
    with open(path, "wb") as f:  # an open file keeps numpy from appending ".npz"
        np.savez(f, **payload)


def _values(x):
    if not isinstance(x, NDArray):
        raise TypeError(f"save takes NDArrays, got {type(x).__name__}")
    return x.asnumpy()


def load(path, ctx=None):
    """The list or dict of NDArrays that ``save`` wrote (a plain .npz loads as a dict, a .npy
    as an NDArray)."""
    loaded = np.load(path, allow_pickle=False)
    if isinstance(loaded, np.ndarray):
        return array(loaded, ctx=ctx)
    with loaded as data:
        kind = str(data[_KIND_KEY]) if _KIND_KEY in data.files else "dict"
        items = {k: data[k] for k in data.files if k != _KIND_KEY}
    if kind == "list":
        return [array(items[f"arr_{i}"], ctx=ctx) for i in range(len(items))]
    return {k: array(v, ctx=ctx) for k, v in items.items()}


def _as_ndarrays(result):
    """A reader's result as NDArrays: an array, or each array of a tuple (``unpack=True``)."""
    if isinstance(result, np.ma.MaskedArray):
        raise TypeError("ndengine has no masked arrays (numpy.ma is left out): "
                        "genfromtxt(..., usemask=True) must run as numpy.genfromtxt")
    if isinstance(result, (tuple, list)):
        return type(result)(_as_ndarrays(part) for part in result)
    return array(result)


def _reader(name):
    numpy_reader = getattr(np, name)

    def read(arguments):  # by_name: the arguments as one dict
        arguments.pop("like", None)  # NumPy would hand like=NDArray back here: a loop
        return _as_ndarrays(numpy_reader(**arguments))
    return numpy_function(name, numpy_reader, read, by_name=True,
                          doc="NumPy reads the file; the result is NDArrays.")


IO = {name: _reader(name) for name in ("loadtxt", "genfromtxt")}
IO.update({name: getattr(np, name) for name in ("savetxt", "savez", "savez_compressed")})
