# Cython declarations of views.py (the compiled core: ndengine/engine/compiled.py)
cimport cython
from ndengine.core.array cimport RawArray, _new_view
from ndengine.core.chunk cimport Chunk, SmallChunk

@cython.locals(view=RawArray)
cpdef basic_view(RawArray array, key, bint taped=*)

@cython.locals(memo=dict)
cpdef tuple view_geometry(RawArray array, key)

@cython.locals(parts=tuple, count=Py_ssize_t, axis=Py_ssize_t, new_shape=list,
               new_strides=list)
cdef tuple _direct_geometry(RawArray array, key)

cdef tuple _asked_of_numpy(RawArray array, key)

@cython.locals(found=list)
cpdef _slicing_key(RawArray array, key)

cdef tuple _slice_bounds(slice part)
