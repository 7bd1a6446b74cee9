"""`commchar build`: compile every component (kernel, tracer, ...) for every library found."""

from __future__ import annotations

import argparse

from rich.console import Console

from commchar.measure.build import components_for, ensure_built
from commchar.measure.libraries import select

NAME = "build"
HELP = "build the measurement kernel, the tracer and the applications for each MPI library (done on demand)"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--library", help="comma-separated libraries (default: every one found)")


def execute(args: argparse.Namespace, console: Console) -> int:
    names = [s.strip() for s in args.library.split(",")] if args.library else None
    for library in select(names):
        for component in components_for(library):
            path = ensure_built(component, library)
            console.print(f"{library.name} {component.name}: {path} ({library.mpicc})")
    return 0
