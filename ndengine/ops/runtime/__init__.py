"""The runtime the kernels stand on: threads, compiles, caches and the processor's FP flags.

Nothing here knows an op. Modules, each importing only those above it:

* ``caching``: caches that stay safe across ``fork``;
* ``compile_log``: each compile logged (``ndengine.compile``), the process's compile time and
  its one ``CompileTimeNotice``;
* ``compile_queue``: the one background thread that compiles Numba code;
* ``deferred_loops``: Numba loops compiled once they are used, on that thread;
* ``disk_cache``: where compiled code is kept (a read-only install too), and the one
  ``CacheUnavailableWarning`` when nothing can be written;
* ``fp_flags``: the processor's floating-point exception flags, from compiled loops;
* ``fp_status``: NumPy-style floating-point error reports of the loops an op ran;
* ``parallel``: how large kernels use every core while several engine workers run.
"""
