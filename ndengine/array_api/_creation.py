"""The standard's creation functions, generated from tables onto ndengine's (``device=`` is
ndengine's ``ctx=``), plus ``asarray`` and ``from_dlpack``, whose copy rules need code."""
import numpy as np

from .. import ndarray

from ..core import can_share, dlpack_values, share_values
from ..ndarray import NDArray
from ._dtypes import supported_dtype
from ._generate import generate_all

__all__ = ["FUNCTIONS"]

_DEVICE = {"device": "ctx"}
_ROWS = [
    ("arange", "start, /, stop=None, step=1, *, dtype=None, device=None", ndarray.arange, _DEVICE),
    ("empty", "shape, *, dtype=None, device=None", ndarray.empty, _DEVICE, ("dtype",)),
    ("empty_like", "x, /, *, dtype=None, device=None", ndarray.empty_like, _DEVICE),
    ("eye", "n_rows, n_cols=None, /, *, k=0, dtype=None, device=None", ndarray.eye, _DEVICE,
     ("dtype",)),
    ("full", "shape, fill_value, *, dtype=None, device=None", ndarray.full, _DEVICE),
    ("full_like", "x, /, fill_value, *, dtype=None, device=None", ndarray.full_like, _DEVICE),
    ("linspace", "start, stop, /, num, *, dtype=None, device=None, endpoint=True",
     ndarray.linspace, _DEVICE),
    ("ones", "shape, *, dtype=None, device=None", ndarray.ones, _DEVICE, ("dtype",)),
    ("ones_like", "x, /, *, dtype=None, device=None", ndarray.ones_like, _DEVICE),
    ("tril", "x, /, *, k=0", ndarray.tril),
    ("triu", "x, /, *, k=0", ndarray.triu),
    ("zeros", "shape, *, dtype=None, device=None", ndarray.zeros, _DEVICE, ("dtype",)),
    ("zeros_like", "x, /, *, dtype=None, device=None", ndarray.zeros_like, _DEVICE),
]


def asarray(obj, /, *, dtype=None, device=None, copy=None):
    """Array API ``asarray``: ndengine's ``asarray``. An NDArray is returned as it is when
    its dtype and device already fit and ``copy`` is not True; otherwise a pushed copy
    (``copy=False`` then raises ValueError, as the standard requires)."""
    if dtype is not None:
        dtype = supported_dtype(dtype)
    if isinstance(obj, NDArray):
        moves = device is not None and device != obj.context
        converts = dtype is not None and dtype != obj.dtype
        if copy is False and (moves or converts):
            raise ValueError("asarray(copy=False): the array would have to be copied "
                             "(another dtype or device)")
        result = obj.astype(dtype, copy=False) if converts else obj
        if moves:
            return result.copyto(device)
        return result.copy() if copy and not converts else result
    return ndarray.asarray(obj, dtype=dtype, copy=copy, ctx=device)


def meshgrid(*arrays, indexing="xy"):
    """Array API ``meshgrid``: ndengine's, as the standard's list."""
    return list(ndarray.meshgrid(*arrays, indexing=indexing))


def from_dlpack(x, /, *, device=None, copy=None):
    """Array API ``from_dlpack`` (and NumPy's): an NDArray of any DLPack producer's values.
    An NDArray is returned as it is (or copied, with ``copy=True``). Another producer's
    memory (host memory, or a GPU's through CuPy) is shared, zero copy
    (``core.share_values``), when it is writeable and C-contiguous and ``device`` is where it
    lives; else copied (refused with ``copy=False``)."""
    if isinstance(x, NDArray):
        return asarray(x, device=device, copy=copy)
    values, here = dlpack_values(x)
    target = here if device is None else device
    if not copy and target == here and can_share(values):
        return share_values(values, here)
    if copy is False:
        raise BufferError("from_dlpack: this producer's memory cannot be shared (read-only, "
                          "not C-contiguous, empty, or on another device than the one asked "
                          "for); use copy=None or True")
    if type(values) is not np.ndarray:
        values = values.get()  # a GPU's: through the host
    return ndarray.array(values, ctx=target)


FUNCTIONS = generate_all(_ROWS)
FUNCTIONS.update(asarray=asarray, meshgrid=meshgrid, from_dlpack=from_dlpack)
