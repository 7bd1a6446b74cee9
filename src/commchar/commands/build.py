"""`commchar build`: compile the measurement kernel for every MPI library found."""

from __future__ import annotations

import argparse

from rich.console import Console

from commchar.measure.build import ensure_kernel
from commchar.measure.libraries import select

NAME = "build"
HELP = "build the measurement kernel for each MPI library (done on demand by run)"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--library", help="comma-separated libraries (default: every one found)")


def execute(args: argparse.Namespace, console: Console) -> int:
    names = [s.strip() for s in args.library.split(",")] if args.library else None
    for library in select(names):
        path = ensure_kernel(library)
        console.print(f"{library.name}: {path} ({library.mpicc})")
    return 0
