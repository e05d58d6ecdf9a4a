"""Every public function's docstring says whether it waits (ndengine/docstrings.py), and what
it says is what it does: each function is called with sample arrays, every wait for an
NDArray's values recorded (the engine's and the array's wait methods); a call that waited must
say so, and a call whose docstring says it returns at once must not have waited. Also: NumPy's parameters a
function does not take are named, and a function with no text of its own gets NumPy's
summary."""
import warnings

import numpy as np
import pytest

import ndengine as nd
from ndengine import docstrings

pytestmark = pytest.mark.filterwarnings("ignore")

# functions that a sample call must not run (they block, write files, print, change state)
_NOT_CALLED = {"waitall", "save", "savetxt", "savez", "savez_compressed", "load", "loadtxt",
               "genfromtxt", "fromfile", "show_runtime", "cancel", "settings", "register_op",
               "set_printoptions", "printoptions", "seterr", "seterrcall", "errstate",
               "setbufsize", "set_default_context", "seed", "frombuffer", "fromstring",
               "fromiter", "fromfunction", "vectorize", "apply_along_axis", "apply_over_axes",
               "piecewise"}


def _namespaces():
    return (("", nd), ("linalg", nd.linalg), ("fft", nd.fft), ("random", nd.random))


def np_namespace(namespace):
    return {"": np, "linalg": np.linalg, "fft": np.fft, "random": np.random}[namespace]


def _functions():
    for namespace, module in _namespaces():
        for name, function in docstrings._public_functions(module):
            yield namespace, name, function


class _Waits:
    """Counts the waits for NDArray values while installed (``monkeypatch.undo`` removes it)."""

    def __init__(self, monkeypatch):
        self.count = 0
        engine = nd.engine.get()
        for owner, attribute in ((nd.NDArray, "asnumpy"), (nd.NDArray, "wait_to_read"),
                                 (nd.NDArray, "wait_to_write"), (engine, "wait_for_var"),
                                 (engine, "wait_for_all")):
            monkeypatch.setattr(owner, attribute, self._counting(getattr(owner, attribute)))

    def _counting(self, original):
        def counted(*args, **kwargs):
            self.count += 1
            return original(*args, **kwargs)
        return counted


_SAMPLES = 5


def _sample(index):
    """Sample arguments number ``index`` (of ``_SAMPLES``), made by pushed ops."""
    square = nd.array(np.arange(1.0, 10.0).reshape(3, 3)) + nd.array(np.eye(3) * 5)
    vector = nd.arange(1.0, 7.0)
    return [(square,), (vector,), (square, square), (vector, vector), (vector, 2)][index]


def _call(monkeypatch, function, index):
    """Whether the call of sample ``index`` waited; None where the function refused it."""
    arguments = _sample(index)
    waits = _Waits(monkeypatch)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            function(*arguments)
    except Exception:  # noqa: BLE001 - not a call this function takes: try the next sample
        return None
    finally:
        monkeypatch.undo()
    return waits.count > 0


def test_docstrings_say_what_the_calls_do(monkeypatch):
    exercised, wrong = [], []
    for namespace, name, function in _functions():
        if name in _NOT_CALLED or getattr(np_namespace(namespace), name, None) is function:
            continue  # (NumPy's own functions keep NumPy's docstrings)
        doc = function.__doc__ or ""
        for index in range(_SAMPLES):
            waited = _call(monkeypatch, function, index)
            if waited is None:
                continue
            exercised.append(f"{namespace}.{name}")
            if waited and not docstrings._says_wait(doc):
                wrong.append(f"{namespace}.{name} waited; its docstring does not say so")
            if waited and docstrings.AT_ONCE in doc:
                wrong.append(f"{namespace}.{name} is said to return at once but waited")
            break
    try:
        nd.waitall()
    except Exception:  # noqa: BLE001 - a sample op failing when it runs is not the check
        pass
    assert not wrong, "\n".join(wrong)
    assert len(exercised) >= 150, exercised  # the check covered most of the namespace


def test_numpy_parameters_not_taken_are_named():
    doc = nd.exp.__doc__
    assert "``where``" in doc and "``signature``" in doc and "``dtype``" not in doc
    assert docstrings.AT_ONCE in doc


def test_a_function_without_text_gets_numpys_summary_and_none_is_completed_twice():
    def empty(x):
        return x
    doc = docstrings.completed("cumsum", empty)
    assert doc.startswith("As ``numpy.cumsum``: Return the cumulative sum")
    empty.__doc__ = doc
    assert docstrings.completed("cumsum", empty) == doc
