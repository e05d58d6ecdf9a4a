# Cython declarations of fp_errors.py (the compiled core: ndengine/engine/compiled.py)
cimport cython

cdef class FPState:
    cdef public object modes
    cdef public object call
    cdef public object run_state

cdef list _last

@cython.locals(last=tuple)
cpdef FPState state_at_push()
