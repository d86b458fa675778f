"""The package's shape: no import cycle among orgkit's modules, every package it imports declared."""

from __future__ import annotations

import ast
import functools
import sys
from pathlib import Path

from conftest import REPO

PACKAGE = REPO / "orgkit"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Every import in a module: at its top, under TYPE_CHECKING, and inside functions too.

    A deferred import inside a function still makes the two modules depend on each
    other; it only hides the cycle until a call runs it, so it counts.
    """
    return [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]


@functools.lru_cache(maxsize=1)
def _parsed() -> dict[str, tuple[Path, ast.Module]]:
    """Every module of the package by name, with its syntax tree (read once for these tests)."""
    return {_module_name(p): (p, ast.parse(p.read_text(encoding="utf-8"))) for p in PACKAGE.rglob("*.py")}


def _graph() -> dict[str, set[str]]:
    """orgkit module -> the orgkit modules it imports."""
    files = _parsed()
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, (path, tree) in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _imports(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = package.split(".")
                base = base[: len(base) - node.level + 1] if node.level else []
                stem = ".".join([*base, *(node.module.split(".") if node.module else [])])
                targets = [f"{stem}.{a.name}" if f"{stem}.{a.name}" in files else stem for a in node.names]
            graph[name] |= {t for t in targets if t in files and t != name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, as the modules along it, or None."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return None


def test_no_import_cycle_among_orgkit_modules() -> None:
    graph = _graph()
    assert len(graph) > 100 and graph["orgkit.cli.adapter"]  # the walk found the package's imports
    cycle = _cycle(graph)
    assert cycle is None, " -> ".join(cycle)


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_every_package_orgkit_imports_is_declared() -> None:
    import re
    from importlib.metadata import packages_distributions

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = {re.split(r"[<>=!~;\[ ]", req, 1)[0].lower().replace("_", "-")
                for req in [*project["dependencies"], *project["optional-dependencies"]["llm"],
                            *project["optional-dependencies"]["postgres"]]}
    imported: set[str] = set()
    for _, tree in _parsed().values():
        for node in _imports(tree):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
    third_party = sorted(imported - set(sys.stdlib_module_names) - {"orgkit", "tomli"})
    owners = packages_distributions()
    undeclared = [name for name in third_party
                  if not {d.lower().replace("_", "-") for d in owners.get(name, [name])} & declared]
    assert third_party and undeclared == []
