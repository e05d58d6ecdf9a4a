"""The per-op pipeline between the NumPy-shaped API (ndengine.ndarray) and the engine. Knows
nothing of the API's functions and names.

Modules, lowest first; each imports only modules above it in this list (no import cycle):
    storage, gpu, fp_errors   memory pools, the GPU backend, NumPy's FP error state per op
    chunk          the storage an array shares with its views (Chunk, SmallChunk)
    tape           autograd's tape: what a recording thread's ops did (no pushes of its own)
    array          the NDArray type: state, attributes, waits and values, views; new_array
    keys           index keys as ``x[key]`` reads them
    segment        small ops gathered into one engine op per window (bulking)
    lazy_run, lazy element-wise ops recorded into one fused engine op per window
    runs           the run objects a plan's kernel is bound into (Run, BoundRun)
    pipeline       ``invoke``: the one path every op takes, from the call to the push
    array_methods  NDArray's methods that push ops (copies, indexing), set on the type here
    backward       the backward pass over the tape
    comm, sharing  transfers across contexts; memory shared with other libraries
    settings       run-time settings: fusion on or off, the bulk size (``ndengine.settings``)
A lower module reaches a higher one only through an object handed to it at call time: a
chunk's segment window (``window.flush()``), the ``invoke`` that tape.py is passed.
"""
from . import storage
from . import array_methods
from .array import COPY_REFUSED, NDArray, new_array
from .comm import Link, push_transfer
from .pipeline import as_operand, copy_between, filled_now, from_numpy, invoke, waitall
from .sharing import (can_share, dlpack_device, dlpack_values, share_numpy, share_values,
                      shared_view)

array_methods.install()  # NDArray's copies and indexing (array_methods.py)

__all__ = ["NDArray", "COPY_REFUSED", "invoke", "waitall", "as_operand", "from_numpy",
           "filled_now", "copy_between", "new_array", "storage", "can_share", "share_numpy",
           "share_values", "shared_view", "dlpack_device", "dlpack_values", "Link",
           "push_transfer"]
