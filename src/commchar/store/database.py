"""The SQLite store: runs, jobs, measured points with every raw sample, failures,
and the runs of the applications commchar ships (app_runs: one row per case).

Written as results arrive, one committed transaction per point, so a killed run
loses at most the point in flight. Everything downstream (fit, report,
predict) reads from here; nothing here knows about MPI.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, TypeVar
from urllib.parse import quote

from commchar import jsonio
from commchar.errors import InputError

# 2: points and failures carry locality, jobs their placement
# 3: points.refined (sizes added inside a gap where the curve changes, measure/refine.py)
# 4: points.cache and cache_region_bytes, failures.cache (--cache cold: buffers out of cache)
SCHEMA_VERSION = 4
SQLITE_MAGIC = b"SQLite format 3\x00"
# How long a write waits for a lock another process holds before it gives up with one line.
LOCK_WAIT_S = 30.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    status TEXT NOT NULL,
    commchar_version TEXT NOT NULL,
    host_json TEXT NOT NULL,
    options_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    library TEXT NOT NULL,
    p INTEGER NOT NULL,
    library_version TEXT,
    mpi_version TEXT,
    hosts_json TEXT,
    launcher_cmd_json TEXT NOT NULL,
    env_json TEXT,
    compiler TEXT,
    timer_json TEXT,
    kernel_options_json TEXT,
    oversubscribed INTEGER NOT NULL,
    started_at TEXT NOT NULL,
    ended_at TEXT,
    exit_status INTEGER,
    placement TEXT
);
CREATE TABLE IF NOT EXISTS points (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    job_id INTEGER NOT NULL REFERENCES jobs(id),
    library TEXT NOT NULL,
    op TEXT NOT NULL,
    variant TEXT NOT NULL,
    p INTEGER NOT NULL,
    n_bytes INTEGER NOT NULL,
    reps INTEGER NOT NULL,
    batch INTEGER NOT NULL,
    warmup INTEGER,
    t_us REAL NOT NULL,
    t_min_us REAL, t_p25_us REAL, t_mean_us REAL, t_p75_us REAL, t_p95_us REAL,
    t_max_us REAL, t_std_us REAL, ci_lo_us REAL, ci_hi_us REAL,
    outliers INTEGER, outlier_rule TEXT,
    precision_target REAL, precision_met INTEGER NOT NULL, ci_rel REAL, stop_reason TEXT,
    valid INTEGER NOT NULL, invalid_reason TEXT,
    oversubscribed INTEGER NOT NULL,
    sync TEXT, wall_s REAL, extra_json TEXT,
    created_at TEXT NOT NULL,
    locality TEXT NOT NULL DEFAULT '',
    refined INTEGER NOT NULL DEFAULT 0,
    cache TEXT NOT NULL DEFAULT 'warm',
    cache_region_bytes INTEGER,
    UNIQUE (run_id, library, op, variant, p, n_bytes, locality)
);
CREATE TABLE IF NOT EXISTS samples (
    point_id INTEGER PRIMARY KEY REFERENCES points(id),
    t_us_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS failures (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    library TEXT NOT NULL,
    op TEXT NOT NULL,
    variant TEXT NOT NULL,
    p INTEGER NOT NULL,
    n_bytes INTEGER,
    kind TEXT NOT NULL,
    message TEXT NOT NULL,
    created_at TEXT NOT NULL,
    locality TEXT NOT NULL DEFAULT '',
    cache TEXT NOT NULL DEFAULT 'warm'
);
CREATE TABLE IF NOT EXISTS app_runs (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    library TEXT NOT NULL,
    app TEXT NOT NULL,
    config TEXT NOT NULL,
    n INTEGER NOT NULL,
    p INTEGER NOT NULL,
    oversubscribed INTEGER NOT NULL,
    reps INTEGER NOT NULL,
    elapsed_s REAL NOT NULL,
    phases_json TEXT NOT NULL,
    results_json TEXT NOT NULL,
    launcher_cmd_json TEXT NOT NULL,
    env_json TEXT NOT NULL,
    trace_json TEXT,
    created_at TEXT NOT NULL,
    UNIQUE (run_id, library, app, config, n, p)
);
CREATE TABLE IF NOT EXISTS app_predictions (
    id INTEGER PRIMARY KEY,
    app_run_id INTEGER NOT NULL REFERENCES app_runs(id),
    model_key TEXT NOT NULL,
    model TEXT NOT NULL,
    prediction_json TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (app_run_id, model_key, model)
);
"""

