"""ndengine.linalg: numpy.linalg's functions, each one pushed op run by NumPy's own function
(ops.families.linalg), with NumPy's parameter lists and result types (SVDResult, EighResult, ...
as named tuples of NDArrays).

Errors that depend on the values (a singular matrix, a matrix that is not positive definite)
are NumPy's LinAlgError, raised at the wait. Complex matrices give complex results, as in
NumPy. ``eig`` and ``eigvals`` of a REAL matrix are real or complex depending on its values
in NumPy, which an asynchronous op cannot know at the call: their result is real, and a
real matrix with complex eigenvalues raises TypeError at the wait, naming
``numpy.linalg.eig(a.asnumpy())`` (or pass the matrix as complex: ``a.astype(complex)``).
Tolerances (``tol``, ``rtol``, ``rcond``) are scalars or arrays (one per matrix); an NDArray
tolerance is read at the call (a wait).

numpy.linalg's Array API functions over the last axes (``cross``, ``diagonal``, ``trace``,
``matrix_transpose``, ``vecdot``, ``matrix_norm``, ``vector_norm``) are built from the
namespace's families (``families/linalg_standard.py``) and added once those are imported.
"""
import collections

import numpy as np

from ..core import NDArray
from .functions import FUNCTIONS
from .pushed import PUSHED
from .arguments import array_of as _array_of, first_context as _first_context
from .arguments import frozen as _frozen, push as _push
from .signatures import numpy_function as _numpy_function

LinAlgError = np.linalg.LinAlgError

EigResult = collections.namedtuple("EigResult", ["eigenvalues", "eigenvectors"])
EighResult = collections.namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
QRResult = collections.namedtuple("QRResult", ["Q", "R"])
SlogdetResult = collections.namedtuple("SlogdetResult", ["sign", "logabsdet"])
SVDResult = collections.namedtuple("SVDResult", ["U", "S", "Vh"])

_NO_VALUE = np._NoValue  # NumPy's "not given" default


def _tolerance(name, value):
    """A tolerance as the op's param: a scalar, or an array of them (one per matrix of a
    stack, broadcast as NumPy broadcasts it); an NDArray's values are read at the call."""
    if value is None or value is _NO_VALUE or isinstance(value, (bool, int, float, np.generic)):
        return value
    values = value.asnumpy() if isinstance(value, NDArray) else np.asarray(value)
    return values[()] if values.ndim == 0 else values


def _svd_result(outputs, arguments):
    return SVDResult(*outputs) if arguments["compute_uv"] else outputs[0]


def _qr_result(outputs, arguments):
    mode = arguments["mode"]
    if mode == "r":
        return outputs[0]
    return tuple(outputs) if mode == "raw" else QRResult(*outputs)


_ROWS = {
    # name: (parameters that are arrays, result type, tolerance parameters)
    "inv": (("a",), None, ()), "det": (("a",), None, ()),
    "slogdet": (("a",), SlogdetResult, ()), "solve": (("a", "b"), None, ()),
    "cholesky": (("a",), None, ()), "eigh": (("a",), EighResult, ()),
    "eigvalsh": (("a",), None, ()), "eig": (("a",), EigResult, ()),
    "eigvals": (("a",), None, ()), "svd": (("a",), _svd_result, ()),
    "svdvals": (("x",), None, ()), "qr": (("a",), _qr_result, ()),
    "pinv": (("a",), None, ("rcond", "rtol")), "matrix_power": (("a",), None, ()),
    "matrix_rank": (("A",), None, ("tol", "rtol")), "norm": (("x",), None, ()),
    "multi_dot": (("*arrays",), None, ()),
}


def _implementation(name, arrays, result, tolerances):
    def implementation(arguments):
        out = arguments.pop("out", None)
        values = [arguments.pop(param.lstrip("*")) for param in arrays]
        if arrays[0].startswith("*"):
            values = list(values[0])
        ctx = _first_context(*values)
        inputs = [_array_of(x, ctx) for x in values]
        for param in tolerances:
            arguments[param] = _tolerance(param, arguments[param])
        params = {k: _frozen(v) for k, v in arguments.items() if v is not _NO_VALUE}
        outputs = _push(f"linalg.{name}", inputs, params, out=out, name=name, ctx=ctx)
        if result is None:
            return outputs[0]
        if isinstance(result, type):
            return result(*outputs)
        return result(outputs, arguments)
    return implementation


def _lstsq(a, b, rcond=None):
    """The residuals are empty unless the rank is full and M > N: for M > N that needs the
    rank's value, so the call waits for the op there."""
    ctx = _first_context(a, b)
    a, b = _array_of(a, ctx), _array_of(b, ctx)
    x, residuals, rank, s = _push("linalg.lstsq", [a, b],
                                  {"rcond": _tolerance("rcond", rcond)}, ctx=ctx)
    m, n = a.shape
    if m <= n or rank.item() != n:
        residuals = residuals[:0]
    return x, residuals, rank, s


def _outer(x1, x2):
    x1, x2 = _array_of(x1), _array_of(x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are x1.ndim="
                         f"{x1.ndim} and x2.ndim={x2.ndim}.")
    return PUSHED["outer"](x1, x2)


_DOC = ("Pushed as one op; NumPy's function runs inside it. Errors that depend on the "
        "values (a singular matrix, ...) are raised at the wait.")
_EIG_DOC = (_DOC + " A real matrix with complex eigenvalues raises TypeError at the wait "
            "(NumPy's result dtype depends on the values): pass it as complex, or use "
            "numpy.linalg.{}(a.asnumpy()).")

FUNCTIONS_LINALG = {
    name: _numpy_function(name, getattr(np.linalg, name),
                          _implementation(name, arrays, result, tolerances),
                          _EIG_DOC.format(name) if name in ("eig", "eigvals") else _DOC,
                          module="ndengine.linalg", by_name=True)
    for name, (arrays, result, tolerances) in _ROWS.items()}
FUNCTIONS_LINALG["lstsq"] = _numpy_function("lstsq", np.linalg.lstsq, _lstsq,
                                            module="ndengine.linalg", doc=_lstsq.__doc__)
FUNCTIONS_LINALG["outer"] = _numpy_function("outer", np.linalg.outer, _outer,
                                            module="ndengine.linalg")
# numpy.linalg's own spellings of two products (positional-only arrays, keyword axes)
FUNCTIONS_LINALG["matmul"] = _numpy_function(
    "matmul", np.linalg.matmul, lambda x1, x2: FUNCTIONS["matmul"](x1, x2),
    module="ndengine.linalg")
FUNCTIONS_LINALG["tensordot"] = _numpy_function(
    "tensordot", np.linalg.tensordot, lambda x1, x2, axes=2: PUSHED["tensordot"](x1, x2, axes),
    module="ndengine.linalg")


def _add_functions(functions):
    """Adds numpy.linalg's functions built on the namespace's families (``cross``,
    ``vector_norm``, ...: ``families/linalg_standard.py``), which import after this module."""
    FUNCTIONS_LINALG.update(functions)
    globals().update(functions)
    __all__.extend(functions)


globals().update(FUNCTIONS_LINALG)
__all__ = ["LinAlgError", "EigResult", "EighResult", "QRResult", "SlogdetResult",
           "SVDResult", *FUNCTIONS_LINALG]
