# Cython declarations of pipeline.py (the compiled core: ndengine/compiled_core.py)
cimport cython
from ndengine.core.array cimport RawArray
from ndengine.core.runs cimport BoundRun
from ndengine.ops.plans cimport Plan

@cython.locals(arr=RawArray, result=RawArray, gathering=bint, small=bint, pooled=bint,
               reads=list, key=list, args=list, outputs=list, writes=list, run=BoundRun,
               plan=Plan)
cpdef invoke(op, inputs, params=*, out=*, ctx=*, ctx_check=*, extra_writes=*, overwrites=*)

@cython.locals(plan=Plan)
cpdef tuple _plan(op, inputs, params, out, ctx, ctx_check, list key)
