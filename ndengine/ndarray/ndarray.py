"""NDArray: a lazy, asynchronous n-dimensional array on the dependency engine.

An NDArray is a view (shape, dtype, byte offset, byte strides) of a `Chunk`: the storage an
array shares with its views, with one engine var and one buffer from the pool. Every operation is
pushed to the engine at once: reads of the input chunks' vars, a write of the output's.
Storage is allocated by the first op that runs on it (MXNet's delayed allocation), so pushed
work that has not run holds no memory, and freed when the last array on a chunk goes away: the
chunk pushes ``delete_variable``, which hands the buffer back to the pool once every op pushed
on it has finished.

Where a value is asked for (``asnumpy``, ``item``, ``print``, ``wait_to_read``) the caller
waits; an error raised inside an op surfaces there, every time, with its original traceback.
"""
import os
from functools import partial as _partial

import numpy as np

from .. import engine as _engine_mod
from .. import ops
from ..engine import Context, FnProperty, current_context
from ..ops import OpReq
from ..ops.dtypes import check_scalar_into
from ..ops.plans import NO_ALIAS as _NO_ALIAS, OVERLAP as _OVERLAP, SAME_VIEW as _SAME_VIEW
from ..ops.plans import NUMPY_SCALAR_TYPES as _NUMPY_SCALARS
from ..ops.plans import input_key as _input_key, param_key as _param_key
from . import storage

__all__ = ["NDArray", "invoke", "waitall"]

# Ops whose arrays all have at most this many bytes run in the pushing thread when their inputs
# are ready at push time (FnProperty.ASYNC): handing a few microseconds of work to a worker costs
# more (a wake-up and a GIL hand-off) than doing it.
INLINE_MAX_BYTES = int(os.environ.get("NDENGINE_INLINE_MAX_BYTES", 1 << 16))
_ASYNC, _NORMAL = FnProperty.ASYNC, FnProperty.NORMAL

_NO_PARAMS = {}  # shared, never written
_WRITE_TO = [OpReq.WRITE_TO]
_WRITE_INPLACE = [OpReq.WRITE_INPLACE]
_SCALARS = (bool, int, float)
_KEY_SCALARS = frozenset(_SCALARS) | _NUMPY_SCALARS  # keyed by their type (or value)
_np_ndarray = np.ndarray

class Chunk:
    """Storage shared by an array and its views: one engine var, and ``data``, a pool buffer
    taken by the first op that runs on it (None until then)."""

    __slots__ = ("var", "ctx", "nbytes", "data", "__weakref__")

    def __init__(self, nbytes, ctx, engine):
        self.var = engine.new_variable()
        self.ctx = ctx
        self.nbytes = nbytes
        self.data = None

    def allocate(self):
        data = storage.alloc(self.nbytes, self.ctx)
        if self.data is None:  # two first readers may race here; the loser gives its back
            self.data = data
        else:
            storage.free(data, self.ctx)
        return self.data

    def __del__(self):
        # Every op on this chunk holds an array of it, so none is left to run and ``data``
        # is final: the deletion only has to wait for the ops' var bookkeeping. The engine
        # frees an idle var at once, and defers by itself when this runs inside it (a
        # collection triggered there).
        try:
            data, ctx = self.data, self.ctx
            _engine_mod.get().delete_variable(
                _nothing_to_free if data is None else _release_buffer(data, ctx), ctx, self.var)
        except BaseException:  # noqa: B902 - at interpreter exit the engine may be gone
            pass


def _nothing_to_free(run_ctx):
    pass


def _release_buffer(data, ctx):
    return lambda run_ctx: storage.free(data, ctx)


_new_object = object.__new__


class _RawArray:
    """NDArray's slots, without its checked ``__setattr__``: arrays are built as a _RawArray
    (plain slot writes) and then made NDArrays, which costs less than writing every slot
    through a checked or descriptor call. Reads of ``x.shape`` stay plain slot reads."""

    __slots__ = ("shape", "dtype", "_chunk", "_offset", "_strides", "_view_cache",
                 "__weakref__")


