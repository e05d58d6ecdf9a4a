"""The standard's array members that NDArray lacks: ``__array_namespace__``, ``device``,
``to_device``, ``mT``, and DLPack export (``__dlpack__``, ``__dlpack_device__``).
``attach(NDArray)`` sets them on the class, as ``ndengine.ndarray``'s modules set theirs.

DLPack export shares the array's memory (``core.shared_view``): it waits for every pending
read and write of the array, and the capsule keeps the array's storage alive, so ndengine's
pool never reuses memory a consumer holds. ``copy=True`` hands out a copy instead.
"""
import sys

from ..core import dlpack_device, shared_view

__all__ = ["attach", "SUPPORTED_API_VERSIONS"]

SUPPORTED_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")


def __array_namespace__(self, /, *, api_version=None):
    """The Array API namespace for NDArrays: ``ndengine`` itself, as NumPy's arrays answer
    ``numpy`` (its main namespace passes more of the standard's suite than NumPy's own:
    README, "Array API"); ``ndengine.array_api`` is the standard's strict namespace."""
    if api_version is not None and api_version not in SUPPORTED_API_VERSIONS:
        raise ValueError(f"unsupported Array API version {api_version!r}; ndengine "
                         f"implements {', '.join(SUPPORTED_API_VERSIONS)}")
    return sys.modules["ndengine"]


def _device(self):
    """The array's device: its Context."""
    return self.context


def to_device(self, device, /, *, stream=None):
    """The array on ``device`` (a Context): itself when it is there already, else a pushed
    copy that returns at once."""
    if stream is not None:
        raise ValueError("to_device: ndengine orders copies on its engine; pass no stream")
    return self.as_in_context(device)


def _matrix_transpose(self):
    """The view with the last two axes swapped (the standard's ``x.mT``)."""
    return sys.modules["ndengine.array_api"].matrix_transpose(self)


def __dlpack_device__(self):
    return dlpack_device(self)


def __dlpack__(self, /, *, stream=None, max_version=None, dl_device=None, copy=None):
    """A DLPack capsule of the array's memory, or of a copy with ``copy=True`` (see the
    module docstring). The array's pending work has finished, on every stream, so any
    consumer ``stream`` may read it at once."""
    here = self.__dlpack_device__()
    if dl_device is not None and tuple(dl_device) != here:
        raise BufferError(f"DLPack export to device {dl_device} is not supported (the "
                          f"array is on {here})")
    values = shared_view(self.copy() if copy else self)
    keywords = {} if max_version is None else {"max_version": max_version}
    if stream is not None:
        keywords["stream"] = stream
    return values.__dlpack__(**keywords)


_MEMBERS = {"__array_namespace__": __array_namespace__, "device": property(_device),
            "to_device": to_device, "mT": property(_matrix_transpose),
            "__dlpack__": __dlpack__,
            "__dlpack_device__": __dlpack_device__}


def attach(array_class):
    """Set the standard's members on ``array_class`` (NDArray)."""
    for name, member in _MEMBERS.items():
        setattr(array_class, name, member)
