# Cython declarations of fp_errors.py (the compiled core: ndengine/engine/compiled.py)

cpdef state_at_push()
