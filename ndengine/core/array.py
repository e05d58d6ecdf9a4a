"""NDArray: a lazy, asynchronous n-dimensional array on the dependency engine.

An NDArray is a view (shape, dtype, byte offset, byte strides) of a chunk (chunk.py): the
storage an array shares with its views. Every operation is pushed to the engine at once by
`invoke` (pipeline.py), the one path every op takes. Users never construct an NDArray directly:
``ndengine.array``, ``zeros``, ... make them; inside the package `new_array` (a fresh chunk)
and `array_on` (a view of a chunk) do.

This module holds the type: its state (`RawArray`'s slots: ``shape``, ``dtype``, ``_chunk``,
``_offset``, ``_strides`` (None: C order), ``_view_cache`` (the NumPy view of its memory, once
taken), ``_base`` (a view's owner, NumPy's ``base``; None for an owner)), its attributes, waits
and values, and its views (geometry computed by NumPy on a stand-in, `_fake`; a view made while
recording is taped: tape.note_view; the views of basic keys, ``x[1:-1]``: views.py). It
imports nothing above it: the methods that push ops (copies, ``x[key]``, ``x[key] = v``) are
defined above the pipeline, in array_methods.py, which sets them on the class
(`array_methods.install`, run by the package's ``__init__``).

Where a value is asked for (``asnumpy``, ``item``, ``print``, ``wait_to_read``) the caller
waits (the open window that touches the array is pushed first: chunk.flush_window_of), or
reads at once when nothing is pending on it; an op's error surfaces there, with its traceback.
"""
import numpy as np

from .. import engine as _engine_mod
from .. import ops
from ..ops.dtypes import COPY_REFUSED
from ..ops.shapes import c_strides
from ..engine import FnProperty
from ..engine import devices as _devices
from . import fp_errors as _fp
from . import gpu as _gpu
from . import storage
from .at_once import begin as _at_once_begin, end as _at_once_end
from .chunk import COMPILED, SMALL_BYTES, Chunk, SmallChunk, flush_window_of as _flush_window_of
from .chunk import idle as _idle
from .tape import RECORDING as _RECORDING, note_view as _note_view

__all__ = ["NDArray", "RawArray", "new_array", "array_on", "COPY_REFUSED"]

_fp_kept = _fp.KEPT
_np_ndarray = np.ndarray

_SAME = object()  # view()'s default: the array's own dtype
_fakes = {}  # (shape, strides, dtype) -> (fake array, its data address): see NDArray._fake
_FAKES_LIMIT = 1024


class RawArray:
    """NDArray's slots, without its checked ``__setattr__``: arrays are built as a RawArray
    (plain slot writes) and then made NDArrays, which costs less than writing every slot
    through a checked or descriptor call. Reads of ``x.shape`` stay plain slot reads."""

    __slots__ = ("shape", "dtype", "_chunk", "_offset", "_strides", "_view_cache", "_base",
                 "__weakref__")


