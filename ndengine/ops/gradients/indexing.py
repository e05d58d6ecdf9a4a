"""Gradient rules of indexing and selection (take, writes by index, put, choose, bincount,
sort, partition) and NumPy's ufunc methods: ``INDEXING`` (conventions:
ops/gradients/rules.py)."""
from __future__ import annotations

import math

import numpy as np

from ..families.indexing import has_index_inputs
from .common import _one, _is_array, _arange, _scatter_along, _wrapped, _value_gradient
from .elementwise import ELEMENTWISE
from .reductions import REDUCTIONS, _extreme, _prod, _sum

__all__ = ["INDEXING"]


def _take_index(f, grads, inputs, outputs, params):
    """x[key]: g added at key into zeros (repeats add up: ``numpy.add.at``, assign_index's
    ``accumulate``); the key's index inputs take no gradient."""
    (x, *indices), g = inputs, grads[0]
    zeros = f.zeros(x.shape, g.dtype, g)
    return [f("assign_index", zeros, g, *indices, key=params["key"], accumulate=True),
            *[None] * len(indices)]


def _take(f, grads, inputs, outputs, params):
    a, indices = inputs
    g = grads[0]
    axis, mode = params.get("axis"), params.get("mode", "raise")
    if axis is None or not a.shape:
        n = math.prod(a.shape)
        index = _wrapped(f, indices, n, mode)
        return [f.reshape(_scatter_along(f, f.reshape(g, (-1,)), f.reshape(index, (-1,)),
                                         (n,), 0), a.shape), None]
    axis %= len(a.shape)
    before, n = math.prod(a.shape[:axis]), a.shape[axis]
    after = math.prod(a.shape[axis + 1:])
    count = math.prod(indices.shape)
    index = f.reshape(_wrapped(f, indices, n, mode), (1, count, 1))
    grad = _scatter_along(f, f.reshape(g, (before, count, after)), index,
                          (before, n, after), 1)
    return [f.reshape(grad, a.shape), None]


def _take_along_axis(f, grads, inputs, outputs, params):
    arr, indices = inputs
    g, axis = grads[0], params.get("axis", -1)
    if axis is None:
        n = math.prod(arr.shape)
        grad = _scatter_along(f, g, _wrapped(f, indices, n), (n,), 0)
        return [f.reshape(grad, arr.shape), None]
    axis %= len(arr.shape)
    index = _wrapped(f, indices, arr.shape[axis])
    return [_scatter_along(f, g, index, tuple(arr.shape), axis), None]


def _advanced(key):
    """The key has an integer index array (a position may be written twice)."""
    parts = key if isinstance(key, tuple) else (key,)
    return has_index_inputs(key) or any(
        isinstance(k, np.ndarray) and k.dtype.kind in "iu" for k in parts)


def _last_writes(f, region_grad, written):
    """Where an index repeats, NumPy keeps the last write: ``written(ids)`` writes each
    value's number (ids, shaped as the region) and reads the region back; a value whose
    number survived gets its gradient, the others none."""
    ids = f.reshape(_arange(f, math.prod(region_grad.shape), region_grad),
                    tuple(region_grad.shape))
    return f("where", f("equal", written(ids), ids), region_grad, 0)


def _assign_index(f, grads, inputs, outputs, params):
    """target[key] = value: the target's gradient is g with the region zeroed, the
    value's g's region (summed to the value's shape); with ``accumulate`` (target[key] +=
    value, repeats adding up) the target's is g. The key's index inputs take none."""
    (target, value, *indices), g, key = inputs, grads[0], params["key"]

    def region_of(a):
        return f("take_index", a, *indices, key=key)
    dv = None
    if _is_array(value):
        region = region_of(g)
        if _advanced(key) and not params.get("accumulate"):
            region = _last_writes(f, region, lambda ids: region_of(f(
                "assign_index", f.zeros(g.shape, ids.dtype, g), ids, *indices, key=key)))
        dv = _value_gradient(f, region, value)
    dt = None
    if _is_array(target):
        dt = g if params.get("accumulate") else f("assign_index", g, 0, *indices, key=key)
    return [dt, dv, *[None] * len(indices)]


