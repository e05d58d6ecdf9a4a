# Cython declarations of storage.py (the compiled core: ndengine/engine/compiled.py)

cdef class DevicePool:
    cdef public object ctx, limit, lock, deferred, free, fences, owned
    cdef public object held, pooled, allocs, reuses, releases

    cpdef alloc(self, nbytes)
    cpdef give_back(self, data, fence=*)

cpdef alloc(nbytes, ctx)
cpdef free(data, ctx, fence=*)
