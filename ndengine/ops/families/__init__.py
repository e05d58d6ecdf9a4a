"""The op families other than element-wise: each module registers its ops (``register_all``).

Two factories make most of them from tables: ``numpy_operators`` (an op whose kernel is
NumPy's own function, with a shape rule) and ``numpy_functions`` (the same with inference on
small stand-ins). Modules, each importing only those above it (and the op model):

* ``numpy_operators``, ``numpy_functions``: the two factories;
* ``indexing``: ``x[key]`` as a copy and ``target[key] = value``;
* ``creation``: fill, arange, linspace, eye; ``random``: draws from a Generator;
* ``movement``: copy/astype, concatenate, stack, split;
* ``row_reductions``: Numba loops reducing short C-contiguous rows with NumPy's results (a
  plain ``x.sum(axis=-1)``, and fusion's tail reductions);
* ``reductions``: sum, mean, max, ..., std, var;
* ``products``: dot, matmul, vdot, inner, ...; ``linalg``: numpy.linalg's functions;
* ``shaping``: tile, repeat, roll, pad, ...; ``selection``: take, choose, ...;
* ``statistics``: nan-reductions, medians, quantiles, histograms;
* ``sorting``: sort, argsort, partition, searchsorted, ...; ``fft``: numpy.fft;
* ``sets``: isin, intersect1d, setdiff1d, setxor1d;
* ``indexing_extra`` (on ``selection``): putmask, place, copyto (in place), select,
  vecdot, matvec, vecmat;
* ``math_extra``: convolve, correlate, interp, cov, corrcoef, unravel_index,
  ravel_multi_index; ``numeric``: i0, unwrap, sort_complex;
* ``polynomials``: poly, polyadd, polysub, polyder, polyint, polyval, polyfit;
  ``windows_histograms``: window functions, histogram2d/dd, histogram_bin_edges,
  packbits, unpackbits.
"""
