"""Our modules and every import between them, read with `ast` (module and function level)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

# The project's own top-level packages: an import of anything else is not ours.
ROOTS = ("activities", "workflows", "shared", "services")
# Calls that import a module named by a string literal.
_DYNAMIC = {"import_module", "__import__"}


@dataclass(frozen=True)
class Import:
    """One import statement's target, as seen from the module that runs it."""

    source: str
    target: str
    path: str
    line: int
    # Under `if TYPE_CHECKING:`: never runs, yet still ties the two modules together.
    type_only: bool = False

    def where(self) -> str:
        """`path:line` of the statement."""
        return f"{self.path}:{self.line}"


@dataclass
class Graph:
    """Modules by dotted name (with their files) and the imports found in them."""

    root: Path
    modules: dict[str, Path]
    imports: list[Import]

    def ours(self, name: str) -> bool:
        """Whether `name` is in one of our top-level packages."""
        return name.split(".")[0] in ROOTS


def module_name(root: Path, file: Path) -> str:
    """`activities/signer/worker.py` -> `activities.signer.worker`; a package's `__init__` is
    the package."""
    parts = list(file.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def read_graph(root: Path, packages: tuple[str, ...] = ROOTS) -> Graph:
    """Parse every `.py` file under `root/<package>` for each of `packages`."""
    files = sorted(f for package in packages if (root / package).is_dir()
                   for f in (root / package).rglob("*.py"))
    modules = {module_name(root, f): f for f in files}
    graph = Graph(root, modules, [])
    for name, file in modules.items():
        tree = ast.parse(file.read_text(encoding="utf-8"), filename=str(file))
        is_package = file.name == "__init__.py"
        rel = str(file.relative_to(root))
        # One entry per target and line: `from m import a, b` reads one module once.
        seen = dict.fromkeys(Import(name, _resolve(raw, modules), rel, line, type_only)
                             for raw, line, type_only in _raw_imports(tree, name, is_package,
                                                                      modules))
        graph.imports.extend(seen)
    return graph


def _resolve(raw: str, modules: dict[str, Path]) -> str:
    """The module that `raw` loads: itself, or its longest prefix that is one of ours."""
    parts = raw.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in modules:
            return candidate
    return raw


def _raw_imports(tree: ast.Module, module: str, is_package: bool,
                 modules: dict[str, Path]) -> list[tuple[str, int, bool]]:
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, type_only: bool) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, True)
            for child in node.orelse:
                visit(child, type_only)
            return
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno, type_only) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, module, is_package)
            for alias in node.names:
                # `from pkg import name` loads `pkg.name` when that is a module.
                sub = f"{base}.{alias.name}" if base else alias.name
                target = sub if alias.name != "*" and sub in modules else base
                found.append((target, node.lineno, type_only))
        elif isinstance(node, ast.Call) and _dynamic_target(node):
            found.append((_dynamic_target(node), node.lineno, type_only))
        for nested in ast.iter_child_nodes(node):
            visit(nested, type_only)

    visit(tree, False)
    return found


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The package a `from ... import` reads from, with relative levels resolved."""
    if node.level == 0:
        return node.module or ""
    parts = module.split(".")
    # In a package's `__init__`, `.` is the package itself; in a module, its parent.
    keep = len(parts) - node.level + (1 if is_package else 0)
    base = parts[:max(keep, 0)]
    if node.module:
        base += node.module.split(".")
    return ".".join(base)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _dynamic_target(node: ast.Call) -> str:
    """The literal module name of `importlib.import_module("x")` / `__import__("x")`."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name in _DYNAMIC and node.args and isinstance(node.args[0], ast.Constant) \
            and isinstance(node.args[0].value, str) and not node.args[0].value.startswith("."):
        return node.args[0].value
    return ""
