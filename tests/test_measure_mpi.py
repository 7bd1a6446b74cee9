"""Real sweeps with real mpirun, for every MPI library on this machine (small sizes)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest

from commchar.measure.operations import parse_ops
from commchar.models.collstart import CollectiveStartModel
from commchar.models.noise import NoiseModel
from commchar.models.request_growth import RequestGrowthModel
from commchar.measure.plan import parse_sizes, points_for
from commchar.store import Store

pytestmark = pytest.mark.mpi

ALL_OPS = ",".join(sorted({o.op for o in parse_ops(None)}))
# refinement has its own tests (test_models_mpi.py); here it would only add sizes
FAST = ["--precision", "0.05", "--max-time", "0.1", "--timeout", "60", "--no-refine"]


def commchar(*args, env=None, check=True):
    result = subprocess.run([sys.executable, "-m", "commchar", *args], capture_output=True,
                            text=True, timeout=600, env={**os.environ, **(env or {})})
    if check:
        assert result.returncode == 0, result.stderr[-2000:]
    return result


@pytest.fixture(scope="module")
def full_run(tmp_path_factory, mpi_libraries):
    """Every operation and variant at three sizes, p = 2, for each library."""
    db = tmp_path_factory.mktemp("full") / "c.db"
    libs = ",".join(lib.name for lib in mpi_libraries)
    commchar("run", "--db", str(db), "--library", libs, "--ops", ALL_OPS,
             "--sizes", "0,8,4K", "--np", "2", *FAST)
    return db, mpi_libraries


def test_every_operation_is_measured_and_valid_with_every_library(full_run):
    db, libraries = full_run
    with Store(db) as store:
        points = store.points()
        failures = store.failures()
    # MPI-4 operations an MPI-3 library lacks are recorded as unsupported, never as failures
    assert [f for f in failures if f["kind"] != "unsupported"] == []
    expected = {str(o) for o in parse_ops(None)}
    for lib in libraries:
        mine = [p for p in points if p["library"] == lib.name]
        keys = {f"{p['op']}:{p['variant']}" if p["variant"] else p["op"] for p in mine}
        lacking = {f["op"] for f in failures if f["library"] == lib.name}
        assert lacking <= {"pbcast", "pallreduce", "partitioned"}, lacking
        assert keys == expected - lacking, lib.name
        assert all(p["valid"] for p in mine), [p for p in mine if not p["valid"]][:1]
        bad = [(p["op"], p["variant"], p["n_bytes"], p["reps"], p["t_us"]) for p in mine
               if p["reps"] < 10 or p["t_us"] <= 0]
        assert not bad, bad
        assert all(not p["oversubscribed"] for p in mine)
        version = mine[0]["library_version"]
        assert version and ("Open MPI" in version or "MPICH" in version)


def test_coldstart_points_each_were_the_first_of_a_fresh_job_and_kept_every_cold_send(full_run):
    db, libraries = full_run
    with Store(db) as store:
        points = store.points()
    with sqlite3.connect(db) as con:
        per_job = dict(con.execute("SELECT job_id, COUNT(*) FROM points GROUP BY job_id"))
        first_op = dict(con.execute("SELECT job_id, op FROM points WHERE id IN"
                                    " (SELECT MIN(id) FROM points GROUP BY job_id)"))
        cold_jobs = [job for (job,) in con.execute("SELECT job_id FROM points WHERE op = 'coldstart'")]
    assert len(cold_jobs) == len(set(cold_jobs)) == 3 * len(libraries)
    # the first traffic of its processes: one leads the job of every other point, the rest
    # have jobs of their own
    assert all(first_op[job] == "coldstart" for job in cold_jobs)
    assert sorted(per_job[job] > 1 for job in cold_jobs) == [False] * 2 * len(libraries) + [True] * len(libraries)
    for lib in libraries:
        cold = [p for p in points if p["library"] == lib.name and p["op"] == "coldstart"]
        assert sorted(p["n_bytes"] for p in cold) == [0, 8, 4096]
        for p in cold:
            for rank in ("cold_send_us_rank0", "cold_send_us_rank1"):
                sends = p["extra"][rank]
                assert len(sends) == 192 and all(t > 0 for t in sends), (lib.name, p["n_bytes"])
            for rank in ("request_post_us_rank0", "request_post_us_rank1"):
                posts = p["extra"][rank]
                assert len(posts) == 512 and all(t > 0 for t in posts), (lib.name, p["n_bytes"])
            for rank in ("rendezvous_send_us_rank0", "rendezvous_send_us_rank1"):
                rendezvous = p["extra"][rank]
                assert len(rendezvous) == 3 and all(t > 0 for t in rendezvous), (lib.name, p["n_bytes"])


def test_the_first_time_a_process_holds_nine_requests_mpich_allocates_more(full_run):
    """MPICH keeps 8 request objects ready: the ninth call that holds one pays for more,
    in every fresh job; the fit finds that count among the growths it lists."""
    db, libraries = full_run
    with Store(db) as store:
        points = store.points()
    for lib in libraries:
        growth = RequestGrowthModel().fit([p for p in points if p["library"] == lib.name]).params_
        assert growth["series"] == 6 and growth["max_requests"] == 512
        assert all(us > 0 for _, us in growth["counts"])
        if lib.family == "mpich":
            costs = dict(growth["counts"])
            assert costs.get(9, 0) > 20 * growth["warm_us"], (lib.name, growth)


def test_every_rank_reports_its_detours_and_the_fit_keeps_their_time_lost(full_run):
    """The noise probe: each of the 2 ranks loops half a second; its detours, binned by
    powers of two, add up to what each rank counted, and the fit's fraction is their time."""
    db, libraries = full_run
    with Store(db) as store:
        points = store.points()
    for lib in libraries:
        (pt,) = [p for p in points if p["library"] == lib.name and p["op"] == "noise"]
        extra = pt["extra"]
        assert all(0.49 < s < 0.6 for s in extra["noise_seconds_rank"]), extra["noise_seconds_rank"]
        assert extra["noise_realtime_rested"] is (os.sched_getscheduler(0) in (os.SCHED_FIFO, os.SCHED_RR))
        bins = extra["noise_bins"]
        lowers = [b[0] for b in bins]
        assert lowers == sorted(set(lowers)) and all(x & (x - 1) == 0 for x in lowers)
        assert sum(b[1] for b in bins) == sum(extra["noise_detours_rank"])
        assert sum(b[2] for b in bins) == pytest.approx(sum(extra["noise_lost_us_rank"]), rel=1e-3)
        assert all(b[0] <= b[2] / b[1] < 2 * b[0] or b[0] == max(lowers) for b in bins if b[1])
        (row,) = NoiseModel().fit([pt]).params_["by_p"]
        lost = sum(extra["noise_lost_us_rank"]) / (1e6 * sum(extra["noise_seconds_rank"]))
        assert row["p"] == 2 and row["fraction"] == pytest.approx(lost, rel=1e-3) and row["fraction"] < 0.5


