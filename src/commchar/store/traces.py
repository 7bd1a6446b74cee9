"""Traced runs of programs in the store: the job, each rank's wall time and trace
file (zlib-compressed, so a database alone can be replayed), each Pcontrol phase.

The trace tables are versioned apart from the measurement tables (meta key
`traces_schema_version`) and created on the first write, so a database written
before traces existed gains them without a migration. Nothing here parses a
trace: the caller hands over the numbers and the files.
"""

from __future__ import annotations

import json
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from commchar.errors import InputError
from commchar.store.database import Store, inserted_id, now_utc

TRACES_SCHEMA_VERSION = 1
STATUSES = ("running", "complete", "failed", "timeout")
_CHUNK = 1 << 20

_SCHEMA = """
CREATE TABLE IF NOT EXISTS traces (
    id INTEGER PRIMARY KEY,
    created_at TEXT NOT NULL,
    finished_at TEXT,
    status TEXT NOT NULL,
    message TEXT,
    commchar_version TEXT NOT NULL,
    library TEXT NOT NULL,
    library_version TEXT,
    p INTEGER NOT NULL,
    hosts_json TEXT,
    program_json TEXT NOT NULL,
    launcher_cmd_json TEXT NOT NULL,
    env_json TEXT NOT NULL,
    exit_status INTEGER,
    wall_s REAL,
    oversubscribed INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS trace_ranks (
    trace_id INTEGER NOT NULL REFERENCES traces(id),
    rank INTEGER NOT NULL,
    host TEXT,
    wall_ns INTEGER,
    records INTEGER NOT NULL,
    finalized INTEGER NOT NULL,
    problem TEXT,
    file_bytes INTEGER NOT NULL,
    file_zlib BLOB NOT NULL,
    PRIMARY KEY (trace_id, rank)
);
CREATE TABLE IF NOT EXISTS trace_phases (
    trace_id INTEGER NOT NULL REFERENCES traces(id),
    rank INTEGER NOT NULL,
    level INTEGER NOT NULL,
    ns INTEGER NOT NULL,
    PRIMARY KEY (trace_id, rank, level)
);
"""


@dataclass(frozen=True)
class RankRow:
    """What the store keeps of one rank, besides its file."""

    rank: int
    host: str
    wall_ns: int
    records: int
    finalized: bool
    problem: str | None
    phases: dict[int, int]  # Pcontrol level -> ns


def _ensure_tables(store: Store) -> None:
    db = store.connection
    with db:
        db.executescript(_SCHEMA)
        db.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('traces_schema_version', ?)",
                   (str(TRACES_SCHEMA_VERSION),))
    row = db.execute("SELECT value FROM meta WHERE key = 'traces_schema_version'").fetchone()
    if int(row[0]) > TRACES_SCHEMA_VERSION:
        raise InputError(f"{store.path}: its traces were written by a newer commchar "
                         f"(trace schema {row[0]}, this one knows {TRACES_SCHEMA_VERSION})")


def _has_tables(store: Store) -> bool:
    return store.has_table("traces")


def begin_trace(store: Store, *, commchar_version: str, library: str, p: int,
                program: list[str], launcher_cmd: list[str], env: dict[str, str],
                oversubscribed: bool) -> int:
    """A trace row in state 'running', before the program starts."""
    _ensure_tables(store)
    with store.connection as db:
        cur = db.execute(
            "INSERT INTO traces(created_at, status, commchar_version, library, p, program_json,"
            " launcher_cmd_json, env_json, oversubscribed) VALUES (?,?,?,?,?,?,?,?,?)",
            (now_utc(), "running", commchar_version, library, p, json.dumps(program),
             json.dumps(launcher_cmd), json.dumps(env), int(oversubscribed)),
        )
    return inserted_id(cur)


def add_rank(store: Store, trace_id: int, row: RankRow, trace_file: Path) -> None:
    """One rank's numbers, phases and compressed file, in one transaction.

    The file is compressed to a temporary file and copied into the blob in chunks:
    memory stays bounded however long the trace."""
    with tempfile.TemporaryFile() as packed:
        compressor = zlib.compressobj(1)  # level 6 is 3x slower for 6% less here
        with trace_file.open("rb") as source:
            while chunk := source.read(_CHUNK):
                packed.write(compressor.compress(chunk))
        packed.write(compressor.flush())
        size = packed.tell()
        packed.seek(0)
        with store.connection as db:
            cur = db.execute(
                "INSERT OR REPLACE INTO trace_ranks(trace_id, rank, host, wall_ns, records,"
                " finalized, problem, file_bytes, file_zlib) VALUES (?,?,?,?,?,?,?,?,zeroblob(?))",
                (trace_id, row.rank, row.host, row.wall_ns, row.records, int(row.finalized),
                 row.problem, trace_file.stat().st_size, size),
            )
            with db.blobopen("trace_ranks", "file_zlib", inserted_id(cur)) as blob:
                while chunk := packed.read(_CHUNK):
                    blob.write(chunk)
            db.executemany(
                "INSERT OR REPLACE INTO trace_phases(trace_id, rank, level, ns) VALUES (?,?,?,?)",
                [(trace_id, row.rank, level, ns) for level, ns in sorted(row.phases.items())],
            )


