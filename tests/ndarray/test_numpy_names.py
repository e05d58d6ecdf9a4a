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
    # NumPy's build, test suite and implementation modules (ndengine.show_runtime is
    # ndengine's report; numpy.lib holds NumPy's implementation modules, not an API of arrays)
    "show_config", "test", "lib",
}
# names the other families of this work are adding now; the lead empties this set once they
# are in (then the test holds for every name)
PENDING = {
    # indexing, construction and Array API names
    "insert", "extract", "piecewise", "diagflat", "diag_indices_from", "tril_indices_from",
    "triu_indices_from", "mask_indices", "mgrid", "ogrid", "r_", "c_", "s_", "index_exp",
    "ndindex", "ndenumerate", "broadcast", "broadcast_shapes", "asanyarray",
    "asarray_chkfinite", "asfortranarray", "require", "isfortran", "array_equiv",
    "shares_memory", "may_share_memory", "apply_along_axis", "apply_over_axes", "vectorize",
    "fromfunction", "fromiter", "frombuffer", "fromstring", "fromfile", "unstack",
    "matrix_transpose", "permute_dims", "astype", "copyto", "place", "putmask", "select",
    "vecdot", "vecmat", "matvec",
    # polynomials, windows, histograms, bit packing
    "poly", "poly1d", "polyadd", "polysub", "polymul", "polydiv", "polyder", "polyint",
    "polyfit", "polyval", "roots", "polynomial", "bartlett", "blackman", "hamming", "hanning",
    "kaiser", "histogram2d", "histogramdd", "histogram_bin_edges", "packbits", "unpackbits",
    # numeric ufuncs and functions
    "gcd", "lcm", "ldexp", "frexp", "modf", "spacing", "bitwise_count", "i0", "unwrap",
    "sort_complex", "real_if_close",
}


def _numpy_names():
    with warnings.catch_warnings():  # NumPy warns for some deprecated names
        warnings.simplefilter("ignore")
        return {name for name in dir(np) if not name.startswith("_")}


def test_every_numpy_name_is_in_ndengine_or_excluded():
    missing = _numpy_names() - set(dir(nd)) - EXCLUDED - PENDING
    assert not missing, f"NumPy names ndengine lacks: {sorted(missing)}"


def test_excluded_names_are_numpys_and_absent():
    """Each exclusion names a NumPy name that ndengine really lacks: a name added later (or
    gone from NumPy) must leave the list, so the list stays the truth."""
    assert EXCLUDED <= _numpy_names() | {"float128", "complex256"}  # platform-dependent
    assert not {name for name in EXCLUDED if hasattr(nd, name)}
    assert not EXCLUDED & PENDING