POINT_COLUMNS = (
    "point_id", "run_id", "library", "library_version", "op", "variant", "p", "n_bytes",
    "t_us", "t_min_us", "t_p25_us", "t_mean_us", "t_p75_us", "t_p95_us", "t_max_us",
    "t_std_us", "ci_lo_us", "ci_hi_us", "reps", "batch", "outliers", "precision_target",
    "precision_met", "valid", "invalid_reason", "oversubscribed", "sync", "locality", "refined",
    "cache", "cache_region_bytes", "extra",
)

_BOOL_COLUMNS = ("precision_met", "valid", "oversubscribed", "refined")
# The order Store.points returns points in (a store of schema 1 has no locality to order by).
POINT_ORDER = ("run_id", "library", "locality", "op", "variant", "p", "n_bytes")


def point_order(point: dict) -> tuple:
    """A point dict's place in the order Store.points returns them in."""
    return tuple(point[column] for column in POINT_ORDER)


def short_version(full: str | None) -> str | None:
    """A library's version string on one line: MPICH's multi-line answer without its
    long configure and compiler lines (the job keeps the whole string)."""
    if full is None:
        return None
    lines = [" ".join(line.split()) for line in full.splitlines()]
    return "; ".join(line for line in lines if line and len(line) <= 100)


def _check_file(path: Path, must_exist: bool) -> None:
    """Refuse, before SQLite touches it, a file that cannot be a commchar store. An empty
    file is a new store only to a verb that may create one (SQLite's own convention)."""
    if not path.exists():
        if must_exist:
            raise InputError(f"database {path} does not exist")
        return
    if not path.is_file():
        raise InputError(f"database {path} is not a file")
    try:
        with path.open("rb") as fh:
            head = fh.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise InputError(f"cannot read database {path} ({exc.strerror})") from None
    if not head and must_exist:
        raise InputError(f"{path} is an empty file, not a commchar database")
    if not head:
        return
    if head != SQLITE_MAGIC:
        raise InputError(f"{path} is not a usable commchar database (not a SQLite file)")


@contextlib.contextmanager
def _translated(path: Path) -> Iterator[None]:
    """SQLite's errors as one line naming the database."""
    try:
        yield
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            raise InputError(f"database {path} stayed locked by another process for {LOCK_WAIT_S:g} s;"
                             " try again when it is done") from None
        raise InputError(f"database {path}: {exc}") from None
    except sqlite3.DatabaseError as exc:
        raise InputError(f"{path} is not a usable commchar database ({exc})") from None


_F = TypeVar("_F", bound=Callable[..., Any])


def _guarded(method: _F) -> _F:
    @functools.wraps(method)
    def wrapper(self: "Store", *args: Any, **kwargs: Any) -> Any:
        with _translated(self.path):
            return method(self, *args, **kwargs)
    return wrapper  # type: ignore[return-value]


def _loads(text: str | None, what: str, default: Any) -> Any:
    """A JSON column's value; a column that is not JSON is an InputError naming it."""
    if text is None or text == "":
        return default
    try:
        return jsonio.loads(text, what)
    except InputError:
        raise InputError(f"the store's {what} is not valid JSON") from None


def now_utc() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def inserted_id(cur: sqlite3.Cursor) -> int:
    """The row id an INSERT just made. sqlite3 types lastrowid as Optional (None
    before any INSERT); after one it is always set, so None here is a bug."""
    row_id = cur.lastrowid
    if row_id is None:
        raise RuntimeError("an INSERT returned no row id")
    return row_id


