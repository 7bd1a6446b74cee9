"""`commchar import`: OSU or IMB text output into the store, to fit, report and predict."""

from __future__ import annotations

import argparse

from rich.console import Console

from commchar.interop.importer import MEANS_NOTE, TOOLS, import_files
from commchar.terminal import styled

NAME = "import"
HELP = "import OSU Micro-Benchmarks or IMB-MPI1 text output as points (marked as the tool's means)"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("tool", choices=TOOLS, help="which tool wrote the files")
    parser.add_argument("files", nargs="+", metavar="FILE", help="the tool's output, as it printed it")
    parser.add_argument("--library", required=True, metavar="NAME",
                        help="the MPI library the tool ran with (stored as NAME-TOOL, e.g. openmpi-osu)")
    parser.add_argument("--np", type=int, metavar="P",
                        help="ranks the OSU collectives ran on (OSU does not print it; IMB does)")
    parser.add_argument("--label", metavar="NAME", help="store the points under this library name instead")
    parser.add_argument("--db", default="commchar.db", help="SQLite database (default ./commchar.db)")


def execute(args: argparse.Namespace, console: Console) -> int:
    result = import_files(args.db, args.tool, args.files, args.library, args.np, args.label)
    console.print(f"run {result.run_id}: {result.points} points of {result.label} imported from"
                  f" {args.tool.upper()} {result.version} ({result.invalid} invalid) into {args.db}",
                  markup=False, highlight=False)
    console.print(styled(("note:", "yellow"), f" {MEANS_NOTE}"))
    if result.skipped:
        console.print(f"not imported (no commchar operation): {', '.join(result.skipped)}",
                      markup=False, highlight=False)
    return 0
