"""Automatic fusion: a recorded element-wise program run as one pass over memory.

``kernel.kernel_for(program)`` is the entry (core's windows record the program with
``builder.ProgramBuilder``). Modules, each importing only those above it (and the op model,
``ops/elementwise``, ``ops/families`` and ``ops/runtime``; a tail reduction's row loops are
``families/row_reductions``):

* ``scalars``: Numba scalar functions giving NumPy's own loops' results;
* ``program``: the program, a DAG of registered element-wise ops over arrays and scalars;
* ``builder``: ``ProgramBuilder``, which records a program op by op with each op's own plan;
* ``blocks``: how an iteration space is cut into blocks, and the threads that run them;
* ``codegen``: generated Numba kernels, cached on disk;
* ``evaluators``: the blocked (NumPy loops) and the generated evaluator of one block;
* ``fp_report``: a generated kernel's FP flags reported as the window's ops would;
* ``drivers``: a program over its whole iteration space, block by block;
* ``reduction``: a program's tail reduction over that space, in NumPy's order;
* ``kernel_cache``: one entry per program structure, its compiled variants, statistics;
* ``kernel``: ``FusedKernel``, ``kernel_for``, ``run`` and the unfused re-runs.
"""
