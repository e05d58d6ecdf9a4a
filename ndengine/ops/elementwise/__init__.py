"""The element-wise ops: Numba scalars and loops, dtype rules, value checks and plans, one table.

Modules, each importing only those above it (and the op model, ``ops/*.py``, and
``ops/runtime``):

* ``scalars``: Numba scalar functions of the arithmetic core (what one element becomes);
* ``ufunc_scalars``: the same for NumPy's ufuncs beyond the arithmetic core;
* ``loops``: the contiguous 1-D loops around any of those scalars, each loop shape once;
* ``runs``: the runs a plan chooses, and the NumPy-backed loops they may call;
* ``dtype_rules``: NumPy's type resolution of a call, and the checks of weak Python ints;
* ``operators``: ``ElementwiseSpec`` and its variants, their plans;
* ``power_clip``: power and clip, with rules of their own;
* ``ufunc_specs``: ufuncs computed other than by their NumPy loop, or with two outputs;
* ``functions``: NumPy's element-wise functions that are no ufuncs (isclose, nan_to_num);
* ``tables``: every element-wise op's row, registered by ``register_all``;
* ``ufunc_methods``: ``ufunc.reduce``/``accumulate``/``reduceat``/``outer``/``at`` as one op.
"""