def _new_array(shape, dtype, ctx, engine=None):
    """A fresh NDArray with a fresh chunk; no memory until an op writes it."""
    arr = _new_object(_RawArray)
    arr.shape = shape
    arr.dtype = dtype
    nbytes = dtype.itemsize
    for n in shape:
        nbytes *= n
    arr._chunk = Chunk(nbytes, ctx, engine or _engine_mod.get())
    arr._offset = 0
    arr._strides = None
    arr._view_cache = None
    arr.__class__ = NDArray
    return arr


_fakes = {}  # (shape, strides, dtype) -> (fake array, its data address): see NDArray._fake
_FAKES_LIMIT = 1024


def _c_strides(shape, itemsize):
    strides = []
    step = itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


class NDArray(_RawArray):
    """An n-dimensional array whose operations run asynchronously on the engine.

    Users never construct it directly: use ``ndengine.array``, ``zeros``, ``ones``, ...
    """

    __slots__ = ()
    __array_priority__ = 1000  # NumPy binary operators defer to ours
    __hash__ = None  # comparisons return arrays, like NumPy's

    # ------------------------------------------------------------ construction (internal)
    def _view_of(self, shape, offset, strides, dtype=None):
        """Another view of this array's chunk."""
        arr = _new_object(_RawArray)
        arr.shape = tuple(shape)
        arr.dtype = self.dtype if dtype is None else dtype
        arr._chunk = self._chunk
        arr._offset = offset
        arr._strides = tuple(strides)
        arr._view_cache = None
        arr.__class__ = NDArray
        return arr

    def __setattr__(self, name, value):
        """Users' assignments: ``shape`` reshapes in place as NumPy's does, ``dtype`` is
        read-only (NumPy 2 deprecates setting it). Internal writes go through _RawArray or
        the slots' descriptors (_set_* below), never through here."""
        if name == "shape":
            self._reshape_in_place(value)
        elif name == "dtype":
            raise AttributeError("NDArray.dtype is read-only (NumPy 2 deprecates setting it); "
                                 "use .astype(dtype) for a converted copy")
        else:
            _object_setattr(self, name, value)

    def _reshape_in_place(self, shape):
        """``x.shape = shape``: NumPy's rule, a new geometry for the same memory, no copy."""
        fake, base = self._fake()
        try:
            view = fake.reshape(shape, copy=False)
        except ValueError as exc:
            if "copy" not in str(exc):
                raise  # e.g. "cannot reshape array of size 6 into shape (4,)"
            raise AttributeError("Incompatible shape for in-place modification. Use "
                                 "`.reshape()` to make a copy with the desired shape.") from None
        reshaped = self._view_like(view, base)
        # Ops pushed on this array read its geometry when they run: let them finish first.
        self.wait_to_write()
        _set_shape(self, reshaped.shape)
        _set_offset(self, reshaped._offset)
        _set_strides(self, reshaped._strides)
        _set_view_cache(self, None)

    def _data(self):
        """The NumPy (or CuPy) view of this array's memory; only inside ops or after a wait."""
        view = self._view_cache
        if view is None:
            chunk = self._chunk
            data = chunk.data
            if data is None:
                data = chunk.allocate()
            if chunk.ctx.device_type == "gpu":
                import cupy
                memptr = data.data + self._offset
                view = cupy.ndarray(self.shape, self.dtype, memptr, strides=self._strides)
            else:
                view = _np_ndarray(self.shape, self.dtype, data, self._offset, self._strides)
            _set_view_cache(self, view)
        return view

    # ------------------------------------------------------------ attributes
    @property
    def context(self):
        return self._chunk.ctx

    ctx = context

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        size = 1
        for n in self.shape:
            size *= n
        return size

    @property
    def nbytes(self):
        return self.size * self.dtype.itemsize

    @property
    def strides(self):
        """Byte strides, as NumPy reports them."""
        return self._strides or _c_strides(self.shape, self.dtype.itemsize)

    @property
    def T(self):
        return self.transpose()

    @property
    def engine_var(self):
        """The engine var this array's operations read and write (shared with its views)."""
        return self._chunk.var

    # ------------------------------------------------------------ waiting and values
    def wait_to_read(self):
        """Block until every pending write to this array has finished; raise its error."""
        _engine_mod.get().wait_for_var(self._chunk.var)
        return self

    def wait_to_write(self):
        """Block until every pending read and write of this array has finished."""
        return self.wait_to_read()  # wait_for_var already waits for reads too

    def asnumpy(self):
        """A NumPy copy of the values (waits). The copy is a read op in the engine, so it is a
        state that exists in serial order: a write pushed meanwhile by another thread lands
        wholly before or wholly after it, never half into it."""
        chunk = self._chunk
        ctx = chunk.ctx
        engine = _engine_mod.get()
        copied = []
        if ctx.device_type == "gpu":
            def read(run_ctx):
                with run_ctx.stream:
                    copied.append(self._data().get(stream=run_ctx.stream))
            prop = FnProperty.COPY_FROM_GPU
        else:
            def read(run_ctx):
                copied.append(np.array(self._data(), copy=True))
            prop = _ASYNC  # run now, in this thread, when nothing is pending on the array
        engine.push_sync(read, ctx, (chunk.var,), (), prop, 0, "asnumpy")
        if not copied:  # queued: waiting for the var waits for the read too
            engine.wait_for_var(chunk.var)  # raises the error of a failed write to the array
            if not copied:
                raise RuntimeError("asnumpy: the read op failed; ndengine.waitall() raises "
                                   "its error")
        return copied[0]

    def __array__(self, dtype=None, copy=None):
        values = self.asnumpy()
        return values if dtype is None else values.astype(dtype, copy=False)

    def item(self):
        if self.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return self.asnumpy().item()

    asscalar = item

    def tolist(self):
        return self.asnumpy().tolist()

    def __bool__(self):
        if self.size != 1:
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()")
        return bool(self.item())

    def __float__(self):
        return float(self._scalar())

    def __int__(self):
        return int(self._scalar())

    def _scalar(self):
        if self.shape:  # NumPy 2.4: size 1 is not enough
            raise TypeError("only 0-dimensional arrays can be converted to Python scalars")
        return self.item()

    def __index__(self):
        if self.dtype.kind not in "iu" or self.shape:  # a bool array is no index (NumPy)
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self.item())

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        for i in range(self.shape[0]):
            yield self[i]

    def __repr__(self):
        text = repr(self.asnumpy())
        body = text[len("array("):-1] if text.startswith("array(") else text
        return f"NDArray({body}, ctx={self.context})"

    def __str__(self):
        return str(self.asnumpy())

    def _repr_html_(self):
        values = self.asnumpy()
        head = (f"<b>NDArray</b> shape={self.shape} dtype={self.dtype} "
                f"ctx={self.context}")
        if values.ndim == 0:
            return f"<div>{head}<br><code>{values!r}</code></div>"
        if values.ndim > 2:
            return f"<div>{head}<pre>{np.array2string(values)}</pre></div>"
        rows = values if values.ndim == 2 else values[None, :]  # 1-D: one row
        shown = rows[:20, :20]
        cells = "".join(
            "<tr>" + "".join(f"<td>{v}</td>" for v in row) +
            ("<td>…</td>" if rows.shape[1] > 20 else "") + "</tr>" for row in shown)
        more = "<tr><td>…</td></tr>" if rows.shape[0] > 20 else ""
        return f"<div>{head}<table>{cells}{more}</table></div>"

    # ------------------------------------------------------------ copies and contexts
    def copy(self):
        return invoke(ops.get("copy"), [self])[0]

    __copy__ = copy  # a copy of the values, as copy.copy does for a NumPy array

    def __deepcopy__(self, memo):
        return self.copy()

    def __reduce__(self):
        """Pickle the values (read in serial order, as asnumpy does); unpickling makes a
        fresh array on the cpu context, with storage of its own."""
        return _unpickle, (self.asnumpy(),)

    def astype(self, dtype, copy=True):
        dtype = ops.check_dtype(dtype)
        if dtype == self.dtype and not copy:
            return self
        return invoke(ops.get("copy"), [self], {"dtype": dtype})[0]

    def copyto(self, other):
        """Copy into ``other`` (an NDArray, any context) or onto a new array on a Context."""
        if isinstance(other, Context):
            target = _new_array(self.shape, self.dtype, other)
        elif isinstance(other, NDArray):
            if other.shape != self.shape:
                raise ValueError(f"copyto: shapes differ: {self.shape} into {other.shape}")
            target = other
        else:
            raise TypeError(f"copyto takes an NDArray or a Context, got {type(other).__name__}")
        _copy_between(self, target)
        return target

    def as_in_context(self, ctx):
        return self if ctx == self.context else self.copyto(ctx)

    # ------------------------------------------------------------ views
    def _fake(self):
        """A NumPy array with this view's geometry over no real memory: NumPy computes view
        geometry (slicing, transposes, reshapes) on it without touching any data. Made once
        per geometry (as_strided costs more than the rest of a view); never written."""
        geometry = (self.shape, self._strides, self.dtype)  # _strides None: C order
        found = _fakes.get(geometry)
        if found is None:
            fake = np.lib.stride_tricks.as_strided(np.empty(1, self.dtype), self.shape,
                                                   self.strides, writeable=False)
            found = fake, fake.__array_interface__["data"][0]
            if len(_fakes) >= _FAKES_LIMIT:
                _fakes.clear()
            _fakes[geometry] = found
        return found

    def _view_like(self, fake_view, fake_base):
        offset = self._offset + (fake_view.__array_interface__["data"][0] - fake_base)
        if fake_view.size == 0:
            offset = 0  # NumPy's offset may point past the end of the (empty) buffer
        return self._view_of(fake_view.shape, offset, fake_view.strides)

    def reshape(self, *shape, order="C", copy=None, **kwargs):
        """NumPy's ``a.reshape(*shape, order='C', copy=None)``: a view where the geometry
        allows, else a copy (``copy=False`` raises there, ``copy=True`` always copies)."""
        if "shape" in kwargs:
            if shape:
                raise TypeError("You cannot specify 'newshape' and 'shape' arguments at the "
                                "same time.")
            shape = (kwargs.pop("shape"),)
        if kwargs:
            raise TypeError(f"reshape() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        if not shape:
            raise TypeError("reshape() takes exactly 1 argument (0 given)")
        fake, base = self._fake()
        if len(shape) == 1:
            shape = shape[0]
            if shape is None:  # NumPy: the same shape; a bad order name still raises
                np.empty(0).ravel(order=order)
                return self._view_like(fake, base)
        try:  # NumPy checks the order, the shape and whether a view is possible
            view = fake.reshape(shape, order=order, copy=False)  # never touches data
        except ValueError as exc:
            if "copy" not in str(exc) or copy is False:
                raise  # e.g. "cannot reshape array of size 6 into shape (4,)"
            view = None
        if view is not None and not copy:
            return self._view_like(view, base)
        # a copy: C order through a contiguous copy, F order as the transposed C reshape
        size_only = np.lib.stride_tricks.as_strided(np.empty(1, np.uint8), self.shape,
                                                    _c_strides(self.shape, 1))
        new_shape = size_only.reshape(shape).shape
        if order == "F" or (order == "A" and fake.flags.f_contiguous
                            and not fake.flags.c_contiguous):
            return self.transpose().copy().reshape(new_shape[::-1]).transpose()
        return self.copy().reshape(new_shape)

    def transpose(self, *axes):
        if not axes:
            axes = None
        elif len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]  # transpose(()) is NumPy's "axes don't match array" (ndim > 0)
        fake, base = self._fake()
        return self._view_like(fake.transpose(axes), base)

    def flatten(self):
        return self.copy().reshape(-1)  # always a copy, as in NumPy

    def squeeze(self, axis=None):
        fake, base = self._fake()
        return self._view_like(fake.squeeze(axis), base)

    def expand_dims(self, axis):
        fake, base = self._fake()
        return self._view_like(np.expand_dims(fake, axis), base)

    def __getitem__(self, key):
        key = _normalize_key(key)
        if _is_basic_key(key):
            return self._basic_view(key)
        return invoke(ops.get("take_index"), [self], {"key": key})[0]

    def _basic_view(self, key):
        fake, base = self._fake()
        view = fake[key]
        if not isinstance(view, np.ndarray):  # an int for every axis: NumPy gives a
            # scalar (a copy, elsewhere in memory); the trailing ... gives the 0-d view
            view = fake[(key if isinstance(key, tuple) else (key,)) + (Ellipsis,)]
        return self._view_like(view, base)

    def __setitem__(self, key, value):
        key = _normalize_key(key)
        basic = _is_basic_key(key)
        target = self._basic_view(key) if basic else None  # NumPy checks the key first
        kind = type(value)
        if kind is NDArray:
            if value._chunk.ctx is not self._chunk.ctx:
                raise ValueError(
                    f"setitem: arrays are on different contexts ({self.context} and "
                    f"{value.context}); move one with .copyto(ctx) or .as_in_context(ctx) first")
        elif kind in _SCALARS:
            if self.dtype.kind == "b":
                value = bool(value)  # NumPy takes any scalar's truth, however big
            else:
                check_scalar_into(value, self.dtype)  # NumPy's errors: NaN into int, ...
        if basic and isinstance(value, np.generic):
            check_scalar_into(value, self.dtype)  # an advanced key casts NumPy scalars quietly
        elif kind is not NDArray and kind not in _SCALARS and not isinstance(
                value, (np.ndarray, np.generic)):
            value = self._converted_value(key, value, target)
        value = _as_operand(value, self.context)
        if basic:
            if not isinstance(value, NDArray) and not isinstance(value, _SCALARS):
                raise TypeError(f"cannot assign {type(value).__name__} to an NDArray")
            if type(value) is NDArray and len(value.shape) > len(target.shape):
                if not target.shape and _is_element_key(key):
                    # an int for every axis: NumPy sets one element, from a scalar only
                    raise ValueError("setting an array element with a sequence.")
                value = _drop_leading_ones(value, len(target.shape))
            chunk = self._chunk
            whole = (target.size * target.dtype.itemsize == chunk.nbytes
                     and (type(value) is not NDArray or value._chunk is not chunk))
            invoke(ops.get("copy"), [value], {"shape": target.shape, "dtype": target.dtype},
                   out=target, overwrites=(chunk.var,) if whole else ())
        else:
            mask = key if type(key) is np.ndarray else (
                np.asarray(key) if isinstance(key, (bool, np.bool_)) else None)
            if (mask is not None and mask.dtype == np.bool_ and mask.shape == self.shape
                    and isinstance(value, NDArray) and len(value.shape) > 1):
                raise TypeError(f"NumPy boolean array indexing assignment requires a 0 or "
                                f"1-dimensional input, input has {len(value.shape)} dimensions")
            invoke(ops.get("assign_index"), [self, value], {"key": key}, out=self)

    def _converted_value(self, key, value, target):
        """A list, tuple, string, None, ... value converted as NumPy converts it for ``x[key] =``:
        straight into x's dtype, so -2 into uint8 is OverflowError and NaN into int ValueError
        (not the wrapped values of an int64 array cast later)."""
        if target is None:  # an advanced key
            return np.asarray(value, dtype=self.dtype)
        # NumPy's own assignment into a target of the view's shape gives its exact errors (too
        # many dimensions, sequences into one element); zero strides: no memory is used
        shape = target.shape
        probe = np.lib.stride_tricks.as_strided(np.empty(1, self.dtype), shape, (0,) * len(shape))
        if shape or not _is_element_key(key):
            probe[...] = value
            return np.asarray(value, dtype=self.dtype)
        probe[()] = value  # one element: NumPy's scalar conversion (a bool takes [-2] as True)
        return probe.copy()


