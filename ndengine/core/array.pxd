# Cython declarations of array.py (the compiled core: ndengine/engine/compiled.py)
cimport cython
from ndengine.core.chunk cimport Chunk, SmallChunk, idle as _idle
from ndengine.core.at_once cimport begin as _at_once_begin, end as _at_once_end

cdef class RawArray:
    cdef public object shape
    cdef public object dtype
    cdef public object _chunk
    cdef public object _offset
    cdef public object _strides
    cdef public object _view_cache
    cdef public object _base
    cdef object __weakref__

@cython.locals(arr=RawArray, small=SmallChunk, cls=type)
cpdef new_array(shape, dtype, ctx)

@cython.locals(arr=RawArray)
cpdef array_on(chunk, shape, dtype, offset=*, strides=*)

@cython.locals(arr=RawArray, cls=type)
cpdef _new_view(chunk, shape, dtype, offset, strides, base, data)

cpdef _read_at_once(arr, bint element)
