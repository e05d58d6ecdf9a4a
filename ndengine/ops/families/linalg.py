"""numpy.linalg's functions as ops: inv, det, slogdet, solve, cholesky, eigh, eigvalsh, eig,
eigvals, svd, svdvals, qr, pinv, matrix_power, matrix_rank, norm, lstsq, multi_dot.

Inference asks NumPy itself, without doing the work:

* shapes: the function on stand-ins whose batch (stacked) dimensions are 0 and whose core
  (matrix) dimensions are the real ones: NumPy checks the core dimensions (square, matching)
  and returns empty results of the right core shapes; the batch is the inputs' batches
  broadcast together;
* dtypes: the function on 1x1 matrices of ones of the inputs' dtypes (float32 stays float32,
  integers become float64, ...), which also raises NumPy's errors for bad params and too few
  dimensions. An empty input takes NumPy's empty path (pinv keeps an int dtype there): its
  dtypes then come from the empty probe.

eig and eigvals give complex results for some real matrices, which ndengine cannot hold yet:
their outputs are real, and the op raises TypeError (at the wait) when NumPy's result is
complex, naming ``numpy.linalg.eig(a.asnumpy())`` as the way out.
"""
from __future__ import annotations

import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from ..dtypes import check_dtype
from .numpy_operators import numpy_operator, probe_results
from ..outputs import write_with_req
from ..plans import OpReq
from ..registry import add_operator, numpy_backed
from ..shapes import broadcast_shapes, reduced_shape, shape_of

LINALG = np.linalg


def _matrix_core(*shapes):
    return (2,) * len(shapes)


def _solve_core(a, b):
    return (2, 1 if len(b) == 1 else 2)  # NumPy 2: a 1-d b is one vector, else matrices


def _empty_probe(spec, core):
    """A stand-in with the real core dimensions and 0 for every batch dimension (at least
    one, so nothing is computed); a lone vector (solve's b) keeps its real shape."""
    shape = shape_of(spec)
    if len(shape) < core:
        return np.empty(shape, check_dtype(spec.dtype))
    batch = len(shape) - core
    if batch == 0 and core == 1:
        return np.empty(shape, check_dtype(spec.dtype))
    return np.empty((0,) * max(batch, 1) + shape[batch:], check_dtype(spec.dtype))


def _quiet(call):
    # np.errstate only: it is per thread, where catch_warnings would swap the process's
    # warning filters under other threads' feet
    with np.errstate(all="ignore"):
        return call()


_TOLERANCES = ("rcond", "rtol", "tol")


def _tolerance_shapes(params):
    """(params with each array tolerance, one per matrix, cut to its first value: what a
    probe on one matrix takes; the shapes of those arrays, which broadcast with the stack)."""
    shapes = []
    for name in _TOLERANCES:
        value = params.get(name)
        value = getattr(value, "array", value)  # a FrozenArray param: its array
        if isinstance(value, np.ndarray) and value.ndim:
            shapes.append(value.shape)
            params = {**params, name: value.reshape(-1)[0] if value.size else value.dtype.type(0)}
    return params, shapes


def stacked_infer(function, core_of=_matrix_core):
    """dtype and shape inference for a function on stacks of matrices (see module doc)."""
    def dtypes(*inputs, **params):
        params, _ = _tolerance_shapes(params)
        probe = probe_results(_call, function, inputs, params, fill=1)
        if any(int(np.prod(shape_of(x))) == 0 for x in inputs):
            probe = _quiet(lambda: _as_tuple(function(*empty(inputs), **params)))
        return [check_dtype(np.asarray(r).dtype) for r in probe]

    def empty(inputs):
        cores = core_of(*(shape_of(x) for x in inputs))
        return [_empty_probe(x, c) for x, c in zip(inputs, cores)]

    def shapes(*inputs, **params):
        params, tolerance_shapes = _tolerance_shapes(params)
        probe_results(_call, function, inputs, params, fill=1)  # NumPy's errors first
        shape_list = [shape_of(x) for x in inputs]
        cores = core_of(*shape_list)
        batch = broadcast_shapes(*(s[:max(len(s) - c, 0)] for s, c in zip(shape_list, cores)),
                                 *tolerance_shapes)
        stand_ins = empty(inputs)
        probe_batch = max(a.ndim - c for a, c in zip(stand_ins, cores))
        results = _quiet(lambda: _as_tuple(function(*stand_ins, **params)))
        return [batch + np.shape(r)[probe_batch:] for r in results]

    return shapes, dtypes


def _as_tuple(value):
    return tuple(value) if isinstance(value, tuple) else (value,)


def _call(function, inputs, params):
    return function(*inputs, **params)


# matrix_rank: below 2-d it is one number ---------------------------------------

def rank_infer():
    shapes, dtypes = stacked_infer(LINALG.matrix_rank)

    def rank_shapes(A, **params):
        if len(shape_of(A)) < 2:
            probe_results(_call, LINALG.matrix_rank, [A], _tolerance_shapes(params)[0], fill=1)
            return [()]
        return shapes(A, **params)
    return rank_shapes, dtypes


# norm --------------------------------------------------------------------------

