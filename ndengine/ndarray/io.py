"""save and load: NumPy's .npz format, so the files open without ndengine too."""
import numpy as np

from .creation import array
from ..core import NDArray

__all__ = ["save", "load"]

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
    """The list or dict of NDArrays that ``save`` wrote (a plain .npz loads as a dict)."""
    with np.load(path, allow_pickle=False) as data:
        kind = str(data[_KIND_KEY]) if _KIND_KEY in data.files else "dict"
        items = {k: data[k] for k in data.files if k != _KIND_KEY}
    if kind == "list":
        return [array(items[f"arr_{i}"], ctx=ctx) for i in range(len(items))]
    return {k: array(v, ctx=ctx) for k, v in items.items()}
