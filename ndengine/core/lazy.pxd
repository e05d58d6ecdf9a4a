# Cython declarations of lazy.py (the compiled core: ndengine/engine/compiled.py)
cimport cython
from ndengine.core.array cimport RawArray
from ndengine.core.chunk cimport Chunk
from ndengine.core.segment cimport (WindowBase, Segment, flush_full, flush_touching,
                                    open_window_locked, thread_segment)
from ndengine.core.fp_errors cimport state_at_push as _fp_state_at_push
from ndengine.engine.errors cimport caller_origin as _caller_origin

cdef class _Node:
    cdef public object op
    cdef public object plan
    cdef public object refs
    cdef public object params
    cdef public object shape
    cdef public object dtype
    cdef public object name
    cdef public object origin
    cdef public bint tail
    cdef public object fp

cdef class _Written:
    cdef public object view
    cdef public object node
    cdef public object target
    cdef public object chunk

cdef class LazyWindow(WindowBase):
    cdef public object shape
    cdef public object leaves
    cdef public object leaf_at
    cdef public object written
    cdef public object key
    cdef public object scalars

    @cython.locals(written=dict, leaf_at=dict, refs=list, entry=_Written, view=tuple)
    cpdef list refs_for(self, inputs, out, shape)

@cython.locals(elements=Py_ssize_t, medium=bint)
cpdef bint offered(op, params, plan, device)

@cython.locals(short=Py_ssize_t)
cdef bint _opens_long_windows(plan)

@cython.locals(elements=Py_ssize_t, ops=Py_ssize_t)
cdef _note_window_length(nodes)

cpdef bint fusible(op, params)

cdef bint _gathering(window)

cdef bint _joinable(window, shape)

cdef bint _reducible(window, Py_ssize_t elements)

cdef bint _numpy_loop(op, plan)

@cython.locals(x=RawArray)
cdef tuple _view_of(x)

@cython.locals(segment=Segment, window=LazyWindow, nodes=list, refs=list, chunk=object,
               index=Py_ssize_t, full=bint, tail=bint, pushed=bint)
cpdef record(engine, ctx, op, plan, key, inputs, params, output, bint fresh)

cdef bint _gathering_into(window, engine, ctx)

@cython.locals(kinds=list)
cdef tuple _ref_kinds(list refs)

cdef _add_scalars(list values, list refs, name, params)
