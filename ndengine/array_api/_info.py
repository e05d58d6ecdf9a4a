"""``__array_namespace_info__()``: what the namespace offers, read when asked (the dtypes
are those ``_dtypes.DTYPES`` found supported at import)."""
import numpy as np

from ..engine import cpu, current_context, devices as _devices, gpu

from ._dtypes import DTYPES

__all__ = ["__array_namespace_info__", "Info"]

# NumPy keeps its arrays to 64 dimensions, and ndengine's arrays are NumPy's memory
_MAX_DIMENSIONS = 64


class Info:
    """The namespace's inspection object (the standard's ``Info``)."""

    __module__ = "ndengine.array_api"

    def capabilities(self):
        """Boolean indexing and data-dependent shapes work (``unique``, ``nonzero``, masks:
        those wait for their inputs' values)."""
        return {"boolean indexing": True, "data-dependent shapes": True,
                "max dimensions": _MAX_DIMENSIONS}

    def default_device(self):
        """The context new arrays go to: ``ndengine.current_context()``."""
        return current_context()

    def devices(self):
        """The CPU context, every GPU (CuPy's, or the fake ones: engine/devices.py), and the
        current context where ``with cpu(i):`` chose another."""
        devices = [cpu(0)] + [gpu(i) for i in range(_devices.device_count())]
        current = current_context()
        if current not in devices:
            devices.append(current)
        return devices

    def default_dtypes(self, *, device=None):
        """Default dtypes: float64, complex128 where ndengine has it, int64 (also for
        indexing)."""
        defaults = {"real floating": np.dtype(np.float64), "integral": np.dtype(np.int64),
                    "indexing": np.dtype(np.int64)}
        if "complex128" in DTYPES:
            defaults["complex floating"] = np.dtype(np.complex128)
        return defaults

    def dtypes(self, *, device=None, kind=None):
        """``{name: dtype}`` of the supported dtypes, of ``kind`` (a kind name or a tuple of
        them) when given."""
        if kind is None:
            return {name: np.dtype(dtype) for name, dtype in DTYPES.items()}
        return {name: np.dtype(dtype) for name, dtype in DTYPES.items()
                if np.isdtype(np.dtype(dtype), kind)}

    def __repr__(self):
        return "ndengine.array_api.__array_namespace_info__()"


def __array_namespace_info__():
    """The standard's inspection object for this namespace."""
    return Info()
