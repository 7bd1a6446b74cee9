"""Export stored points as CSV or JSON: one row per point, or one per sample."""

from __future__ import annotations

import csv
import io
import json
from typing import Iterable

from commchar.store.database import POINT_COLUMNS, Store

CSV_COLUMNS = tuple(c for c in POINT_COLUMNS if c != "extra")


def export_rows(store: Store, run_ids: Iterable[int] | None, *, samples: bool) -> list[dict]:
    rows = store.points(run_ids)
    if not samples:
        return rows
    expanded = []
    for row in rows:
        for value in store.samples(row["point_id"]):
            expanded.append({**row, "sample_us": value})
    return expanded


def to_csv(rows: list[dict], *, samples: bool) -> str:
    columns = CSV_COLUMNS + (("sample_us",) if samples else ()) + ("extra",)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({**row, "extra": json.dumps(row.get("extra") or {}, sort_keys=True)})
    return buffer.getvalue()


def to_json(rows: list[dict]) -> str:
    return json.dumps(rows, indent=1) + "\n"
