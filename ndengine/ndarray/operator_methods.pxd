# Cython declarations of operator_methods.py (the compiled core: ndengine/compiled_core.py)
from ndengine.core.pipeline cimport invoke
