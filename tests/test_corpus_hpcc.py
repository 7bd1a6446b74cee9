"""HPCC 1.5.0 (Debian's hpcc, Open MPI) as a new user would take it: traced with
`commchar trace -- hpcc` (the program and its MPI library found on PATH), its own checks
read from hpccoutf.txt, replayed without flags and predicted at p = 2, on a 1000-unknown
hpccinf.txt (tests/fixtures/hpcc) that runs in about a second. `make setup` installs
hpcc (scripts/ensure-deps.sh corpus); the test skips only where it cannot be installed."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from _corpus import write_model
from commchar.store import Store
from commchar.store.traces import extract_trace, traces
from commchar.trace import read_trace
from commchar.trace import format as fmt

pytestmark = pytest.mark.mpi

INPUT = Path(__file__).resolve().parent / "fixtures" / "hpcc" / "hpccinf.txt"
LOGGP = {"L": 2.0, "o_s": 0.5, "o_r": 0.75, "g": 0.1, "G": 0.0002, "S": 4096}


def _installable() -> bool:
    try:
        shown = subprocess.run(["apt-cache", "show", "hpcc"], capture_output=True, timeout=60)
    except OSError:
        return False
    return shown.returncode == 0


@pytest.fixture(scope="module")
def hpcc_run(tmp_path_factory):
    if shutil.which("hpcc") is None:
        if _installable():
            pytest.fail("hpcc is not installed: `make setup` installs it (scripts/ensure-deps.sh corpus)")
        pytest.skip("hpcc is neither installed nor installable here")
    work = tmp_path_factory.mktemp("hpcc")
    shutil.copy(INPUT, work / "hpccinf.txt")
    db = work / "t.db"
    result = subprocess.run([sys.executable, "-m", "commchar", "trace", "--db", str(db), "--np", "2",
                             "--", "hpcc"], capture_output=True, text=True, timeout=600, cwd=work)
    assert result.returncode == 0, result.stderr
    with Store(db) as store:
        (row,) = traces(store)
        directory = extract_trace(store, row["id"], work / "x")
    return work, db, row, read_trace(directory)


def test_hpcc_passes_its_own_checks_under_the_tracer(hpcc_run):
    work, _, row, _ = hpcc_run
    assert row["library"] == "openmpi" and row["status"] == "complete"
    out = (work / "hpccoutf.txt").read_text()
    summary = dict(re.findall(r"^(\w+)=(\S+)$", out, re.M))
    assert summary["Success"] == "1"
    assert summary["MPIRandomAccess_Errors"] == summary["MPIRandomAccess_LCG_Errors"] == "0"
    assert float(summary["MPIFFT_maxErr"]) < 1e-10
    assert "FAILED" not in out and "Solution Validates" in out
    failed = re.findall(r"(\d+) tests completed and failed residual checks", out)
    assert failed and set(failed) == {"0"}  # HPL and PTRANS


def test_hpcc_trace_is_compact(hpcc_run):
    trace = hpcc_run[3]
    summary = trace.summary()
    calls = sum(v["count"] for v in summary.calls.values())
    # its RandomAccess polls a receive and a send: millions of Testany and Test calls, compacted
    # into runs that a message's arrival ends, so how many depends on the timing: 30 to 41 calls a
    # record on a quiet 2-core machine, 19.7 under the test suite's own load; without runs, 1
    assert summary.calls["Testany"]["count"] > 100_000
    assert sum(summary.records) < calls / 10
    assert summary.calls["Cancel"]["count"] >= 1 and not summary.others
    for rank in trace.ranks:
        runs = rank.records[rank.records["call"] == fmt.TEST_RUN]
        assert len(runs) > 0 and runs["bytes"].sum() > 10 * len(runs)


def _time_outside_mpi(rank) -> float:
    """A rank's time (us) from MPI_Init's end to MPI_Finalize's start that no MPI call holds,
    polling runs counted as the computation they are (sim/src/workload/polling.rs)."""
    records = rank.records
    calls = records["call"]
    start = int(records[calls == fmt.INIT]["t_end"][0])
    end = int(records[calls == fmt.FINALIZE]["t_start"][0])
    inside = records[(calls != fmt.INIT) & (calls != fmt.FINALIZE) & (calls != fmt.TEST_RUN)]
    return (end - start - int((inside["t_end"] - inside["t_start"]).sum())) / 1e3


def _replay(db, row, model) -> dict:
    result = subprocess.run([sys.executable, "-m", "commchar", "replay", "--db", str(db), "--trace",
                             str(row["id"]), "--model", str(model), "--json"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_hpcc_replays_and_predicts_without_flags(hpcc_run, tmp_path):
    _, db, row, trace = hpcc_run
    doc = _replay(db, row, write_model(tmp_path / "m.json", LOGGP, libraries=("openmpi",)))
    assert doc["trace"]["calls"] == sum(v["count"] for v in trace.summary().calls.values())
    # the model is not this machine's, so the makespan is not compared with the measured one
    # (bench/validation.py does that with a model fitted beside the programs): the replay keeps
    # every rank's computation as traced and charges its messages by the model
    predicted = doc["predictions"]["loggps"]
    for rank, traced in zip(predicted["ranks"], trace.ranks):
        assert rank["compute"] == pytest.approx(_time_outside_mpi(traced), rel=0.02)
        assert rank["communication"] > 0
        assert rank["compute"] + rank["communication"] + rank["sync_wait"] == pytest.approx(rank["predicted"])
    # HPCC moves about 1.7 GB at p = 2: a model with half the bandwidth charges it more
    slower = _replay(db, row, write_model(tmp_path / "slow.json", {**LOGGP, "G": 2 * LOGGP["G"]},
                                          libraries=("openmpi",)))
    assert slower["predictions"]["loggps"]["makespan"] > predicted["makespan"] * 1.05
