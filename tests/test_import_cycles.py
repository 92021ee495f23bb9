"""No import cycle among a package's modules: every import counts, the ones inside functions
and under `TYPE_CHECKING` too (a cycle hidden in a function is still a cycle of the design)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _modules(root: Path, package: str) -> dict[str, tuple[Path, bool]]:
    """Each module of `package` under `root` by dotted name: its file and whether it is a
    package."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The dotted names an import statement loads (`from x import y`: `x.y` when `y` may be
    a submodule; the walk up to a known module happens in `_graph`)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = module if is_package else module.rpartition(".")[0]
        parts = package.split(".")
        anchor = ".".join(parts[: len(parts) - node.level + 1])
        base = f"{anchor}.{base}" if base else anchor
    return [f"{base}.{alias.name}" for alias in node.names]


def _graph(root: Path, package: str) -> dict[str, set[str]]:
    """Which modules of `package` each of its modules imports."""
    modules = _modules(root, package)
    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in modules.items():
        edges = graph.setdefault(name, set())
        for node in ast.walk(ast.parse(path.read_bytes())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _targets(name, is_package, node):
                    while target and target not in modules:
                        target = target.rpartition(".")[0]
                    if target and target != name:
                        edges.add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(sorted(group))
    return groups


def test_cycle_scan_sees_function_level_and_relative_imports(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def f():\n    from pkg.sub import b\n")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "b.py").write_text("from .. import a\n")
    (package / "c.py").write_text("from pkg import a\n")
    graph = _graph(tmp_path, "pkg")
    assert graph["pkg.a"] == {"pkg.sub.b"}
    assert graph["pkg.sub.b"] == {"pkg.a"}
    assert _cycles(graph) == [["pkg.a", "pkg.sub.b"]]


@pytest.mark.parametrize("package", ["ddplint", "guards"])
def test_no_import_cycle(package: str) -> None:
    graph = _graph(ROOT, package)
    found = _cycles(graph)
    described = [
        "; ".join(
            f"{module} -> {', '.join(sorted(graph[module] & set(group)))}" for module in group
        )
        for group in found
    ]
    assert not found, "import cycles:\n" + "\n".join(described)


# ddplint's layers, lowest first: a module may import from its own layer and those below.
# A module not named here (checker, runner, fixer, CLI, outputs, ...) sits on top.
_FOUNDATION = ("engine", "names", "positions", "source", "logical_lines", "diagnostics")
_LAYERS = {
    "ddplint": 0,  # the package itself: its version
    **{f"ddplint.{name}": 0 for name in (*_FOUNDATION, "parsing", "project_files")},
    "ddplint.context": 1,
    "ddplint.domain": 2,
    "ddplint.project": 3,
    "ddplint.rules": 4,
    "ddplint.rule": 4,
}
_TOP = 5


def _layer(module: str) -> int:
    """The layer of `module`: that of its longest named prefix, else the top."""
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        layer = _LAYERS.get(".".join(parts[:end]))
        if layer is not None and (end == len(parts) or end > 1):
            return layer
    return _TOP


def _upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        for target in targets
        if _layer(target) > _layer(module)
    )


def test_layer_scan_sees_function_level_upward_imports(tmp_path: Path) -> None:
    package = tmp_path / "ddplint"
    (package / "domain").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "context.py").write_text("def f():\n    from ddplint.domain import facts\n")
    (package / "domain" / "__init__.py").write_text("from ddplint import context\n")
    (package / "domain" / "facts.py").write_text("")
    assert _upward_imports(_graph(tmp_path, "ddplint")) == [
        "ddplint.context -> ddplint.domain.facts"
    ]


def test_no_lower_layer_imports_a_higher_one() -> None:
    """context imports no domain, project or rule; domain no project, rule or checker; the
    project no rule, checker, runner or CLI (imports inside functions count)."""
    assert not _upward_imports(_graph(ROOT, "ddplint"))


def test_no_rule_imports_another_rule() -> None:
    """A rule package imports only its own modules among the rules: copying one rule folder
    is all it takes to add a rule."""
    graph = _graph(ROOT, "ddplint")

    def rule_of(module: str) -> str | None:
        parts = module.split(".")
        return parts[2] if len(parts) > 2 and parts[:2] == ["ddplint", "rules"] else None

    crossing = sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        for target in targets
        if rule_of(module) and rule_of(target) and rule_of(target) != rule_of(module)
    )
    assert not crossing