def test_a_communicators_first_collectives_are_timed_call_by_call(full_run):
    """The collstart probe: five series of twelve calls, each call's median and largest
    duration over the ranks; the fit reads them into one row at p = 2."""
    db, libraries = full_run
    with Store(db) as store:
        points = store.points()
    for lib in libraries:
        (pt,) = [p for p in points if p["library"] == lib.name and p["op"] == "collstart"]
        for series in ("mixed", "bcast", "reduce", "barrier", "allreduce"):
            median = pt["extra"][f"collstart_median_us_{series}"]
            largest = pt["extra"][f"collstart_max_us_{series}"]
            assert len(median) == len(largest) == 12
            assert all(0 < m <= x for m, x in zip(median, largest)), (lib.name, series)
        (row,) = CollectiveStartModel().fit([pt]).params_["by_p"]
        assert row["p"] == 2 and set(row["kinds"]) == {"bcast", "reduce", "barrier", "allreduce"}


def test_each_job_records_where_and_how_it_measured(full_run):
    db, libraries = full_run
    with Store(db) as store:
        jobs = store.jobs()
        run = store.runs()[0]
    # one job a library for every point, led by a coldstart point, and one more for each
    # other point that must be its job's first traffic: 2 more coldstart sizes, 1 collstart
    assert sorted(job["library"] for job in jobs) == sorted(lib.name for lib in libraries for _ in range(4))
    launcher = {lib.name: lib.mpirun for lib in libraries}
    for job in jobs:
        assert job["exit_status"] == 0 and len(job["hosts"]) == job["p"] == 2
        assert job["compiler"] and job["timer"]["timer"].startswith("clock_gettime")
        assert 0 < job["timer"]["timer_resolution_ns"] < 1e6 and job["timer"]["timer_cost_ns"] > 0
        assert job["launcher_cmd"][0] == launcher[job["library"]] and "--plan" in job["launcher_cmd"]
    assert run["host"]["cores"] >= 1 and run["host"]["cpu_model"]
    assert run["options"]["sizes"] == "0,8,4K" and run["commchar_version"]


