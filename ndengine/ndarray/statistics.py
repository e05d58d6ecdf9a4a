"""Statistics, sorting and searching: module functions and NDArray methods with NumPy's names,
parameters, defaults, dtypes and errors, each a pushed op (``ops.families.statistics``, ``ops.families.sorting``).

They return at once: the op runs when its inputs are ready. The exceptions are the functions
whose result SIZE depends on the values, which wait for their input before they return:
``nonzero``, ``argwhere``, ``flatnonzero``, ``where(condition)``, ``unique``, ``bincount``
and ``histogram`` with a bins rule ('auto', 'fd', ...). Each pushes a small op that measures
the size (``count_nonzero``, ``unique_count``, ...), waits for it, then pushes the op itself.
``kth`` given as an NDArray is read at the call (NumPy checks it against the length there).

Array arguments (``where=``, ``weights=``, ``prepend=``, ``sorter=``, ``q`` as an NDArray...)
are inputs of the op: read when it runs, as every input is. NumPy arrays and lists given for
``q`` or ``bins`` are copied at the call, so NumPy's checks of their values run at the call.
``overwrite_input=`` is taken and ignored (NumPy's permission to scramble the input, which
an op that only reads its input never uses).
"""
import operator

import numpy as np

from .. import ops
from ..core import NDArray, as_operand, from_numpy, invoke
from .functions import FUNCTIONS as _PLAIN_FUNCTIONS
from .arguments import check_out, context_of, output_array
from .signatures import signature_of, signed_function

__all__ = ["FUNCTIONS", "METHODS"]

_NO_VALUE = np._NoValue  # NumPy's "not given" default (shown as <no value>)

_REDUCE = "a, axis=None, out=None, keepdims=_NoValue"
_SUM = "a, axis=None, dtype=None, out=None, keepdims=_NoValue, initial=_NoValue, where=_NoValue"
_MEAN = "a, axis=None, dtype=None, out=None, keepdims=_NoValue, *, where=_NoValue"
_MAX = "a, axis=None, out=None, keepdims=_NoValue, initial=_NoValue, where=_NoValue"
_STD = ("a, axis=None, dtype=None, out=None, ddof=0, keepdims=_NoValue, *, where=_NoValue, "
        "mean=_NoValue, correction=_NoValue")
_ANY = "a, axis=None, out=None, keepdims=_NoValue, *, where=_NoValue"
_QUANTILE = ("a, q, axis=None, out=None, overwrite_input=False, method='linear', "
             "keepdims=False, *, weights=None")
_NANQUANTILE = _QUANTILE.replace("keepdims=False", "keepdims=_NoValue")
_CUMSUM = "a, axis=None, dtype=None, out=None"
_CUMULATIVE = "x, /, *, axis=None, dtype=None, out=None, include_initial=False"
_SORT = "a, axis=-1, kind=None, order=None, *, stable=None"
_PARTITION = "a, kth, axis=-1, kind='introselect', order=None"

