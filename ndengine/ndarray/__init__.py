"""The user-facing arrays: NDArray, creation, module functions, random numbers, save/load."""
from ..core import storage
from . import random
from .creation import (arange, array, asarray, ascontiguousarray, copy, empty, empty_like, eye,
                       full, full_like, identity, linspace, ones, ones_like, zeros, zeros_like)
from .namespace import NAMES as _NAMESPACE
from . import interop
from .functions import FUNCTIONS, broadcast_to
from .io import load, save
from ..core import NDArray, waitall

__all__ = ["NDArray", "array", "asarray", "ascontiguousarray", "copy", "zeros", "ones", "full",
           "empty", "arange", "linspace", "eye", "identity", "zeros_like", "ones_like",
           "full_like", "empty_like", "waitall", "random", "storage", "save", "load",
           "broadcast_to", *FUNCTIONS, *_NAMESPACE]

interop.install()  # NumPy's functions on NDArrays, and NumPy's array methods NDArray lacked

globals().update(FUNCTIONS)
globals().update(_NAMESPACE)
