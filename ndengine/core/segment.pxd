# Cython declarations of segment.py (the compiled core: ndengine/engine/compiled.py)
cimport cython
from ndengine.core.runs cimport BoundRun
from ndengine.core.chunk cimport Chunk, SmallChunk, idle as _idle
from ndengine.core.at_once cimport begin as _run_now_begin, end as _run_now_end
from ndengine.core.fp_errors cimport FPState, state_at_push as _fp_state_at_push

cdef class Segment:
    cdef public object lock
    cdef public object window
    cdef object __weakref__

cdef class WindowBase:
    cdef public object segment
    cdef public bint open
    cdef public object engine
    cdef public object ctx
    cdef public object nodes
    cdef public object bulk
    cdef public bint pushed

cdef class Window(WindowBase):
    cdef public object roles
    cdef public object fresh
    cdef public Py_ssize_t nbytes

cdef class _Bulk:
    cdef public object engine
    cdef public object ctx
    cdef public object nodes
    cdef public object reads
    cdef public object writes
    cdef public bint ran
    cdef public object name
    cdef public object origin
    cdef public Py_ssize_t work

@cython.locals(segment=Segment, window=Window, roles=dict, nodes=list, fresh_chunks=list,
               reads=list, writes=list, full=bint)
cpdef append(engine, ctx, BoundRun run, outputs, bint fresh, Py_ssize_t bulk_size)

@cython.locals(window=WindowBase)
cpdef open_window_locked(Segment segment, kind, engine, ctx)

cpdef _flush_foreign(window, skip)

cpdef flush_touching(arrays, skip=*)

@cython.locals(node=BoundRun, fp=FPState)
cpdef run_gathered(engine, list nodes, bint check)

@cython.locals(fp=FPState)
cpdef bint run_now(engine, run, args, outs, req, params, list reads, list writes, name)
cpdef thread_segment()
cpdef flush_full(window)
cpdef flush_window(window)
from ndengine.engine.errors cimport caller_origin as _caller_origin
