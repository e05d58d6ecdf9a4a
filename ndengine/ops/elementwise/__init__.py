"""The element-wise ops: Numba loops, dtype rules, value checks and plans, one table.

Modules, each importing only those above it (and the op model, ``ops/*.py``, and
``ops/runtime``):

* ``kernels``: Numba scalar functions and the 1-D loops built around them;
* ``ufunc_kernels``: the same for NumPy's ufuncs beyond the arithmetic core;
* ``runs``: the runs a plan chooses, and the NumPy-backed loops they may call;
* ``operators``: ``ElementwiseOp``, its dtype rules, checks and plans;
* ``power_clip``: power and clip, with rules of their own;
* ``ufunc_specs``: ufuncs computed other than by their NumPy loop, or with two outputs;
* ``functions``: NumPy's element-wise functions that are no ufuncs (isclose, nan_to_num);
* ``tables``: every element-wise op's row, registered by ``register_all``;
* ``ufunc_methods``: ``ufunc.reduce``/``accumulate``/``reduceat``/``outer``/``at`` as one op.
"""