def _unpickle(values):
    return _from_numpy(values, Context("cpu", 0))


def _is_element_key(key):
    parts = key if type(key) is tuple else (key,)
    return not any(part is None or part is Ellipsis or isinstance(part, slice) for part in parts)


def _drop_leading_ones(value, ndim):
    """NumPy's setitem broadcasting: a value may have extra leading dims of size 1."""
    extra = len(value.shape) - ndim
    if all(n == 1 for n in value.shape[:extra]):
        return value.reshape(value.shape[extra:])
    return value  # the copy's infer raises NumPy's broadcast error


_object_setattr = object.__setattr__
_set_shape = _RawArray.__dict__["shape"].__set__
_set_offset = _RawArray.__dict__["_offset"].__set__
_set_strides = _RawArray.__dict__["_strides"].__set__
_set_view_cache = _RawArray.__dict__["_view_cache"].__set__


# ---------------------------------------------------------------- indexing helpers
_BASIC_PART_TYPES = frozenset((int, slice, type(None), type(Ellipsis)))


def _normalize_key(key):
    """The key as the op will use it when it runs: NDArray indices become NumPy arrays (that
    waits for them), and NumPy arrays and lists are copied, so that a caller who reuses or
    changes them after the call does not change what the queued op selects."""
    kind = type(key)
    if kind is int or kind is slice:
        return key
    if kind is tuple:
        for part in key:
            if type(part) not in _BASIC_PART_TYPES:
                return tuple(_frozen_index(part) for part in key)
        return key
    if kind is list:
        return _list_index(key)  # NumPy treats a list key as one index array
    return _frozen_index(key)


