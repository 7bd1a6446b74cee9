#!/usr/bin/env python3
"""Draw the layout: rooms (Python packages, Rust modules, C directories) and the
arrows between them (imports, `use crate::`, `#include`), in layers from the
bottom (rooms that depend on nothing) up, and check that no arrows form a cycle.

    python3 scripts/layout.py [ROOT]          # the drawing; exit 1 on a cycle

A room is
  - Python: a subpackage of src/commchar (models, report, ...) or a top-level
    module (errors, tables, ...); `commchar.x.y` imported anywhere in a file of
    room A is an arrow A -> x;
  - Rust: a top-level module of sim/src (a file or a directory: workload,
    transport, ...); `crate::x` named in a file of room A is an arrow A -> x
    (main.rs and lib.rs are the crate's doors and not drawn);
  - C: a directory (kernels, kernels/common, kernels/pvm, tracer, apps, am);
    an `#include "f.h"` resolved to a file of directory B is an arrow A -> B.
Each layer lists its rooms with the rooms they depend on; an arrow always
points to a lower layer, so a drawing without a cycle has no arrow back up.
Cycles between single files are checked too (Python modules; C files by
scripts/check-c-layout.py). Imports under `if TYPE_CHECKING:` are not arrows:
they never run.
"""

from __future__ import annotations

import ast
import re
import sys
from collections import defaultdict
from pathlib import Path

Graph = dict[str, set[str]]


def python_rooms(root: Path) -> tuple[Graph, Graph]:
    """(room graph, module graph) of src/commchar."""
    pkg = root / "src" / "commchar"
    rooms: Graph = defaultdict(set)
    modules: Graph = defaultdict(set)
    for path in sorted(pkg.rglob("*.py")):
        rel = path.relative_to(pkg)
        # a subpackage or a top-level module is a room; the package's own __init__/__main__ is "commchar"
        top_door = len(rel.parts) == 1 and rel.stem in ("__init__", "__main__")
        room = "commchar" if top_door else rel.parts[0].removesuffix(".py")
        module = ".".join(("commchar", *rel.with_suffix("").parts)).removesuffix(".__init__")
        rooms.setdefault(room, set())
        modules.setdefault(module, set())
        tree = ast.parse(path.read_text(), str(path))
        typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                       and "TYPE_CHECKING" in ast.unparse(block.test) for n in ast.walk(block)}
        for node in ast.walk(tree):
            if id(node) in typing_only:  # not imported when the program runs
                continue
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # relative: resolve against this module's package
                    base = module.split(".")[: -node.level] if rel.stem != "__init__" \
                        else module.split(".")[: len(module.split(".")) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                # `from package import module` is an arrow to the module; any other name
                # is one to the module (or package) that defines it
                for a in node.names:
                    whole = f"{source}.{a.name}"
                    names.append(whole if _is_module(pkg, whole.split(".")[1:]) else source)
            for name in names:
                parts = name.split(".")
                if parts[0] != "commchar" or len(parts) < 2:
                    continue
                target = parts[1]
                if target != room and ((pkg / target).is_dir() or (pkg / f"{target}.py").exists()):
                    rooms[room].add(target)
                for k in range(len(parts), 1, -1):
                    candidate = ".".join(parts[:k])
                    if candidate != module and _is_module(pkg, parts[1:k]):
                        modules[module].add(candidate)
                        break
    return dict(rooms), dict(modules)


def _is_module(pkg: Path, parts: list[str]) -> bool:
    return (pkg.joinpath(*parts).with_suffix(".py")).exists() or (pkg.joinpath(*parts) / "__init__.py").exists()


def rust_rooms(root: Path) -> Graph:
    src = root / "sim" / "src"
    rooms: Graph = defaultdict(set)
    use = re.compile(r"crate::(?:\{)?([a-z_][a-z0-9_]*)")
    for path in sorted(src.rglob("*.rs")):
        rel = path.relative_to(src)
        room = rel.parts[0].removesuffix(".rs")
        if room in ("main", "lib"):
            continue
        rooms.setdefault(room, set())
        for target in use.findall(path.read_text()):
            if target != room and ((src / f"{target}.rs").exists() or (src / target).is_dir()):
                rooms[room].add(target)
    return dict(rooms)


def c_rooms(root: Path) -> Graph:
    tops = ("kernels", "tracer", "apps", "am")
    files = [p for top in tops if (root / top).exists() for p in (root / top).rglob("*") if p.suffix in (".c", ".h")]
    by_name: dict[str, list[Path]] = defaultdict(list)
    for p in files:
        by_name[p.name].append(p)
    include = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)
    rooms: Graph = defaultdict(set)
    root = root.resolve()
    for p in files:
        room = str(p.parent.resolve().relative_to(root))
        rooms.setdefault(room, set())
        for name in include.findall(p.read_text(errors="replace")):
            near = p.parent / name
            found = [near] if near.exists() else by_name.get(Path(name).name, [])
            if len(found) == 1:
                target = str(found[0].parent.resolve().relative_to(root))
                if target != room:
                    rooms[room].add(target)
    return dict(rooms)


def cycle(graph: Graph) -> list[str] | None:
    """One cycle of graph, or None."""
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

    sys.setrecursionlimit(10000)
    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def layers(graph: Graph) -> list[list[str]]:
    level: dict[str, int] = {}

    def depth(node: str) -> int:
        if node not in level:
            level[node] = 0  # a cycle would recurse forever: callers check first
            level[node] = 1 + max((depth(d) for d in graph.get(node, ())), default=-1)
        return level[node]

    for node in graph:
        depth(node)
    out: list[list[str]] = [[] for _ in range(max(level.values(), default=-1) + 1)]
    for node, k in level.items():
        out[k].append(node)
    return [sorted(x) for x in out]


def draw(title: str, graph: Graph) -> bool:
    arrows = sum(len(v) for v in graph.values())
    found = cycle(graph)
    print(f"{title}: {len(graph)} rooms, {arrows} arrows, "
          + ("no cycle" if found is None else "CYCLE " + " -> ".join(found)))
    if found is not None:
        # no layers without an order: every room with its arrows, those of the cycle marked
        back = set(zip(found, found[1:]))
        for room in sorted(graph):
            deps = ", ".join(d + (" (CYCLE)" if (room, d) in back else "") for d in sorted(graph[room]))
            print(f"   ?  {room:22s}" + (f" -> {deps}" if deps else ""))
        return False
    for k, rooms in reversed(list(enumerate(layers(graph)))):
        for room in rooms:
            deps = ", ".join(sorted(graph[room]))
            print(f"  {k:2d}  {room:22s}" + (f" -> {deps}" if deps else ""))
    return True


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1])
    rooms, modules = python_rooms(root)
    ok = draw("Python packages (src/commchar)", rooms)
    found = cycle(modules)
    print(f"Python modules: {len(modules)}, " + ("no cycle" if found is None else "CYCLE " + " -> ".join(found)))
    ok &= found is None
    ok &= draw("Rust modules (sim/src)", rust_rooms(root))
    ok &= draw("C directories", c_rooms(root))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
