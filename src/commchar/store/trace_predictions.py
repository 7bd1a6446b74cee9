"""Predictions of stored traces (`commchar replay --db X --trace ID`): one row per
replay, keeping the whole `commchar replay --json` document, so the report can
show measured against predicted without running the simulator again.

The table is created on the first write, like the trace tables it refers to.
"""

from __future__ import annotations

import json
from typing import Any

from commchar.store.database import Store, inserted_id, now_utc

_SCHEMA = """
CREATE TABLE IF NOT EXISTS trace_predictions (
    id INTEGER PRIMARY KEY,
    trace_id INTEGER NOT NULL REFERENCES traces(id),
    created_at TEXT NOT NULL,
    model_path TEXT NOT NULL,
    library TEXT NOT NULL,
    collectives TEXT NOT NULL,
    compute_scale REAL NOT NULL,
    topology TEXT NOT NULL,
    congestion INTEGER NOT NULL,
    result_json TEXT NOT NULL
);
"""


def save_prediction(store: Store, trace_id: int, doc: dict[str, Any]) -> int:
    """Stores one `commchar replay` document for trace `trace_id`; returns its id."""
    with store.connection as db:
        db.executescript(_SCHEMA)
        cur = db.execute(
            "INSERT INTO trace_predictions(trace_id, created_at, model_path, library, collectives,"
            " compute_scale, topology, congestion, result_json) VALUES (?,?,?,?,?,?,?,?,?)",
            (trace_id, now_utc(), doc["model"]["path"], doc["model"]["library"], doc["collectives"],
             float(doc["compute_scale"]), doc["topology"], int(bool(doc["congestion"])), json.dumps(doc)),
        )
    return inserted_id(cur)


def predictions(store: Store) -> list[dict[str, Any]]:
    """Every stored prediction, oldest first: its columns plus `result` (the document)."""
    db = store.connection
    if not store.has_table("trace_predictions"):
        return []
    rows = db.execute("SELECT * FROM trace_predictions ORDER BY id").fetchall()
    out = []
    for row in rows:
        d = dict(row)
        d["result"] = json.loads(d.pop("result_json"))
        d["congestion"] = bool(d["congestion"])
        out.append(d)
    return out
