"""``ndengine.lib.stride_tricks``: views with NumPy's stride tricks, computed by NumPy on the
array's stand-in (``NDArray._fake``: a geometry over no data), so they are views of the same
memory, made without a wait, ordered by the engine like any view.

``sliding_window_view`` is NumPy's. One difference: NumPy's view is read-only unless
``writeable=True``; an NDArray cannot be read-only, so the view is always writeable, and
writing through overlapping windows writes the same elements more than once (NumPy's warning
for ``writeable=True`` holds). ``broadcast_to`` is ndengine's (a view too). ``as_strided`` is
left out: arbitrary strides can reach memory outside the array."""
import numpy as np

from ...core import NDArray
from ..functions import broadcast_to
from ..signatures import numpy_function

__all__ = ["sliding_window_view", "broadcast_to"]


def _sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    if not isinstance(x, NDArray):
        return np.lib.stride_tricks.sliding_window_view(x, window_shape, axis=axis,
                                                        subok=subok, writeable=writeable)
    fake, base = x._fake()
    view = np.lib.stride_tricks.sliding_window_view(fake, window_shape, axis=axis)
    return x._view_like(view, base)


sliding_window_view = numpy_function("sliding_window_view",
                                     np.lib.stride_tricks.sliding_window_view,
                                     _sliding_window_view,
                                     module="ndengine.lib.stride_tricks")
