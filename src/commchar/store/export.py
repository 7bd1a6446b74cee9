"""Export stored points as CSV or JSON: one row per point, or one per sample.

Rows are streamed from the database to the output, so an export of any
store holds one point (and its samples) in memory at a time.
"""

from __future__ import annotations

import csv
import json
from typing import IO, Iterable, Iterator

from commchar import jsonio
from commchar.store.database import POINT_COLUMNS, Store

CSV_COLUMNS = tuple(c for c in POINT_COLUMNS if c != "extra")


def export_rows(store: Store, run_ids: Iterable[int] | None, *, samples: bool) -> Iterator[dict]:
    """The rows of an export, one at a time: points, or one row per raw sample."""
    for point in store.iter_points(run_ids, with_samples=samples):
        if not samples:
            yield point
            continue
        values = point.pop("samples_us")
        for value in values:
            yield {**point, "sample_us": value}


def write_csv(rows: Iterable[dict], out: IO[str], *, samples: bool) -> int:
    """Write `rows` as CSV to `out`; returns how many were written."""
    columns = CSV_COLUMNS + (("sample_us",) if samples else ()) + ("extra",)
    writer = csv.DictWriter(out, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    count = 0
    for row in rows:
        writer.writerow({**row, "extra": json.dumps(row.get("extra") or {}, sort_keys=True)})
        count += 1
    return count


def write_json(rows: Iterable[dict], out: IO[str]) -> int:
    """Write `rows` as one JSON list to `out` (the layout of json.dumps(rows, indent=1))."""
    count = 0
    for row in rows:
        text = jsonio.dumps(row, indent=1).replace("\n", "\n ")
        out.write(("[\n " if count == 0 else ",\n ") + text)
        count += 1
    out.write("\n]\n" if count else "[]\n")
    return count
