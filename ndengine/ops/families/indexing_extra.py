"""NumPy's masked writes, select and the NumPy 2 vector-matrix products as ops: putmask, place
and copyto (in place, run by NumPy inside the pushed op, as ``put``), select, vecdot,
matvec and vecmat (one op each, NumPy's own function in the kernel; the three products
take exactly two inputs, as NumPy's ufuncs do, so ``numpy.vecdot`` on NDArrays pushes
the op through NDArray's ``__array_ufunc__``).

The in-place ops come from ``selection.in_place_operator``: NumPy's dtype checks run at the
call on one-element stand-ins, the shape checks below on the real shapes, with NumPy's
messages; what depends on values (place's empty ``vals`` where ``mask`` holds a True)
raises when the op runs. select takes its conditions, choices and default as one list of
inputs (``count`` conditions first); the product ops see their core dimensions last (the
module functions move ``axis``/``axes`` there before pushing them).
"""
from __future__ import annotations

import math

import numpy as np

from ..shapes import broadcast_shapes, shape_of
from ..registry import add_operator, numpy_backed
from .numpy_functions import FUNCTIONS, NumpyFunction
from .selection import in_place_operator

__all__ = ["register_all"]


def _same_size(name):
    """putmask's and place's rule: the mask has as many elements as the array."""
    def shapes(target, mask, values):
        if math.prod(shape_of(target)) != math.prod(shape_of(mask)):
            raise ValueError(f"{name}: mask and data must be the same size")
        return [shape_of(target)]
    return shapes


def _copyto_shapes(dst, src, where, casting="same_kind"):
    target = shape_of(dst)
    for what, value in (("input array", src), ("where mask", where)):
        shape = shape_of(value)
        try:
            fits = broadcast_shapes(shape, target) == target
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(f"could not broadcast {what} from shape {shape} into shape "
                             f"{target}")
    return [target]


def _copyto(dst, src, where, casting="same_kind"):
    np.copyto(dst, src, casting=casting, where=where)


def _select(*arrays, count):
    """numpy.select over the op's inputs: ``count`` conditions, as many choices, default."""
    return np.select(list(arrays[:count]), list(arrays[count:2 * count]), arrays[-1])


def _select_shapes(shapes, params):
    """NumPy's: the conditions' broadcast shape, broadcast with the choices' where those
    have dimensions."""
    ordered = list(shapes.values())
    count = params["count"]
    conditions = broadcast_shapes(*ordered[:count])
    choices = broadcast_shapes(*ordered[count:])
    return [conditions if not choices else broadcast_shapes(conditions, choices)]


def _vecdot_shapes(shapes, params):
    return [broadcast_shapes(shapes["x1"][:-1], shapes["x2"][:-1])]


def _matvec_shapes(shapes, params):
    matrix, vector = shapes["x1"], shapes["x2"]
    return [broadcast_shapes(matrix[:-2], vector[:-1]) + matrix[-2:-1]]


def _vecmat_shapes(shapes, params):
    vector, matrix = shapes["x1"], shapes["x2"]
    return [broadcast_shapes(vector[:-1], matrix[:-2]) + matrix[-1:]]


# names of select's inputs: conditions, choices and the default, in order
_SELECT_NAMES = tuple(f"input{i}" for i in range(2049))


def _select_function():
    return NumpyFunction("select", _select, _select_shapes, positional=_SELECT_NAMES,
                         doc="numpy.select(condlist, choicelist, default): conditions, "
                             "choices, default as inputs")


def _register_product(name, rule):
    """NumPy's gufunc ``name`` as an op of exactly two inputs: the ufunc's own arity, which
    NDArray's ``__array_ufunc__`` (``numpy.vecdot(x, y)``) and ``ndengine.vecdot.types``
    rely on."""
    function = NumpyFunction(name, getattr(np, name), rule, positional=("x1", "x2"),
                             takes_out=True, doc=f"numpy.{name}(x1, x2): core dimensions "
                                                 "last")
    op = numpy_backed(name, num_inputs=2, num_outputs=1, kind="other", infer=function.infer,
                      doc=function.doc)
    op.set_kernel("cpu", function.kernel)
    FUNCTIONS[name] = function
    add_operator(op)


def register_all() -> None:
    in_place_operator("putmask", np.putmask, _same_size("putmask"))
    in_place_operator("place", np.place, _same_size("place"))
    in_place_operator("copyto", _copyto, _copyto_shapes)
    _select_function().register()
    for name, rule in (("vecdot", _vecdot_shapes), ("matvec", _matvec_shapes),
                       ("vecmat", _vecmat_shapes)):
        _register_product(name, rule)
