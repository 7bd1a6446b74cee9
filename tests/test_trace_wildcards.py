"""Wildcard receives through every completion path, under real mpirun with each library:
tests/programs/wildcards.c is traced, its records checked (the actual source and tag of
every receive, a Sendrecv's included, the cancelled receive, the matched probes, the polling loop as TEST_RUN
records), and replayed without flags; a replay's error names a stored trace by its id."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from _corpus import write_model
from commchar.store import Store
from commchar.store.traces import RankRow, add_rank, begin_trace, extract_trace, finish_trace, traces
from commchar.trace import CALL_IDS, OTHER_NAMES, read_trace
from commchar.trace import format as fmt
from commchar.trace.synthetic import T_INIT_NS, write_rank

PROGRAM = Path(__file__).resolve().parent / "programs" / "wildcards.c"
C = CALL_IDS
NMSG = 18
LOGGP = {"L": 2.0, "o_s": 0.5, "o_r": 0.75, "g": 0.1, "G": 0.001, "S": 65536}


def commchar(*args: str, timeout: float = 120, path: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{path}{os.pathsep}{os.environ['PATH']}"} if path else None
    return subprocess.run([sys.executable, "-m", "commchar", *args], capture_output=True,
                          text=True, timeout=timeout, env=env)


def _model(path: Path) -> Path:
    return write_model(path, LOGGP)


@pytest.fixture(scope="module", params=["openmpi", "mpich"])
def traced(request, mpi_libraries, tmp_path_factory):
    found = {lib.name: lib for lib in mpi_libraries}
    if request.param not in found:
        pytest.fail(f"{request.param} not installed: `make setup` installs both libraries")
    library = found[request.param]
    work = tmp_path_factory.mktemp(f"wild-{library.name}")
    binary = work / "bin" / f"wildcards-{library.name}"
    binary.parent.mkdir()
    subprocess.run([library.mpicc, "-std=c11", "-O1", "-o", str(binary), str(PROGRAM)],
                   check=True, capture_output=True, timeout=120)
    db = work / "t.db"
    # by its name on PATH, without --library: the program and its library are found
    result = commchar("trace", "--db", str(db), "--np", "2", "--", binary.name, path=binary.parent)
    assert result.returncode == 0, result.stderr
    polls = re.search(r"wildcards ok polls (\d+) (\d+)", result.stdout)
    assert polls, result.stdout
    with Store(db) as store:
        (row,) = traces(store)
        assert row["library"] == library.name and row["program"][0] == str(binary)
        directory = extract_trace(store, row["id"], work / "x")
    return library.name, db, read_trace(directory), (int(polls[1]), int(polls[2]))


pytestmark = pytest.mark.mpi


def _received(rec: np.ndarray) -> list[tuple[int, int, int]]:
    """(source, tag, bytes) of every message rank 0 received, in record order."""
    starts = {int(r["req"]): r for r in rec[np.isin(rec["call"], [C["Irecv"], C["Imrecv"]])]}
    got = []
    for r in rec:
        call = int(r["call"])
        if call in (C["Recv"], C["Mrecv"]):
            got.append((int(r["aux"]), int(r["aux2"]), int(r["bytes2"])))
        elif call == C["COMPLETE"] and int(r["req"]) in starts and not r["flags"] & fmt.REC_CANCELLED:
            got.append((int(r["aux"]), int(r["aux2"]), int(r["bytes2"])))
    return got


def test_every_wildcard_receive_records_its_actual_source_and_tag(traced):
    rec = traced[2].ranks[0].records
    received = _received(rec)
    messages = [m for m in received if m[1] != 100]  # the polling loop's own message
    assert sorted(m[1] for m in messages) == list(range(1, NMSG + 1))
    assert all(source == 1 and size == 4 * tag for source, tag, size in messages)
    assert (1, 100, 4) in received
    (sendrecv,) = rec[rec["call"] == C["Sendrecv"]]
    assert (sendrecv["peer"], sendrecv["tag"], sendrecv["aux"], sendrecv["aux2"]) == (1, 200, 1, 201)
    assert sendrecv["bytes2"] == 4
    wild = rec[(rec["call"] == C["Irecv"]) & (rec["peer"] == -2)]
    assert len(wild) == 16 and (wild["tag"] != -1).sum() == 1  # the cancelled one asks for tag 99


def test_cancelled_receive_is_recorded_as_cancelled(traced):
    rec = traced[2].ranks[0].records
    (cancel,) = rec[rec["call"] == C["Cancel"]]
    (never,) = rec[(rec["call"] == C["Irecv"]) & (rec["tag"] == 99)]
    assert cancel["req"] == never["req"] != 0
    (done,) = rec[(rec["call"] == C["COMPLETE"]) & (rec["req"] == never["req"])]
    assert done["flags"] & fmt.REC_CANCELLED and done["bytes2"] == 0
    assert "Cancel" not in traced[2].summary().others


def test_matched_probes_and_their_receives(traced):
    rec = traced[2].ranks[0].records
    (mprobe,) = rec[rec["call"] == C["Mprobe"]]
    (mrecv,) = rec[rec["call"] == C["Mrecv"]]
    assert (mprobe["peer"], mprobe["tag"]) == (-2, -1)
    assert (mprobe["aux"], mprobe["aux2"], mprobe["bytes2"]) == (1, mrecv["tag"], 4 * mrecv["tag"])
    assert (mrecv["peer"], mrecv["aux"], mrecv["comm"]) == (1, 1, 0)
    improbes = rec[rec["call"] == C["Improbe"]]
    (imrecv,) = rec[rec["call"] == C["Imrecv"]]
    assert improbes["aux"][-1] == 1 and (improbes["aux"][:-1] == -1).all()
    assert (imrecv["peer"], imrecv["tag"], imrecv["bytes2"]) == (1, improbes["aux2"][-1], 4 * imrecv["tag"])
    assert imrecv["flags"] & fmt.REC_NONBLOCKING and imrecv["req"] != 0


def test_a_polling_loop_is_a_few_test_run_records(traced):
    rec = traced[2].ranks[0].records
    any_calls, test_calls = traced[3]
    runs = rec[rec["call"] == fmt.TEST_RUN]
    testany = runs[runs["aux"] == C["Testany"]]
    # every unsuccessful Testany of the loop (one per call but the last) in few records
    assert int(testany["bytes"].sum()) >= any_calls - 1 > 100
    assert len(runs) < 40
    assert (runs["t_end"] >= runs["t_start"]).all()
    # the least time a call took inside MPI (sampled every 64th call, the two clock reads
    # of the sample included): at most the run's mean time per call plus those reads, over
    # the calls its span holds (t_end is the end of the last call that read the clock: the
    # first, the 65th, the 129th, ...)
    assert (runs["bytes2"] > 0).all()
    spanned = 64 * ((runs["bytes"].astype(np.int64) - 1) // 64) + 1
    mean_ns = (runs["t_end"] - runs["t_start"]).astype(float) / spanned
    assert (runs["bytes2"] <= mean_ns + 200).all()
    summary = traced[2].summary()
    assert summary.calls["Testany"]["count"] >= any_calls
    assert "Test_run" not in summary.calls
    assert test_calls >= 1


def test_replays_without_flags(traced, tmp_path):
    library, db, trace, _ = traced
    result = commchar("replay", "--db", str(db), "--trace", "1", "--model", str(_model(tmp_path / "m.json")),
                      "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["trace"]["calls"] == sum(v["count"] for v in trace.summary().calls.values())
    # the polling loop waits 20 ms for rank 1's computation: the replay keeps that wait, and
    # drops what a loaded machine adds inside MPI (a cancelled receive left in the replay
    # would never match: no prediction at all)
    measured, predicted = doc["measured"]["makespan"], doc["predictions"]["loggps"]["makespan"]
    assert 20_000 < predicted < 1.2 * measured


def test_a_replay_error_names_the_stored_trace(tmp_path):
    db = tmp_path / "t.db"
    files = tmp_path / "files"
    files.mkdir()
    with Store(db) as store:
        trace_id = begin_trace(store, commchar_version="test", library="mpich", p=2, program=["x"],
                               launcher_cmd=["mpirun"], env={}, oversubscribed=False)
        for rank in range(2):
            rec = np.zeros(1, dtype=fmt.RECORD_DTYPE)
            rec["call"], rec["aux"] = fmt.OTHER, OTHER_NAMES.index("Win_fence")
            rec["t_start"] = rec["t_end"] = T_INIT_NS + 10
            path = files / f"rank-{rank}.cctrace"
            write_rank(path, rank, 2, rec, t_finalize_ns=T_INIT_NS + 100)
            add_rank(store, trace_id, RankRow(rank, "h", 100, 1, True, None, {}), path)
        finish_trace(store, trace_id, status="complete", exit_status=0, wall_s=0.1)
    result = commchar("replay", "--db", str(db), "--trace", str(trace_id), "--model",
                      str(_model(tmp_path / "m.json")))
    assert result.returncode != 0 and "Traceback" not in result.stderr
    (line,) = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert f"trace {trace_id}" in line and "Win_fence" in line and "commchar-trace-" not in line