def test_statistics_agree_with_the_stored_raw_samples(full_run):
    db, _ = full_run
    # the relative half-width the precision was judged by (a column the point dicts leave out)
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
        ci_rel = dict(con.execute("SELECT id, ci_rel FROM points").fetchall())
    with Store(db) as store:
        for point in store.points():
            samples = np.array(store.samples(point["point_id"]))
            assert len(samples) == point["reps"]
            assert point["t_us"] == pytest.approx(np.median(samples))
            assert point["t_min_us"] == pytest.approx(samples.min())
            assert point["t_max_us"] == pytest.approx(samples.max())
            # the mean is the steady state's: after the transient the point records, if any
            transient = point["extra"].get("transient_samples", 0)
            assert 0 <= transient <= len(samples) // 2
            assert point["t_mean_us"] == pytest.approx(samples[transient:].mean())
            assert point["t_p95_us"] == pytest.approx(np.percentile(samples, 95))
            assert point["ci_lo_us"] <= point["t_us"] <= point["ci_hi_us"]
            half = max(point["t_us"] - point["ci_lo_us"], point["ci_hi_us"] - point["t_us"])
            yardstick = max(point["t_us"], point["extra"].get("delay_us", 0.0))
            # the stored relative half-width is the CI's, raised to half a timer tick where the
            # order statistics agree closer than that; the target is met by it
            assert ci_rel[point["point_id"]] >= half / yardstick * (1 - 1e-9)
            assert point["precision_met"] == (ci_rel[point["point_id"]] <= 0.05 * (1 + 1e-9))


def test_export_csv_and_json_have_the_promised_columns(full_run, tmp_path):
    db, _ = full_run
    out = tmp_path / "e.csv"
    commchar("export", "--db", str(db), "--format", "csv", "-o", str(out))
    header = out.read_text().splitlines()[0].split(",")
    for column in ("library", "op", "variant", "p", "n_bytes", "t_us", "t_min_us", "t_mean_us",
                   "t_p95_us", "ci_lo_us", "ci_hi_us", "reps", "valid", "oversubscribed"):
        assert column in header
    rows = json.loads(commchar("export", "--db", str(db), "--format", "json").stdout)
    with Store(db) as store:
        assert len(rows) == len(store.points())
        first = rows[0]
        per_sample = json.loads(commchar("export", "--db", str(db), "--run", "1", "--format",
                                         "json", "--samples").stdout)
        assert sum(1 for r in per_sample if r["point_id"] == first["point_id"]) == first["reps"]


def test_every_run_and_job_records_the_commit_and_the_kernel_it_ran(full_run):
    """Provenance (ReproMPI): the run's version carries the source commit, each job the
    SHA-256 of the kernel binary that measured it."""
    import hashlib

    from commchar.measure.build import ensure_kernel

    db, libraries = full_run
    repo = Path(__file__).resolve().parents[1]
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    with Store(db) as store:
        version = store.run(1)["commchar_version"]
        jobs = store.jobs([1])
    assert f"+g{head[:12]}" in version
    for lib in libraries:
        kernel = hashlib.sha256(ensure_kernel(lib).read_bytes()).hexdigest()
        mine = [j for j in jobs if j["library"] == lib.name]
        assert mine and all(j["kernel_options"]["kernel_sha256"] == kernel for j in mine)


def test_runs_lists_the_run(full_run):
    """The listing's row for run 1 says what the store holds: status, libraries, point count."""
    db, _ = full_run
    out = commchar("runs", "--db", str(db)).stdout
    with Store(db) as store:
        run, points = store.run(1), len(store.points())
        libraries = run["options"].get("libraries") or []
    row = next(line for line in out.splitlines() if line.strip("│┃ ").startswith("1 "))
    cells = [c.strip() for c in row.strip("│┃").split("│")]
    assert cells[0] == "1" and cells[2] == "complete" == run["status"]
    assert str(points) in cells and libraries and all(lib in out for lib in libraries)  # rich may wrap the row


