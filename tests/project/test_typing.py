"""Type information: the stored stubs are what ``ndengine.stubs`` generates now, they say
what the functions really return, they ship in the package, and a type checker reads them
(mypy, where installed: ``reveal_type(nd.exp(x))`` is NDArray, a wrong keyword is flagged)."""
import ast
import fnmatch
import importlib
import inspect
import os
import pathlib
import subprocess
import sys
import tomllib

import pytest

import ndengine as nd
from ndengine.stubs import stubs

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "ndengine"


def test_the_stored_stubs_are_up_to_date():
    for file_name, text in stubs().items():
        stored = PACKAGE / file_name
        assert stored.exists() and stored.read_text() == text, (
            f"ndengine/{file_name} is out of date: python -m ndengine.stubs")


def test_every_submodule_stub_is_a_module_at_run_time():
    for file_name in stubs():
        if file_name != "__init__.pyi":
            name = file_name.removesuffix(".pyi")
            assert importlib.import_module(f"ndengine.{name}") is getattr(nd, name)


def test_the_wheel_carries_py_typed_and_the_stubs():
    assert (PACKAGE / "py.typed").exists()
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["ndengine"]
    for file_name in ["py.typed", *stubs()]:
        assert any(fnmatch.fnmatch(file_name, pattern) for pattern in patterns), file_name


def _declared_returns(text):
    """{function name: its return annotation} of a stub's plain (not overloaded) defs."""
    tree = ast.parse(text)
    return {node.name: ast.unparse(node.returns) for node in tree.body
            if isinstance(node, ast.FunctionDef) and not node.decorator_list}


_CHECKS = {"NDArray": lambda r: isinstance(r, nd.NDArray), "None": lambda r: r is None,
           "builtins.bool": lambda r: isinstance(r, bool),
           "list[NDArray]": lambda r: isinstance(r, list)
           and all(isinstance(e, nd.NDArray) for e in r)}
_CHECKS["tuple[NDArray, list[NDArray]]"] = lambda r: isinstance(r, tuple) and len(r) == 2 \
    and isinstance(r[0], nd.NDArray) and _CHECKS["list[NDArray]"](r[1])  # histogramdd


def _check(annotation):
    if annotation in _CHECKS:
        return _CHECKS[annotation]
    if annotation.startswith("tuple[NDArray"):
        return lambda r: isinstance(r, tuple) and all(isinstance(e, nd.NDArray) for e in r)
    return _CHECKS.get(annotation)


def _matrix():
    # values in (0, 1): in every function's domain (arccos, quantile's q, ...)
    return nd.linspace(0.1, 0.6, 6).reshape(2, 3)


def _probe_result(function):
    """(True, the result) of ``function`` called with a small float matrix for each
    required positional parameter, or (False, None) where it needs other arguments (it
    raises, at the call or in the op: waitall)."""
    parameters = inspect.signature(function).parameters.values()
    required = [p for p in parameters if p.default is p.empty
                and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if any(p.kind is p.KEYWORD_ONLY for p in required):
        return False, None
    try:
        result = function(*(_matrix() for _ in required))
        nd.waitall()
        return True, result
    except Exception:  # noqa: BLE001 - arguments this probe cannot guess
        return False, None


@pytest.mark.parametrize("file_name", ["__init__.pyi", "linalg.pyi", "fft.pyi", "random.pyi"])
def test_the_declared_return_types_are_what_the_functions_return(file_name):
    """Each function the probe can call returns what its stub declares (a new function
    returning a tuple must be listed in ndengine/docstrings.py's RETURNS)."""
    module = nd if file_name == "__init__.pyi" else getattr(nd, file_name[:-4])
    skipped = {"waitall", "cancel", "show_runtime", "save", "load", "seed"}
    wrong, called = [], 0
    for name, annotation in _declared_returns(stubs()[file_name]).items():
        check = _check(annotation)
        if check is None or name in skipped:
            continue
        ran, result = _probe_result(getattr(module, name))
        called += ran
        if ran and not check(result):
            wrong.append(f"{name}: declared {annotation}, returned {type(result).__name__}")
    nd.waitall()
    assert wrong == [] and called > 0


def test_the_declared_types_of_ndarray_members():
    tree = ast.parse(stubs()["__init__.pyi"])
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "NDArray")
    wrong = []
    for node in cls.body:
        if not isinstance(node, ast.FunctionDef) or node.name.startswith("_") or \
                any(ast.unparse(d).endswith(".setter") for d in node.decorator_list):
            continue
        check = _check(ast.unparse(node.returns))
        if check is None:
            continue
        x = _matrix()
        if node.decorator_list:  # a property
            ran, result = True, getattr(x, node.name)
        else:
            ran, result = _probe_result(getattr(x, node.name))
        if ran and not check(result):
            wrong.append(f"{node.name}: declared {ast.unparse(node.returns)}, "
                         f"returned {type(result).__name__}")
    nd.waitall()
    assert wrong == []


_SNIPPET = """\
import ndengine as nd
x = nd.ones((2, 3))
reveal_type(nd.exp(x))
reveal_type(x.sum(axis=0) + 1)
reveal_type(nd.linalg.eigh(x).eigenvalues)
reveal_type(x.shape)
nd.exp(x, bogus=1)
"""


def test_mypy_reads_the_stubs(tmp_path):
    pytest.importorskip("mypy")
    snippet = tmp_path / "snippet.py"
    snippet.write_text(_SNIPPET)
    # the package as a checker finds it in a plain install: from its folder (an editable
    # install's import hook is invisible to mypy); errors in its sources are not ours here
    env = {**os.environ, "MYPYPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--follow-imports=silent",
         "--cache-dir", str(tmp_path / "cache"), str(snippet)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    lines = result.stdout.splitlines()
    revealed = [line.split("Revealed type is ")[1] for line in lines if "Revealed type" in line]
    assert revealed == ['"ndengine.NDArray"', '"ndengine.NDArray"', '"ndengine.NDArray"',
                        '"tuple[int, ...]"'], result.stdout
    errors = [line for line in lines if ": error:" in line]
    assert len(errors) == 1 and 'Unexpected keyword argument "bogus" for "exp"' in errors[0], \
        result.stdout
