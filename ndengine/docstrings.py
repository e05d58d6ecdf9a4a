"""What each public function gives back, and what its docstring says beyond its own text,
added at import from the package itself (as ``catalog`` and ``stubs`` are made from it).

``RETURNS``: what a function of ``ndengine`` (key ""), ``ndengine.linalg``, ``fft``, ``random``
or a ``random.Generator`` returns where it is not an NDArray; the type stubs are written from it
(stubs.py) and so is the waiting rule below.

``install()`` completes the docstring of every public function of those namespaces:

* Waiting. A text that speaks of waiting is kept as it is (the size of the result depends on
  the values, a Python value is returned, a file is written). A function returning NDArrays
  (``RETURNS``: NDArray unless listed; "Any": a value-dependent mix of them) or writing an
  NDArray in place by a pushed op (``RETURNS`` None, its text saying "push") gets
  ``AT_ONCE``. Any other (a Python value read from shapes or dtypes, a context, a setting)
  gets no line: its own text says what it reads. tests/project/test_docstrings.py calls every
  function it can with sample arrays and checks both ways: a call that waited says so, and a
  call said to return at once did not wait.
* Parameters. NumPy's parameters of the function of the same name that this one does not
  take are named (passing one raises TypeError).
* A function with no text of its own gets NumPy's summary line.

NumPy's own functions that ndengine re-exports as they are (``shape``, ``result_type``,
``array2string``, ``savetxt``, ...) keep NumPy's docstring untouched: they are NumPy's objects.
They read an NDArray's values through ``__array__`` (a wait) where they need them.
"""
import inspect
import re

import numpy as np

__all__ = ["RETURNS", "AT_ONCE", "install", "completed", "is_function"]

AT_ONCE = ("Returns at once: the work is pushed to the engine, which runs it in the background; "
           "reading a result's values (``asnumpy``, ``print``, ``float``, ``wait_to_read``) "
           "waits for it, and an error inside raises there.")
_NOT_TAKEN = "Of NumPy's parameters, not taken (passing one raises TypeError): "
_NUMPY_NAMESPACES = {"": np, "linalg": np.linalg, "fft": np.fft, "random": np.random}
_P = inspect.Parameter

TUPLE, TUPLES, LIST = "tuple[NDArray, NDArray]", "tuple[NDArray, ...]", "list[NDArray]"
BOOL = "builtins.bool"  # ``bool`` in the stub is numpy.bool, which ndengine exports
# what a function returns where it is not an NDArray (namespace -> name -> return type)
RETURNS = {
    "": {
        "waitall": "None", "save": "None", "put": "None", "put_along_axis": "None",
        "allclose": BOOL, "array_equal": BOOL, "iscomplexobj": BOOL, "isrealobj": BOOL,
        "issubdtype": BOOL, "divmod": TUPLE, "histogram": TUPLE,
        "histogram2d": "tuple[NDArray, NDArray, NDArray]",
        "histogramdd": "tuple[NDArray, list[NDArray]]", "polydiv": TUPLE, "polyfit": "Any",
        "broadcast_arrays": TUPLES, "meshgrid": TUPLES, "nonzero": TUPLES,
        "split": LIST, "array_split": LIST, "hsplit": LIST, "vsplit": LIST,
        "dsplit": LIST, "fill_diagonal": "None", "ix_": TUPLES, "diag_indices": TUPLES,
        "tril_indices": TUPLES, "triu_indices": TUPLES, "unique_counts": TUPLE,
        "unique_inverse": TUPLE, "unique_all": "tuple[NDArray, NDArray, NDArray, NDArray]",
        "unravel_index": TUPLES, "gradient": "NDArray | tuple[NDArray, ...]",
        "cpu": "Context", "gpu": "Context", "current_context": "Context",
        "cancel": "int", "get_settings": "dict[str, Any]",
        "settings": "AbstractContextManager[None]",
        "register_op": "Callable[[Callable[..., Any]], Callable[..., Any]]",
        # the type depends on the arguments' values
        "load": "Any", "show_runtime": "Any", "unique": "Any", "average": "Any",
        "indices": "Any", "array_equiv": BOOL, "isfortran": BOOL,
        "may_share_memory": BOOL, "shares_memory": BOOL, "copyto": "None", "place": "None",
        "putmask": "None", "frexp": TUPLE, "modf": TUPLE, "tril_indices_from": TUPLES,
        "triu_indices_from": TUPLES, "unstack": TUPLES, "common_type": "type", "mintypecode": "str",
        "min_scalar_type": "np.dtype[Any]", "einsum_path": "tuple[list[Any], str]"},
    "linalg": {"eig": "EigResult", "eigh": "EighResult", "slogdet": "SlogdetResult",
               "lstsq": "tuple[NDArray, NDArray, NDArray, NDArray]", "svd": "Any",
               "qr": "Any"},
    "fft": {},
    "random": {"seed": "None", "shuffle": "None", "default_rng": "Generator"},
    "Generator": {"shuffle": "None"},
}