def _list_index(part):
    index = np.array(part)
    if index.size == 0 and index.dtype == np.float64:
        return index.astype(np.intp)  # an empty list is an empty integer index (NumPy)
    return index


def _frozen_index(part):
    if isinstance(part, NDArray):
        part = part.asnumpy()  # a fresh copy
    elif isinstance(part, np.ndarray):
        part = part.copy()
    else:
        return _list_index(part) if isinstance(part, list) else part
    if not part.ndim and part.dtype.kind in "iu":
        return int(part)  # a 0-d integer array indexes as an integer (NumPy)
    return part


def _is_basic_key(key):
    parts = key if type(key) is tuple else (key,)
    for part in parts:
        kind = type(part)
        if kind is int or kind is slice or part is None or part is Ellipsis:
            continue  # the common parts first: this runs on every index
        if isinstance(part, (int, np.integer, slice)) and not isinstance(part, (bool, np.bool_)):
            continue
        return False
    return True


# ---------------------------------------------------------------- operands and invoke
def _as_operand(value, ctx, numpy_scalars=False):
    """Python scalars stay scalars (weak, as in NumPy); arrays of any kind become NDArrays.
    ``numpy_scalars``: NumPy scalars of a supported dtype stay scalars too (strong 0-d
    operands, which the ops take as they are: no array, no engine var)."""
    kind = type(value)
    if kind is NDArray or kind in _SCALARS or (numpy_scalars and kind in _NUMPY_SCALARS):
        return value
    if isinstance(value, NDArray):
        return value
    if isinstance(value, np.generic):
        return _from_numpy(np.asarray(value), ctx)
    if isinstance(value, (np.ndarray, list, tuple)):
        return _from_numpy(np.asarray(value), ctx)
    if isinstance(value, (bool, int, float)):  # subclasses of the Python scalars
        return type(value).__mro__[-2](value) if not isinstance(value, bool) else bool(value)
    raise TypeError(f"unsupported operand type {type(value).__name__} for an NDArray op")