class Store:
    """A commchar database; use as a context manager.

    One opening policy for every verb: `Store(path)` opens a store to write,
    creating it when missing; `create=False` requires it to exist (resuming a
    run); `readonly=True` opens it through SQLite's read-only mode and never
    creates, converts or writes anything. Whatever the mode, a file that is
    empty, not SQLite, a SQLite database of something else, or a store of a
    newer schema is refused with one line, and a SQLite error while reading or
    writing (a corrupt page, a lock held too long) becomes one InputError.
    """

    def __init__(self, path: str | Path, *, create: bool = True, readonly: bool = False) -> None:
        self.path = Path(path)
        self.readonly = readonly
        _check_file(self.path, must_exist=readonly or not create)
        try:
            if readonly:
                uri = f"file:{quote(str(self.path.resolve()))}?mode=ro"
                self._db = sqlite3.connect(uri, uri=True, timeout=LOCK_WAIT_S)
            else:
                self._db = sqlite3.connect(self.path, timeout=LOCK_WAIT_S)
        except sqlite3.Error as exc:
            raise InputError(f"cannot open database {self.path} ({exc})") from None
        self._db.row_factory = sqlite3.Row
        try:
            with _translated(self.path):
                self._open()
        except BaseException:
            self._db.close()
            raise

    def _open(self) -> None:
        tables = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if (tables or self.readonly) and not {"meta", "runs", "points"} <= tables:
            raise InputError(f"{self.path} is a SQLite database but not a commchar store (it has no"
                             " runs and points tables)")
        if tables:
            row = self._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            version = str(row[0]) if row is not None else ""
            if not version.isdigit():
                raise InputError(f"{self.path}: the store has no valid schema version ({version[:20]!r})")
            if int(version) > SCHEMA_VERSION:
                raise InputError(f"{self.path} is a store of schema version {version}, written by a newer"
                                 f" commchar; this one reads up to version {SCHEMA_VERSION}: upgrade commchar")
        if not self.readonly:
            # WAL lets readers (report, export) work while a run writes; it is set back on close.
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            if tables:
                _migrate(self._db)
            self._db.execute("PRAGMA foreign_keys=ON")
            with self._db:
                self._db.executescript(_SCHEMA)  # tables added since the store was made
                self._db.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)",
                                 (str(SCHEMA_VERSION),))

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if not self.readonly:
            # A store at rest is a single file, so read-only openings create no -wal/-shm beside it;
            # when another connection is still open this fails and the last writer does it.
            try:
                self._db.execute("PRAGMA busy_timeout=0")
                self._db.execute("PRAGMA journal_mode=DELETE")
            except sqlite3.Error:
                pass
        self._db.close()
        lock = getattr(self, "_lock", None)
        if lock is not None:
            lock.close()

    def lock_for_measuring(self) -> None:
        """Hold the store for this process's run until it is closed: a second `commchar run`
        (or `--resume` of a run still measuring) is refused instead of interleaving writes."""
        self._lock = open(self.path, "rb")  # noqa: SIM115 (held until close)
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock.close()
            raise InputError(f"{self.path} is in use by another `commchar run` (still measuring);"
                             " wait for it to finish or use another --db") from None

    @property
    def connection(self) -> sqlite3.Connection:
        """For the store's other table modules (store/traces.py)."""
        return self._db

    # -- writing ---------------------------------------------------------

    @_guarded
    def create_run(self, commchar_version: str, host: dict, options: dict) -> int:
        with self._db:
            cur = self._db.execute(
                "INSERT INTO runs(started_at, status, commchar_version, host_json, options_json)"
                " VALUES (?, 'running', ?, ?, ?)",
                (now_utc(), commchar_version, json.dumps(host), json.dumps(options)),
            )
        return inserted_id(cur)

    @_guarded
    def set_run_owner(self, run_id: int, owner: dict) -> None:
        """Record the process measuring the run (store/owner.py) in its host facts."""
        host = self.run(run_id)["host"]
        host["owner"] = owner
        with self._db:
            self._db.execute("UPDATE runs SET host_json = ? WHERE id = ?", (json.dumps(host), run_id))

    @_guarded
    def set_run_status(self, run_id: int, status: str) -> None:
        finished = now_utc() if status != "running" else None
        with self._db:
            self._db.execute(
                "UPDATE runs SET status = ?, finished_at = ? WHERE id = ?", (status, finished, run_id)
            )

    @_guarded
    def create_job(self, run_id: int, library: str, p: int, launcher_cmd: list[str],
                   env: dict[str, str], oversubscribed: bool, placement: str | None = None) -> int:
        with self._db:
            cur = self._db.execute(
                "INSERT INTO jobs(run_id, library, p, launcher_cmd_json, env_json, oversubscribed,"
                " started_at, placement) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (run_id, library, p, json.dumps(launcher_cmd), json.dumps(env),
                 int(oversubscribed), now_utc(), placement),
            )
        return inserted_id(cur)

    @_guarded
    def record_job_header(self, job_id: int, header: dict) -> None:
        with self._db:
            self._db.execute(
                "UPDATE jobs SET library_version = ?, mpi_version = ?, hosts_json = ?, compiler = ?,"
                " timer_json = ?, kernel_options_json = ? WHERE id = ?",
                (
                    header.get("mpi_library_version"), header.get("mpi_version"),
                    json.dumps(header.get("hosts", [])), header.get("compiler"),
                    json.dumps({k: header.get(k) for k in
                                ("timer", "timer_resolution_ns", "timer_cost_ns")}),
                    json.dumps(header.get("options", {})), job_id,
                ),
            )

    @_guarded
    def finish_job(self, job_id: int, exit_status: int | None) -> None:
        with self._db:
            self._db.execute(
                "UPDATE jobs SET ended_at = ?, exit_status = ? WHERE id = ?",
                (now_utc(), exit_status, job_id),
            )

    @_guarded
    def add_point(self, run_id: int, job_id: int, library: str, point: dict, summary: dict,
                  *, oversubscribed: bool, ci_rel: float, locality: str = "",
                  refined: bool = False, again: bool = False) -> int:
        """Store one point, its statistics and its raw samples in one transaction; `locality`
        is on-node or off-node when the run spans hosts, empty on one host; `refined`: a
        size added inside a gap where the curve changes (measure/refine.py); `again`: the
        point measured once more (measure/again.py), in place of the stored one, whose times,
        round trips, job, id and time of measurement go into this one's `extra.superseded` and whose
        `refined` it keeps. The point's cache mode and region are the kernel's (warm for a
        kernel that does not say)."""
        with self._db:
            if again:
                point, refined = self._supersede(run_id, library, point, locality, refined)
            cur = self._db.execute(
                "INSERT INTO points(run_id, job_id, library, op, variant, p, n_bytes, reps, batch,"
                " warmup, t_us, t_min_us, t_p25_us, t_mean_us, t_p75_us, t_p95_us, t_max_us,"
                " t_std_us, ci_lo_us, ci_hi_us, outliers, outlier_rule, precision_target,"
                " precision_met, ci_rel, stop_reason, valid, invalid_reason, oversubscribed, sync,"
                " wall_s, extra_json, created_at, locality, refined, cache, cache_region_bytes)"
                " VALUES (" + ",".join("?" * 37) + ")",
                (
                    run_id, job_id, library, point["op"], point.get("variant", ""), point["p"],
                    point["n_bytes"], summary["reps"], point.get("batch", 1), point.get("warmup"),
                    summary["t_us"], summary["t_min_us"], summary["t_p25_us"],
                    summary["t_mean_us"], summary["t_p75_us"], summary["t_p95_us"],
                    summary["t_max_us"], summary["t_std_us"], summary["ci_lo_us"],
                    summary["ci_hi_us"], summary["outliers"], summary["outlier_rule"],
                    point.get("precision_target"), int(bool(point.get("precision_met"))), ci_rel,
                    point.get("stop_reason"), int(bool(point.get("valid", True))),
                    point.get("error") or None, int(oversubscribed), point.get("sync"),
                    point.get("wall_s"), json.dumps(point.get("extra") or {}), now_utc(), locality,
                    int(refined), point.get("cache") or "warm", point.get("cache_region_bytes"),
                ),
            )
            point_id = inserted_id(cur)
            self._db.execute(
                "INSERT INTO samples(point_id, t_us_json) VALUES (?, ?)",
                (point_id, json.dumps(point["samples_us"])),
            )
        return point_id

    def _supersede(self, run_id: int, library: str, point: dict, locality: str, refined: bool
                   ) -> tuple[dict, bool]:
        """Inside add_point's transaction: the stored point `point` measures again taken out,
        and `point` with its summary in extra.superseded, and the `refined` to store."""
        old = self._db.execute(
            "SELECT id, job_id, t_us, t_mean_us, extra_json, created_at, refined FROM points WHERE run_id = ?"
            " AND library = ? AND op = ? AND variant = ? AND p = ? AND n_bytes = ? AND locality = ?",
            (run_id, library, point["op"], point.get("variant", ""), point["p"], point["n_bytes"],
             locality)).fetchone()
        if old is None:
            return point, refined
        first = _loads(old["extra_json"], f"point {old['id']} extra", {})
        superseded = {"t_us": old["t_us"], "t_mean_us": old["t_mean_us"],
                      "core_rtt_ns": first.get("core_rtt_ns"), "core_copy_ns": first.get("core_copy_ns"),
                      "created_at": old["created_at"], "job_id": old["job_id"], "point_id": old["id"]}
        self._db.execute("DELETE FROM samples WHERE point_id = ?", (old["id"],))
        self._db.execute("DELETE FROM points WHERE id = ?", (old["id"],))
        return point | {"extra": (point.get("extra") or {}) | {"superseded": superseded}}, bool(old["refined"])

    @_guarded
    def add_failure(self, run_id: int, library: str, op: str, variant: str, p: int,
                    n_bytes: int | None, kind: str, message: str, locality: str = "",
                    cache: str = "warm") -> None:
        with self._db:
            self._db.execute(
                "INSERT INTO failures(run_id, library, op, variant, p, n_bytes, kind, message,"
                " created_at, locality, cache) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (run_id, library, op, variant, p, n_bytes, kind, message, now_utc(), locality, cache),
            )

    @_guarded
    def add_app_run(self, run_id: int, record: dict) -> int:
        """One application case (every repetition, the medians, the trace's
        reference) in one transaction: a sweep stopped mid-case redoes only it."""
        with self._db:
            cur = self._db.execute(
                "INSERT INTO app_runs(run_id, library, app, config, n, p, oversubscribed, reps,"
                " elapsed_s, phases_json, results_json, launcher_cmd_json, env_json, trace_json,"
                " created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (run_id, record["library"], record["app"], record["config"], record["n"],
                 record["p"], int(record["oversubscribed"]), record.get("reps", len(record["results"])),
                 record["elapsed_s"], json.dumps(record["phases_s"]),
                 json.dumps(record["results"]), json.dumps(record["launcher_cmd"]),
                 json.dumps(record["env"]),
                 json.dumps(record["trace"]) if record.get("trace") is not None else None,
                 now_utc()),
            )
        return inserted_id(cur)

    @_guarded
    def add_app_prediction(self, app_run_id: int, model_key: str, model: str,
                           prediction: dict) -> None:
        """A case's predicted time under one model ('loggps', 'loggp') of one model file
        (`model_key`: its path and digest), replacing an older one."""
        with self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO app_predictions(app_run_id, model_key, model,"
                " prediction_json, created_at) VALUES (?,?,?,?,?)",
                (app_run_id, model_key, model, json.dumps(prediction), now_utc()))

    # -- reading ---------------------------------------------------------

    @_guarded
    def clear_failures(self, run_id: int) -> int:
        """Forget the run's recorded failures before its failed points are measured again
        (a resumed run retries them); returns how many there were."""
        with self._db:
            return self._db.execute("DELETE FROM failures WHERE run_id = ?", (run_id,)).rowcount

    @_guarded
    def run(self, run_id: int) -> dict:
        row = self._db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise InputError(f"no run {run_id} in {self.path}")
        return _run_dict(row)

    @_guarded
    def runs(self) -> list[dict]:
        rows = self._db.execute("SELECT * FROM runs ORDER BY id").fetchall()
        return [_run_dict(r) for r in rows]

    @_guarded
    def run_counts(self, run_id: int) -> dict[str, int]:
        q = self._db.execute
        return {
            "points": q("SELECT COUNT(*) FROM points WHERE run_id = ?", (run_id,)).fetchone()[0],
            "invalid": q("SELECT COUNT(*) FROM points WHERE run_id = ? AND valid = 0",
                         (run_id,)).fetchone()[0],
            "failures": q("SELECT COUNT(*) FROM failures WHERE run_id = ?", (run_id,)).fetchone()[0],
        }

    @_guarded
    def jobs(self, run_ids: Iterable[int] | None = None) -> list[dict]:
        where, args = _run_filter(self, run_ids)
        rows = self._db.execute(f"SELECT * FROM jobs {where} ORDER BY id", args).fetchall()
        out = []
        for r in rows:
            d = dict(r)
            where = f"job {d['id']}"
            d["hosts"] = _loads(d.pop("hosts_json"), f"{where} hosts", [])
            d["launcher_cmd"] = _loads(d.pop("launcher_cmd_json"), f"{where} launcher command", [])
            d["env"] = _loads(d.pop("env_json"), f"{where} environment", {})
            d["timer"] = _loads(d.pop("timer_json"), f"{where} timer", {})
            d["kernel_options"] = _loads(d.pop("kernel_options_json"), f"{where} kernel options", {})
            d["oversubscribed"] = bool(d["oversubscribed"])
            out.append(d)
        return out

    def points(self, run_ids: Iterable[int] | None = None, *, after_id: int | None = None) -> list[dict]:
        return list(self.iter_points(run_ids, after_id=after_id))

    def iter_points(self, run_ids: Iterable[int] | None = None, *,
                    with_samples: bool = False, after_id: int | None = None) -> Iterator[dict]:
        """The points of the runs, one at a time from the database (an export of any size
        holds one point in memory); `with_samples` adds each point's raw samples; `after_id`
        keeps the points stored after that one (a point_id) only."""
        with _translated(self.path):
            where, args = _run_filter(self, run_ids, table="pt")
            if after_id is not None:
                where = f"{where} AND pt.id > ?" if where else "WHERE pt.id > ?"
                args = (*args, int(after_id))
            samples = ", s.t_us_json AS samples_json" if with_samples else ""
            join = " LEFT JOIN samples s ON s.point_id = pt.id" if with_samples else ""
            # a schema-1 store opened read-only is read as it is, without localities
            columns = {r[1] for r in self._db.execute("PRAGMA table_info(points)")}
            order = ", ".join(f"pt.{c}" for c in POINT_ORDER if c != "locality" or "locality" in columns)
            cursor = self._db.execute(
                f"SELECT pt.id AS point_id, pt.*, jobs.library_version AS library_version{samples}"
                f" FROM points pt JOIN jobs ON jobs.id = pt.job_id{join} {where}"
                f" ORDER BY {order}",
                args,
            )
            for r in cursor:
                d = dict(r)
                d["extra"] = _loads(d.get("extra_json"), f"point {d['point_id']} extra", {})
                d["library_version"] = short_version(d.get("library_version"))
                d["locality"] = d.get("locality") or ""  # a read-only store of schema 1 has none
                d["cache"] = d.get("cache") or "warm"  # nor one of schema < 4 a cache mode
                for key in _BOOL_COLUMNS:
                    d[key] = bool(d.get(key))
                point = {k: d.get(k) for k in POINT_COLUMNS}
                if with_samples:
                    point["samples_us"] = _loads(d.get("samples_json"), f"point {d['point_id']} samples", [])
                yield point

    @_guarded
    def measured_keys(self, run_id: int) -> set[tuple[str, str, str, int, int, str]]:
        """(library, op, variant, p, n_bytes, locality) already stored. Points recorded only
        as failures are not among them: resuming a run measures them again."""
        return {
            tuple(r) for r in self._db.execute(  # type: ignore[misc]
                "SELECT library, op, variant, p, n_bytes, locality FROM points WHERE run_id = ?",
                (run_id,))
        }

    def has_table(self, name: str) -> bool:
        """Whether the store has this table: one opened read-only that an older commchar
        wrote may lack the tables added since, and reading it must not add them."""
        return self._db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                                (name,)).fetchone() is not None

    @_guarded
    def app_runs(self, run_ids: Iterable[int] | None = None) -> list[dict]:
        if not self.has_table("app_runs"):
            return []
        where, args = _run_filter(self, run_ids)
        rows = self._db.execute(
            f"SELECT * FROM app_runs {where} ORDER BY run_id, app, library, config, p, n",
            args).fetchall()
        out = []
        for r in rows:
            d = dict(r)
            for key in ("phases", "results", "launcher_cmd", "env", "trace"):
                text = d.pop(f"{key}_json")
                d[key if key != "phases" else "phases_s"] = json.loads(text) if text else None
            d["oversubscribed"] = bool(d["oversubscribed"])
            out.append(d)
        return out

    @_guarded
    def app_predictions(self, app_run_ids: Iterable[int]) -> list[dict]:
        ids = tuple(int(i) for i in app_run_ids)
        if not ids or not self.has_table("app_predictions"):
            return []
        rows = self._db.execute(
            "SELECT * FROM app_predictions WHERE app_run_id IN"
            f" ({','.join('?' * len(ids))}) ORDER BY id", ids).fetchall()
        return [{**{k: r[k] for k in ("id", "app_run_id", "model_key", "model", "created_at")},
                 **json.loads(r["prediction_json"])} for r in rows]

    @_guarded
    def app_done_keys(self, run_id: int) -> set[tuple[str, str, str, int, int]]:
        """(library, app, config, n, p) of the cases stored or recorded as failed."""
        keys = {tuple(r) for r in self._db.execute(
            "SELECT library, app, config, n, p FROM app_runs WHERE run_id = ?", (run_id,))}
        keys |= {(lib, op.removeprefix("app:"), variant, n, p) for lib, op, variant, n, p in
                 self._db.execute(
                     "SELECT library, op, variant, n_bytes, p FROM failures"
                     " WHERE run_id = ? AND op LIKE 'app:%'", (run_id,))}
        return keys  # type: ignore[return-value]

    @_guarded
    def samples(self, point_id: int) -> list[float]:
        row = self._db.execute(
            "SELECT t_us_json FROM samples WHERE point_id = ?", (point_id,)).fetchone()
        if row is None:
            raise InputError(f"no samples for point {point_id} in {self.path}")
        return _loads(row[0], f"point {point_id} samples", [])

    @_guarded
    def failures(self, run_ids: Iterable[int] | None = None) -> list[dict]:
        where, args = _run_filter(self, run_ids)
        rows = self._db.execute(f"SELECT * FROM failures {where} ORDER BY id", args).fetchall()
        # a read-only store older than schema 4 measured everything warm
        return [{**dict(r), "cache": dict(r).get("cache") or "warm"} for r in rows]


