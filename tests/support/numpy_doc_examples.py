"""NumPy's own docstring examples as differential cases.

``run_doc_examples(numpy_function, names)`` runs every example of the function's NumPy
docstring twice, in order: once with ``np`` being NumPy, once with ``np`` being a proxy on
which the names ndengine has (the function under test, the array creators, the operators...)
are ndengine's. Each example that is an expression must give the same value (shape, dtype,
values; floats within a tolerance), or both must raise errors of one family. Examples whose
NumPy value has a dtype ndengine lacks (strings, objects) are skipped, as are the examples
listed in ``skip`` (substrings of their source). Where ndengine refuses a dtype with its
TypeError (an op that does not compute float16 or complex yet; a real matrix whose
eigenvalues NumPy makes complex, which an asynchronous op cannot know at the call), the
NumPy values stand in from then on.
"""
import contextlib
import doctest
import io
import types
import warnings

import numpy as np

import ndengine as nd
from ndarray_helpers import DTYPES, EXTENDED, drain_errors

_ERRORS = (TypeError, ValueError, IndexError, ZeroDivisionError, KeyError, AttributeError,
           NotImplementedError, NameError)
_SEEDED = 12345


class _Random:
    """numpy.random with default_rng seeded, so both runs draw the same numbers."""

    def __getattr__(self, name):
        if name == "default_rng":
            return lambda *args, **kwargs: np.random.default_rng(_SEEDED)
        return getattr(np.random, name)


class _Namespace(types.SimpleNamespace):
    def __init__(self, numpy_module, ndengine_module):
        super().__init__()
        self._numpy, self._ndengine = numpy_module, ndengine_module

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if self._ndengine is not None and name in getattr(self._ndengine, "__all__", ()):
            return getattr(self._ndengine, name)
        return getattr(self._numpy, name)


def proxy(use_ndengine):
    """``np`` for one run: NumPy, or NumPy with ndengine's functions where it has them."""
    root = _Namespace(np, nd if use_ndengine else None)
    root.random = _Random()
    root.linalg = _Namespace(np.linalg, nd.linalg if use_ndengine else None)
    root.fft = _Namespace(np.fft, nd.fft if use_ndengine else None)
    return root


def _value(result):
    """What an example gave, as NumPy values (None when nothing to compare)."""
    if isinstance(result, (list, tuple)):
        parts = [_value(r) for r in result]
        return None if any(p is None for p in parts) else parts
    if isinstance(result, nd.NDArray):
        return result.asnumpy()
    if isinstance(result, (np.ndarray, np.generic, bool, int, float)):
        return np.asarray(result)
    return None


def _refused_dtype(error):
    return isinstance(error, TypeError) and ("does not support dtype" in str(error)
                                             or "decides from the values" in str(error))


def _supported(value):
    if isinstance(value, list):
        return all(_supported(v) for v in value)
    return value.dtype in DTYPES or value.dtype in EXTENDED


def _same(expected, got, where):
    if isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected), where
        for e, g in zip(expected, got):
            _same(e, g, where)
        return
    assert got.shape == expected.shape, f"{where}: shape {got.shape} != {expected.shape}"
    assert got.dtype == expected.dtype, f"{where}: dtype {got.dtype} != {expected.dtype}"
    if got.dtype.kind in "fc":
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-8, equal_nan=True,
                                   err_msg=where)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=where)


def _run(source, namespace):
    """(value of the example if it is an expression, error raised)."""
    try:
        code = compile(source, "<example>", "eval")
    except SyntaxError:
        code = None
    np.random.seed(_SEEDED)  # both runs draw the same numbers from the legacy functions
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"), \
                contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            if code is not None:
                return eval(code, namespace), None  # noqa: S307 - NumPy's own examples
            exec(compile(source, "<example>", "exec"), namespace)  # noqa: S102
            return None, None
    except _ERRORS as exc:
        return None, exc


def doc_examples(function):
    parser = doctest.DocTestParser()
    return [ex.source.strip() for ex in parser.get_examples(function.__doc__ or "")]


def _proxied(value, root):
    """What an import in an example binds, in the proxy's world (``from numpy import linalg
    as LA``, ``from numpy.linalg import inv``)."""
    spaces = ((root, np), (root.linalg, np.linalg), (root.fft, np.fft))
    for space, module in spaces:
        if value is module:
            return space
    name = getattr(value, "__name__", None)
    for space, module in spaces:
        if name and getattr(module, name, None) is value:
            return getattr(space, name)
    return value


def _import(source, namespace):
    scratch = {}
    try:
        exec(source, scratch)  # noqa: S102 - NumPy's own examples
    except ImportError:  # matplotlib and such: the examples using it fail with NameError
        return
    scratch.pop("__builtins__", None)
    for name, value in scratch.items():
        namespace[name] = _proxied(value, namespace["np"])


def run_doc_examples(function, skip=()):
    """Run NumPy's examples of ``function`` both ways; returns how many were compared."""
    spaces = [{"np": proxy(False)}, {"np": proxy(True)}]
    compared = 0
    for source in doc_examples(function):
        if any(part in source for part in skip):
            continue
        if source.startswith(("import ", "from ")):
            for namespace in spaces:
                _import(source, namespace)
            continue
        (expected, np_error), (got, nd_error) = (_run(source, ns) for ns in spaces)
        if nd_error is not None:
            drain_errors()
        where = f"{function.__name__}: {source}"
        if np_error is None and _refused_dtype(nd_error):
            # a complex (or string...) array: ndengine refuses it with a clear TypeError;
            # the example's NumPy values stand in, so later examples refuse them too
            for name, value in spaces[0].items():
                if isinstance(value, (np.ndarray, np.generic, tuple, list)):
                    spaces[1][name] = value
            continue
        if np_error is not None:
            assert nd_error is not None, f"{where}: NumPy raised {np_error!r}, ndengine not"
            continue
        expected = _value(expected)
        if expected is None or not _supported(expected):
            continue
        assert nd_error is None, f"{where}: ndengine raised {nd_error!r}"
        try:
            got = _value(got)
        except _ERRORS as exc:  # raised at the wait
            drain_errors()
            if _refused_dtype(exc):
                continue
            raise AssertionError(f"{where}: ndengine raised {exc!r} at the wait") from exc
        assert got is not None, f"{where}: ndengine gave {got!r}"
        _same(expected, got, where)
        compared += 1
    return compared
