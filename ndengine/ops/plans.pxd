# Cython declarations of plans.py (the compiled core: ndengine/engine/compiled.py)

cdef class Plan:
    cdef public tuple outputs
    cdef public object check
    cdef public object run
    cdef public object elements

cdef class KernelRun:
    cdef public object kernel
