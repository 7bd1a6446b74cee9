"""`commchar runs`: list the runs in a database."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.table import Table

from commchar.store import Store

NAME = "runs"
HELP = "list the runs stored in a database"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", default="commchar.db", help="SQLite database (default ./commchar.db)")


def execute(args: argparse.Namespace, console: Console) -> int:
    with Store(args.db, readonly=True) as store:
        table = Table("run", "started (UTC)", "status", "libraries", "p", "points", "invalid",
                      "failures", "host")
        for run in store.runs():
            counts = store.run_counts(run["id"])
            options = run["options"]
            table.add_row(
                str(run["id"]), run["started_at"], run["status"],
                ", ".join(options.get("libraries") or []),
                ",".join(map(str, options.get("np") or [])), str(counts["points"]),
                str(counts["invalid"]), str(counts["failures"]), run["host"].get("hostname", ""),
            )
        console.print(table)
    return 0
