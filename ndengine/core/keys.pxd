# Cython declarations of keys.py (the compiled core: ndengine/engine/compiled.py)
cimport cython

cpdef bint is_element_key(key)

cpdef bint is_whole_element_key(key, Py_ssize_t ndim)

cpdef normalize_key(key)

cpdef bint is_basic_key(key)

@cython.locals(parts=tuple, spec=list, memo=bint, axis=Py_ssize_t)
cpdef memo_key(key, shape)

cpdef _mask_key(key, mask, shape)
