"""``ndengine.lib``: the parts of ``numpy.lib`` that work on NDArrays (``stride_tricks``), so
that code reaching ``xp.lib.stride_tricks.sliding_window_view`` (xarray's rolling windows)
finds it in ndengine's namespace. The rest of ``numpy.lib`` holds NumPy's implementation
modules, not an API of arrays."""
from . import stride_tricks

__all__ = ["stride_tricks"]
