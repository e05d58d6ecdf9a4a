# Cython declarations of pipeline.py (the compiled core: ndengine/engine/compiled.py)
cimport cython
from ndengine.core.array cimport RawArray, new_array as _new_array
from ndengine.core.fp_errors cimport state_at_push as _fp_state_at_push
from ndengine.core.segment cimport append as _gather, run_now as _run_now
from ndengine.core.lazy cimport offered as _lazy_offered, record as _lazy_record
from ndengine.core.runs cimport BoundRun
from ndengine.ops.plans cimport Plan

@cython.locals(arr=RawArray, result=RawArray, gathering=bint, gathers=bint, small=bint,
               pooled=bint,
               reads=list, key=list, args=list, outputs=list, writes=list, run=BoundRun,
               plan=Plan)
cpdef invoke(op, inputs, params=*, out=*, ctx=*, ctx_check=*, extra_writes=*, overwrites=*)

@cython.locals(plan=Plan)
cpdef tuple _plan(op, inputs, params, out, ctx, ctx_check, list key)

cpdef _aliases(inputs, RawArray out)

@cython.locals(outputs=list, writes=list, outs=list)
cpdef tuple _make_outputs(op, inputs, params, RawArray out, ctx, engine, plan, key, bint gathering,
                          bint small, binds_pool)

cpdef bint _binds_pool_buffers(op, params, plan, device)