def norm_shapes(x, *, ord=None, axis=None, keepdims=False):
    probe_results(_call, LINALG.norm, [x], dict(ord=ord, axis=axis, keepdims=keepdims), fill=1)
    ndim = len(shape_of(x))
    if axis is None:
        axes = tuple(range(ndim))
    else:
        axes = normalize_axis_tuple(axis if isinstance(axis, tuple) else operator.index(axis),
                                    ndim)
    return [reduced_shape(shape_of(x), tuple(sorted(axes)), keepdims)]


# multi_dot -----------------------------------------------------------------------

def multi_dot_shapes(*arrays):
    probe_results(lambda f, xs, ps: f(xs), LINALG.multi_dot, arrays, {}, fill=1)
    shapes = [shape_of(x) for x in arrays]
    chain = [(1,) + shapes[0] if len(shapes[0]) == 1 else shapes[0], *shapes[1:-1],
             shapes[-1] + (1,) if len(shapes[-1]) == 1 else shapes[-1]]
    for left, right in zip(chain[:-1], chain[1:]):
        if left[-1] != right[0]:
            raise ValueError(f"shapes {left} and {right} not aligned: {left[-1]} (dim 1) != "
                             f"{right[0]} (dim 0)")
    return [(() if len(shapes[0]) == 1 else (chain[0][0],))
            + (() if len(shapes[-1]) == 1 else (chain[-1][-1],))]


def multi_dot_call(function, inputs, params):
    return function(list(inputs), **params)


# lstsq: the residuals' length depends on the rank ---------------------------------

def lstsq_infer(a, b, *, rcond=None):
    """x, the residuals as if the rank were full (the API layer shortens them), rank, s."""
    probe = probe_results(_call, LINALG.lstsq, [a, b], {"rcond": rcond}, fill=1)
    sa, sb = shape_of(a), shape_of(b)
    if len(sa) != 2 or len(sb) not in (1, 2):
        bad = sa if len(sa) != 2 else sb
        raise LINALG.LinAlgError(f"{len(bad)}-dimensional array given. Array must be "
                                 "two-dimensional")
    (m, n), columns = sa, sb[1:]
    if sb[0] != m:
        raise LINALG.LinAlgError("Incompatible dimensions")
    dtypes = [check_dtype(np.asarray(r).dtype) for r in probe]
    shapes = [(n,) + columns, columns or (1,), (), (min(m, n),)]
    return list(zip(shapes, dtypes))


def lstsq_kernel(inputs, outputs, req, *, rcond=None):
    a, b = (np.asarray(v) for v in inputs)
    results = LINALG.lstsq(a, b, rcond=rcond)
    for out, r, value in zip(outputs, req, results):
        value = np.asarray(value)
        if out.shape != value.shape:  # the residuals, empty below full rank: not read
            value = np.zeros(out.shape, out.dtype)
        write_with_req(out, OpReq(r), lambda target, value=value:
                       np.copyto(target, value, casting="unsafe"))


def register_all() -> None:
    stacked = {
        # name: (NumPy function, core dimensions of each input)
        "inv": (LINALG.inv, _matrix_core), "det": (LINALG.det, _matrix_core),
        "slogdet": (LINALG.slogdet, _matrix_core), "solve": (LINALG.solve, _solve_core),
        "cholesky": (LINALG.cholesky, _matrix_core), "eigh": (LINALG.eigh, _matrix_core),
        "eigvalsh": (LINALG.eigvalsh, _matrix_core), "eig": (LINALG.eig, _matrix_core),
        "eigvals": (LINALG.eigvals, _matrix_core), "svd": (LINALG.svd, _matrix_core),
        "svdvals": (LINALG.svdvals, _matrix_core), "qr": (LINALG.qr, _matrix_core),
        "pinv": (LINALG.pinv, _matrix_core), "matrix_power": (LINALG.matrix_power, _matrix_core),
    }
    for name, (function, core_of) in stacked.items():
        shapes, dtypes = stacked_infer(function, core_of)
        numpy_operator(f"linalg.{name}", function, shapes, dtypes=dtypes,
                       complex_hint=f"numpy.linalg.{name}(a.asnumpy())",
                       doc=f"numpy.linalg.{name}, run by NumPy inside the pushed op")
    shapes, dtypes = rank_infer()
    numpy_operator("linalg.matrix_rank", LINALG.matrix_rank, shapes, dtypes=dtypes,
                   doc="numpy.linalg.matrix_rank, run by NumPy inside the pushed op")
    numpy_operator("linalg.norm", LINALG.norm, norm_shapes, dtypes="probe", fill=1,
                   doc="numpy.linalg.norm, run by NumPy inside the pushed op")
    numpy_operator("linalg.multi_dot", LINALG.multi_dot, multi_dot_shapes, dtypes="probe",
                   fill=1, call=multi_dot_call,
                   doc="numpy.linalg.multi_dot, run by NumPy inside the pushed op")
    add_operator(numpy_backed("linalg.lstsq", num_inputs=2, num_outputs=4, kind="other",
                          infer=lstsq_infer,
                          doc="numpy.linalg.lstsq, run by NumPy inside the pushed op")
                 .set_kernel("cpu", lstsq_kernel))
