"""`commchar export`: write stored points as CSV or JSON, one row per point or per sample."""

from __future__ import annotations

import argparse
import sys
from typing import IO, Iterable

from rich.console import Console

from commchar import outfile
from commchar.store import Store
from commchar.store.export import Exported, export_points, write_csv, write_json

NAME = "export"
HELP = "export measured points (median, percentiles, CI, ...) as CSV or JSON"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", default="commchar.db", help="SQLite database (default ./commchar.db)")
    parser.add_argument("--run", type=int, action="append", metavar="ID",
                        help="run to export (repeatable; default: every run)")
    parser.add_argument("--format", choices=("csv", "json"), default="csv")
    parser.add_argument("--samples", action="store_true",
                        help="one row per raw sample (column sample_us) instead of per point")
    parser.add_argument("-o", "--output", help="file to write (default: standard output)")


def execute(args: argparse.Namespace, console: Console) -> int:
    with Store(args.db, readonly=True) as store:
        rows = export_points(store, args.run, samples=args.samples)
        if not args.output:
            _write(rows, sys.stdout, args)
            return 0
        # Written whole, then put in place (commchar.outfile): a failed export leaves no half file.
        with outfile.output_file(args.output) as out:
            count = _write(rows, out, args)
    console.print(f"{count} rows written to {args.output}")
    return 0


def _write(points: Iterable[Exported], out: IO[str], args: argparse.Namespace) -> int:
    return write_csv(points, out, samples=args.samples) if args.format == "csv" else write_json(points, out)