def _from_numpy(values, ctx, dtype=None):
    """A new NDArray holding a private copy of ``values`` (no op is pushed: it is ready)."""
    values = np.asarray(values, dtype=dtype)
    ops.check_dtype(values.dtype)
    arr = _new_array(values.shape, values.dtype, ctx)
    if ctx.device_type == "cpu":
        arr._data()[...] = values
    else:
        _push_upload(values, arr)
    return arr


def _push_upload(values, arr):
    def upload(run_ctx):
        with run_ctx.stream:
            arr._data().set(values)
    _engine_mod.get().push_sync(upload, arr.context, (), (arr._chunk.var,),
                                FnProperty.COPY_TO_GPU, name="copy_to_gpu")


def _copy_between(source, target):
    """Push target[...] = source across contexts (cast to target's dtype)."""
    src_ctx, dst_ctx = source.context, target.context
    if src_ctx.device_type == "cpu" and dst_ctx.device_type == "cpu":
        invoke(ops.get("copy"), [source], {"shape": target.shape, "dtype": target.dtype},
               out=target, ctx_check=False)
        return

    def copy(run_ctx):
        src, dst = source._data(), target._data()
        with run_ctx.stream:
            if dst_ctx.device_type == "cpu":
                dst[...] = src.get(stream=run_ctx.stream)
            elif src_ctx.device_type == "cpu":
                dst.set(np.ascontiguousarray(src, dtype=target.dtype))
            else:
                dst[...] = src
    prop = FnProperty.COPY_FROM_GPU if src_ctx.device_type == "gpu" else FnProperty.COPY_TO_GPU
    run_on = src_ctx if src_ctx.device_type == "gpu" else dst_ctx
    _engine_mod.get().push_sync(copy, run_on, (source._chunk.var,), (target._chunk.var,),
                                prop, name="copyto")