# name -> (NumPy's parameter list, how the call is made)
TABLE = {
    "any": (_ANY, "numpy"), "all": (_ANY, "numpy"),
    "nansum": (_SUM, "numpy"), "nanprod": (_SUM, "numpy"), "nanmean": (_MEAN, "numpy"),
    "nanstd": (_STD, "numpy"), "nanvar": (_STD, "numpy"),
    "nanmin": (_MAX, "numpy"), "nanmax": (_MAX, "numpy"),
    "nanargmin": ("a, axis=None, out=None, *, keepdims=_NoValue", "numpy"),
    "nanargmax": ("a, axis=None, out=None, *, keepdims=_NoValue", "numpy"),
    "ptp": (_REDUCE, "numpy"),
    "count_nonzero": ("a, axis=None, *, keepdims=False", "numpy"),
    "median": ("a, axis=None, out=None, overwrite_input=False, keepdims=False", "numpy"),
    "nanmedian": ("a, axis=None, out=None, overwrite_input=False, keepdims=_NoValue",
                  "numpy"),
    "quantile": (_QUANTILE, "numpy"), "percentile": (_QUANTILE, "numpy"),
    "nanquantile": (_NANQUANTILE, "numpy"), "nanpercentile": (_NANQUANTILE, "numpy"),
    "average": ("a, axis=None, weights=None, returned=False, *, keepdims=_NoValue", "numpy"),
    "cumsum": (_CUMSUM, "numpy"), "cumprod": (_CUMSUM, "numpy"),
    "nancumsum": (_CUMSUM, "numpy"), "nancumprod": (_CUMSUM, "numpy"),
    "cumulative_sum": (_CUMULATIVE, "numpy"), "cumulative_prod": (_CUMULATIVE, "numpy"),
    "diff": ("a, n=1, axis=-1, prepend=_NoValue, append=_NoValue", "numpy"),
    "histogram": ("a, bins=10, range=None, density=None, weights=None", "histogram"),
    "bincount": ("x, /, weights=None, minlength=0", "bincount"),
    "digitize": ("x, bins, right=False", "numpy"),
    "sort": (_SORT, "numpy"), "argsort": (_SORT, "numpy"),
    "partition": (_PARTITION, "numpy"), "argpartition": (_PARTITION, "numpy"),
    "searchsorted": ("a, v, side='left', sorter=None", "numpy"),
    "lexsort": ("keys, axis=-1", "lexsort"),
    "unique": ("ar, return_index=False, return_inverse=False, return_counts=False, "
               "axis=None, *, equal_nan=True, sorted=True", "unique"),
    "nonzero": ("a", "sized"), "argwhere": ("a", "sized"), "flatnonzero": ("a", "sized"),
    "where": ("condition, x=None, y=None, /", "where"),
    # the plain reductions, now with NumPy's where=, initial=, mean=, correction=
    "sum": (_SUM, "extended"), "prod": (_SUM, "extended"), "mean": (_MEAN, "extended"),
    "max": (_MAX, "extended"), "min": (_MAX, "extended"),
    "std": (_STD, "extended"), "var": (_STD, "extended"),
}

# How each parameter reaches the op, by name (anything else is a plain param):
_ARRAYS = ("a", "x", "ar")                 # the data: an NDArray input (a scalar: 0-d)
_OPERANDS = ("v",)                          # a positional input; Python scalars stay scalars
_OPTIONAL_INPUTS = ("where", "weights", "mean", "sorter", "prepend", "append")
_VALUES = ("q", "bins")                     # an input if an NDArray, else a param (a copy)
_DROPPED = ("overwrite_input",)
_EXTRAS = ("initial", "where", "mean", "correction")  # what the plain reductions lack


def _array(value, ctx):
    if isinstance(value, NDArray):
        return value
    return from_numpy(np.asarray(value), ctx)


def _value_param(name, value):
    """q or bins given as values: Python and NumPy scalars and strings as they are, arrays
    and lists as a NumPy copy (read now, as NumPy reads them at the call)."""
    if isinstance(value, (bool, int, float, str, np.generic)) or value is None:
        return value
    return np.array(value)


def _plain_param(name, value):
    if name == "dtype":
        return ops.check_dtype(value)
    if name == "kth":
        if isinstance(value, NDArray):
            value = value.asnumpy()  # read at the call (waits): NumPy checks it there
        return value if isinstance(value, (int, np.integer)) else np.array(value)
    if name == "range" and isinstance(value, list):
        return tuple(value)
    return value


def _operation(name, args, extra_params=None):
    """The op's inputs and params (and the out= array) for NumPy's arguments ``args``."""
    out = output_array(args.pop("out", None), name) if "out" in args else None
    ctx = context_of(args.values(), out)
    inputs, arrays, params = [], [], {}
    for param, value in args.items():
        if value is _NO_VALUE:
            continue
        if param in _ARRAYS:
            inputs.insert(len(inputs) - len(arrays), _array(value, ctx))
        elif param in _OPERANDS:
            inputs.insert(len(inputs) - len(arrays), as_operand(value, ctx))
        elif param in _OPTIONAL_INPUTS:
            if value is None and param in ("weights", "sorter"):
                continue  # NumPy's default
            if value is None:
                params[param] = None  # what NumPy makes of it (where=None: no element)
                continue
            if param == "where" and value is True:
                continue  # NumPy's default: every element
            inputs.append(as_operand(value, ctx))
            arrays.append(param)
        elif param in _VALUES and isinstance(value, NDArray):
            inputs.append(value)
            arrays.append(param)
        elif param in _VALUES:
            params[param] = _value_param(param, value)
        elif param in _DROPPED or (param == "dtype" and value is None):
            continue
        else:
            params[param] = _plain_param(param, value)
    if arrays:
        params["arrays"] = tuple(arrays)
    if extra_params:
        params.update(extra_params)
    return inputs, params, out, ctx