def _migrate(db: sqlite3.Connection) -> None:
    """Bring a store of an older schema to this one, inside the opening transaction.
    Schema 1 -> 2: locality joins the points' key (SQLite cannot change a UNIQUE
    constraint, so the table is rebuilt with every row and id kept) and the failures;
    jobs get their placement. Old points ran on one host: their locality is ''.
    Schema 2 -> 3: points.refined, false for every point an older store holds.
    Schema 3 -> 4: points.cache (and its region) and failures.cache; every point and
    failure an older store holds was measured warm, with no region."""
    columns = {r[1] for r in db.execute("PRAGMA table_info(points)")}
    have = {t: {r[1] for r in db.execute(f"PRAGMA table_info({t})")} for t in ("failures", "jobs")}
    if not ("locality" in columns and "locality" in have["failures"] and "placement" in have["jobs"]):
        _migrate_locality(db, columns, have)
        columns = {r[1] for r in db.execute("PRAGMA table_info(points)")}
    if "refined" not in columns:
        # Schema 2 -> 3: every point an older store holds was planned, none refined.
        db.execute("ALTER TABLE points ADD COLUMN refined INTEGER NOT NULL DEFAULT 0")
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
        db.commit()
    # a schema-1 store's points were rebuilt with every column above, its failures not
    failures = {r[1] for r in db.execute("PRAGMA table_info(failures)")}
    if "cache" not in columns or (failures and "cache" not in failures):
        _migrate_cache(db, columns, failures)