def _describe(inputs, outputs):
    """Profiler arguments: shapes and dtypes of the arrays an op reads and writes."""
    return {"inputs": [(x.shape, str(x.dtype)) if isinstance(x, NDArray) else (repr(x),)
                       for x in inputs],
            "outputs": [(x.shape, str(x.dtype)) for x in outputs]}


class _Run:
    """What a worker runs for one op: the op's plan on the arrays' memory."""

    __slots__ = ("plan", "inputs", "outputs", "req", "params", "cast_into")

    def __init__(self, plan, inputs, outputs, req, params, cast_into):
        self.plan = plan
        self.inputs = inputs
        self.outputs = outputs
        self.req = req
        self.params = params
        self.cast_into = cast_into

    def __call__(self, run_ctx):
        args = []
        for x in self.inputs:
            if type(x) is NDArray:
                view = x._view_cache  # x._data(), without the call when it is cached
                args.append(view if view is not None else x._data())
            else:
                args.append(x)
        outs = []
        for x in self.outputs:
            outs.append(x._data())
        run = self.plan.run
        if self.cast_into is not None:
            # In-place op whose result dtype differs from the target's (float32 += float64):
            # compute at the result dtype, then cast into place as NumPy does.
            temps = [np.empty(o.shape, dt) for o, dt in zip(outs, self.cast_into)]
            run(args, temps, _WRITE_TO * len(temps), self.params)
            for out, temp in zip(outs, temps):
                np.copyto(out, temp, casting="unsafe")
        elif run_ctx.stream is not None:
            with run_ctx.stream:
                run(args, outs, self.req, self.params)
        else:
            run(args, outs, self.req, self.params)