def _push(op_name, inputs, params, out, ctx):
    op = ops.get(op_name)
    if out is None:
        return invoke(op, inputs, params, ctx=ctx)
    check_out(out, ctx, op_name)
    params["out_dtype"] = out.dtype  # NumPy writes (and may accumulate) in out's dtype
    invoke(op, inputs, params, out=out, ctx=ctx)
    return [out]


def _results(outputs):
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def _call_numpy(name, args, op_name=None, extra_params=None):
    return _results(_push(op_name or name, *_operation(name, args, extra_params)))


def _call_extended(name, args):
    """sum & co.: the plain reduction unless NumPy's where/initial/mean/correction is given."""
    for key in _EXTRAS:  # a loop, not all(): this runs on every reduction
        value = args.get(key, _NO_VALUE)
        if value is not _NO_VALUE and not (key == "where" and value is True):
            return _call_numpy(name, args, f"{name}_where")
    plain = {k: v for k, v in args.items() if v is not _NO_VALUE and k not in _EXTRAS}
    return _PLAIN_FUNCTIONS[name](**plain)


def _measured(op_name, inputs, params, ctx):
    """A size measured by a pushed op: waits for it (and so for the inputs)."""
    return int(invoke(ops.get(op_name), inputs, params, ctx=ctx)[0].item())


def _call_sized(name, args):
    """nonzero, argwhere, flatnonzero: sized by count_nonzero (waits for the input)."""
    inputs, params, _, ctx = _operation(name, args)
    op = ops.get(name)
    op.infer(*inputs, count=0)  # NumPy's errors (nonzero of a 0-d array) before the wait
    count = _measured("count_nonzero", inputs, {}, ctx)
    outputs = invoke(op, inputs, {"count": count}, ctx=ctx)
    return tuple(outputs) if name == "nonzero" else outputs[0]


def _call_unique(name, args):
    """Sized by unique_count (waits for the input)."""
    inputs, params, _, ctx = _operation(name, args)
    op = ops.get(name)
    op.infer(*inputs, count=0, **params)  # NumPy's errors, before the wait
    count = _measured("unique_count", inputs, {k: params[k] for k in ("axis", "equal_nan")},
                      ctx)
    return _results(invoke(op, inputs, {**params, "count": count}, ctx=ctx))


def _call_bincount(name, args):
    """Sized by bincount_length (waits for x)."""
    inputs, params, _, ctx = _operation(name, args)
    op = ops.get(name)
    op.infer(*inputs, length=0, **params)  # NumPy's errors for dtypes, shapes, minlength
    length = _measured("bincount_length", inputs[:1], {"minlength": params["minlength"]}, ctx)
    return invoke(op, inputs, {**params, "length": length}, ctx=ctx)[0]


def _call_histogram(name, args):
    """bins a rule ('auto', 'fd', ...): sized by histogram_bin_count (waits for the input)."""
    if not isinstance(args["bins"], str):
        return _call_numpy(name, args)
    inputs, params, _, ctx = _operation(name, args)
    op = ops.get(name)
    op.infer(*inputs, bin_count=0, **params)  # NumPy's errors, before the wait
    sizing = {k: v for k, v in params.items() if k in ("bins", "range", "arrays")}
    count = _measured("histogram_bin_count", inputs, sizing, ctx)
    return tuple(invoke(op, inputs, {**params, "bin_count": count}, ctx=ctx))


