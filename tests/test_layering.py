"""The package's import graph points one way: no cycles (deferred imports included), operations import only the
op API and the base modules, the reader knows no operation, and the CLI uses the public API.

Imports are read from the sources (``ast``), so a deferred import inside a function counts like any other;
imports under ``if TYPE_CHECKING:`` do not (they never run)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "ir_runner"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(path: Path) -> set[str]:
    """The ir_runner modules ``path`` imports at run time (absolute names)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("ir_runner"):
                found.add(target)
                for alias in node.names:  # ``from . import x`` / ``from .ops import api`` import submodules
                    candidate = f"{target}.{alias.name}"
                    if _exists(candidate):
                        found.add(candidate)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("ir_runner"))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text()))
    return {module for module in found if module != name}


def _exists(module: str) -> bool:
    relative = Path(*module.split(".")[1:])
    return (PACKAGE / relative).with_suffix(".py").exists() or (PACKAGE / relative / "__init__.py").exists()


def _graph() -> dict[str, set[str]]:
    graph = {_module_name(path): _imports(path) for path in PACKAGE.rglob("*.py")}
    # a package's __init__ runs before any of its submodules: importing ``a.b`` imports ``a`` (unless the
    # importer is inside ``a``, which is then already being imported)
    for importer, imports in graph.items():
        for module in list(imports):
            parts = module.split(".")
            imports.update(parent for parent in (".".join(parts[:i]) for i in range(2, len(parts)))
                           if not importer.startswith(parent + ".") and parent != importer)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_no_import_cycles():
    cycle = _cycle(_graph())
    assert cycle is None, " -> ".join(cycle)


BASE_MODULES = ("ir_runner.errors", "ir_runner.types", "ir_runner.parallel", "ir_runner.blas",
                "ir_runner.strided_copy", "ir_runner.strings", "ir_runner.record")
"""The leaf modules every layer may import: errors, element types and shapes, the thread pool, BLAS products on
it, C-ordered copies of strided views on it, string tensors, the records' base."""
OPS = "ir_runner.ops"
TOOLKIT = f"{OPS}.toolkit"


def _family(module: str) -> str | None:
    """``ir_runner.ops.indexing.gather`` -> ``indexing``; None for the op API, the registry and the packages."""
    parts = module.split(".")
    return parts[2] if len(parts) == 4 and parts[:2] == ["ir_runner", "ops"] else None


def _op_modules(graph: dict[str, set[str]]) -> list[str]:
    """The operation modules: every module of a family package (not the toolkit), private ones (``_x``) aside."""
    return sorted(m for m in graph if _family(m) not in (None, "toolkit") and not m.split(".")[-1].startswith("_"))


def test_operations_import_only_the_op_api_the_toolkit_and_base_modules():
    """An operation module imports the op API (``ops.api``), the toolkit (``ops.toolkit.*``), the base modules
    and its own family's private kernel modules (``_x``): never another operation module, the registry, the
    reader (``ir_runner.ir``) or any engine module."""
    graph = _graph()
    bad = {}
    for module in sorted(m for m in graph if _family(m) not in (None, "toolkit")):
        family = _family(module)
        allowed = {f"{OPS}.api", TOOLKIT, f"{OPS}.{family}", *BASE_MODULES}
        wrong = sorted(i for i in graph[module] if i not in allowed and not i.startswith(TOOLKIT + ".")
                       and not (i.startswith(f"{OPS}.{family}._")))
        if wrong:
            bad[module] = wrong
    assert not bad


def test_the_toolkit_imports_no_operation():
    """The toolkit's modules import the op API, each other and the base modules only."""
    graph = _graph()
    bad = {m: sorted(i for i in imports if i not in (f"{OPS}.api", TOOLKIT, *BASE_MODULES)
                     and not i.startswith(TOOLKIT + "."))
           for m, imports in graph.items() if m.startswith(TOOLKIT + ".")}
    assert not {m: i for m, i in bad.items() if i}


def test_the_op_api_and_registry_import_only_base_modules():
    graph = _graph()
    assert sorted(i for i in graph[f"{OPS}.api"] if i not in BASE_MODULES) == []
    assert sorted(i for i in graph[f"{OPS}.registry"] if i not in (f"{OPS}.api", *BASE_MODULES)) == []


def test_every_operation_module_declares_ops_and_the_registry_finds_each():
    """Each operation module has a top-level ``OPS`` and is among the registry's built-in modules (found by
    walking the family packages); a private module (``_x``) has none and is imported only inside its family."""
    from ir_runner.ops.registry import builtin_modules

    graph = _graph()
    modules = _op_modules(graph)
    assert builtin_modules() == modules
    for module in graph:
        if _family(module) in (None, "toolkit"):
            continue
        path = PACKAGE.parent.joinpath(*module.split(".")).with_suffix(".py")
        declares = any(isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "OPS" for t in node.targets)
                       for node in ast.parse(path.read_text()).body)
        assert declares == (module in modules), module
    private = {m for m in graph if _family(m) and m.split(".")[-1].startswith("_")}
    outside = {m: sorted(i for i in imports if i in private and _family(i) != _family(m))
               for m, imports in graph.items()}
    assert not {m: i for m, i in outside.items() if i}


def test_the_reader_knows_no_operation():
    graph = _graph()
    bad = {module: sorted(i for i in imports if i.startswith("ir_runner.ops"))
           for module, imports in graph.items() if module.startswith("ir_runner.ir")}
    assert not {m: i for m, i in bad.items() if i}


def test_the_cli_uses_the_public_api():
    """The CLI imports ir_runner's public names (the package, ``model``, ``errors``, ``types``), never the engine's
    internals (inference, plan, runtime, the registry or the operations)."""
    internal = ("ir_runner.infer", "ir_runner.plan", "ir_runner.runtime", "ir_runner.ops", "ir_runner.graph",
                "ir_runner.ir")
    graph = _graph()
    bad = {module: sorted(i for i in imports if i.startswith(internal))
           for module, imports in graph.items() if module.startswith("ir_runner.cli")}
    assert not {m: i for m, i in bad.items() if i}


def test_the_checker_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def _imported(path: Path) -> set[str]:
    """Every module ``path`` names in an import statement (absolute names; relative ones are left out)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_scripts_and_tests_do_not_import_each_other_or_edit_sys_path():
    """Scripts run as modules (``python -m scripts.NAME``): none edits ``sys.path``, none imports a test module
    (only ``tests.helpers`` and ``tests.hostile``, the code shared with the tests), and no test imports a script."""
    root = PACKAGE.parent
    scripts = sorted((root / "scripts").glob("*.py"))
    assert scripts
    shared = ("tests.helpers", "tests.hostile")
    bad = {}
    for path in scripts:
        names = _imported(path)
        wrong = sorted(n for n in names if n.split(".")[0] == "tests" and n != "tests"
                       and not n.startswith(shared))
        if "sys.path" in path.read_text() or wrong:
            bad[path.name] = wrong or ["sys.path"]
    for path in sorted((root / "tests").rglob("*.py")):
        wrong = sorted(n for n in _imported(path) if n.split(".")[0] == "scripts")
        if wrong:
            bad[str(path.relative_to(root))] = wrong
    assert not bad