def _put(f, grads, inputs, outputs, params):
    """numpy.put(a, ind, v): a.flat[ind] = v, v repeated as needed."""
    (_, ind, v), g = inputs, grads[0]
    mode = params.get("mode", "raise")
    da = f("put", g, ind, 0, mode=mode)
    if not _is_array(v):
        return [da, None, None]
    size, count = math.prod(v.shape), math.prod(ind.shape)
    flat_ind = f.reshape(ind, (-1,))
    taken = _last_writes(f, f("take", f.reshape(g, (-1,)), flat_ind, mode=mode), lambda ids: f(
        "take", f("put", f.zeros((math.prod(g.shape),), ids.dtype, g), flat_ind, ids,
                  mode=mode), flat_ind, mode=mode))
    if size == count:
        dv = f.reshape(taken, v.shape)
    else:  # v cycles: v.flat[i % v.size] went to ind[i]
        source = f("mod", _arange(f, count, g), max(size, 1))
        dv = f.reshape(f("bincount", source, taken, arrays=("weights",), minlength=size,
                         length=size), v.shape)
    return [da, None, dv]


def _put_along_axis(f, grads, inputs, outputs, params):
    (_, indices, values), g = inputs, grads[0]
    axis = params["axis"]
    taken = _last_writes(f, f("take_along_axis", g, indices, axis=axis), lambda ids: f(
        "take_along_axis", f("put_along_axis", f.zeros(g.shape, ids.dtype, g), indices, ids,
                             axis=axis), indices, axis=axis))
    return [f("put_along_axis", g, indices, 0, axis=axis), None,
            _value_gradient(f, taken, values)]


def _choose(f, grads, inputs, outputs, params):
    (a, *choices), g = inputs, grads[0]
    mode = params.get("mode", "raise")
    index = a if mode == "raise" else _wrapped(f, a, len(choices), mode)
    return [None] + [f("where", f("equal", index, k), g, 0) if _is_array(c) else None
                     for k, c in enumerate(choices)]


def _bincount(f, grads, inputs, outputs, params):
    if len(inputs) == 1:
        return [None]
    return [None, f("take", grads[0], inputs[0])]


def _permutation(arg_name):
    """sort/partition: the output is the input permuted by argsort/argpartition; the
    gradient goes back through the inverse permutation."""
    def rule(f, g, x, out, axis=-1, kind=None, kth=None, **_):
        params = {"kind": kind} if kind is not None else {}
        if kth is not None:
            params["kth"] = kth
        if axis is None:
            x, axis = f.reshape(x, (-1,)), 0
        order = f(arg_name, x, axis=axis, **params)
        inverse = f("argsort", order, axis=axis)
        return [f.reshape(f("take_along_axis", g, inverse, axis=axis), x.shape)]
    return _one(rule)


_UFUNC_NAMES = {"divide": "true_divide", "remainder": "mod", "absolute": "abs"}


def _ufunc_method(f, grads, inputs, outputs, params):
    """NumPy's ufunc methods: reduce (add, multiply, maximum, minimum), accumulate (add,
    multiply), outer (any binary op with a rule), at (add, subtract)."""
    ufunc, method = params["ufunc"], params["method"]
    name = _UFUNC_NAMES.get(ufunc.__name__, ufunc.__name__)
    g = grads[0]
    if method == "reduce" and name in ("add", "multiply", "maximum", "minimum"):
        x = inputs[0]
        reduction = {"add": _sum, "multiply": _prod, "maximum": _extreme,
                     "minimum": _extreme}[name]
        if name == "multiply" and params.get("initial") is not None:
            g = f("multiply", g, params["initial"])
        return reduction(f, g, x, outputs[0], axis=params.get("axis", 0),
                         keepdims=params.get("keepdims", False))
    if method == "accumulate" and name in ("add", "multiply"):
        axis = params.get("axis", 0)
        rule = REDUCTIONS["cumsum" if name == "add" else "cumprod"]
        return rule(f, grads, inputs, outputs, {"axis": axis})
    if method == "outer" and name in ELEMENTWISE and len(inputs) == 2:
        a, b = inputs
        if _is_array(a):
            a = f.reshape(a, tuple(a.shape) + (1,) * len(getattr(b, "shape", ())))
        da, db = ELEMENTWISE[name](f, grads, [a, b], outputs, {})
        if da is not None:
            da = f.reshape(f.sum_to(da, a.shape), inputs[0].shape)
        return [da, db]
    if method == "at" and name in ("add", "subtract"):
        _, values = inputs
        dv = _value_gradient(f, g[params["index"]], values)
        if dv is not None and name == "subtract":
            dv = f("negative", dv)
        return [g, dv]
    raise NotImplementedError(f"the gradient of numpy.{ufunc.__name__}.{method} is not "
                              "built")


INDEXING = {
    "take_index": _take_index,
    "take": _take,
    "take_along_axis": _take_along_axis,
    "assign_index": _assign_index,
    "put": _put,
    "put_along_axis": _put_along_axis,
    "choose": _choose,
    "bincount": _bincount,
    "sort": _permutation("argsort"),
    "partition": _permutation("argpartition"),
    "ufunc_method": _ufunc_method,
}
