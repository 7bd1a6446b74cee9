"""`commchar runs`: list the runs in a database."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.table import Table

from commchar.store import Store
from commchar.store.traces import traces

NAME = "runs"
HELP = "list the runs and traces stored in a database"


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
        traced = traces(store)
        if table.row_count or not traced:
            console.print(table)
        _print_traces(console, traced)
    return 0


def _print_traces(console: Console, rows: list[dict]) -> None:
    if not rows:
        return
    table = Table("trace", "created (UTC)", "status", "library", "p", "wall (s)", "records",
                  "program", title="traces (commchar trace)", title_justify="left")
    for row in rows:
        wall = f"{row['wall_s']:.2f}" if row["wall_s"] is not None else ""
        table.add_row(str(row["id"]), row["created_at"], row["status"], row["library"],
                      str(row["p"]), wall, str(sum(r["records"] for r in row["ranks"])),
                      " ".join(row["program"])[:60])
    console.print(table)
