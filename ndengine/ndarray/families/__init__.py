"""NumPy's namespace beyond the array, its operators and its core functions: one module per
family, each a table of functions (name -> function) that ``ndengine.ndarray`` adds to the
namespace. Each imports only modules of ``ndengine.ndarray`` itself (and ``core``, ``ops``,
``engine``), never another family, except where named:

- ``math_extra``: compositions (sinc, cross, trapezoid, ...);
- ``math_pushed``: NumPy-run pushed ops (convolve, correlate, interp, cov, gradient, ...);
- ``math_numeric``: numeric ufuncs (gcd, lcm, ldexp, frexp, modf, spacing, bitwise_count) and
  i0, unwrap, sort_complex, real_if_close;
- ``polynomials``: poly, polyfit, polyval, roots, poly1d, ...;
- ``windows_histograms``: bartlett ... kaiser, histogram2d/dd, histogram_bin_edges,
  packbits/unpackbits;
- ``indexing_helpers``: insert, extract, place, putmask, select, piecewise, copyto, ...;
- ``creation_extra``: fromfunction, frombuffer, shares_memory, vecdot, astype, ...;
- ``grids``: mgrid, ogrid, r_, c_, ndenumerate, broadcast;
- ``linalg_standard``: numpy.linalg's Array API functions (cross, vector_norm, ...) on
  ``math_extra`` and ``creation_extra``, added to ``ndengine.linalg``;
- ``meta``: names holding no array data (dtype spellings and queries, printing, error state,
  NumPy's testing and exceptions).
"""