class NDArray(RawArray):
    """An n-dimensional array whose operations run asynchronously on the engine.

    Users never construct it directly: use ``ndengine.array``, ``zeros``, ``ones``, ...
    """

    __slots__ = ()
    __array_priority__ = 1000  # NumPy binary operators defer to ours
    __hash__ = None  # comparisons return arrays, like NumPy's

    # ------------------------------------------------------------ construction (internal)
    def _view_of(self, shape, offset, strides, dtype=None, taped=True, data=None):
        """Another view of this array's chunk (``shape`` and ``strides`` tuples, ``strides``
        None: C order), on autograd's tape while recording, unless ``taped`` is False: a view
        for our own use, which no user sees. ``data``: NumPy's view of the memory, if at hand
        (else ``_data`` makes it when needed)."""
        base = self._base
        view = _new_view(self._chunk, shape, self.dtype if dtype is None else dtype, offset,
                         strides, self if base is None else base, data)  # NumPy's base: the owner
        if taped and _RECORDING[0]:
            _note_view(self, view)
        return view

    def __setattr__(self, name, value):
        """Users' assignments: ``shape`` reshapes in place as NumPy's does, ``dtype`` is
        read-only (NumPy 2 deprecates setting it). Internal writes go through RawArray or
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
        fake = self._fake()[0]
        try:
            view = fake.reshape(shape, copy=False)
        except ValueError as exc:
            if "copy" not in str(exc):
                raise  # e.g. "cannot reshape array of size 6 into shape (4,)"
            raise AttributeError("Incompatible shape for in-place modification. Use "
                                 "`.reshape()` to make a copy with the desired shape.") from None
        reshaped = self._view_like(view, None)
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
                view = _gpu.backend(chunk.ctx).view(data, self.shape, self.dtype,
                                                    self._offset, self._strides)
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
        return self._strides or c_strides(self.shape, self.dtype.itemsize)

    @property
    def T(self):
        return self._axes_reversed()

    @property
    def base(self):
        """NumPy's ``base``: None for an array that owns its memory, else the array that does
        (a view of a view names the first array, as NumPy's does)."""
        return self._base

    @property
    def engine_var(self):
        """The engine var this array's operations read and write (shared with its views); ops
        gathered on it and not yet pushed (segment.py) are pushed first, so that an op pushed
        on the var directly comes after them."""
        chunk = self._chunk
        _flush_window_of(chunk)
        return chunk.var

    # ------------------------------------------------------------ waiting and values
    def wait_to_read(self):
        """Block until every pending write to this array has finished; raise its error."""
        chunk = self._chunk
        _flush_window_of(chunk)
        if not _idle(chunk):  # (idle: nothing pending on it; no var made for the wait)
            _engine_mod.get().wait_for_var(chunk.var)
        if _fp_kept:  # the FP reports of the ops that made it (fp_errors.py), once
            _fp.surface_for(chunk)
        return self

    def wait_to_write(self):
        """Block until every pending read and write of this array has finished."""
        return self.wait_to_read()  # wait_for_var already waits for reads too

    def asnumpy(self):
        """A NumPy copy of the values (waits). The copy is a read op in the engine, so it is a
        state that exists in serial order: a write pushed meanwhile by another thread lands
        wholly before or wholly after it, never half into it."""
        values = _read_at_once(self, False)
        if values is not _ENGINE_READS:
            return values
        chunk, copied = self._chunk, []
        ctx = chunk.ctx
        if ctx.device_type == "gpu":
            def read(run_ctx):
                with run_ctx.stream:
                    copied.append(_gpu.backend(ctx).download(self._data(), run_ctx.stream))
            prop = FnProperty.COPY_FROM_GPU
        else:
            def read(run_ctx):
                copied.append(np.array(self._data(), copy=True))
            prop = FnProperty.ASYNC  # run now, in this thread, when nothing is pending on the array
        # waits for the writes pushed before the read only, not for those another thread
        # pushes meanwhile; raises the error of a failed write to the array
        _engine_mod.get().read_and_wait(read, ctx, chunk.var, prop, "asnumpy")
        if not copied:
            raise RuntimeError("asnumpy: the read op failed; ndengine.waitall() raises its error")
        if _fp_kept:  # the FP reports of the ops that made it (fp_errors.py), once
            _fp.surface_for(chunk)
        return copied[0]

    def __array__(self, dtype=None, copy=None):
        """NumPy 2's protocol: always a copy (waits), so ``copy=False`` is NumPy's ValueError.
        A view would see writes pushed later, and the memory may return to the engine's pool
        when the NDArray is dropped while the view lives."""
        if copy is False:
            raise ValueError(COPY_REFUSED)
        values = self.asnumpy()
        return values if dtype is None else values.astype(dtype, copy=False)

    def item(self):
        if self.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        value = _read_at_once(self, True)  # the element, not a copy of the array first
        return self.asnumpy().item() if value is _ENGINE_READS else value

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
        if not self.shape:  # at the call, as NumPy: np.iterable() of a 0-d array is False
            raise TypeError("iteration over a 0-d array")
        return map(self.__getitem__, range(self.shape[0]))

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

    # ------------------------------------------------------------ views
    def _fake(self):
        """A NumPy array with this view's geometry over one element of memory: NumPy computes
        view geometry (slicing, transposes, reshapes) on it without touching any data. Only
        views may be taken of it: anything that reads or writes values (a scalar from
        indexing, see array_methods.py) would touch memory it does not own. Made once per
        geometry (as_strided costs more than the rest of a view)."""
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

    def _view_like(self, fake_view, fake_base, taped=True):
        """This memory with the geometry of ``fake_view``, a view of ``_fake``'s stand-in at
        ``fake_base`` (None: this array's start; reshapes, transposes never move it)."""
        offset = self._offset if fake_base is None else self._offset + (
            fake_view.__array_interface__["data"][0] - fake_base)
        if fake_view.size == 0:
            offset = 0  # NumPy's offset may point past the end of the (empty) buffer
        return self._view_of(fake_view.shape, offset, fake_view.strides, fake_view.dtype,
                             taped)

    def view(self, dtype=_SAME, type=None):
        """NumPy's ``ndarray.view(dtype)``: the same memory read as another dtype (no op, no
        copy; NumPy's rules for a different itemsize: the last axis is resized)."""
        if _is_array_type(dtype):  # view(NDArray): NumPy's type-as-first-argument form
            dtype, type = None, dtype
        if type is not None and not _is_array_type(type):
            raise TypeError(f"view(type={type!r}): an NDArray views only as an NDArray")
        if dtype is _SAME or dtype is None and type is not None:
            return self._view_of(self.shape, self._offset, self.strides)
        dtype = ops.check_dtype(np.dtype(dtype))  # (None is float64, as in NumPy)
        fake = self._fake()[0]
        return self._view_like(fake.view(dtype), None)

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
        fake = self._fake()[0]
        if len(shape) == 1:
            shape = shape[0]
            if shape is None:  # NumPy: the same shape; a bad order name still raises
                np.empty(0).ravel(order=order)
                return self._view_like(fake, None)
        try:  # NumPy checks the order, the shape and whether a view is possible
            view = fake.reshape(shape, order=order, copy=False)  # never touches data
        except ValueError as exc:
            if "copy" not in str(exc) or copy is False:
                raise  # e.g. "cannot reshape array of size 6 into shape (4,)"
            view = None
        if view is not None and not copy:
            return self._view_like(view, None)
        # a copy: C order through a contiguous copy, F order as the transposed C reshape
        size_only = np.lib.stride_tricks.as_strided(np.empty(1, np.uint8), self.shape,
                                                    c_strides(self.shape, 1))
        new_shape = size_only.reshape(shape).shape
        if order == "F" or (order == "A" and fake.flags.f_contiguous
                            and not fake.flags.c_contiguous):
            return self.transpose().copy().reshape(new_shape[::-1]).transpose()
        return self.copy().reshape(new_shape)

    def transpose(self, *axes):
        if not axes:
            return self._axes_reversed()
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]  # transpose(()) is NumPy's "axes don't match array" (ndim > 0)
        fake = self._fake()[0]
        return self._view_like(fake.transpose(axes), None)

    def _axes_reversed(self):
        """NumPy's transpose without axes (``x.T``): shape and strides reversed over the same
        memory, computed here (NumPy's transpose of the stand-in costs four times more); a
        small array's view carries NumPy's own, ``.T`` of its data."""
        strides = self._strides
        if strides is None:
            strides = c_strides(self.shape, self.dtype.itemsize)
        data = self._view_cache
        if data is not None and type(self._chunk) is SmallChunk:
            data = data.T
        else:
            data = None
        return self._view_of(self.shape[::-1], self._offset, strides[::-1], None, True, data)

    def flatten(self):
        return self.copy().reshape(-1)  # always a copy, as in NumPy

    def squeeze(self, axis=None):
        fake = self._fake()[0]
        return self._view_like(fake.squeeze(axis), None)

    def expand_dims(self, axis):
        fake = self._fake()[0]
        return self._view_like(np.expand_dims(fake, axis), None)


