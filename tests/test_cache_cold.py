"""--cache cold: every repetition's buffers out of the last-level cache, recorded with
each point, fitted and reported apart from warm points."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import pytest

from commchar.statistics import summarize
from commchar.models.inputs import read_store
from commchar.store import Store
from commchar.store.locality import split_label
from _stores import store_with_points

FAST = ["--precision", "0.05", "--max-time", "0.1", "--timeout", "60", "--no-refine"]
COLD_OPS = "pingpong:send,bcast,alltoall"


def commchar(*args, env=None, check=True):
    result = subprocess.run([sys.executable, "-m", "commchar", *map(str, args)], capture_output=True,
                            text=True, timeout=600, env={**os.environ, **(env or {})})
    if check:
        assert result.returncode == 0, result.stderr[-2000:]
    return result


@pytest.mark.mpi
def test_cold_points_are_verified_and_carry_their_cache_mode_with_every_library(tmp_path, mpi_libraries):
    db = tmp_path / "cold.db"
    libs = ",".join(lib.name for lib in mpi_libraries)
    # one corrupted byte per library: the check reads the slot the repetition used
    commchar("run", "--db", db, "--library", libs, "--np", "2", "--ops", f"{COLD_OPS},put:fence",
             "--sizes", "8,64K", "--cache", "cold", *FAST,
             env={"COMMCHAR_INJECT_FAULT": "corrupt@pingpong:send:65536"})
    with Store(db, readonly=True) as store:
        points, failures, jobs = store.points(), store.failures(), store.jobs()
    for lib in mpi_libraries:
        (job,) = [j for j in jobs if j["library"] == lib.name]
        options = job["kernel_options"]
        assert options["cache"] == "cold" and options["llc_bytes"] > 0, options
        mine = [p for p in points if p["library"] == lib.name]
        assert len(mine) == 3 * 2, mine
        for point in mine:
            where = f"{lib.name} {point['op']} {point['n_bytes']}"
            assert point["cache"] == "cold", where
            # whole slots over at least twice the cache, within the limit
            assert 2 * options["llc_bytes"] <= point["cache_region_bytes"] <= options["cache_limit"], where
            assert point["batch"] == 1, where  # a batch would repeat one slot
            corrupted = point["op"] == "pingpong" and point["n_bytes"] == 65536
            assert point["valid"] is not corrupted, where
        # a window is created over fixed buffers: recorded as unsupported cold, not measured warm
        puts = [f for f in failures if f["library"] == lib.name]
        assert sorted(f["n_bytes"] for f in puts) == [8, 65536] and {f["op"] for f in puts} == {"put"}
        for put in puts:
            assert put["kind"] == "unsupported" and put["cache"] == "cold", put
            assert "--cache cold" in put["message"] and "window" in put["message"], put


@pytest.mark.mpi
def test_a_cache_larger_than_the_limit_is_refused_in_one_line(tmp_path, mpi_libraries):
    lib = mpi_libraries[0].name
    result = commchar("run", "--db", tmp_path / "r.db", "--library", lib, "--np", "2", "--ops",
                      "pingpong:send", "--sizes", "8", "--cache", "cold", "--cache-limit", "1K", *FAST,
                      check=False)
    assert result.returncode != 0
    assert "twice the last-level cache" in result.stderr and "--cache-limit 1024 bytes" in result.stderr
    assert "Traceback" not in result.stderr
    bad = commchar("run", "--db", tmp_path / "r.db", "--cache", "tepid", check=False)
    assert bad.returncode == 2 and "tepid" in bad.stderr and "Traceback" not in bad.stderr


def _add_points(store: Store, cache: str, t_s: float, t_b: float) -> None:
    run_id = store.create_run("0.1.0", {"hostname": "test"}, {"cache": cache})
    job = store.create_job(run_id, "openmpi", 2, ["mpirun"], {}, False)
    for n in (0, 1024, 4096, 16384, 65536):
        samples = [t_s + t_b * n + 0.001 * i for i in range(11)]
        point = {"op": "pingpong", "variant": "send", "p": 2, "n_bytes": n, "samples_us": samples,
                 "cache": cache, "cache_region_bytes": 64 << 20 if cache == "cold" else 0}
        store.add_point(run_id, job, "openmpi", point, summarize(samples), oversubscribed=False,
                        ci_rel=0.001)
    store.set_run_status(run_id, "complete")


def test_cold_and_warm_points_are_fitted_as_separate_series(tmp_path):
    db, model = tmp_path / "s.db", tmp_path / "m.json"
    with Store(db) as store:
        _add_points(store, "warm", 0.5, 0.0001)
        _add_points(store, "cold", 2.0, 0.0004)
    commchar("fit", "--db", db, "-o", model)
    libraries = json.loads(model.read_text())["libraries"]
    assert set(libraries) == {"openmpi", "openmpi cache-cold"}
    for label, (t_s, t_b) in (("openmpi", (0.5, 0.0001)), ("openmpi cache-cold", (2.0, 0.0004))):
        (segment,) = libraries[label]["operations"]["pingpong:send"]["segments"]
        # a fit of both series together would land between the two
        assert segment["t_s"] == pytest.approx(t_s, rel=0.02), label
        assert segment["t_b"] == pytest.approx(t_b, rel=0.02), label
    assert split_label("openmpi off-node cache-cold") == ("openmpi", "off-node")
    report = tmp_path / "r.html"
    commchar("report", "--db", db, "-o", report)
    html = report.read_text()
    assert "openmpi cache-cold" in html and "--cache cold" in html and "64 MiB per rank" in html


def test_a_schema_3_store_reads_as_warm_and_is_migrated(tmp_path):
    db = tmp_path / "old.db"
    store_with_points(db, sizes=3)
    with sqlite3.connect(db) as conn:  # the store as commchar wrote it before cache modes
        conn.execute("ALTER TABLE points DROP COLUMN cache")
        conn.execute("ALTER TABLE points DROP COLUMN cache_region_bytes")
        conn.execute("ALTER TABLE failures DROP COLUMN cache")
        conn.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    with Store(db, readonly=True) as store:  # reading never converts
        assert {p["cache"] for p in store.points()} == {"warm"}
    points, _, _ = read_store(db, [])
    assert {p["library"] for p in points} == {"openmpi"}
    with Store(db) as store:
        _add_points(store, "cold", 2.0, 0.0004)
        store.add_failure(1, "openmpi", "put", "fence", 2, 8, "unsupported", "cold", cache="cold")
        assert {p["cache"] for p in store.points()} == {"warm", "cold"}
        assert [f["cache"] for f in store.failures()] == ["cold"]
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == "4"
