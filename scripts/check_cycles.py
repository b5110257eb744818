"""Fail on an import cycle among the modules of emulator/ (and wire/), counting every
import statement a module holds: top-level ones, those under ``if TYPE_CHECKING:`` (an
annotation is a dependency too) and those inside functions.

Why not only runtime imports: a cycle through annotations still means two modules that
cannot be understood, tested or moved one without the other (docs/architecture.md).

An edge A -> B means A's source names module B: ``import B``, ``from B import x``, or
``from A's package import B`` when B is a submodule. The implicit import of a module's
parent packages does not count (every module would then depend on its package's
``__init__``). Cycles are found as strongly connected components (Tarjan); each is
printed with one cycle through it.

KNOWN holds the components that existed when this check was written: a run fails when a
component is new or larger than its known one, and when a known one is gone or smaller
(remove or shrink its entry), so the list can only shrink.

Usage: python3 scripts/check_cycles.py [--all]   (--all also prints the known ones)
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("emulator", "wire")

# Components of the import graph known to be cycles; each may only shrink.
KNOWN: list[frozenset[str]] = []


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def find_modules() -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            modules[module_name(path)] = path
        for path in sorted((ROOT / package).rglob("*.pyi")):  # a compiled module's stub
            modules.setdefault(module_name(path), path)
    return modules


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of ``modules`` that ``name``'s source imports anywhere in it."""
    is_package = path.stem == "__init__"
    package = name if is_package else name.rpartition(".")[0]
    out: set[str] = set()

    def add(target: str) -> None:
        # The nearest module that exists: ``import a.b.c`` where c is a class names a.b.
        while target and target not in modules:
            target = target.rpartition(".")[0]
        if target and target != name:
            out.add(target)

    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            submodules = [f"{source}.{a.name}" for a in node.names
                          if f"{source}.{a.name}" in modules]
            for sub in submodules:
                add(sub)
            if len(submodules) < len(node.names):
                add(source)
    return out


def components(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def one_cycle(graph: dict[str, set[str]], comp: list[str]) -> list[str]:
    """A shortest cycle through the component's first module (breadth-first)."""
    members = set(comp)
    start = comp[0]
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v] & members):
            if w == start:
                return paths[v] + [start]
            if w not in paths:
                paths[w] = paths[v] + [w]
                queue.append(w)
    return comp


def main(argv: list[str]) -> int:
    modules = find_modules()
    graph = {name: imports_of(name, path, modules) for name, path in modules.items()}
    found = components(graph)
    failed = False
    for comp in found:
        members = frozenset(comp)
        known = [k for k in KNOWN if k & members]
        cycle = " -> ".join(one_cycle(graph, comp))
        if not any(members <= k for k in known):
            failed = True
            print(f"import cycle ({len(comp)} modules): {', '.join(comp)}\n  e.g. {cycle}")
        elif "--all" in argv:
            print(f"known import cycle ({len(comp)} modules): {', '.join(comp)}\n"
                  f"  e.g. {cycle}")
    for k in KNOWN:
        now = [frozenset(c) for c in found if frozenset(c) & k]
        if not now or all(len(c) < len(k) for c in now):
            failed = True
            print(f"a known import cycle shrank or is gone: update KNOWN in {__file__} "
                  f"({', '.join(sorted(k))}) to what remains: "
                  f"{[sorted(c) for c in now] or 'nothing'}")
    print(f"import cycles: {len(found)} ({len(KNOWN)} known) among {len(modules)} modules")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