def _migrate_cache(db: sqlite3.Connection, columns: set[str], failures: set[str]) -> None:
    """Schema 3 -> 4 in one transaction: an older store's points and failures were warm."""
    db.execute("BEGIN IMMEDIATE")
    try:
        if "cache" not in columns:
            db.execute("ALTER TABLE points ADD COLUMN cache TEXT NOT NULL DEFAULT 'warm'")
            db.execute("ALTER TABLE points ADD COLUMN cache_region_bytes INTEGER")
        if failures and "cache" not in failures:
            db.execute("ALTER TABLE failures ADD COLUMN cache TEXT NOT NULL DEFAULT 'warm'")
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def _migrate_locality(db: sqlite3.Connection, columns: set[str], have: dict[str, set[str]]) -> None:
    # Renaming must not rewrite the samples' reference to points (legacy mode), and the
    # whole change is one transaction: a store is either schema 1 or 2, never between.
    db.execute("PRAGMA legacy_alter_table=ON")
    db.execute("BEGIN IMMEDIATE")
    try:
        _migrate_to_2(db, columns, have)
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    finally:
        db.execute("PRAGMA legacy_alter_table=OFF")


def _migrate_to_2(db: sqlite3.Connection, columns: set[str], have: dict[str, set[str]]) -> None:
    if "locality" not in columns:
        old = ", ".join(r[1] for r in db.execute("PRAGMA table_info(points)"))
        db.execute("ALTER TABLE points RENAME TO points_schema1")
        points_ddl = _SCHEMA[_SCHEMA.index("CREATE TABLE IF NOT EXISTS points"):]
        db.execute(points_ddl[:points_ddl.index(");") + 2])
        db.execute(f"INSERT INTO points({old}) SELECT {old} FROM points_schema1")
        db.execute("DROP TABLE points_schema1")
    for table, column in (("failures", "locality TEXT NOT NULL DEFAULT ''"), ("jobs", "placement TEXT")):
        if have[table] and column.split()[0] not in have[table]:
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column}")


def _run_dict(row: sqlite3.Row) -> dict[str, Any]:
    d = dict(row)
    d["host"] = _loads(d.pop("host_json"), f"run {d['id']} host", {})
    d["options"] = _loads(d.pop("options_json"), f"run {d['id']} options", {})
    return d


def _run_filter(store: Store, run_ids: Iterable[int] | None,
                table: str | None = None) -> tuple[str, tuple]:
    if run_ids is None:
        return "", ()
    ids = tuple(int(i) for i in run_ids)
    for run_id in ids:
        store.run(run_id)  # a run that does not exist is an error, not an empty result
    column = f"{table}.run_id" if table else "run_id"
    return f"WHERE {column} IN ({','.join('?' * len(ids))})", ids
