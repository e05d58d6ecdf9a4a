"""Module functions that are one pushed op each, run by NumPy's own function inside the op
(ops.families.shaping, ops.families.selection, ops.families.products): tile, repeat, roll, pad, tril, triu, diag, diagonal,
trace, indices, take, take_along_axis, choose, put, put_along_axis, compress, vdot, inner,
outer, tensordot, einsum, kron; and the NDArray methods NumPy's arrays have for them.

``PUSHED`` is the table (signatures.numpy_function gives each NumPy's parameter list). Nothing
waits at the call, except where the output's shape depends on values: an NDArray given as
``repeats``, ``reps``, ``pad_width`` or ``indices_or_sections``, or as compress's
``condition``, is read at the call. Index arrays given as NDArrays are read when the op runs
(an out-of-bounds index raises NumPy's error at the wait); given as lists or NumPy arrays,
they are checked and copied at the call.
"""
import math
from typing import Callable, NamedTuple

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ..core import NDArray
from ..ops.families.indexing import outside_bounds as _outside
from ..ops.families.selection import along_axis_shape
from ..ops.families.shaping import repeat_counts
from .shaping import SHAPING, ordered_view
from .arguments import array_of, first_context, frozen, operand_of, push, read_values
from .signatures import method, numpy_function

__all__ = ["PUSHED"]


class Row(NamedTuple):
    numpy: Callable               # NumPy's function: the parameter list, the kernel
    arrays: tuple = ()            # parameters that are the op's inputs ("*x": a sequence)
    shape_params: tuple = ()      # parameters read at the call (NDArrays waited for)
    array_params: tuple = ()      # parameters whose NDArray values become inputs too
    check: Callable = None        # call-time checks; may replace arguments (index snapshots)
    result: Callable = None       # outputs -> the return value (default: the one output)
    in_place: bool = False        # writes into its first input, returns None
    scalars: tuple = ()           # parameters whose Python scalars stay (weak) scalars
    doc: str = "Pushed as one op; NumPy's function runs inside it."


# call-time checks of index arrays given as values --------------------------------

def _known(value, lists_as_intp=False):
    """A list or NumPy index array as its snapshot; None for an NDArray (read at the run).
    ``lists_as_intp``: take and put convert a list or a scalar, NumPy's scalars among them
    (not an array), straight to intp, floats and all (an array of floats is their
    TypeError)."""
    if isinstance(value, NDArray):
        return None
    known = np.array(value)
    if lists_as_intp and not isinstance(value, np.ndarray):
        return known.astype(np.intp)
    return known


def _shape(value):
    return value.shape if isinstance(value, NDArray) else np.shape(value)


def _checked_length(a, indices, axis, along):
    """The length the indices must lie within, or None where NumPy checks nothing: its
    take checks only when some element precedes the axis, take_along_axis only when the
    (broadcast) result is not empty; a bad axis: the op's inference raises NumPy's error."""
    shape = _shape(a) or (1,)
    try:
        if along:
            stand_in = np.broadcast_to(np.empty((), bool), shape)  # no memory
            if math.prod(along_axis_shape(stand_in, indices, axis)) == 0:
                return None
        elif axis is not None and math.prod(shape[:normalize_axis_index(axis,
                                                                       len(shape))]) == 0:
            return None
        if axis is None:
            return math.prod(shape)
        return shape[normalize_axis_index(axis, len(shape))]
    except (TypeError, ValueError, IndexError):
        return None


def _check_bounds(indices, length, axis):
    if length is None or indices.size == 0 or indices.dtype.kind not in "iuf":
        return
    if indices.dtype.kind in "iu" and not _outside(indices, length):
        return  # (one compiled pass; the two reductions below only name the bad index)
    low, high = indices.min(), indices.max()
    bad = high if high >= length else (low if low < -length else None)
    if bad is not None:
        raise IndexError(f"index {int(bad)} is out of bounds for axis "
                         f"{0 if axis is None else axis} with size {length}")


