"""Validations in the store: one row per `commchar validate`, keeping its whole
document (every repeat's rows and the summary), so the report shows the table
without running anything again.  The table is created on the first write."""

from __future__ import annotations

import json
from typing import Any

from commchar.store import Store
from commchar.store.database import inserted_id, now_utc

_SCHEMA = """
CREATE TABLE IF NOT EXISTS validations (
    id INTEGER PRIMARY KEY,
    created_at TEXT NOT NULL,
    libraries TEXT NOT NULL,
    p INTEGER NOT NULL,
    repeats INTEGER NOT NULL,
    result_json TEXT NOT NULL
);
"""


def save_validation(store: Store, doc: dict[str, Any]) -> int:
    """Stores one validation document; returns its id."""
    libraries = ",".join(dict.fromkeys(run["library"] for run in doc["runs"]))
    with store.connection as db:
        db.executescript(_SCHEMA)
        cur = db.execute("INSERT INTO validations(created_at, libraries, p, repeats, result_json)"
                         " VALUES (?,?,?,?,?)",
                         (now_utc(), libraries, int(doc["options"]["np"]), int(doc["options"]["repeat"]),
                          json.dumps(doc)))
    return inserted_id(cur)


def validations(store: Store) -> list[dict[str, Any]]:
    """Every stored validation, oldest first: its columns plus `result` (the document)."""
    if not store.has_table("validations"):
        return []
    out = []
    for row in store.connection.execute("SELECT * FROM validations ORDER BY id").fetchall():
        d = dict(row)
        d["result"] = json.loads(d.pop("result_json"))
        out.append(d)
    return out
