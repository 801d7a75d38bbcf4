"""rcusim's imports go one way: input → kernel → engine → results → twin → plots → commands
(errors and progress, used by every stage, import no other rcusim module).

The graph is built from the source with ``ast``: every import of an rcusim
module, at any depth. It must have no cycle, no module may import a later
stage, and no function may import one of rcusim's own modules (such imports
are how a cycle hides).
"""

import ast
import graphlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "rcusim"

#: Stages in import order; a module may import its own stage or an earlier one.
STAGES = ("errors", "progress", "input", "kernel", "engine", "results", "twin", "plots", "commands")
#: The compiled modules, by the stage that uses them.
EXTENSIONS = {"rcusim._seq": "kernel", "rcusim._core": "engine", "rcusim._membarrier": "engine"}
#: The package's front door, allowed to import any stage.
FACADES = {"rcusim", "rcusim.__main__"}


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def stage(module: str) -> str:
    if module in EXTENSIONS:
        return EXTENSIONS[module]
    return module.split(".")[1]


def imports_of(path: Path, me: str, known: set[str]) -> list[tuple[str, bool]]:
    """(imported rcusim module, inside a function?) for every import in the file of module `me`."""
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                found.extend((a.name, in_function) for a in child.names if a.name.split(".")[0] == "rcusim")
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package.split(".")[: len(package.split(".")) - (child.level - 1)]
                    base = ".".join(anchor + ([base] if base else []))
                if base.split(".")[0] != "rcusim":
                    continue
                for alias in child.names:
                    sub = f"{base}.{alias.name}"
                    found.append((sub if sub in known else base, in_function))
            visit(child, nested)

    visit(tree, False)
    return found


def import_graph(package: Path = PACKAGE):
    files = {module_name(p, package): p for p in package.rglob("*.py")}
    known = set(files) | set(EXTENSIONS)
    graph = {name: set() for name in files}
    local = []
    for name, path in files.items():
        for target, in_function in imports_of(path, name, known):
            if target != name:
                graph[name].add(target)
            if in_function:
                local.append(f"{name} imports {target} inside a function")
    return graph, local


def find_cycle(graph: dict[str, set[str]]):
    """A cycle of `graph` as a list of modules, or None."""
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as exc:
        return exc.args[1]
    return None


def backward_imports(graph: dict[str, set[str]]) -> list[str]:
    bad = []
    for module, targets in graph.items():
        if module in FACADES or module in EXTENSIONS:
            continue
        for target in targets:
            if target in FACADES:
                if target != "rcusim":  # importing the package itself only runs __init__
                    bad.append(f"{module} imports the facade {target}")
                continue
            if STAGES.index(stage(target)) > STAGES.index(stage(module)):
                bad.append(f"{module} ({stage(module)}) imports {target} ({stage(target)})")
    return sorted(bad)


def test_every_module_is_in_a_stage():
    graph, _ = import_graph()
    for module in graph:
        if module not in FACADES:
            assert stage(module) in STAGES, module


def test_no_import_cycle():
    graph, _ = import_graph()
    assert find_cycle(graph) is None


def test_imports_go_one_way():
    graph, _ = import_graph()
    assert backward_imports(graph) == []


def test_no_function_local_import_of_rcusim():
    _, local = import_graph()
    assert local == []


def test_a_cycle_is_found(tmp_path):
    pkg = tmp_path / "rcusim"
    (pkg / "results").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "results" / "__init__.py").write_text("")
    (pkg / "results" / "a.py").write_text("from rcusim.results.b import f\n")
    (pkg / "results" / "b.py").write_text("from .a import g\n")
    graph, _ = import_graph(pkg)
    cycle = find_cycle(graph)
    assert cycle is not None and set(cycle) == {"rcusim.results.a", "rcusim.results.b"}


def test_a_backward_and_a_hidden_import_are_found(tmp_path):
    pkg = tmp_path / "rcusim"
    for sub in ("input", "plots"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "input" / "config.py").write_text("def f():\n    from rcusim.plots import draw\n")
    (pkg / "plots" / "draw.py").write_text("")
    graph, local = import_graph(pkg)
    assert backward_imports(graph) == ["rcusim.input.config (input) imports rcusim.plots.draw (plots)"]
    assert local == ["rcusim.input.config imports rcusim.plots.draw inside a function"]


@pytest.mark.parametrize("name", ["run", "load_scenario", "Result"])
def test_public_api(name):
    import rcusim

    assert callable(getattr(rcusim, name))
