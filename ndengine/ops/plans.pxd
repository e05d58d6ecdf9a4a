# Cython declarations of plans.py (the compiled core: ndengine/compiled_core.py)

cdef class Plan:
    cdef public tuple outputs
    cdef public object check
    cdef public object run
    cdef public object elements
