"""The package's layout, read from the source (an AST walk of every import, at module level and
inside functions), so the README's account of it is checked, not stated:

* layers import downward: ``engine`` < ``ops`` < ``core`` < ``ndarray`` < the API layers beside
  it (``array_api``, ``autograd``, ``kv``, ``profiler``) < the top-level package, which nothing
  inside the package imports (``__main__``, the demo, sits above it all);
* no import cycle, not even through a function-level import: inside each layer the files
  depend on each other one way too (each package's ``__init__`` docstring lists the order);
* no folder holds more than ``MAX_MODULES`` modules and no module more than ``MAX_LINES`` lines;
* no binary is tracked but the documentation's pictures;
* functions with NumPy's signatures come from one factory: ``exec`` and ``eval`` are called in
  ``ndarray/signatures.py`` only.
"""
import ast
import pathlib
import subprocess
from collections import Counter

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "ndengine"
LOWER = {"engine": set(), "ops": {"engine"}, "core": {"ops", "engine"}}
LOWER["ndarray"] = {"core"} | LOWER["core"]
for _api in ("array_api", "autograd", "kv", "profiler"):
    LOWER[_api] = {"ndarray"} | LOWER["ndarray"]
# what each layer may import of the package: itself and the layers below it
ALLOWED = {layer: {layer} | below for layer, below in LOWER.items()}
MAX_MODULES = 25
MAX_LINES = 500
PICTURES = {".png", ".svg"}


def module_name(path, package=PACKAGE):
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path, package=PACKAGE):
    """(line, module) of every import of the package in ``path``, relative ones resolved;
    ``from PKG import name`` gives ``PKG.name`` (a submodule or a name of PKG)."""
    name = module_name(path, package)
    here = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")[:len(here.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return [(line, module) for line, module in found
            if module == "ndengine" or module.startswith("ndengine.")]


def layer_of(module):
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None  # None: the top-level package itself


def violations(layer, package=PACKAGE):
    found = []
    for path in sorted((package / layer).rglob("*.py")):
        for line, module in imported_modules(path, package):
            target = layer_of(module)
            if target not in ALLOWED[layer]:
                found.append(f"{path.relative_to(package.parent)}:{line} imports {module}")
    return found


def import_graph(package=PACKAGE):
    """module -> the package's modules it imports (a name imported from a package counts as
    that package's module unless it is a submodule)."""
    paths = {module_name(p, package): p for p in package.rglob("*.py")}
    graph = {}
    for name, path in paths.items():
        targets = set()
        for _, module in imported_modules(path, package):
            while module and module not in paths:
                module = module.rpartition(".")[0]
            if module and module != name:
                targets.add(module)
        graph[name] = targets
    return graph, paths


def cycles(graph):
    """The strongly connected components of more than one module (Tarjan's algorithm,
    iterative)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def import_cycles(package=PACKAGE):
    graph, _ = import_graph(package)
    return sorted(cycles(graph))


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layers_import_only_downward(layer):
    assert violations(layer) == []


def test_nothing_inside_the_package_imports_the_top_level_package():
    found = [f"{path.relative_to(ROOT)}:{line}"
             for path in sorted(PACKAGE.rglob("*.py"))
             if path.parent != PACKAGE
             for line, module in imported_modules(path)
             if layer_of(module) is None or layer_of(module) == "__main__"]
    assert found == []


def test_every_layer_is_checked():
    layers = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert layers == set(ALLOWED)


def test_no_import_cycle():
    assert import_cycles() == []


def test_folders_and_modules_stay_small():
    per_folder = Counter(path.parent for path in PACKAGE.rglob("*.py"))
    crowded = {str(f.relative_to(ROOT)): n for f, n in per_folder.items() if n > MAX_MODULES}
    long = {str(p.relative_to(ROOT)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert (crowded, long) == ({}, {})


def test_no_binary_is_tracked_but_pictures():
    try:
        tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                                 check=True).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    binaries = [name for name in tracked if name and (ROOT / name).is_file()
                and pathlib.Path(name).suffix not in PICTURES
                and b"\0" in (ROOT / name).read_bytes()[:8192]]
    assert binaries == []


def code_made_from_text(package=PACKAGE):
    """Where the package calls ``exec`` or ``eval`` (file:line)."""
    found = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("exec", "eval")):
                found.append(f"{path.relative_to(package.parent)}:{node.lineno}")
    return found


def test_one_factory_makes_functions_from_text():
    assert {place.rpartition(":")[0] for place in code_made_from_text()} == {
        "ndengine/ndarray/signatures.py"}


# ------------------------------------------------------------------ the checks themselves

def _plant(tmp_path, files):
    for name, text in files.items():
        path = tmp_path / "ndengine" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for folder in {p.parent for p in (tmp_path / "ndengine").rglob("*.py")}:
        (folder / "__init__.py").touch()
    return tmp_path / "ndengine"


def test_the_walk_sees_imports_inside_functions_and_relative_ones(tmp_path):
    package = _plant(tmp_path, {"ops/rules.py": "def rule():\n"
                                "    from ..core.pipeline import invoke\n"
                                "    from . import registry\n"})
    assert violations("ops", package) == [
        "ndengine/ops/rules.py:2 imports ndengine.core.pipeline.invoke"]


def test_the_cycle_check_finds_cycles_through_functions_and_folders(tmp_path):
    ring = {f"core/m{i}.py": f"from . import m{(i + 1) % 3}\n" for i in range(3)}
    package = _plant(tmp_path, {
        **ring,
        "ops/a.py": "def f():\n    from .b import g\n",      # closed by a function's import
        "ops/b.py": "from .a import f\n",
        "ops/x/c.py": "from ..d import h\n",                 # across folders
        "ops/d.py": "def h():\n    from .x import c\n",
        "ops/e.py": "from .a import f\n"})                  # imports into a cycle: no cycle
    assert import_cycles(package) == [
        ["ndengine.core.m0", "ndengine.core.m1", "ndengine.core.m2"],
        ["ndengine.ops.a", "ndengine.ops.b"], ["ndengine.ops.d", "ndengine.ops.x.c"]]
