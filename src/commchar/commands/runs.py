"""`commchar runs`: list the runs in a database.

The tables fit an 80-column terminal: times are shown to the minute (without
the year when it is this one), every
cell but the free-text ones stays on one line: the libraries wrap between
names, a host or a program is cut with an ellipsis (a program keeps its end). Runs of one host name it
under the table; runs of several get a host column. A run still marked
running whose process is gone (store/owner.py) shows as `died`.
"""

from __future__ import annotations

import argparse
from datetime import datetime, timezone
from pathlib import Path

from rich.console import Console
from rich.table import Table

from commchar.store import Store, owner
from commchar.store.traces import traces

NAME = "runs"
HELP = "list the runs and traces stored in a database"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", default="commchar.db", help="SQLite database (default ./commchar.db)")


def _minute(stamp: str | None) -> str:
    """'2026-11-27T17:04:23Z' -> '11-27 17:04' this year, '2025-11-27 17:04' before."""
    text = (stamp or "")[:16].replace("T", " ")
    return text[5:] if text[:4] == str(datetime.now(timezone.utc).year) else text


WRAPPED = ("libraries",)  # a list of names wraps between them; other free text is cut


def _program(argv: list[str]) -> str:
    """The program by its file name and arguments (`trace --show` gives its whole path)."""
    return " ".join([Path(argv[0]).name, *argv[1:]]) if argv else ""


def _cut(text: str, width: int, keep_end: bool) -> str:
    if len(text) <= width:
        return text
    return "…" + text[len(text) - width + 1:] if keep_end else text[:width - 1] + "…"


def _table(title: str | None, columns: list[str], rows: list[list[str]], free: tuple[str, ...],
           width: int) -> Table:
    """Fixed columns as wide as their widest cell, never wrapped; the free-text ones share
    what is left of `width`, wrapped between names (WRAPPED) or cut with an ellipsis."""
    widest = [max([len(name), *(len(row[i]) for row in rows)]) for i, name in enumerate(columns)]
    fixed = sum(w for w, name in zip(widest, columns) if name not in free)
    left = width - fixed - (3 * len(columns) - 1)  # borders and padding
    even = max(6, left // max(1, sum(1 for name in columns if name in free)))
    # text that is cut gets an even share (no more than it needs); a wrapped list the rest
    shares = {name: min(w, even) for w, name in zip(widest, columns) if name in free and name not in WRAPPED}
    for w, name in zip(widest, columns):
        if name in free and name in WRAPPED:
            shares[name] = max(8, min(w, left - sum(shares.values())))
    table = Table(title=title, title_justify="left", pad_edge=False)
    for name in columns:
        listed = name in free and name in WRAPPED
        table.add_column(name, no_wrap=not listed, max_width=shares[name] if listed else None,
                         overflow="fold" if listed else "ellipsis",
                         justify="left" if name in free or name in ("started (UTC)", "created (UTC)", "status")
                         else "right")
    for row in rows:
        table.add_row(*(_cut(cell, shares[name], name == "program") if name in free and name not in WRAPPED
                        else cell for cell, name in zip(row, columns)))
    return table


def execute(args: argparse.Namespace, console: Console) -> int:
    with Store(args.db, readonly=True) as store:
        runs = store.runs()
        hosts = sorted({str(run["host"].get("hostname", "")) for run in runs})
        # one host (the usual case) is named under the table instead of in every row
        columns = ["run", "started (UTC)", "status", "libraries", "p", "points", "wrong", "failed"]
        rows = []
        for run in runs:
            counts = store.run_counts(run["id"])
            options = run["options"]
            rows.append([
                str(run["id"]), _minute(run["started_at"]), owner.run_status(run),
                ", ".join(options.get("libraries") or []),
                ",".join(map(str, options.get("np") or [])), str(counts["points"]),
                str(counts["invalid"]), str(counts["failures"]),
                *([str(run["host"].get("hostname", ""))] if len(hosts) > 1 else []),
            ])
        table = _table(None, columns + (["host"] if len(hosts) > 1 else []), rows, free=("libraries", "host"),
                       width=console.width)
        if len(hosts) == 1:
            table.caption, table.caption_justify = f"host: {hosts[0]}", "left"
        traced = traces(store)
        if rows or not traced:
            console.print(table)
        _print_traces(console, traced)
    return 0


def _print_traces(console: Console, traced: list[dict]) -> None:
    if not traced:
        return
    rows = [[str(row["id"]), _minute(row["created_at"]), row["status"], row["library"], str(row["p"]),
             f"{row['wall_s']:.2f}" if row["wall_s"] is not None else "",
             str(sum(r["records"] for r in row["ranks"])), _program(row["program"])] for row in traced]
    console.print(_table("traces (commchar trace)", ["trace", "created (UTC)", "status", "library", "p",
                                                     "wall s", "records", "program"], rows,
                         free=("library", "program"), width=console.width))
