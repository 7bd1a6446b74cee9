"""PVM measured beside MPI with a real, private virtual machine: a small sweep whose
results are verified, fitted and reported; a run killed mid-way (Ctrl-C and SIGKILL)
that leaves no daemon and resumes; a failure at one size recorded while the sweep goes
on. Every test checks that no PVM process of its own and no PVM file is left."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from commchar.errors import UsageError
from commchar.measure import pvm
from commchar.measure.operations import parse_ops
from commchar.measure.plan import plan_argument, points_for
from commchar.store import Store

FAST = ["--precision", "0.2", "--max-time", "0.05", "--timeout", "60"]


def _pvm_or_fail() -> None:
    problem = pvm.installation_problem()
    if problem:
        pytest.fail(f"{problem} (`make setup` installs PVM where apt-get is available)")


def _machine_processes(tmp: Path) -> list[int]:
    """Processes (daemon, group server, tasks) of a virtual machine whose files are under tmp."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(v.startswith(b"PVM_TMP=" + str(tmp).encode()) for v in environ):
            found.append(int(entry))
    return [pid for pid in found if _alive(pid)]


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _run(tmp: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 600):
    return subprocess.run([sys.executable, "-m", "commchar", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "TMPDIR": str(tmp), **(env or {})})


def _nothing_left(tmp: Path) -> None:
    deadline = time.monotonic() + 15
    while _machine_processes(tmp) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _machine_processes(tmp) == [], "a PVM process was left running"
    assert list(tmp.glob(pvm.DIR_PREFIX + "*")) == [], "a virtual machine's directory was left"


def test_pvm_operations_are_stored_under_mpi_names_and_sent_under_the_kernels():
    ops = parse_ops("pingpong:psend,bcast,pack,allreduce", "pvm")
    assert [(o.op, o.variant) for o in ops] == [("pingpong", "psend"), ("bcast", ""), ("pack", "default"),
                                                ("pack", "raw"), ("pack", "inplace")]
    # MPI libraries keep their own variants; a name or variant nobody has is an error
    assert [(o.op, o.variant) for o in parse_ops("pingpong:send,pack")] == [("pingpong", "send")]
    assert parse_ops("pingpong:psend") == []
    with pytest.raises(UsageError, match="no variant 'warp'"):
        parse_ops("pingpong:warp", "pvm")
    points = points_for(parse_ops("pingpong:psend,gather", "pvm"), [0, 8], 3)
    # p2p only at p = 2; PVM cannot gather 0 bytes, so the smallest gather is 1 byte a rank
    assert [(pt.op, pt.n_bytes) for pt in points] == [("gather", 3), ("gather", 9)]
    names = {"gather": "pvm_gather"}
    assert plan_argument(points, names) == "pvm_gather=3,9"


def test_pvm_host_file_comes_from_the_mpi_one(tmp_path):
    hostfile = tmp_path / "hosts"
    hostfile.write_text("# cluster\nnode1 slots=4\nnode2:2\nlocalhost\nnode1\n")
    names = pvm.host_names(hostfile)
    assert names[1:] == ["node1", "node2"] and len(names) == 3


@pytest.mark.mpi
def test_small_pvm_sweep_beside_mpi_is_verified_fitted_and_reported(tmp_path, mpi_libraries):
    _pvm_or_fail()
    before = set(Path("/tmp").glob("pvm*"))
    db, model, page = tmp_path / "c.db", tmp_path / "m.json", tmp_path / "r.html"
    lib = mpi_libraries[0].name
    result = _run(tmp_path, "run", "--db", str(db), "--library", f"pvm,{lib}", "--ops",
                  "pingpong:psend,pingpong:raw,pingpong:send,pack:inplace,bcast,mcast,barrier,reduce,"
                  "gather,scatter", "--sizes", "8,1K,16K", "--np", "2,3", *FAST)
    assert result.returncode == 0, result.stderr[-2000:]
    with Store(db) as store:
        points, failures = store.points(), store.failures()
    assert failures == []
    mine = [p for p in points if p["library"] == "pvm"]
    keys = {(p["op"], p["variant"], p["p"]) for p in mine}
    assert {("pingpong", "psend", 2), ("pingpong", "raw", 2), ("pack", "inplace", 2), ("bcast", "", 3),
            ("mcast", "", 3), ("barrier", "", 3), ("reduce", "sum", 3), ("reduce", "nop", 3),
            ("gather", "", 3), ("scatter", "", 3)} <= keys
    assert ("pingpong", "send", 2) not in keys  # MPI's send mode is not PVM's
    assert all(p["valid"] and p["reps"] >= 10 and p["t_us"] > 0 for p in mine)
    assert all(p["extra"]["pvm_route"] == "daemon" for p in mine)
    assert {p["n_bytes"] for p in mine if p["op"] == "gather" and p["p"] == 3} == {9, 1026, 16386}
    _nothing_left(tmp_path)
    assert set(Path("/tmp").glob("pvm*")) == before, "PVM wrote into /tmp"

    fit = _run(tmp_path, "fit", "--db", str(db), "-o", str(model))
    assert fit.returncode == 0, fit.stderr[-2000:]
    fitted = json.loads(model.read_text())["libraries"]
    assert {"pingpong:psend", "pingpong:raw", "pack:inplace", "bcast"} <= set(fitted["pvm"]["operations"])
    assert fitted["pvm"]["operations"]["pingpong:psend"]["kind"] == "p2p"
    assert fitted["pvm"]["operations"]["bcast"]["kind"] == "collective"
    # PVM has no pingpong:send: a plain pingpong is its psend
    predicted = _run(tmp_path, "predict", str(model), "pingpong", "bcast", "--n", "1K", "--p", "2",
                     "--library", "pvm", "--json")
    assert predicted.returncode == 0, predicted.stderr[-2000:]
    assert all(row["t_us"] > 0 for row in json.loads(predicted.stdout))
    report = _run(tmp_path, "report", "--db", str(db), "-o", str(page))
    assert report.returncode == 0, report.stderr[-2000:]
    text = page.read_text()
    assert "PVM beside MPI" in text and "pvm_psend / pvm_precv" in text and "MPI_Send / MPI_Recv" in text
    assert "PVM 3.4" in text  # the version is PVM's, not the bootstrapping MPI's


