"""``ndengine.array_api``: the Python Array API standard's namespace (2024.12) for NDArrays.

Code written against the standard runs on ndengine arrays unchanged with either namespace:
``x.__array_namespace__()`` returns ``ndengine`` itself (as NumPy's arrays answer ``numpy``:
the main namespace takes the standard's names where NumPy 2 does), and this module is the
standard's strict namespace, its exact names and signatures (``acos``, ``clip(x, min, max)``,
``sort(descending=)``) for code that asks for them. It is a thin layer, laid out as array-api-strict's: each
submodule holds tables of the standard's names and parameter lists and the ndengine
function each one calls (``acos`` -> ``ndarray.arccos``, ``concat`` ->
``ndarray.concatenate``, ``permute_dims`` -> ``ndarray.transpose``), compiled into functions
at import (``ndarray.signatures.signed_function``); only where the standard asks for more
than a renaming (``unique_*``'s named results, descending sorts, ``vecdot``,
``linalg.vector_norm``) is a function written out, and then from ndengine's own functions. Every function pushes ndengine ops: nothing computes on a NumPy copy.

State, fixed at import: the dtype names are those ndengine supports then
(``ndengine.ops.dtypes.SUPPORTED_DTYPES``), and ``MISSING`` lists the standard's names that
ndengine cannot provide yet (left out rather than faked). Importing this module sets the
standard's members on NDArray (``__array_namespace__``, ``device``, ``to_device``, ``mT``,
``__dlpack__``): ``import ndengine`` does it.

It imports downward only (``ndengine.ndarray``, ``core``, ``ops``, ``engine``; never the
top-level package), and its modules import one way: ``_dtypes``, ``_generate`` (table rows
into functions, by ``ndarray.signatures``), ``_array_methods`` first; then ``_info`` (on
``_dtypes``), ``_elementwise``, ``_creation``, ``_manipulation``, ``_statistics`` and ``fft``
(on ``_generate``); ``linalg`` last (on ``_statistics``).
"""
import numpy as _np

from ..ndarray import NDArray as _NDArray
from . import _array_methods, _creation, _dtypes, _elementwise, _manipulation, _statistics
from . import fft, linalg
from ._info import __array_namespace_info__  # noqa: F401

__array_api_version__ = "2024.12"

# constants (newaxis is None, as in NumPy)
e, pi, inf, nan, newaxis = _np.e, _np.pi, _np.inf, _np.nan, None

_FUNCTIONS = {**_creation.FUNCTIONS, **_dtypes.FUNCTIONS, **_elementwise.FUNCTIONS,
              **_manipulation.FUNCTIONS, **_statistics.FUNCTIONS}
globals().update(_dtypes.DTYPES)
globals().update(_FUNCTIONS)

MISSING = sorted(_elementwise.MISSING + [f"fft.{name}" for name in fft.MISSING])

__all__ = ["__array_api_version__", "__array_namespace_info__", "e", "pi", "inf", "nan",
           "newaxis", "fft", "linalg", *_dtypes.DTYPES, *sorted(_FUNCTIONS)]

_array_methods.attach(_NDArray)
