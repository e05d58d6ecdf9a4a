"""The package's lower layers import one way, read from the source (an AST walk of every
import, at module level and inside functions): ``engine`` imports nothing else of the package;
``ops`` imports ``ops`` and ``engine``; ``core`` imports ``core``, ``ops`` and ``engine``. None
of them imports an API layer (``ndarray``, ``array_api``, ``autograd``, ``kv``, ``profiler``)
or the top-level package. So the README's "``engine/`` and ``ops/`` know nothing of arrays" is
checked, not stated. (The order of the files inside a layer is not checked here yet.)
"""
import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "ndengine"
# what each lower layer may import of the package (itself included)
ALLOWED = {"engine": {"engine"}, "ops": {"ops", "engine"}, "core": {"core", "ops", "engine"}}


def module_name(path):
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path):
    """(line, module) of every import of the package in ``path``, relative ones resolved;
    ``from PKG import name`` gives ``PKG.name`` (a submodule or a name of PKG: both are
    PKG's layer unless PKG is the top-level package)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return [(line, module) for line, module in found
            if module == "ndengine" or module.startswith("ndengine.")]


def layer_of(module):
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None  # None: the top-level package itself


def violations(layer):
    found = []
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        for line, module in imported_modules(path):
            target = layer_of(module)
            if target not in ALLOWED[layer]:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {module}")
    return found


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_lower_layers_import_only_downward(layer):
    assert violations(layer) == []


def test_the_check_sees_imports_inside_functions_and_relative_ones(tmp_path, monkeypatch):
    """The walk itself: a function-level relative import upward is found."""
    fake = tmp_path / "ndengine"
    (fake / "ops").mkdir(parents=True)
    (fake / "ops" / "rules.py").write_text(
        "def rule():\n    from ..core.pipeline import invoke\n    from . import registry\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", fake)
    assert violations("ops") == ["ndengine/ops/rules.py:2 imports ndengine.core.pipeline.invoke"]
