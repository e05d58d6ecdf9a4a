# Cython declarations of array_methods.py (the compiled core: ndengine/engine/compiled.py)
cimport cython
from ndengine.core.array cimport RawArray
from ndengine.core.pipeline cimport invoke
from ndengine.core.views cimport basic_view as _basic_view_of, view_geometry as _view_geometry
from ndengine.core.keys cimport (normalize_key as _normalize_key, is_basic_key as _is_basic_key,
                                 is_element_key as _is_element_key,
                                 is_whole_element_key as _is_whole_element_key,
                                 memo_key as _memo_key)

@cython.locals(self=RawArray)
cpdef _getitem(self, key)

@cython.locals(value=RawArray)
cpdef bint _is_the_view(RawArray self, key, value)

cpdef _setitem(self, key, value)