def _aliases(inputs, out):
    """Each input's alias code against ``out`` (ops.plans: 0 none, 1 the same view, 2 may
    overlap), or None when no input shares out's chunk."""
    chunk = out._chunk
    codes = None
    for i, x in enumerate(inputs):
        if type(x) is NDArray and x._chunk is chunk:
            if codes is None:
                codes = [_NO_ALIAS] * len(inputs)
            same = x is out or (x._offset == out._offset and x._strides == out._strides
                                and x.shape == out.shape and x.dtype == out.dtype)
            codes[i] = _SAME_VIEW if same else _OVERLAP
    return None if codes is None else tuple(codes)


_UFUNC_KINDS = ("unary", "binary")


def _wrong_out_shape(op, shape, out):
    raise ValueError(f"{op.name}: result of shape {shape} cannot be written into an array "
                     f"of shape {out.shape}")


def invoke(op, inputs, params=None, out=None, ctx=None, ctx_check=True, extra_writes=(),
           overwrites=()):
    """Push ``op`` on ``inputs`` (NDArrays, Python scalars, NumPy scalars); return the outputs.

    ``out`` (an NDArray) makes the op write in place into it; ``ctx`` places ops that have
    no array input; ``extra_writes`` are more vars the op writes (a random generator's);
    ``overwrites``, vars among the writes whose every byte the op replaces without reading
    them (a failed array written whole becomes valid again).
    Per op: the call's signature (ops.plans: dtype, shape, strides per array, type or value
    per scalar, the params, the write target), its plan (one dict lookup once seen), the
    plan's value checks, the outputs; the run object carries the plan to the worker. Shapes,
    dtypes, values and contexts are checked here, before anything is pushed.
    Every line is paid by every tiny op, hence the spelled-out common cases.
    """
    if params is None:
        params = _NO_PARAMS
    reads = []
    key = []
    by_type = op.scalars_by_type
    small = True  # every array at most INLINE_MAX_BYTES: run inline when ready
    for x in inputs:
        kind = type(x)
        if kind is NDArray:
            chunk = x._chunk
            if ctx is None:
                ctx = chunk.ctx
            elif chunk.ctx is not ctx and ctx_check:
                raise ValueError(
                    f"{op.name}: arrays are on different contexts ({ctx} and {chunk.ctx}); "
                    "move one with .copyto(ctx) or .as_in_context(ctx) first")
            reads.append(chunk.var)
            if chunk.nbytes > INLINE_MAX_BYTES:
                small = False
            key.append(x.dtype)
            key.append(x.shape)
            key.append(x._strides)  # None: C-contiguous
        elif kind in _KEY_SCALARS:
            key.append(kind if by_type else (kind, x))
        else:
            key.extend(_input_key(x, by_type))
    if ctx is None:
        ctx = current_context()
    key.append(_param_key(params, op.value_params, op.unkeyed_params) if params else None)
    aliases = None
    if out is None:
        key.append(None)
    else:
        if out._chunk.ctx is not ctx and ctx_check:
            raise ValueError(
                f"{op.name}: arrays are on different contexts ({ctx} and {out._chunk.ctx}); "
                "move one with .copyto(ctx) or .as_in_context(ctx) first")
        aliases = _aliases(inputs, out)
        key.append((out.dtype, out.shape, out._strides, aliases, None))
    key = tuple(key)
    device = ctx.device_type
    plan = None
    if device == "cpu":
        try:
            plan = op.plans.get(key)
        except TypeError:  # unhashable params: op.plan builds this call's own plan
            pass
    if plan is None:
        plan = op.plan(inputs, params, key=key, target=out, aliases=aliases, device=device)
    check = plan.check
    if check is not None:
        check(inputs, params)
    engine = _engine_mod.get()
    cast_into = None
    if out is None:
        specs = plan.outputs
        if len(specs) == 1:
            shape, dtype = specs[0]
            outputs = [_new_array(shape, dtype, ctx, engine)]
            req = _WRITE_TO
        else:
            outputs = [_new_array(shape, dtype, ctx, engine) for shape, dtype in specs]
            req = _WRITE_TO * len(outputs)
    else:
        shape, dtype = plan.outputs[0]
        # NumPy's order: a ufunc checks the cast before the shape, other functions after
        if shape != out.shape and op.kind not in _UFUNC_KINDS:
            _wrong_out_shape(op, shape, out)
        if dtype != out.dtype:
            if not np.can_cast(dtype, out.dtype, "same_kind"):
                raise TypeError(f"{op.name}: cannot cast the result from {dtype} to "
                                f"{out.dtype} in place (NumPy's same_kind rule)")
            cast_into = [dtype]
        if shape != out.shape:
            _wrong_out_shape(op, shape, out)
        if cast_into is not None:  # the run writes fresh temporaries, then casts
            plan = op.plan(inputs, params, key=key[:-1] + (None,), device=device)
        req = _WRITE_INPLACE if any(x is out for x in inputs) else _WRITE_TO
        outputs = [out]
    writes = []
    for x in outputs:
        chunk = x._chunk
        writes.append(chunk.var)
        if chunk.nbytes > INLINE_MAX_BYTES:
            small = False
    if extra_writes:
        writes.extend(extra_writes)
    engine.push_sync(_Run(plan, inputs, outputs, req, params, cast_into), ctx, reads, writes,
                     _ASYNC if small and ctx.device_type == "cpu" else _NORMAL, 0, op.name,
                     _partial(_describe, inputs, outputs),  # called only by a profiler
                     _engine_mod.caller_origin,  # called only when needed: the user's line
                     overwrites)
    return outputs


def waitall():
    """Block until every pushed operation has finished; raise the first unseen error."""
    _engine_mod.get().wait_for_all()