def _index_check(array_name, index_name, axis_name=None, along=False, lists_as_intp=False):
    def check(arguments):
        known = _known(arguments[index_name], lists_as_intp)
        if known is None:
            return
        arguments[index_name] = known
        if np.size(arguments.get("v", 1)) == 0:  # put with no values puts nothing
            return
        if along or arguments.get("mode", "raise") == "raise":
            axis = arguments.get(axis_name) if axis_name else None
            length = _checked_length(arguments[array_name], known, axis, along)
            _check_bounds(known, length, axis)
    return check


def _check_choices(arguments):
    known = _known(arguments["a"])
    if known is None:
        return
    arguments["a"] = known
    choices = arguments["choices"]
    count = len(choices)
    if (arguments["mode"] == "raise" and known.size and known.dtype.kind in "iu"
            and (known.min() < 0 or known.max() >= count)):
        raise ValueError("invalid entry in choice array")


def _convert_repeats(arguments):
    # NumPy's conversion, before the counts become a tuple of Python numbers (the op's
    # param), which would lose an array's dtype: a float array is NumPy's TypeError
    arguments["repeats"] = repeat_counts(read_values(arguments["repeats"]))


def _check_target(arguments):
    if not isinstance(arguments.get("a", arguments.get("arr")), NDArray):
        raise TypeError("put writes into an NDArray (ndengine writes only into NDArrays); "
                        "for a NumPy array use numpy.put")


def _checks(*checks):
    def check(arguments):
        for one in checks:
            one(arguments)
    return check


# the table's implementation ------------------------------------------------------------

def _sequence(value):
    return list(value) if not isinstance(value, NDArray) else [value[i] for i in
                                                               range(len(value))]


def _implementation(name, row):
    def implementation(arguments):
        out = arguments.pop("out", None)
        if row.check is not None:
            row.check(arguments)
        ctx = first_context(*(arguments[n.lstrip("*")] for n in row.arrays))
        inputs = []
        for param in row.arrays:
            param_name = param.lstrip("*")
            convert = operand_of if param_name in row.scalars else array_of
            if param.startswith("*"):
                inputs += [convert(x, ctx) for x in _sequence(arguments.pop(param_name))]
            else:
                inputs.append(convert(arguments.pop(param_name), ctx))
        keyword_inputs = tuple(n for n in row.array_params if isinstance(arguments.get(n),
                                                                          NDArray))
        inputs += [arguments.pop(n) for n in keyword_inputs]
        for param in row.shape_params:
            arguments[param] = read_values(arguments[param])
        params = {k: frozen(v) for k, v in arguments.items()}
        if keyword_inputs:
            params["keyword_inputs"] = keyword_inputs
        if row.in_place:
            push(name, inputs, params, out=inputs[0], name=name, ctx=ctx)
            return None
        outputs = push(name, inputs, params, out=out, name=name, ctx=ctx)
        return row.result(outputs, arguments) if row.result else outputs[0]
    return implementation


def _indices_result(outputs, arguments):
    return tuple(outputs) if arguments["sparse"] else outputs[0]


def _einsum(*operands, out=None, optimize=False, **kwargs):
    unknown = sorted(set(kwargs) - {"dtype", "order", "casting"})
    if unknown:
        raise TypeError(f"Did not understand the following kwargs: {unknown}")
    if not operands:
        raise ValueError("must specify the einstein sum subscripts string and at least one "
                         "operand, or at least one operand and its corresponding subscripts "
                         "list")
    if isinstance(operands[0], str):
        subscripts, arrays = operands[0], operands[1:]
    else:  # interleaved: operand, sublist, ..., [output sublist]
        pairs = len(operands) // 2
        arrays = operands[0:2 * pairs:2]
        subscripts = frozen(operands[1:2 * pairs:2] + operands[2 * pairs:])
    ctx = first_context(*arrays)
    if isinstance(out, NDArray) and kwargs.get("dtype") is None:
        kwargs["dtype"] = out.dtype  # NumPy computes in out's dtype (under ``casting``)
    params = {"subscripts": subscripts, "optimize": frozen(optimize),
              **{k: v for k, v in kwargs.items() if v is not None}}
    return push("einsum", [array_of(x, ctx) for x in arrays], params, out=out,
                name="einsum", ctx=ctx)[0]