def test_oversubscribed_collectives_are_flagged(tmp_path, mpi_libraries):
    db = tmp_path / "o.db"
    cores = len(os.sched_getaffinity(0))
    p = cores + 1
    commchar("run", "--db", str(db), "--library", mpi_libraries[0].name, "--ops",
             "bcast,allreduce:sum", "--sizes", "8", "--np", str(p), *FAST)
    with Store(db) as store:
        points = store.points()
        jobs = store.jobs()
    assert points and all(pt["oversubscribed"] and pt["p"] == p and pt["valid"] for pt in points)
    assert all(job["oversubscribed"] for job in jobs)
    # ranks that share cores neither time a cache line between cores nor warm the library first
    # (each of the pre-warm's exchanges would wait for a time slice)
    assert all(job["kernel_options"]["core_distance"] is False and job["kernel_options"]["prewarm"] is False
               for job in jobs), [job["kernel_options"] for job in jobs]


def _stored_points(db) -> int:
    try:
        with sqlite3.connect(db, timeout=5) as conn:
            return conn.execute("SELECT COUNT(*) FROM points").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def test_sigkill_mid_sweep_then_resume_completes_without_remeasuring(tmp_path, mpi_libraries):
    db = tmp_path / "k.db"
    lib = mpi_libraries[0].name
    argv = [sys.executable, "-m", "commchar", "run", "--db", str(db), "--library", lib,
            "--ops", "pingpong:send,bcast,allreduce:sum", "--sizes", "0:64K", "--np", "2",
            # a precision no point reaches: each runs 0.1 to 0.2 s, so the kill lands mid-sweep
            "--precision", "0.00001", "--max-time", "0.2"]
    runner = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    deadline = time.monotonic() + 180
    while _stored_points(db) < 8 and time.monotonic() < deadline and runner.poll() is None:
        time.sleep(0.05)
    assert runner.poll() is None, "the sweep ended before it could be killed"
    os.killpg(runner.pid, signal.SIGKILL)  # no clean-up; its orphaned job dies of a broken pipe
    runner.wait()
    with Store(db) as store:
        before = {p["point_id"]: (p["op"], p["variant"], p["n_bytes"], p["t_us"])
                  for p in store.points()}
        run_id = store.runs()[0]["id"]
    planned = len(points_for(parse_ops("pingpong:send,bcast,allreduce:sum"),
                             parse_sizes("0:64K"), 2))
    assert 8 <= len(before) < planned

    commchar("run", "--db", str(db), "--resume", str(run_id))
    with Store(db) as store:
        points = store.points()
        after = {p["point_id"]: (p["op"], p["variant"], p["n_bytes"], p["t_us"]) for p in points}
        assert store.run(run_id)["status"] == "complete"
    # finished points were not measured again, but for those measured with the cores of ranks 0
    # and 1 in another state than most (measure/again.py), each replaced by one that says so
    again = {(p["op"], p["variant"], p["n_bytes"]): p["extra"]["superseded"]["t_us"]
             for p in points if "superseded" in p["extra"]}
    assert {k: after[k] for k in before if before[k][:3] not in again} == {
        k: v for k, v in before.items() if v[:3] not in again}
    assert all(again[v[:3]] == v[3] for v in before.values() if v[:3] in again)
    with Store(db) as store:  # refinement may add sizes where the latency changes regime
        planned_points = [p for p in store.points() if not p["refined"]]
    assert len(planned_points) == planned and len(set(after.values())) == len(after)
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


@pytest.mark.parametrize("fault, kind", [("hang", "timeout"), ("crash", "crash")])
def test_a_hung_or_crashed_job_is_recorded_and_the_sweep_goes_on(tmp_path, mpi_libraries,
                                                               fault, kind):
    db = tmp_path / "f.db"
    lib = mpi_libraries[-1].name
    started = time.monotonic()
    commchar("run", "--db", str(db), "--library", lib, "--ops", "bcast,reduce:sum",
             "--sizes", "0,8,64", "--np", "2", "--precision", "0.05", "--max-time", "0.1",
             "--timeout", "8", env={"COMMCHAR_INJECT_FAULT": f"{fault}@bcast:8"})
    assert time.monotonic() - started < 120
    with Store(db) as store:
        failures = store.failures()
        measured = {(p["op"], p["n_bytes"]) for p in store.points()}
    assert [(f["op"], f["n_bytes"], f["kind"]) for f in failures] == [("bcast", 8, kind)]
    assert measured == {("bcast", 0), ("bcast", 64), ("reduce", 0), ("reduce", 8), ("reduce", 64)}


