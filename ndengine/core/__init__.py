"""The per-op pipeline between the NumPy-shaped API (ndengine.ndarray) and the engine: the array
type (array.py), its chunks and their engine-owned deletion (chunk.py, storage.py), the one
`invoke` that every op takes (pipeline.py), memory shared with other libraries (sharing.py)
and autograd's tape (tape.py). Knows nothing of the API's functions and names.
"""
from . import storage
from .array import COPY_REFUSED, NDArray
from .chunk import new_array
from .comm import Link, push_transfer
from .pipeline import as_operand, copy_between, from_numpy, invoke, waitall
from .sharing import (can_share, dlpack_device, dlpack_values, share_numpy, share_values,
                      shared_view)

__all__ = ["NDArray", "COPY_REFUSED", "invoke", "waitall", "as_operand", "from_numpy",
           "copy_between", "new_array", "storage", "can_share", "share_numpy", "share_values",
           "shared_view", "dlpack_device", "dlpack_values", "Link", "push_transfer"]
