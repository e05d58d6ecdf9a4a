"""The user-facing arrays: NDArray, creation, module functions, random numbers, save/load.

Its modules import one way, each only those before it (and ``core``, ``ops``, ``engine``):

- ``arguments``: reading arguments as NumPy does (``out=``, contexts, operands) and pushing
  an op on them; ``signatures``: the one factory of functions with a given parameter list
  (NumPy's, or the Array API standard's); ``creation``, ``namespace`` (dtypes, constants),
  ``after_import`` (registrations made once a library is imported): nothing else of the
  package; ``dask_chunks``, ``einops_backend`` (on ``after_import``);
- ``operators``: NDArray's Python operators and the module functions of registered ops;
  ``io`` and ``random`` (on ``creation``);
- ``ufuncs`` (NumPy's ufuncs on NDArrays, through ``operators``' functions), ``interop``
  (NumPy's functions on NDArrays), ``functions`` (the module functions' table);
- ``shaping``, ``statistics``, ``complex_parts`` (on ``functions``); ``pushed`` (on
  ``shaping``); ``fft`` and ``linalg`` (on ``pushed``); ``sets`` (on ``statistics``) and
  ``construction_helpers`` (on ``pushed`` and ``statistics``); ``emath`` (NumPy's math with
  automatic domain, on ``functions``);
- ``families/``: the rest of NumPy's namespace, a module per family, each on the modules
  above (its ``__init__`` lists them): compositions and NumPy-run ops (convolve, gradient,
  ...), numeric ufuncs, polynomials, windows and histograms, indexing and construction helpers,
  grids, names without array data.

Importing this package sets NDArray's methods and protocols (``__array_ufunc__``,
``__array_function__``, ``real``/``imag``, the statistics and shaping methods).
"""
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
# (COMPLEX_FUNCTIONS are added to __all__ below, once imported)

interop.install()  # NumPy's functions on NDArrays, and NumPy's array methods NDArray lacked
from . import ufuncs  # noqa: E402
ufuncs.install()  # NumPy's ufuncs on NDArrays
from .complex_parts import COMPLEX_FUNCTIONS, install as _install_complex_parts  # noqa: E402
_install_complex_parts()  # x.real, x.imag, x.conj()

globals().update(FUNCTIONS)
globals().update(COMPLEX_FUNCTIONS)
globals().update(_NAMESPACE)

# NumPy's shape, selection and product functions, ndengine.linalg and ndengine.fft (these
# concatenate, stack and split take over: NumPy 2's dtype= and casting=)
from . import fft, linalg  # noqa: E402
from .pushed import PUSHED  # noqa: E402
from .shaping import SHAPING  # noqa: E402

__all__ += list(COMPLEX_FUNCTIONS)
globals().update(SHAPING)
globals().update(PUSHED)
__all__ += ["linalg", "fft", *(name for name in {**SHAPING, **PUSHED} if name not in __all__)]
# statistics, sorting and searching (sum & co. and where extended with NumPy's arguments)
from .statistics import FUNCTIONS as _STATISTICS  # noqa: E402
globals().update(_STATISTICS)
__all__ += [name for name in _STATISTICS if name not in __all__]
# set routines, construction and indexing helpers
from .sets import SETS  # noqa: E402
from .construction_helpers import HELPERS  # noqa: E402
globals().update(SETS)
globals().update(HELPERS)
__all__ += [*SETS, *HELPERS]
# compositions (sinc, cross, ...) and NumPy-run ops (convolve, cov, gradient, ...)
from .families.math_extra import COMPOSED  # noqa: E402
from .families.math_pushed import NUMPY_RUN  # noqa: E402
globals().update(COMPOSED)
globals().update(NUMPY_RUN)
__all__ += [*COMPOSED, *NUMPY_RUN]
# numeric ufuncs (gcd, frexp, ...) and functions (i0, unwrap, sort_complex, real_if_close)
from .families.math_numeric import NUMERIC  # noqa: E402
globals().update(NUMERIC)
__all__ += list(NUMERIC)
# polynomials (polyfit, roots, poly1d, ...), windows, histogram2d/dd, packbits/unpackbits
from .families.polynomials import POLYNOMIALS  # noqa: E402
from .families.windows_histograms import WINDOWS_HISTOGRAMS  # noqa: E402
globals().update(POLYNOMIALS)
globals().update(WINDOWS_HISTOGRAMS)
__all__ += [*POLYNOMIALS, *WINDOWS_HISTOGRAMS]

# indexing, construction and array-API names (insert, select, copyto, mgrid, r_, vecdot, ...)
from .families.indexing_helpers import INDEXING  # noqa: E402
from .families.creation_extra import CREATION  # noqa: E402
from .families.grids import GRIDS  # noqa: E402
globals().update(INDEXING)
globals().update(CREATION)
globals().update(GRIDS)
__all__ += [*INDEXING, *CREATION, *GRIDS]
# numpy.linalg's Array API functions (cross, vector_norm, ...), built on the families above
from .families.linalg_standard import LINALG_STANDARD  # noqa: E402
linalg._add_functions(LINALG_STANDARD)

# NumPy's other names for the same functions (np.amax is np.max, np.around is np.round)
_ALIASES = {"amax": "max", "amin": "min", "around": "round", "concat": "concatenate"}
globals().update({alias: globals()[name] for alias, name in _ALIASES.items()})
__all__ += list(_ALIASES)
# names holding no array data (dtype spellings and queries, printing, error state, NumPy's
# testing & co.), text and archive I/O, and ndengine.emath
from .families.meta import META  # noqa: E402
from .io import IO  # noqa: E402
from . import emath  # noqa: E402
from . import lib  # noqa: E402
globals().update(META)
globals().update(IO)
__all__ += [*META, *IO, "emath", "lib"]

# NumPy's ufuncs are ufunc objects here too (nd.add.reduce, nd.add.nin): made once every
# module function is set, so each wraps the function the namespace ends with
globals().update(ufuncs.ufunc_objects({name: globals()[name] for name in __all__
                                       if name in globals()}))
ufunc = ufuncs.ufunc
__all__.append("ufunc")

# dask.array chunks of NDArrays and einops' backend: registered now if dask.array (einops) is
# imported, else right after its import (last here: registering reads this package's functions)
from . import dask_chunks as _dask_chunks, einops_backend as _einops_backend  # noqa: E402
_dask_chunks.install()
_einops_backend.install()
