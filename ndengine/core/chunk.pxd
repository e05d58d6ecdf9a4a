# Cython declarations of chunk.py (the compiled core: ndengine/engine/compiled.py)
cimport cython

cdef class _Storage:
    cdef public object _var

cdef class Chunk(_Storage):
    cdef public object ctx
    cdef public object nbytes
    cdef public object data
    cdef public object window
    cdef object __weakref__

cdef class SmallChunk(_Storage):
    cdef public object ctx
    cdef public object nbytes
    cdef public object data
    cdef public object window
    cdef object __weakref__


@cython.locals(small=SmallChunk, pooled=Chunk)
cpdef bint idle(chunk)