def _is_array_type(kind):
    return isinstance(kind, type) and issubclass(kind, NDArray)


def _read_at_once(arr, element):
    """A copy of ``arr``'s values (``element``: its element, a Python scalar) read without the
    engine (its read op makes a var and a block, ~5 us) when nothing pending touches it and
    at_once.py lets this thread run ops at once: no write can be pushed on it meanwhile.
    Else ``_ENGINE_READS``."""
    chunk = arr._chunk
    _flush_window_of(chunk)
    if chunk.ctx.device_type != "cpu" or not _idle(chunk) or not _at_once_begin():
        return _ENGINE_READS
    try:
        data = arr._data()
        values = data.item() if element else _np_array(data, copy=True)
    finally:
        _at_once_end()
    if _fp_kept:  # the FP reports of the ops that made it (fp_errors.py), once
        _fp.surface_for(chunk)
    return values


_ENGINE_READS = object()  # _read_at_once's "not here": the engine reads the array
_object_setattr = object.__setattr__
_set_shape = RawArray.__dict__["shape"].__set__
_set_offset = RawArray.__dict__["_offset"].__set__
_set_strides = RawArray.__dict__["_strides"].__set__
_set_view_cache = RawArray.__dict__["_view_cache"].__set__


# An array's slots are written as a RawArray's, never through NDArray's checked __setattr__:
# interpreted, the array is made a RawArray, written, then made an NDArray (a class change costs
# less than a descriptor call per slot); compiled, RawArray is an extension type (a class change
# is refused) whose typed slot writes never reach __setattr__: the array is an NDArray at once
# (``cls.__new__(cls)`` with ``cls`` typed as a type compiles to a call of its tp_new slot,
# RawArray's, as ``SmallChunk.__new__(SmallChunk)`` of an extension type does).
_new_object = object.__new__
_np_empty = np.empty
_np_array = np.array
_ArrayMemoryError = np._core._exceptions._ArrayMemoryError
# a CPU array larger than this raises MemoryError at the call (storage.host_memory_bytes)
_host_bytes = storage.HOST_MEMORY_BYTES or float("inf")