def test_wrong_data_is_recorded_invalid_and_the_sweep_goes_on(tmp_path, mpi_libraries):
    db = tmp_path / "w.db"
    commchar("run", "--db", str(db), "--library", mpi_libraries[0].name, "--ops", "allgather",
             "--sizes", "8,64", "--np", "2", *FAST,
             env={"COMMCHAR_INJECT_FAULT": "corrupt@allgather:8"})
    with Store(db) as store:
        points = {p["n_bytes"]: p for p in store.points()}
    assert not points[8]["valid"] and "expected" in points[8]["invalid_reason"]
    assert points[64]["valid"]


def test_ctrl_c_stops_cleanly_keeps_what_was_measured_and_says_how_to_resume(tmp_path,
                                                                          mpi_libraries):
    db = tmp_path / "i.db"
    argv = [sys.executable, "-m", "commchar", "run", "--db", str(db), "--library",
            mpi_libraries[0].name, "--ops", "pingpong:send,bcast", "--sizes", "0:64K", "--np", "2",
            "--precision", "0.00001", "--max-time", "0.2"]  # 0.1 to 0.2 s a point: Ctrl-C lands mid-sweep
    runner = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 180
    while _stored_points(db) < 4 and time.monotonic() < deadline and runner.poll() is None:
        time.sleep(0.05)
    runner.send_signal(signal.SIGINT)
    _, stderr = runner.communicate(timeout=60)
    assert runner.returncode == 130
    lines = stderr.strip().splitlines()
    assert "Traceback" not in stderr and "--resume 1" in lines[-1]
    with Store(db) as store:
        assert store.run(1)["status"] == "interrupted"
        assert len(store.points()) >= 4
        assert all(job["ended_at"] for job in store.jobs())  # the job was stopped, not orphaned


def test_window_sync_is_stored_with_its_counts_fitted_apart_and_reported(tmp_path, mpi_libraries):
    """--sync window through run, store, fit and report, with both libraries; rank 1 starts
    every fourth allreduce repetition at 8 B late, so that point has late ones redone."""
    db = tmp_path / "s.db"
    libs = ",".join(lib.name for lib in mpi_libraries)
    commchar("run", "--db", str(db), "--library", libs, "--ops", "allreduce:sum,bcast",
             "--sizes", "8,1K", "--np", "2", *FAST, "--sync", "window",
             env={"COMMCHAR_INJECT_FAULT": "late@allreduce:sum:8"})
    with Store(db) as store:
        points = store.points()
        jobs = store.jobs()
    assert {pt["library"] for pt in points} == {lib.name for lib in mpi_libraries}
    assert len(points) == 4 * len(mpi_libraries)
    assert all(job["kernel_options"]["sync"] == "window" for job in jobs)
    for pt in points:
        window = pt["extra"]["sync_window"]
        assert pt["valid"] and pt["sync"] == "window" and window["window_us"] > 0
        assert 0 <= window["redone"] <= window["late"]
        if (pt["op"], pt["n_bytes"]) == ("allreduce", 8):
            assert window["late"] > 0 and window["redone"] > 0
    model = tmp_path / "m.json"
    commchar("fit", "--db", str(db), "-o", str(model))
    assert set(json.loads(model.read_text())["libraries"]) == {lib.name for lib in mpi_libraries}
    page = tmp_path / "r.html"
    commchar("report", "--db", str(db), "-o", str(page))
    html = page.read_text()
    assert "repetitions started late" in html and "Window synchronization" in html

    # a default run of the same series in the same store (allreduce back to back under
    # --sync auto): one fit over both is refused
    commchar("run", "--db", str(db), "--library", mpi_libraries[0].name, "--ops", "allreduce:sum",
             "--sizes", "8,1K", "--np", "2", *FAST)
    mixed = commchar("fit", "--db", str(db), "-o", str(tmp_path / "x.json"), check=False)
    assert mixed.returncode != 0 and "mixes start synchronizations (none in run(s) 2; window in run(s) 1)" in mixed.stderr
    assert "Traceback" not in mixed.stderr
    commchar("fit", "--db", str(db), "--run", "2", "-o", str(tmp_path / "b.json"))
