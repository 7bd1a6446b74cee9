"""bench/fewest_samples.py: the kernel's stopping rule replayed on a point's own samples."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from test_adaptive_oracle import load


def test_the_floor_stops_where_the_kernels_rule_would_have():
    bench = load("fewest_samples")
    quiet = [100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 100.1, 99.9, 100.3, 99.8]
    # 6 samples within 1% of their median meet 5% at once; the run's floor of 10 took all
    assert bench.stop_at(quiet, 0.05, 6) == 6 and bench.stop_at(quiet, 0.05, 10) == 10
    # a spike among the first samples stays inside the CI ([min, max] up to 10 samples) until
    # the chunks (6, then 3, then 5, as in the kernel) reach 14
    spiky = [100.0, 180.0, 99.0, 100.5, 99.5, 100.2, 100.1, 99.9, 100.3, 99.8, 100.0, 100.1, 99.7, 100.4]
    assert bench.stop_at(spiky, 0.05, 6) == 14
    # never more samples than were measured
    assert bench.stop_at([100.0, 300.0, 50.0, 100.0, 100.0, 100.0, 200.0], 0.01, 6) == 7


def test_a_stored_run_is_replayed_only_where_the_floor_binds(tmp_path: Path):
    bench = load("fewest_samples")
    db = tmp_path / "r.db"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE points (id INTEGER PRIMARY KEY, library TEXT, op TEXT, n_bytes INTEGER,"
                    " precision_target REAL, stop_reason TEXT, extra_json TEXT, wall_s REAL)")
        con.execute("CREATE TABLE samples (point_id INTEGER PRIMARY KEY, t_us_json TEXT)")
        rows = [(1, "pingpong", 1 << 20, "precision", "{}"), (2, "bcast", 1 << 20, "max_time", "{}"),
                (3, "bcast", 4096, "precision", "{}"), (4, "loggp", 1 << 20, "precision", "{}"),
                (5, "put", 1 << 20, "precision", '{"window": 4}')]
        for pid, op, n, stop, extra in rows:
            con.execute("INSERT INTO points VALUES (?, 'lib', ?, ?, 0.05, ?, ?, 0.1)", (pid, op, n, stop, extra))
            con.execute("INSERT INTO samples VALUES (?, ?)", (pid, json.dumps([100.0] * 10)))
    kept, saved, wall, library = bench.replay_run(db, 6, 65536)
    # the ping-pong (two messages a sample) and the put (a window of 4) of 1 MiB; not the point
    # that ran to max-time, the small size or the probe
    assert kept == {1: 6, 5: 6} and library == "lib" and wall == 0.5
    assert abs(saved - (4 * 100e-6 * 2 + 4 * 100e-6 * 4)) < 1e-12


def test_a_store_without_points_or_samples_is_one_line(tmp_path: Path, monkeypatch, capsys):
    bench = load("fewest_samples")
    empty, other = tmp_path / "empty.db", tmp_path / "other.db"
    with sqlite3.connect(empty) as con:
        con.execute("CREATE TABLE points (id INTEGER PRIMARY KEY, library TEXT, wall_s REAL)")
    with sqlite3.connect(other) as con:
        con.execute("CREATE TABLE t (x)")
    for db in (empty, other):
        monkeypatch.setattr("sys.argv", ["fewest_samples.py", "--db", str(db)])
        assert bench.main() == 1
        err = capsys.readouterr().err
        assert err.startswith(f"{db}: not a commchar run's store") and err.count("\n") == 1
