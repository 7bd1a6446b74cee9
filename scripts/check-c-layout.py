#!/usr/bin/env python3
"""Check the C sources' layout: no include cycles, shared code only from kernels/common/,
and the kernel's transports apart.

Reads every `#include "..."` of the .c and .h files under kernels/, tracer/,
apps/ and am/ and fails (one line per finding, exit 1) when
  - the includes form a cycle, between files or between modules (a module is
    x.c with its x.h: x.c including y.h and y.c including x.h is a cycle);
  - a file of tracer/, apps/ or am/ includes a file of kernels/ outside
    kernels/common/;
  - a file of kernels/core/ or kernels/common/ includes a file of kernels/
    outside them (the loop knows no transport), or a file of a transport's
    directory (kernels/mpi/, kernels/am/, kernels/pvm/) includes a file of
    kernels/ outside core/, common/ and its own directory;
  - an include names no file of the tree, or more than one.
An include is resolved next to the including file first, then by its name
anywhere in the tree (the Makefiles' -I directories).

    python3 scripts/check-c-layout.py [ROOT]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

TOP = ("kernels", "tracer", "apps", "am")
SHARED = "kernels/common/"
# the kernel's layers: what the files of each directory may include of kernels/
KERNEL_BASE = (SHARED, "kernels/core/")
TRANSPORTS = ("kernels/mpi/", "kernels/am/", "kernels/pvm/")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def sources(root: Path) -> list[str]:
    found = []
    for top in TOP:
        for path in sorted((root / top).rglob("*")):
            if path.suffix in (".c", ".h") and path.is_file():
                found.append(path.relative_to(root).as_posix())
    return found


def resolve(root: Path, by_name: dict[str, list[str]], source: str,
            name: str) -> str | list[str]:
    """The included file's path, or the candidates when there is not exactly one."""
    beside = (root / source).parent / name
    if beside.is_file():
        return beside.resolve().relative_to(root.resolve()).as_posix()
    candidates = by_name.get(Path(name).name, [])
    return candidates[0] if len(candidates) == 1 else candidates


def include_graph(root: Path) -> tuple[dict[str, set[str]], list[str]]:
    files = sources(root)
    by_name: dict[str, list[str]] = {}
    for f in files:
        by_name.setdefault(Path(f).name, []).append(f)
    graph: dict[str, set[str]] = {f: set() for f in files}
    problems = []
    for f in files:
        for name in INCLUDE.findall((root / f).read_text(errors="replace")):
            target = resolve(root, by_name, f, name)
            if isinstance(target, list):
                what = "no file" if not target else "several files (" + ", ".join(sorted(target)) + ")"
                problems.append(f'{f}: #include "{name}" names {what}')
                continue
            graph[f].add(target)
    return graph, problems


def module(path: str) -> str:
    return path.rsplit(".", 1)[0]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every set of nodes that reach one another (strongly connected, more than one node), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan; the graphs are a few hundred files deep at most
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def check(root: Path) -> list[str]:
    graph, problems = include_graph(root)
    for f, targets in sorted(graph.items()):
        for t in sorted(targets):
            if not t.startswith("kernels/"):
                continue
            if not f.startswith("kernels/"):
                if not t.startswith(SHARED):
                    problems.append(f"{f} includes {t}: outside kernels/ only {SHARED} may be included")
                continue
            own = next((d for d in (*KERNEL_BASE, *TRANSPORTS) if f.startswith(d)), None)
            if own is None or t.startswith(KERNEL_BASE):
                continue
            if own in KERNEL_BASE:
                problems.append(f"{f} includes {t}: {own} includes only {' and '.join(KERNEL_BASE)}")
            elif not t.startswith(own):
                problems.append(f"{f} includes {t}: a transport's files include only "
                                f"{' and '.join(KERNEL_BASE)} and their own")
    for cycle in cycles(graph):
        problems.append("include cycle among " + ", ".join(cycle))
    modules: dict[str, set[str]] = {}
    for f, targets in graph.items():
        modules.setdefault(module(f), set()).update(module(t) for t in targets if module(t) != module(f))
    for cycle in cycles(modules):
        problems.append("module cycle (x.c with x.h) among " + ", ".join(cycle))
    return problems


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[1]
    if not all((root / top).is_dir() for top in TOP):
        print(f"check-c-layout: {root} does not hold {', '.join(TOP)}", file=sys.stderr)
        return 2
    problems = check(root)
    for line in problems:
        print(f"check-c-layout: {line}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
