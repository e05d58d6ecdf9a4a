"""ndengine.ops: the operator registry and its CPU kernels.

This layer knows nothing about NDArray or the engine: inputs are "array specs"
(anything with ``.shape`` and ``.dtype``) or Python scalars, and kernels write
into preallocated NumPy outputs::

    op = ndengine.ops.get("add")
    [(shape, dtype)] = op.infer(a, b)
    op.kernels["cpu"]([a, b], [out], [OpReq.WRITE_TO])

Each op is decided once per call signature (``Operator.plan``, ``ops.plans``): the plan
carries the outputs, the per-call value checks and the kernel to run from the push to the run.

Layout, by stage; a folder imports only the ones listed before it (and ``ndengine.engine``),
and the modules inside a folder import one way (each folder's ``__init__`` lists its order):

* ``runtime/``: threads, compiles, fork-safe caches and the processor's FP flags;
* the op model, here: ``dtypes``, ``shapes``, ``plans`` (the per-signature memo),
  ``outputs`` (writing into preallocated outputs), ``registry`` (``Operator``),
  ``host_fallback`` (a device's run of a CPU kernel on host copies);
* ``elementwise/``: the element-wise ops (Numba loops, dtype rules, plans, one table);
* ``families/``: every other family (reductions, movement, products, linalg, ...);
* ``fusion/``: fused element-wise programs, run as one pass over memory;
* ``gpu/``: every op's gpu kernel, against CuPy or NumPy;
* ``gradients/``: autograd's rules, a table over op names.
"""
from .runtime import parallel  # noqa: F401  (picks a thread-safe Numba layer before any kernel runs)
from .dtypes import EXTENDED_DTYPES, SUPPORTED_DTYPES, check_dtype, result_type
from .plans import Plan
from .registry import Operator, OpReq, get, names, register
from .elementwise import tables as _elementwise_tables, ufunc_methods as _ufunc_methods
from .families import (creation as _creation, fft as _fft, indexing as _indexing,
                       linalg as _linalg, math_extra as _math_extra, movement as _movement,
                       numeric as _numeric, polynomials as _polynomials,
                       windows_histograms as _windows_histograms,
                       products as _products,
                       random as _random, reductions as _reductions, selection as _selection,
                       sets as _sets, shaping as _shaping, sorting as _sorting,
                       statistics as _statistics)
from .families import indexing_extra as _indexing_extra
from .gradients import user_gradient as _user_gradient
from .gpu import registration as _gpu_registration

# the registry's built-in ops, family by family; the gpu kernels come last: they are made
# from the CPU ops' tables
for _family in (_elementwise_tables, _reductions, _products, _creation, _movement, _indexing,
                _random, _ufunc_methods, _shaping, _selection, _linalg, _statistics, _sorting,
                _sets, _math_extra, _numeric, _polynomials,
                _windows_histograms, _indexing_extra, _fft, _user_gradient, _gpu_registration):
    _family.register_all()
del _family

__all__ = ["OpReq", "Operator", "register", "get", "names", "SUPPORTED_DTYPES",
           "EXTENDED_DTYPES", "check_dtype", "result_type", "Plan"]
