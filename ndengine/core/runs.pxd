# Cython declarations of runs.py (the compiled core: ndengine/engine/compiled.py)

cdef class Run:
    cdef public object plan
    cdef public object inputs
    cdef public object outputs
    cdef public object req
    cdef public object params
    cdef public object cast_into
    cdef public object fp

cdef class BoundRun:
    cdef public object run
    cdef public object args
    cdef public object outs
    cdef public object req
    cdef public object params
    cdef public list reads
    cdef public list writes
    cdef public object name
    cdef public object origin
    cdef public object fp
