# Cython declarations of operator_methods.py (the compiled core: ndengine/engine/compiled.py)
from ndengine.core.pipeline cimport invoke

cpdef _operator(name)
