# Cython declarations of errors.py (the compiled core: ndengine/engine/compiled.py)

cpdef caller_origin(Py_ssize_t inside=*)