def _compress(condition, a, axis=None, out=None):
    # the output's length is the count of True: an NDArray condition is read here (a wait)
    condition = np.asarray(read_values(condition))
    if condition.ndim != 1:
        raise ValueError("condition must be a 1-d array")
    return PUSHED["take"](a, np.nonzero(condition)[0], axis=axis, out=out)


_TAKE_CHECK = _index_check("a", "indices", "axis", lists_as_intp=True)
_SHAPE_READ = ("Pushed as one op; an NDArray ``{}`` is read at the call (the output's shape "
               "depends on its values).")
_INDEXED = ("Pushed as one op. Index arrays given as NDArrays are read when it runs (an "
            "out-of-bounds index raises NumPy's error at the wait); lists and NumPy arrays are "
            "checked and copied at the call.")
_ALONG_CHECK = _index_check("arr", "indices", "axis", along=True)

_ROWS = {
    "tile": Row(np.tile, ("A",), shape_params=("reps",), doc=_SHAPE_READ.format("reps")),
    "repeat": Row(np.repeat, ("a",), shape_params=("repeats",), check=_convert_repeats,
                  doc=_SHAPE_READ.format("repeats")),
    "roll": Row(np.roll, ("a",), array_params=("shift",)),
    "pad": Row(np.pad, ("array",), shape_params=("pad_width",),
               array_params=("constant_values", "end_values", "stat_length"),
               doc=_SHAPE_READ.format("pad_width")),
    "tril": Row(np.tril, ("m",)), "triu": Row(np.triu, ("m",)), "diag": Row(np.diag, ("v",)),
    "diagonal": Row(np.diagonal, ("a",)), "trace": Row(np.trace, ("a",)),
    "indices": Row(np.indices, shape_params=("dimensions",), result=_indices_result,
                   doc=_SHAPE_READ.format("dimensions")),
    "take": Row(np.take, ("a", "indices"), check=_TAKE_CHECK, doc=_INDEXED),
    "take_along_axis": Row(np.take_along_axis, ("arr", "indices"), check=_ALONG_CHECK,
                           doc=_INDEXED),
    "choose": Row(np.choose, ("a", "*choices"), check=_check_choices, scalars=("choices",),
                  doc=_INDEXED),
    "put": Row(np.put, ("a", "ind", "v"), in_place=True, scalars=("v",),
               check=_checks(_check_target, _index_check("a", "ind", lists_as_intp=True)),
               doc=_INDEXED + " Writes into ``a`` (an NDArray) in place."),
    "put_along_axis": Row(np.put_along_axis, ("arr", "indices", "values"), in_place=True,
                          scalars=("values",), check=_checks(_check_target, _ALONG_CHECK),
                          doc=_INDEXED + " Writes into ``arr`` (an NDArray) in place."),
    "vdot": Row(np.vdot, ("a", "b")), "inner": Row(np.inner, ("a", "b")),
    "outer": Row(np.outer, ("a", "b")), "tensordot": Row(np.tensordot, ("a", "b")),
    "kron": Row(np.kron, ("a", "b")),
}

PUSHED = {name: numpy_function(name, row.numpy, _implementation(name, row), row.doc,
                               by_name=True)
          for name, row in _ROWS.items()}
PUSHED["einsum"] = numpy_function("einsum", np.einsum, _einsum,
                                  "Pushed as one op; always a new array (NumPy's einsum may "
                                  "return a view).")
PUSHED["compress"] = numpy_function("compress", np.compress, _compress,
                                    "A pushed take; an NDArray ``condition`` is read at the "
                                    "call (the output's length is its count of True).")


# NDArray methods ---------------------------------------------------------------------

def _flatten(self, order="C"):
    """A copy of the array as 1-d, in ``order`` (numpy.ndarray.flatten)."""
    return ordered_view(self, order).copy().reshape(-1)


def _install_methods():
    functions = {**SHAPING, **PUSHED}
    for name in ("repeat", "take", "ravel", "swapaxes", "diagonal", "trace", "choose",
                 "compress"):
        setattr(NDArray, name, method(functions[name], "a"))
    NDArray.put = method(PUSHED["put"], "a", renames={"indices": "ind", "values": "v"})
    NDArray.flatten = _flatten


_install_methods()
