# Cython declarations of keys.py (the compiled core: ndengine/engine/compiled.py)

cpdef bint is_element_key(key)

cpdef bint is_whole_element_key(key, Py_ssize_t ndim)

cpdef normalize_key(key)

cpdef bint is_basic_key(key)