def _call_lexsort(name, args):
    keys, axis = args["keys"], args["axis"]
    sequence = isinstance(keys, (list, tuple))
    ctx = context_of(keys if sequence else (keys,))
    inputs = [_array(k, ctx) for k in keys] if sequence else [_array(keys, ctx)]
    return invoke(ops.get(name), inputs, {"axis": axis, "sequence": sequence}, ctx=ctx)[0]


def _call_where(name, args):
    """where(condition): nonzero(condition); where(condition, x, y): the element-wise op."""
    condition, x, y = args["condition"], args["x"], args["y"]
    if x is None and y is None:
        return _call_sized("nonzero", {"a": condition})
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    return _PLAIN_FUNCTIONS["where"](condition, x, y)


_CALLERS = {"numpy": _call_numpy, "extended": _call_extended, "sized": _call_sized,
            "unique": _call_unique, "bincount": _call_bincount,
            "histogram": _call_histogram, "lexsort": _call_lexsort, "where": _call_where}

_WAITS = ("\n\nWaits for its input before it returns: the size of its result depends on "
          "the values.")


def _doc(name, family):
    doc = f"NumPy's ``numpy.{name}``, as a pushed op."
    if family in ("sized", "unique", "bincount") or name == "where":
        doc += _WAITS + (" (Only with one argument.)" if name == "where" else "")
    elif family == "histogram":
        doc += _WAITS.replace("depends on the values", "depends on the values when bins "
                              "is a rule ('auto', 'fd', ...)")
    elif "kth" in TABLE[name][0]:
        doc += "\n\nkth given as an NDArray is read at the call (waits for it)."
    return doc


def _plain_shortcut(name, parameters):
    """sum & co.'s first line: with none of NumPy's extras (nor out, dtype), an NDArray goes
    straight to the plain reduction (the dict of arguments and the extras' check cost as
    much as the rest of the call)."""
    names = signature_of(parameters).parameters
    condition = " and ".join(["type(a) is NDArray"] + [
        f"{n} is {'None' if n in ('dtype', 'out') else '_NoValue'}"
        for n in ("dtype", "out", "initial", "where", "mean", "correction") if n in names])
    arguments = "axis=axis, keepdims=False if keepdims is _NoValue else keepdims"
    if "ddof" in names:
        arguments += ", ddof=ddof"
    return condition, f"plain(a, {arguments})"


def _function(name, parameters, family):
    shortcut = scope = None
    if family == "extended":
        shortcut = _plain_shortcut(name, parameters)
        scope = {"NDArray": NDArray, "_NoValue": _NO_VALUE, "plain": _PLAIN_FUNCTIONS[name]}
    return signed_function(name, parameters, _CALLERS[family], lead=(name,), by_name=True,
                           shortcut=shortcut, scope=scope, doc=_doc(name, family))


FUNCTIONS = {name: _function(name, parameters, family)
             for name, (parameters, family) in TABLE.items()}


# ---------------------------------------------------------------- methods
def _sort_in_place(self, axis=-1, kind=None, order=None, *, stable=None):
    """NumPy's ``ndarray.sort``: sorts the array in place (a pushed write); returns None."""
    axis = operator.index(axis)  # NumPy's TypeError for axis=None
    params = {"axis": axis, "kind": kind, "order": order, "stable": stable}
    invoke(ops.get("sort"), [self], params, out=self)


def _partition_in_place(self, kth, axis=-1, kind="introselect", order=None):
    """NumPy's ``ndarray.partition``: partitions the array in place (a pushed write)."""
    axis = operator.index(axis)
    params = {"kth": _plain_param("kth", kth), "axis": axis, "kind": kind, "order": order}
    invoke(ops.get("partition"), [self], params, out=self)


# the module functions that are NDArray methods too (``self`` is their first argument)
_METHOD_NAMES = ("any", "all", "cumsum", "cumprod", "argsort", "argpartition", "nonzero",
                 "searchsorted", "sum", "prod", "mean", "max", "min", "std", "var")
METHODS = {name: FUNCTIONS[name] for name in _METHOD_NAMES}
METHODS["sort"] = _sort_in_place
METHODS["partition"] = _partition_in_place


def install_methods():
    for name, method in METHODS.items():
        setattr(NDArray, name, method)


install_methods()