def finish_trace(store: Store, trace_id: int, *, status: str, exit_status: int | None,
                 wall_s: float, message: str | None = None, library_version: str | None = None,
                 hosts: list[str] | None = None) -> None:
    if status not in STATUSES:
        raise ValueError(f"trace status {status!r}")
    with store.connection as db:
        db.execute(
            "UPDATE traces SET finished_at = ?, status = ?, exit_status = ?, wall_s = ?,"
            " message = ?, library_version = ?, hosts_json = ? WHERE id = ?",
            (now_utc(), status, exit_status, wall_s, message, library_version,
             json.dumps(hosts or []), trace_id),
        )


def traces(store: Store) -> list[dict[str, Any]]:
    """Every trace, oldest first, without the files."""
    if not _has_tables(store):
        return []
    rows = store.connection.execute("SELECT * FROM traces ORDER BY id").fetchall()
    return [_trace_dict(store, r) for r in rows]


def trace(store: Store, trace_id: int) -> dict[str, Any]:
    """One trace with its ranks (`ranks`: list of dicts) and phases (`phases`: level -> ns per rank)."""
    row = None
    if _has_tables(store):
        row = store.connection.execute("SELECT * FROM traces WHERE id = ?", (trace_id,)).fetchone()
    if row is None:
        raise InputError(f"no trace {trace_id} in {store.path}")
    return _trace_dict(store, row)


def extract_trace(store: Store, trace_id: int, directory: str | Path) -> Path:
    """Write the trace's rank-<r>.cctrace files into `directory` (created if needed)."""
    info = trace(store, trace_id)
    if not info["ranks"]:
        raise InputError(f"trace {trace_id} in {store.path} has no rank files (the store lost them)")
    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for rank in info["ranks"]:
            rowid = store.connection.execute(
                "SELECT rowid FROM trace_ranks WHERE trace_id = ? AND rank = ?",
                (trace_id, rank["rank"])).fetchone()[0]
            decompressor = zlib.decompressobj()
            with store.connection.blobopen("trace_ranks", "file_zlib", rowid, readonly=True) as blob, \
                    (directory / f"rank-{rank['rank']}.cctrace").open("wb") as out:
                while chunk := blob.read(_CHUNK):
                    out.write(decompressor.decompress(chunk))
                out.write(decompressor.flush())
    except OSError as exc:
        raise InputError(f"cannot write trace {trace_id} to {directory}: {exc.strerror}") from None
    except zlib.error:
        raise InputError(f"trace {trace_id} in {store.path} is corrupt (a rank file "
                         "does not decompress)") from None
    return directory


def _trace_dict(store: Store, row: Any) -> dict[str, Any]:
    d = dict(row)
    d["hosts"] = json.loads(d.pop("hosts_json") or "[]")
    d["program"] = json.loads(d.pop("program_json"))
    d["launcher_cmd"] = json.loads(d.pop("launcher_cmd_json"))
    d["env"] = json.loads(d.pop("env_json"))
    d["oversubscribed"] = bool(d["oversubscribed"])
    db = store.connection
    d["ranks"] = [
        {**dict(r), "finalized": bool(r["finalized"])} for r in db.execute(
            "SELECT rank, host, wall_ns, records, finalized, problem, file_bytes,"
            " length(file_zlib) AS stored_bytes FROM trace_ranks WHERE trace_id = ? ORDER BY rank",
            (d["id"],))
    ]
    phases: dict[int, list[int]] = {}
    ranks = [r["rank"] for r in d["ranks"]]
    for r in db.execute("SELECT rank, level, ns FROM trace_phases WHERE trace_id = ?", (d["id"],)):
        if r["rank"] in ranks:  # a rank whose file the store lost has no phases either
            phases.setdefault(r["level"], [0] * len(ranks))[ranks.index(r["rank"])] = r["ns"]
    d["phases"] = dict(sorted(phases.items()))
    return d
