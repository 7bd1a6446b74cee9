"""The active-message layer (am/) between real processes: exactly-once, in-order,
checksummed delivery under injected loss, duplication, reordering and delay; no
deadlock when both request windows fill; keep-alive recovery of a lost tail; a
killed peer reported, not waited for; clear errors; the MPI bootstrap."""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _make(build: Path, *targets: str, mpicc: str = "mpicc") -> None:
    result = subprocess.run(["make", "-s", "-C", str(ROOT / "am"), f"BUILD={build}", f"MPICC={mpicc}",
                             *(str(build / t) for t in targets)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]


@pytest.fixture(scope="session")
def am_test(tmp_path_factory) -> Path:
    build = tmp_path_factory.mktemp("am")
    _make(build, "am-test")
    return build / "am-test"


def _run(binary: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 120):
    return subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def _stat(out: str, name: str) -> int:
    return sum(int(v) for v in re.findall(rf"{name} (\d+)", out))


def _faults(rate: float, seed: int) -> dict[str, str]:
    value = repr(rate)
    return {"CC_AM_LOSS": value, "CC_AM_DUP": value, "CC_AM_REORDER": value, "CC_AM_DELAY": value,
            "CC_AM_DELAY_US": "100", "CC_AM_SEED": str(seed)}


@pytest.mark.parametrize("rate, scale", [(0.0, "0.3"), (0.01, "0.3"), (0.10, "0.1")])
def test_exactly_once_in_order_and_checksummed(am_test, rate, scale):
    result = _run(am_test, "exact", scale, env=_faults(rate, 11))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-1000:]
    assert result.stdout.count("ok rank") == 2
    if rate:  # the faults really happened and were repaired
        assert _stat(result.stdout, "injected loss") > 0
        assert _stat(result.stdout, "dup") > 0
        assert _stat(result.stdout, "retx") > 0


@pytest.mark.parametrize("rate, scale", [(0.0, "0.2"), (0.01, "0.1"), (0.10, "0.02")])
def test_full_request_windows_both_ways_never_deadlock(am_test, rate, scale):
    env = {**_faults(rate, 5), "CC_AM_REQUEST_WINDOW": "4", "CC_AM_REPLY_WINDOW": "8",
           "CC_AM_CHUNKS_IN_FLIGHT": "1"}
    result = _run(am_test, "flood", scale, env=env, timeout=60)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-1000:]
    assert result.stdout.count("ok rank") == 2