def new_array(shape, dtype, ctx):
    """A fresh NDArray with a fresh chunk: a small CPU array gets its NumPy memory now, any
    other no memory until an op writes it."""
    cls = NDArray
    arr = cls.__new__(cls) if COMPILED else _new_object(RawArray)  # see _new_object
    arr.shape = shape
    arr.dtype = dtype
    nbytes = dtype.itemsize
    for n in shape:
        nbytes *= n
    if nbytes <= SMALL_BYTES and ctx.device_type == "cpu":
        small = SmallChunk.__new__(SmallChunk)  # compiled: the type's tp_new, called as C
        small._var = None  # made at its first use (SmallChunk)
        small.ctx = ctx
        small.nbytes = nbytes
        small.window = None  # the open segment window that touches it (segment.py)
        small.data = arr._view_cache = _np_empty(shape, dtype)
        arr._chunk = small
    else:
        if ctx.device_type != "cpu":
            _devices.check(ctx)  # a GPU that cannot be used says why, at the call
        elif nbytes > _host_bytes:  # never backed: NumPy's error, at the call
            raise _ArrayMemoryError(tuple(shape), dtype)
        arr._chunk = Chunk(nbytes, ctx)
        arr._view_cache = None
    arr._offset = 0
    arr._strides = None
    arr._base = None
    if not COMPILED:
        arr.__class__ = NDArray
    return arr


def array_on(chunk, shape, dtype, offset=0, strides=None):
    """A new NDArray viewing ``chunk`` (byte ``offset``, byte ``strides``; None: the whole
    chunk, C-contiguous)."""
    return _new_view(chunk, shape, dtype, offset, strides, None, None)


def _new_view(chunk, shape, dtype, offset, strides, base, data):
    """A new NDArray on ``chunk``, with NumPy's ``base`` and its NumPy view ``data`` (or None:
    made by ``_data`` when needed)."""
    cls = NDArray
    arr = cls.__new__(cls) if COMPILED else _new_object(RawArray)  # see _new_object
    arr.shape = shape
    arr.dtype = dtype
    arr._chunk = chunk
    arr._offset = offset
    arr._strides = strides
    arr._view_cache = data
    arr._base = base
    if not COMPILED:
        arr.__class__ = NDArray
    return arr
