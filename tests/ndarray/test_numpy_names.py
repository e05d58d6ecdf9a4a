"""Every public name of NumPy's main namespace is in ndengine's, except the families ndengine
leaves out on purpose (``EXCLUDED``, each with its reason), so that ``import ndengine as np``
scripts find NumPy's names."""
import warnings

import numpy as np

import ndengine as nd

DATETIME = {"datetime64", "timedelta64", "busday_count", "busday_offset", "busdaycalendar",
            "is_busday", "isnat", "datetime_as_string", "datetime_data"}
EXCLUDED = {
    # datetime/timedelta: ndengine has no datetime or timedelta dtype
    *DATETIME,
    # strings: no string dtypes (numpy.char and numpy.strings work on str_/bytes_ arrays)
    "char", "strings", "str_", "bytes_", "character", "flexible",
    # object and void dtypes: an NDArray holds numbers only (frompyfunc's ufuncs make
    # object arrays; fromregex's result is always a structured, void-based array)
    "object_", "void", "frompyfunc", "fromregex",
    # extended precision: no longdouble storage (numpy's float128/complex256 on this platform)
    "longdouble", "clongdouble", "float128", "complex256",
    # matrix, masked and record arrays: NumPy's ndarray subclasses with their own semantics
    "matrix", "asmatrix", "bmat", "ma", "rec", "recarray", "record",
    # building and binding C and Fortran code against NumPy's own C API
    "f2py", "ctypeslib", "get_include",
    # NumPy arrays over a mapped file, and iterators over NumPy's in-place memory: the
    # engine could not order their reads and writes with the ops on an NDArray
    "memmap", "nditer", "nested_iters",
    # NumPy's build and test suite (ndengine.show_runtime is ndengine's report); of numpy.lib
    # ndengine has stride_tricks only (the rest is NumPy's implementation modules)
    "show_config", "test",
    # numpy.polynomial's classes (Polynomial, Chebyshev, ...) hold NumPy coefficient arrays:
    # NumPy's package works on them as it is (ndengine has the poly* functions and poly1d)
    "polynomial",
}
def _numpy_names():
    with warnings.catch_warnings():  # NumPy warns for some deprecated names
        warnings.simplefilter("ignore")
        return {name for name in dir(np) if not name.startswith("_")}


def test_every_numpy_name_is_in_ndengine_or_excluded():
    missing = _numpy_names() - set(dir(nd)) - EXCLUDED
    assert not missing, f"NumPy names ndengine lacks: {sorted(missing)}"


def test_excluded_names_are_numpys_and_absent():
    """Each exclusion names a NumPy name that ndengine really lacks: a name added later (or
    gone from NumPy) must leave the list, so the list stays the truth."""
    assert EXCLUDED <= _numpy_names() | {"float128", "complex256"}  # platform-dependent
    assert not {name for name in EXCLUDED if hasattr(nd, name)}