def test_a_lost_last_packet_is_recovered_by_the_keepalive(am_test):
    result = _run(am_test, "tail", env={"CC_AM_KEEPALIVE_US": "500"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert _stat(result.stdout, "keepalives") > 0


def test_a_killed_peer_is_reported_not_waited_for(am_test):
    start = time.monotonic()
    result = _run(am_test, "dead", env={"CC_AM_DEAD_AFTER": "0.5"}, timeout=30)
    elapsed = time.monotonic() - start
    assert result.returncode == 0, result.stdout + result.stderr
    assert "declared dead" in result.stdout
    assert elapsed < 10


def test_bad_arguments_give_clear_errors(am_test):
    result = _run(am_test, "errors")
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "rank 5 is not in [0, 2)" in out
    assert "handler 256 is not in [0, 256)" in out
    assert "outside rank 1's segment" in out
    assert "names bulk handler 3, none registered here" in out


@pytest.mark.parametrize("name, value, message", [
    ("CC_AM_LOSS", "lots", "CC_AM_LOSS: 'lots' is not a number in [0, 0.9]"),
    ("CC_AM_CHUNK_PACKETS", "2.5", "CC_AM_CHUNK_PACKETS: '2.5' is not a whole number in [1, 64]"),
    ("CC_AM_REQUEST_WINDOW", "3", "CC_AM_REQUEST_WINDOW: '3' is not a whole number in [4, 4096]"),
])
def test_bad_configuration_is_one_line(am_test, name, value, message):
    result = _run(am_test, "exact", env={name: value})
    assert result.returncode == 2
    assert result.stderr.strip() == f"am-test: {message}"


@pytest.mark.mpi
def test_mpi_bootstrap_with_every_library(mpi_libraries, tmp_path):
    for lib in mpi_libraries:
        build = tmp_path / lib.name
        _make(build, "am-mpi-test", mpicc=lib.mpicc)
        argv = [lib.mpirun, "-np", "2", str(build / "am-mpi-test")]
        if lib.family == "mpich":
            argv[1] = "-n"
        result = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                                env={**os.environ, **_faults(0.01, 3)})
        assert result.returncode == 0, (lib.name, result.stdout[-2000:], result.stderr[-2000:])
        assert result.stdout.count("ok rank") == 2, lib.name


def test_the_am_library_needs_its_own_operations(mpi_libraries):
    from commchar.errors import UsageError
    from commchar.measure.libraries import select
    from commchar.measure.runner import ops_for

    (am,) = select(["am"])
    assert am.transport == "am" and am.mpirun == mpi_libraries[0].mpirun
    assert {o.op for o in ops_for(am, None)} >= {"am_rtt", "am_store", "am_get", "am_loss"}
    with pytest.raises(UsageError, match="none of 'bcast' can be measured with am"):
        ops_for(am, "bcast")
    assert [o.op for o in ops_for(mpi_libraries[0], "pingpong:send,am_rtt")] == ["pingpong"]


@pytest.mark.mpi
def test_commchar_runs_fits_and_reports_the_am_library(tmp_path, mpi_libraries):
    """`commchar run --library am` stores points like an MPI library's; fit and report use them."""
    import json
    import sys

    from commchar.store import Store

    db, model, page = tmp_path / "c.db", tmp_path / "m.json", tmp_path / "r.html"
    lib = mpi_libraries[0].name

    def commchar(*args):
        result = subprocess.run([sys.executable, "-m", "commchar", *args], capture_output=True,
                                text=True, timeout=600)
        assert result.returncode == 0, result.stderr[-2000:]

    fast = ["--np", "2", "--precision", "0.2", "--max-time", "0.05", "--timeout", "60"]
    commchar("run", "--db", str(db), "--library", f"am,{lib}", "--ops",
             "am_rtt,am_store,am_get,am_exchange:async,am_cost,am_loss:0,am_loss:0.05,pingpong:send",
             "--sizes", "4,16,4K,256K", *fast)
    with Store(db) as store:
        points = store.points()
        assert store.failures() == []
    am = [p for p in points if p["library"] == "am"]
    keys = {(p["op"], p["variant"]) for p in am}
    assert {("am_rtt", ""), ("am_store", ""), ("am_get", ""), ("am_exchange", "async"),
            ("am_cost", "poll_msg"), ("am_loss", "0.05")} <= keys
    assert all(p["valid"] and p["reps"] >= 10 and p["t_us"] > 0 for p in am)
    lossy = [p for p in am if p["op"] == "am_loss" and p["variant"] == "0.05"]
    assert lossy and all(p["extra"]["am_injected_losses"] > 0 for p in lossy)
    assert {p["library"] for p in points} == {"am", lib}
    commchar("fit", "--db", str(db), "-o", str(model))
    fitted = json.loads(model.read_text())["libraries"]["am"]["operations"]
    assert fitted["am_store"]["metrics"]["Bw_as"] > 0
    commchar("report", "--db", str(db), "-o", str(page))
    text = page.read_text()
    assert "Active messages beside MPI" in text and "throughput against injected loss" in text


@pytest.mark.mpi
@pytest.mark.parametrize("fault, expect", [("crash", "crash"), ("corrupt", "invalid")])
def test_a_dead_or_wrong_am_peer_is_a_failed_or_invalid_point(tmp_path, fault, expect):
    """Rank 1 dies (or a received byte is flipped) at an AM point after the endpoint is open:
    the point is recorded as a failure (or invalid), the others are stored, nothing hangs."""
    import sys

    from commchar.store import Store

    db = tmp_path / "c.db"
    result = subprocess.run(
        [sys.executable, "-m", "commchar", "run", "--db", str(db), "--library", "am", "--ops",
         "am_rtt,am_store", "--sizes", "4,1K,64K", "--np", "2", "--precision", "0.2",
         "--max-time", "0.05", "--timeout", "30"],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "COMMCHAR_INJECT_FAULT": f"{fault}@am_store:1024"})
    assert result.returncode == 0, result.stderr[-2000:]
    with Store(db) as store:
        points, failures = store.points(), store.failures()
    if expect == "crash":
        assert [(f["op"], f["n_bytes"], f["kind"]) for f in failures] == [("am_store", 1024, "crash")]
        assert {(p["op"], p["n_bytes"]) for p in points} == {("am_rtt", 4), ("am_store", 4), ("am_store", 65536)}
    else:
        assert failures == []
        bad = [(p["op"], p["n_bytes"]) for p in points if not p["valid"]]
        assert bad == [("am_store", 1024)]
