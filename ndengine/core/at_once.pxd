# Cython declarations of at_once.py (the compiled core: ndengine/engine/compiled.py)

cdef list _enabled
cdef list _owner
cdef list _running

cpdef note_thread()
cpdef bint begin()
cpdef end()
