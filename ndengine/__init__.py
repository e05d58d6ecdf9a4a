"""ndengine: NumPy-style arrays whose operations run asynchronously, in parallel, on an
MXNet-style dependency engine. Write serial NumPy code; it returns at once and runs on the
engine; ask for a value (``x.asnumpy()``, ``print(x)``, ``waitall()``) and it waits."""
import logging as _logging
# a library adds only a NullHandler: the application decides what its logs show and where
# (loggers below "ndengine": compile, fallback, kv, pool)
_logging.getLogger(__name__).addHandler(_logging.NullHandler())
# the engine comes first: it decides which core runs, compiled or pure Python (engine/compiled.py)
from . import engine, ndarray, ops, profiler  # noqa: E402
from .engine import Cancelled, Context, cancel, cpu, current_context, gpu
from .core.settings import get_settings, settings
from .ndarray import *  # noqa: F401,F403 - the array API is the package's API
from .ndarray import __all__ as _array_names
from .ndarray import random, storage  # noqa: F401
from .ndarray import emath, fft, lib, linalg  # noqa: F401  (importable as ndengine.linalg & co.)
import sys as _sys
_sys.modules.update({f"{__name__}.{module.__name__.rpartition('.')[2]}": module
                     for module in (linalg, fft, random, emath, lib)})
_sys.modules[f"{__name__}.lib.stride_tricks"] = lib.stride_tricks
from .ops import register as register_op  # noqa: F401

__version__ = "0.1.0"
__all__ = ["engine", "ops", "profiler", "Context", "cpu", "gpu", "current_context", "register_op",
           "cancel", "Cancelled", "ndarray", "settings", "get_settings",
           *_array_names]


def __getattr__(name):
    """Operators registered after import (``ndengine.ops.register``) are module functions
    too. Any other name is an AttributeError; where NumPy has the name, its message says
    ndengine does not have it yet and how to use NumPy's meanwhile."""
    from .ndarray.namespace import missing_attribute
    from .ndarray.operators import module_function
    if not name.startswith("__"):
        try:
            return module_function(name)
        except KeyError:
            pass
    raise missing_attribute("ndengine", name) from None


from . import array_api  # noqa: E402,F401 - the standard's namespace; sets NDArray.__array_namespace__
from . import autograd  # noqa: E402,F401 - record/backward; sets NDArray.attach_grad & co.
from . import kv  # noqa: E402,F401 - MXNet's KVStore (nd.kv.create)
from_dlpack = array_api.from_dlpack  # NumPy's name too: zero copy where the memory allows
# the standard's inspection API (devices, dtypes, defaults) answers for the main namespace too
__array_namespace_info__ = array_api.__array_namespace_info__
__array_api_version__ = array_api.__array_api_version__  # as NumPy has it
__all__.append("from_dlpack")
from .runtime_info import show_runtime  # noqa: E402 - what a bug report needs
from .ops.runtime.compile_log import CompileTimeNotice  # noqa: E402 - silence it by category
from .ops.runtime.disk_cache import CacheUnavailableWarning  # noqa: E402 - likewise
from .ndarray.interop import NumPyFallbackWarning  # noqa: E402 - likewise
__all__ += ["show_runtime", "CompileTimeNotice", "CacheUnavailableWarning", "NumPyFallbackWarning"]
from .docstrings import install as _complete_docstrings  # noqa: E402
_complete_docstrings(_sys.modules[__name__])  # each says whether it waits, what it does not take
