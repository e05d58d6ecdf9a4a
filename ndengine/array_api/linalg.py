"""The standard's ``linalg`` extension, generated from a table onto ``ndengine.linalg``
where only names and signatures differ; ``cross``, ``diagonal``, ``trace``, ``matrix_norm``
and ``vector_norm`` are ``ndengine.linalg``'s (numpy.linalg's signatures are the standard's)."""
from .. import ndarray

from ._generate import generate_all
from ._statistics import matrix_transpose, vecdot

__all__ = ["FUNCTIONS"]

_MODULE = "ndengine.array_api.linalg"
_ROWS = [
    ("cholesky", "x, /, *, upper=False", ndarray.linalg.cholesky),
    ("det", "x, /", ndarray.linalg.det),
    ("eigh", "x, /", ndarray.linalg.eigh),
    ("eigvalsh", "x, /", ndarray.linalg.eigvalsh),
    ("inv", "x, /", ndarray.linalg.inv),
    ("matmul", "x1, x2, /", ndarray.linalg.matmul),
    ("matrix_power", "x, n, /", ndarray.linalg.matrix_power),
    ("matrix_rank", "x, /, *, rtol=None", ndarray.linalg.matrix_rank),
    ("outer", "x1, x2, /", ndarray.linalg.outer),
    ("pinv", "x, /, *, rtol=None", ndarray.linalg.pinv),
    ("qr", "x, /, *, mode='reduced'", ndarray.linalg.qr),
    ("slogdet", "x, /", ndarray.linalg.slogdet),
    ("solve", "x1, x2, /", ndarray.linalg.solve),
    ("svd", "x, /, *, full_matrices=True", ndarray.linalg.svd),
    ("svdvals", "x, /", ndarray.linalg.svdvals),
    ("tensordot", "x1, x2, /, *, axes=2", ndarray.linalg.tensordot),
]


FUNCTIONS = generate_all(_ROWS, module=_MODULE)
# ndengine.linalg's own (numpy.linalg's signatures are the standard's), and the standard
# namespace's matrix_transpose and vecdot
FUNCTIONS.update({name: getattr(ndarray.linalg, name)
                  for name in ("cross", "diagonal", "trace", "matrix_norm", "vector_norm")})
FUNCTIONS.update(matrix_transpose=matrix_transpose, vecdot=vecdot)
globals().update(FUNCTIONS)
__all__ += sorted(FUNCTIONS)
