"""ndengine.ops: the operator registry and its CPU kernels.

This layer knows nothing about NDArray or the engine: inputs are "array specs"
(anything with ``.shape`` and ``.dtype``) or Python scalars, and kernels write
into preallocated NumPy outputs::

    op = ndengine.ops.get("add")
    [(shape, dtype)] = op.infer(a, b)
    op.kernels["cpu"]([a, b], [out], [OpReq.WRITE_TO])

Each op is decided once per call signature (``Operator.plan``, ``ops.plans``): the plan
carries the outputs, the per-call value checks and the kernel to run from the push to the run.
"""
from . import parallel  # noqa: F401  (picks a thread-safe Numba layer before any kernel runs)
from .dtypes import EXTENDED_DTYPES, SUPPORTED_DTYPES, check_dtype, result_type
from .plans import Plan
from .registry import Operator, OpReq, get, names, register
from . import (creation, elementwise, elementwise_tables, indexing, linalg, manipulation,
               random, reductions, ufunc_methods)
from . import sorting, statistics

elementwise_tables.register_all()
reductions.register_all()
linalg.register_all()
creation.register_all()
manipulation.register_all()
indexing.register_all()
random.register_all()
ufunc_methods.register_all()  # NumPy's ufunc.reduce & co. (and ufunc.at) as one op
from . import linalg_decomp, selection, shaping  # noqa: E402  (NumPy's functions as ops)
shaping.register_all()
selection.register_all()
linalg_decomp.register_all()
statistics.register_all()
sorting.register_all()
from . import fft  # noqa: E402  (numpy.fft's transforms as ops)
fft.register_all()
from . import user_gradient  # noqa: E402  (autograd's op for users' NumPy gradients)
user_gradient.register_all()
from . import gpu_kernels  # noqa: E402  (every op's gpu kernel, from the tables above: last)
gpu_kernels.register_all()

__all__ = ["OpReq", "Operator", "register", "get", "names", "SUPPORTED_DTYPES",
           "EXTENDED_DTYPES", "check_dtype", "result_type", "Plan"]