def _returns_arrays(kind):
    return kind == "Any" or "NDArray" in kind


def is_function(value):
    """Whether a public name's value is a function (not a class, not a module)."""
    return callable(value) and not isinstance(value, type) and not inspect.ismodule(value)


# phrases that say the call itself waits for values ("raised at the wait" is about a later read)
_WAITS = re.compile(r"\bwaits\b|\(a wait\)|\bwait(ing)? for\b|\bblocks?\b|"
                    r"\bread at the call\b|\bcomputed at the call\b", re.IGNORECASE)


def _says_wait(text):
    """Whether ``text`` says the call waits (for some arguments: its text says which)."""
    return _WAITS.search(text) is not None


def _not_taken(function, numpy_function):
    """NumPy's parameter names that ``function`` does not take ([] when it takes **kwargs or
    either signature cannot be read)."""
    try:
        ours = inspect.signature(function).parameters
        theirs = inspect.signature(numpy_function).parameters
    except (TypeError, ValueError):
        return []
    if any(p.kind is _P.VAR_KEYWORD for p in ours.values()):
        return []
    return [name for name, p in theirs.items()
            if name not in ours and p.kind not in (_P.VAR_POSITIONAL, _P.VAR_KEYWORD)]


def _numpy_summary(numpy_function):
    text = inspect.getdoc(numpy_function) or ""
    for paragraph in text.split("\n\n"):
        line = " ".join(paragraph.split())
        if line and "(" not in line.split(" ")[0]:  # not a signature line
            return line
    return ""


def completed(name, function, namespace=""):
    """The docstring of ``function``, public as ``name`` in ``namespace`` (see the module
    docstring)."""
    text = inspect.cleandoc(function.__doc__ or "")
    if AT_ONCE in text or _NOT_TAKEN in text:
        return function.__doc__  # completed already
    numpy_function = getattr(_NUMPY_NAMESPACES.get(namespace), name, None)
    if not callable(numpy_function) or isinstance(numpy_function, type):
        numpy_function = None
    parts = [text] if text else []
    if not text and numpy_function is not None:
        parts.append(f"As ``numpy.{_dotted(namespace, name)}``: {_numpy_summary(numpy_function)}")
    kind = RETURNS.get(namespace, {}).get(name, "NDArray")
    if not _says_wait(text) and (_returns_arrays(kind)
                                 or kind == "None" and "push" in text.lower()):
        parts.append(AT_ONCE)
    missing = _not_taken(function, numpy_function) if numpy_function is not None else []
    if missing:
        parts.append(_NOT_TAKEN + ", ".join(f"``{p}``" for p in missing) + ".")
    return "\n\n".join(parts) or None


def _dotted(namespace, name):
    return f"{namespace}.{name}" if namespace else name


def _public_functions(module):
    for name in getattr(module, "__all__", None) or dir(module):
        if name.startswith("_"):
            continue
        value = getattr(module, name, None)
        if is_function(value):
            yield name, value


def install(package):
    """Complete the docstrings of the public functions of ``package`` (ndengine, which calls
    this at the end of its import) and its ``linalg``, ``fft`` and ``random`` (idempotent)."""
    for namespace, module in (("", package), ("linalg", package.linalg),
                              ("fft", package.fft), ("random", package.random)):
        numpy_module = _NUMPY_NAMESPACES[namespace]
        for name, function in _public_functions(module):
            if getattr(numpy_module, name, None) is function:
                continue  # NumPy's own function, re-exported: its docstring is NumPy's
            doc = completed(name, function, namespace)
            if doc == function.__doc__:
                continue
            for target in (function, getattr(function, "func", None)):  # a ufunc object's
                try:                                                     # function too
                    if target is not None:
                        target.__doc__ = doc
                except (AttributeError, TypeError):  # a builtin's docstring is read-only
                    pass
