"""Export stored points as CSV or JSON: one row per point, or one per sample.

Points are streamed from the database to the output, so an export of any
store holds one point (and its samples) in memory at a time. A per-sample
row repeats its point's columns: they are formatted once per point.
"""

from __future__ import annotations

import csv
import io
import json
import math
from typing import IO, Iterable, Iterator

from commchar import jsonio
from commchar.store.database import POINT_COLUMNS, Store

CSV_COLUMNS = tuple(c for c in POINT_COLUMNS if c != "extra")

Exported = tuple[dict, "list[float] | None"]
_SLOT = "@sample@"  # where each sample goes in its point's formatted row


def export_points(store: Store, run_ids: Iterable[int] | None, *, samples: bool) -> Iterator[Exported]:
    """(point, its raw samples or None) for every point of the runs, one at a time."""
    for point in store.iter_points(run_ids, with_samples=samples):
        yield point, point.pop("samples_us") if samples else None


def write_csv(points: Iterable[Exported], out: IO[str], *, samples: bool) -> int:
    """Write a CSV of the points (one row per sample with `samples`); returns the rows written."""
    columns = CSV_COLUMNS + (("sample_us",) if samples else ()) + ("extra",)
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    count = 0
    for point, values in points:
        row = [point.get(c) for c in columns[:-1]] + [json.dumps(point.get("extra") or {}, sort_keys=True)]
        if values is None:
            writer.writerow(row)
            count += 1
            continue
        row[columns.index("sample_us")] = _SLOT
        line = io.StringIO()
        csv.writer(line, lineterminator="\n").writerow(row)
        head, tail = line.getvalue().split(_SLOT)
        out.writelines(f"{head}{value!r}{tail}" for value in values)
        count += len(values)
    return count


def write_json(points: Iterable[Exported], out: IO[str]) -> int:
    """Write one JSON list of row objects, one object per line (with samples, one per sample,
    its point's fields then `sample_us`); returns the rows written."""
    count = 0
    for point, values in points:
        text = jsonio.dumps(point)
        if values is None:
            rows = [text]
        else:
            head = text[:-1] + ', "sample_us": '
            rows = [head + (repr(float(v)) if math.isfinite(v) else "null") + "}" for v in values]
        for row in rows:
            out.write(("[\n" if count == 0 else ",\n") + row)
            count += 1
    out.write("\n]\n" if count else "[]\n")
    return count
