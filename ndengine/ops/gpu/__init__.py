"""Every registered op's gpu kernel, written once against an array module (CuPy or NumPy).

Modules, each importing only those above it (and the op model and the CPU families whose
tables they read):

* ``kernels``: the conventions every gpu kernel follows (its docstring) and their helpers;
* ``elementwise``, ``reductions``, ``numpy_functions``, ``numpy_operators``, ``movement``,
  ``random``: one family's planners each;
* ``registration``: installs them all (called last by ``ops/__init__.py``);
* ``fusion``: fused element-wise programs as CUDA kernels (core's windows call it).
"""
