"""The scripts of bench/realistic_scripts.py: one module each, written as plain NumPy code
against an ``xp`` namespace (``xp=numpy`` or ``xp=ndengine``: what ``import ndengine as np``
users have), unchanged between the two.

Each module has ``TITLE`` (the table's row), ``make_data(rng)`` (a dict of NumPy arrays and
Python numbers, made once, untimed), ``run(xp, data)`` (the script; the runner hands it the
arrays already converted with ``xp.asarray``) and ``RTOL``/``ATOL`` (the tolerance of the
check against NumPy's result).  The heat stencil is one script (``heat_stencil``) run at two
sizes: ``heat_large`` and ``heat_small`` give it its data.  The runner lists the modules in
table order.
"""
