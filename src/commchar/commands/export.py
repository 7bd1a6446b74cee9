"""`commchar export`: write stored points as CSV or JSON, one row per point or per sample."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console

from commchar.errors import InputError
from commchar.store import Store
from commchar.store.export import export_rows, to_csv, to_json

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
    with Store(args.db, create=False) as store:
        rows = export_rows(store, args.run, samples=args.samples)
    text = to_csv(rows, samples=args.samples) if args.format == "csv" else to_json(rows)
    if args.output:
        try:
            Path(args.output).write_text(text)
        except OSError as exc:
            raise InputError(f"cannot write {args.output}: {exc.strerror}") from None
        console.print(f"{len(rows)} rows written to {args.output}")
    else:
        sys.stdout.write(text)
    return 0