@pytest.mark.mpi
@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL])
def test_a_pvm_run_killed_midway_leaves_no_daemon_and_resumes(tmp_path, how):
    _pvm_or_fail()
    db = tmp_path / "k.db"
    run = subprocess.Popen(
        [sys.executable, "-m", "commchar", "run", "--db", str(db), "--library", "pvm", "--ops",
         "pingpong:psend", "--sizes", "0:64K:x4", "--np", "2", "--precision", "0.0001", "--max-time", "0.5",
         "--timeout", "60"],
        env={**os.environ, "TMPDIR": str(tmp_path)}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    stored = 0
    while stored < 2 and time.monotonic() < deadline and run.poll() is None:
        time.sleep(0.2)
        if db.exists():
            try:
                with Store(db, readonly=True) as store:
                    stored = len(store.points())
            except Exception:  # the store is being created
                stored = 0
    assert run.poll() is None and stored >= 2, "the run did not get under way"
    assert _machine_processes(tmp_path), "no virtual machine was running"
    run.send_signal(how)
    run.wait(timeout=60)
    deadline = time.monotonic() + 15  # the watchdog's grace is 3 s
    while _machine_processes(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _machine_processes(tmp_path) == [], "a PVM daemon or task outlived the run"
    with Store(db, readonly=True) as store:
        partial = len(store.points())
        interrupted = store.run(1)["status"]
    # a precision out of reach holds every size for its 0.5 s, so the kill lands midway
    assert partial < 10 and interrupted != "complete", (partial, interrupted)

    resumed = _run(tmp_path, "run", "--db", str(db), "--resume", "1")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    with Store(db, readonly=True) as store:
        assert sorted(p["n_bytes"] for p in store.points()) == [0, 1, 4, 16, 64, 256, 1024, 4096, 16384, 65536]
        assert store.run(1)["status"] == "complete"
    _nothing_left(tmp_path)  # also the directory SIGKILL left behind


@pytest.mark.mpi
def test_a_pvm_failure_at_one_size_is_recorded_and_the_sweep_goes_on(tmp_path):
    _pvm_or_fail()
    db = tmp_path / "f.db"
    result = _run(tmp_path, "run", "--db", str(db), "--library", "pvm", "--ops", "pingpong:psend,bcast",
                  "--sizes", "8,1K,16K", "--np", "2", *FAST,
                  env={"COMMCHAR_INJECT_FAULT": "crash@pvm_pingpong:psend:1024"})
    assert result.returncode == 0, result.stderr[-2000:]
    with Store(db, readonly=True) as store:
        failures, points = store.failures(), store.points()
    assert [(f["op"], f["variant"], f["n_bytes"], f["kind"]) for f in failures] == [
        ("pingpong", "psend", 1024, "crash")]
    assert {(p["op"], p["n_bytes"]) for p in points} == {("pingpong", 8), ("pingpong", 16384), ("bcast", 8),
                                                        ("bcast", 1024), ("bcast", 16384)}
    _nothing_left(tmp_path)


def test_pvm_missing_is_one_clear_line(tmp_path, monkeypatch):
    monkeypatch.setenv("PVM_ROOT", str(tmp_path / "nowhere"))
    monkeypatch.setenv("PATH", str(tmp_path))
    problem = pvm.installation_problem()
    assert problem is not None and "not installed" in problem and "\n" not in problem
    with pytest.raises(pvm.MachineError, match="not installed"):
        with pvm.private_machine():
            pass
