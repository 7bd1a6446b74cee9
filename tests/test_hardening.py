"""Hardening, one test per class: bounded ranges, streaming export, exit codes of failed
launches, resume retries, lock contention, the store-opening policy, names that look like
markup, and no process left behind (MPI-launching tests are marked `mpi`)."""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
import tracemalloc
import uuid
from pathlib import Path

import pytest

from commchar import jsonio, ranges
from commchar.cli import main
from commchar.errors import InputError, UsageError
from commchar.simulate.binary import failure_cause
from commchar.store import Store
from commchar.store import database
from commchar.store.export import export_points, write_csv, write_json
from _stores import store_with_points

REPO = Path(__file__).resolve().parents[1]


def commchar(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "commchar", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "COLUMNS": "300", **(env or {})},
                          stdin=subprocess.DEVNULL)


# -- 1. bounded ranges ----------------------------------------------------------

def test_a_range_is_counted_before_it_is_built():
    with pytest.raises(UsageError, match="1,000,000,000,000 values"):
        ranges.arithmetic(1, 10**12, 1, "--np: '1:1000000000000'")  # a generator: nothing built yet
    assert list(ranges.arithmetic(0, 10, 4, "x")) == [0, 4, 8]
    assert list(ranges.geometric(1, 1000, 10, "x")) == [1, 10, 100, 1000]
    assert ranges.sample(2, 12) == list(range(2, 13))
    huge = ranges.sample(2, 1e300, extra=(3.0, 10**7))
    assert huge[0] == 2 and huge[-1] == int(1e300) and 3 in huge and 10**7 in huge and len(huge) < 1100


def test_peak_metrics_of_a_fit_do_not_loop_over_every_p(tmp_path):
    rows = "".join(f"x,bcast,{p},{n},{5 + n * 1e-3 * p ** 0.5}\n" for p in (2, 4, 10**7) for n in (8, 1024))
    (tmp_path / "p.csv").write_text("library,op,p,n_bytes,t_us\n" + rows)
    started = time.process_time()
    assert main(["fit", "--csv", str(tmp_path / "p.csv"), "-o", str(tmp_path / "m.json")]) == 0
    assert time.process_time() - started < 20
    peak = json.loads((tmp_path / "m.json").read_text())["libraries"]["x"]["operations"]["bcast"]["metrics"]["peak"]
    assert peak["p_range"] == [2, 10**7]


# -- 2. streaming export --------------------------------------------------------

class _Counter(io.TextIOBase):
    def __init__(self) -> None:
        self.chars = 0

    def write(self, text: str) -> int:  # type: ignore[override]
        self.chars += len(text)
        return len(text)


def test_export_of_samples_holds_one_point_at_a_time(tmp_path):
    db = tmp_path / "big.db"
    store_with_points(db, sizes=30)  # 90 points of 20 samples...
    with sqlite3.connect(db) as conn:  # ...made 600 samples each: 54000 sample rows
        conn.execute("UPDATE samples SET t_us_json = ?", (json.dumps([1.5 + i * 1e-3 for i in range(600)]),))
    sink = _Counter()
    with Store(db, readonly=True) as store:
        tracemalloc.start()
        rows = write_json(export_points(store, None, samples=True), sink)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert rows == 90 * 600
    assert sink.chars > 25e6
    assert peak < 4e6, f"{peak / 1e6:.1f} MB held to export {sink.chars / 1e6:.0f} MB"


def test_csv_export_of_samples_is_one_row_per_sample_with_its_point(tmp_path):
    import csv

    db = tmp_path / "s.db"
    store_with_points(db, sizes=3)
    out = io.StringIO()
    with Store(db, readonly=True) as store:
        count = write_csv(export_points(store, [1], samples=True), out, samples=True)
        stored = {p["point_id"]: (p, store.samples(p["point_id"])) for p in store.points()}
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert count == len(rows) == sum(len(samples) for _, samples in stored.values())
    for row in rows:
        point, samples = stored[int(row["point_id"])]
        assert float(row["sample_us"]) in samples and row["op"] == point["op"] and row["extra"] == "{}"


# -- 5. lock contention -----------------------------------------------------------

def test_a_write_lock_held_too_long_is_one_line_after_a_bounded_wait(tmp_path, monkeypatch):
    db = tmp_path / "l.db"
    store_with_points(db, sizes=2)
    monkeypatch.setattr(database, "LOCK_WAIT_S", 0.5)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        started = time.monotonic()
        with pytest.raises(InputError, match=r"stayed locked by another process for 0.5 s"):
            with Store(db) as store:
                store.create_run("0", {}, {})
        assert time.monotonic() - started < 10
    finally:
        holder.rollback()
        holder.close()


def test_resume_of_a_run_still_measuring_is_refused(tmp_path, capsys):
    db = tmp_path / "r.db"
    store_with_points(db, sizes=2)
    with Store(db) as measuring:
        measuring.lock_for_measuring()  # what a running `commchar run` holds
        assert main(["run", "--db", str(db), "--resume", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "in use by another `commchar run`" in err[0]
    with Store(db, readonly=True) as store:
        assert store.run(1)["status"] == "complete"  # untouched


def test_resume_refuses_other_options_and_a_missing_database(tmp_path, capsys):
    assert main(["run", "--db", str(tmp_path / "none.db"), "--resume", "1"]) == 2
    assert not (tmp_path / "none.db").exists()
    assert main(["run", "--db", str(tmp_path / "none.db"), "--resume", "1", "--sizes", "8"]) == 2
    err = capsys.readouterr().err
    assert "does not exist" in err and "--sizes cannot be changed" in err


# -- 6. store-opening policy ------------------------------------------------------

def test_read_only_verbs_leave_the_store_and_its_directory_as_they_were(tmp_path):
    db = tmp_path / "s.db"
    store_with_points(db, sizes=3)
    digest = hashlib.sha256(db.read_bytes()).hexdigest()
    for args in (["runs"], ["export", "--format", "json", "--samples"], ["fit"],
                 ["report", "-o", str(tmp_path / "out" / "r.html")]):
        (tmp_path / "out").mkdir(exist_ok=True)
        assert main([*args[:1], "--db", str(db), *args[1:]]) == 0, args
    assert hashlib.sha256(db.read_bytes()).hexdigest() == digest
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "s.db"]  # no -wal, -shm, journal


def test_a_newer_store_is_refused_by_name(tmp_path):
    db = tmp_path / "n.db"
    store_with_points(db, sizes=2)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")
    with pytest.raises(InputError, match="schema version 5, written by a newer commchar"):
        Store(db, readonly=True)
    with pytest.raises(InputError, match="newer commchar"):
        Store(db)


# -- 7. names from data are printed as they are ----------------------------------

def test_names_that_look_like_markup_or_escapes_are_printed_literally(tmp_path):
    rows = [(name, n, 1 + n / 100) for name in ("[/]", "openmpi[ucx]", "evil\x1b[2J") for n in (0, 8, 64)]
    (tmp_path / "m.csv").write_text("library,op,p,n_bytes,t_us\n"
                                    + "".join(f"{lib},pingpong,2,{n},{t}\n" for lib, n, t in rows))
    result = commchar("fit", "--csv", str(tmp_path / "m.csv"))
    assert result.returncode == 0, result.stderr
    assert "[/]" in result.stdout and "openmpi[ucx]" in result.stdout
    assert "evil\\x1b[2J" in result.stdout and "\x1b" not in result.stdout


# -- 9. JSON in and out -------------------------------------------------------------

def test_json_is_bounded_on_the_way_in_and_strict_on_the_way_out():
    assert jsonio.loads("9" * 5000, "x") == float("inf")
    with pytest.raises(InputError, match="nested too deeply"):
        jsonio.loads("[" * 100 + "]" * 100, "x")
    with pytest.raises(InputError, match="nested too deeply"):
        jsonio.loads("[" * 100000 + "]" * 100000, "x")
    assert jsonio.dumps({"t": [float("inf"), float("nan"), 1.5]}) == '{"t": [null, null, 1.5]}'


# -- 10. simulator -------------------------------------------------------------------

def test_a_simulator_crash_is_reported_by_its_cause():
    panic = ("thread 'main' panicked at src/engine.rs:12:5:\nindex out of bounds\n"
             "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n")
    assert failure_cause(panic, 101) == ("the simulator failed with status 101: thread 'main' panicked at"
                                         " src/engine.rs:12:5:; index out of bounds")
    oom = "memory allocation of 68719476736 bytes failed\n"
    assert failure_cause(oom, -signal.SIGABRT) == ("the simulator was killed by SIGABRT: memory allocation"
                                                   " of 68719476736 bytes failed")
    assert "out of memory" in failure_cause("", -signal.SIGKILL)
    assert failure_cause("commchar-sim: bad --topology\n", 2) == "bad --topology"


def test_sigterm_to_simulate_stops_the_simulator(tmp_path):
    marker = uuid.uuid4().hex
    sim = subprocess.Popen([sys.executable, "-m", "commchar", "simulate", "--collective", "alltoall:pairwise",
                            "--n", "1K", "--p", "30000"], env={**os.environ, "COMMCHAR_TEST_MARKER": marker},
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not _marked(marker, "commchar-sim") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _marked(marker, "commchar-sim"), "the simulator never started"
    sim.send_signal(signal.SIGTERM)
    _, err = sim.communicate(timeout=30)
    assert sim.returncode == 130 and "Traceback" not in err
    time.sleep(0.5)
    assert not _marked(marker, "commchar-sim")


def test_a_signal_while_a_process_is_being_registered_ends_the_process(monkeypatch):
    """SIGTERM (or Ctrl-C) can arrive after a child started and before its caller holds it: the
    first registration starts the watchdog, milliseconds in which a signal can land.
    The child is ended then and there, not left running."""
    from commchar import processes

    marker = uuid.uuid4().hex
    monkeypatch.setenv("COMMCHAR_TEST_MARKER", marker)

    def interrupted(message: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(processes, "_tell_watchdog", interrupted)
    with pytest.raises(KeyboardInterrupt):
        processes.start(["sleep", "60"])
    assert not _marked(marker)


# -- 3, 4, 8 and 11: with real launches --------------------------------------------------

@pytest.mark.mpi
def test_a_run_whose_every_job_fails_to_launch_exits_non_zero_and_is_not_complete(tmp_path, mpi_libraries):
    db = tmp_path / "f.db"
    # Where Slurm is installed (the emulated hosts' tests need it), an empty configuration
    # makes srun fail at once, as it does where there is no Slurm at all.
    (tmp_path / "slurm.conf").write_text("")
    lib = mpi_libraries[0].name
    bad_fault = commchar("run", "--db", str(db), "--library", lib, "--ops", "barrier", "--np", "2",
                         env={"COMMCHAR_INJECT_FAULT": "nonsense"})
    no_slurm = commchar("run", "--db", str(db), "--library", lib, "--ops", "barrier", "--np", "2",
                        "--launcher", "srun", env={"SLURM_CONF": str(tmp_path / "slurm.conf")})
    for result in (bad_fault, no_slurm):
        assert result.returncode == 3, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "failed at launch" in lines[0] and "Traceback" not in result.stderr
    with Store(db, readonly=True) as store:
        assert [run["status"] for run in store.runs()] == ["failed", "failed"]


@pytest.mark.mpi
def test_resume_measures_failed_points_again_and_counts_right(tmp_path, mpi_libraries):
    db = tmp_path / "r.db"
    args = ("--db", str(db), "--library", mpi_libraries[0].name, "--ops", "bcast", "--sizes", "0,8,64",
            "--np", "2", "--precision", "0.05", "--max-time", "0.05", "--timeout", "30")
    first = commchar("run", *args, env={"COMMCHAR_INJECT_FAULT": "crash@bcast:8"})
    assert first.returncode == 0, first.stderr
    with Store(db, readonly=True) as store:
        assert [(f["n_bytes"], f["kind"]) for f in store.failures()] == [(8, "crash")]
        assert sorted(p["n_bytes"] for p in store.points()) == [0, 64]
    second = commchar("run", "--db", str(db), "--resume", "1")
    assert second.returncode == 0, second.stderr
    assert ("1 points stored, 2 already measured, 1 failed before and retried, 0 invalid, 0 failures"
            in second.stdout)
    with Store(db, readonly=True) as store:
        assert sorted(p["n_bytes"] for p in store.points()) == [0, 8, 64]
        assert store.failures() == [] and store.run(1)["status"] == "complete"


@pytest.mark.mpi
@pytest.mark.parametrize("library", ["openmpi", "mpich"])
def test_sigkill_of_run_during_a_hung_job_leaves_no_process(tmp_path, mpi_libraries, library):
    if library not in {lib.name for lib in mpi_libraries}:  # make setup installs both: fail, never skip
        pytest.fail(f"{library} is not installed: `make setup` installs Open MPI and MPICH")
    run, marker = _start_hung_run(tmp_path / "h.db", library, timeout=120)
    assert len(_marked(marker, "commchar-kernel")) == 2, "the ranks never started"
    _kill(run, marker)
    assert _marked(marker) == [], "launcher or ranks left running after commchar was killed"


def _start_hung_run(db: Path, library: str, timeout: int) -> tuple[subprocess.Popen, str]:
    """`commchar run` of a barrier whose job hangs, once both ranks are up (or 120 s have
    passed): the process and the marker its processes' environments carry."""
    marker = uuid.uuid4().hex
    run = subprocess.Popen([sys.executable, "-m", "commchar", "run", "--db", str(db), "--library", library,
                            "--ops", "barrier", "--np", "2", "--timeout", str(timeout)],
                           env={**os.environ, "COMMCHAR_INJECT_FAULT": "hang@barrier:0",
                                "COMMCHAR_TEST_MARKER": marker},
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while len(_marked(marker, "commchar-kernel")) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    return run, marker


def _kill(run: subprocess.Popen, marker: str) -> None:
    """SIGKILL of commchar, then up to 15 s for what it started to go (the watchdog's grace is 3 s)."""
    run.kill()
    run.wait()
    deadline = time.monotonic() + 15
    while _marked(marker) and time.monotonic() < deadline:
        time.sleep(0.2)


@pytest.mark.mpi
def test_a_timed_out_job_is_stored_with_the_signal_that_ended_it(tmp_path, mpi_libraries):
    db = tmp_path / "t.db"
    library = "mpich" if "mpich" in {lib.name for lib in mpi_libraries} else mpi_libraries[0].name
    result = commchar("run", "--db", str(db), "--library", library, "--ops", "barrier", "--np", "2",
                      "--timeout", "2", env={"COMMCHAR_INJECT_FAULT": "hang@barrier:0"})
    assert result.returncode == 0, result.stderr  # a hung point is a recorded measurement failure
    with Store(db, readonly=True) as store:
        assert [f["kind"] for f in store.failures()] == ["timeout"]
        assert [job["exit_status"] for job in store.jobs()] == [-signal.SIGTERM]


def _marked(marker: str, command: str | None = None) -> list[int]:
    """Processes, other than this test's, whose environment carries `marker`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
            comm = Path(f"/proc/{entry}/comm").read_text().strip()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in environ and state != "Z" and (command is None or comm == command):
            found.append(int(entry))
    return found


# -- imports, traces and outputs: the output policy (commchar.outfile) --------------

EXAMPLE_MODEL = REPO / "examples" / "ap3000-mpi.json"
MEMORY_LIMIT = 2 * 2**30


def limited(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """`commchar ARGS` in a child under a 2 GiB address-space limit."""
    return subprocess.run(["prlimit", f"--as={MEMORY_LIMIT}", sys.executable, "-m", "commchar", *args],
                          capture_output=True, text=True, timeout=timeout, cwd=cwd, stdin=subprocess.DEVNULL,
                          env={**os.environ, "COLUMNS": "300", **(env or {})})


def _output_verbs(d: Path, db: Path) -> dict[str, list[str]]:
    """Every verb's way of writing a file, with {out} for the path."""
    return {
        "export": ["export", "--db", str(db), "-o", "{out}"],
        "fit": ["fit", "--db", str(db), "--call-costs", "off", "-o", "{out}"],
        "report": ["report", "--db", str(db), "-o", "{out}"],
        "export-model": ["export-model", str(EXAMPLE_MODEL), "--to", "smpi", "-o", "{out}"],
        "emit-goal": ["simulate", "--collective", "bcast:binomial", "--n", "1K", "--p", "4", "--emit-goal", "{out}"],
        "sim-trace": ["simulate", "--collective", "bcast:binomial", "--n", "1K", "--p", "4", "--trace", "{out}"],
    }


@pytest.fixture(scope="module")
def small_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("outputs") / "s.db"
    store_with_points(db, sizes=6)
    return db


@pytest.mark.parametrize("verb", ["export", "fit", "report", "export-model", "emit-goal", "sim-trace"])
def test_every_verb_writes_through_a_link_to_its_target_and_keeps_the_link(tmp_path, small_store, verb):
    real = tmp_path / "real.out"
    real.write_text("old\n")
    real.chmod(0o640)
    (tmp_path / "link.out").symlink_to(real)
    args = [a.replace("{out}", str(tmp_path / "link.out")) for a in _output_verbs(tmp_path, small_store)[verb]]
    result = limited(*args)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "link.out").is_symlink() and os.readlink(tmp_path / "link.out") == str(real)
    assert real.read_text() != "old\n" and real.stat().st_size > 0
    assert real.stat().st_mode & 0o777 == 0o640  # an existing file keeps its permissions
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.out", "real.out"]  # no temporary left


def test_links_planted_at_the_old_fixed_temporary_names_are_never_opened(tmp_path, small_store):
    victims = {name: tmp_path / f"victim-{i}" for i, name in enumerate((".out.csv.partial", ".model.json.tmp"))}
    for name, victim in victims.items():
        victim.write_text("precious\n")
        (tmp_path / name).symlink_to(victim)
    assert limited("export", "--db", str(small_store), "-o", str(tmp_path / "out.csv")).returncode == 0
    assert limited("fit", "--db", str(small_store), "--call-costs", "off",
                   "-o", str(tmp_path / "model.json")).returncode == 0
    assert all(v.read_text() == "precious\n" for v in victims.values())
    assert all((tmp_path / name).is_symlink() for name in victims)
    assert (tmp_path / "out.csv").read_text().startswith("point_id,")
    assert json.loads((tmp_path / "model.json").read_text())["format"] == "commchar-model"


def test_a_fifo_and_a_link_to_standard_output_are_written_through(tmp_path, small_store):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = __import__("threading").Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    result = limited("export", "--db", str(small_store), "--format", "json", "-o", str(fifo))
    reader.join(timeout=60)
    assert result.returncode == 0, result.stderr
    assert json.loads(received[0].decode())[0]["op"] in ("pingpong", "bcast")
    assert fifo.is_fifo()  # written through, not replaced by a regular file
    (tmp_path / "stdout-link").symlink_to("/proc/self/fd/1")
    result = limited("export-model", str(EXAMPLE_MODEL), "--to", "loggopsim", "-o", str(tmp_path / "stdout-link"))
    assert result.returncode == 0 and "--LogGOPS_" in result.stdout, result.stderr
    assert (tmp_path / "stdout-link").is_symlink()


@pytest.mark.parametrize("verb", ["export", "fit", "report", "export-model", "emit-goal", "sim-trace"])
def test_a_full_device_and_a_directory_are_one_line(tmp_path, small_store, verb):
    (tmp_path / "full").symlink_to("/dev/full")
    for target, message in ((tmp_path / "full", "no space left on device"), (tmp_path, "is a directory"),
                            (tmp_path / "missing" / "x", "no such file or directory")):
        args = [a.replace("{out}", str(target)) for a in _output_verbs(tmp_path, small_store)[verb]]
        result = limited(*args)
        lines = result.stderr.strip().splitlines()
        assert result.returncode != 0 and len(lines) == 1, result.stderr[-2000:]
        assert lines[0] == f"commchar: error: cannot write {target}: {message}", lines
    assert (tmp_path / "full").is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full"]


# -- a run or trace whose process died ------------------------------------------------

def test_an_owner_killed_with_sigkill_is_dead_and_a_live_one_alive(tmp_path):
    from commchar.store import owner

    child = subprocess.Popen([sys.executable, "-c", "import json, time; from commchar.store import owner;"
                              " print(json.dumps(owner.current()), flush=True); time.sleep(60)"],
                             stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    record = json.loads(child.stdout.readline())
    assert owner.alive(record) is True and owner.alive(owner.current()) is True
    child.kill()
    child.wait()
    assert owner.alive(record) is False
    assert owner.alive({**record, "pid": os.getpid()}) is False  # a reused id: another start time
    assert owner.alive({**record, "hostname": "elsewhere"}) is None
    assert owner.run_status({"status": "running", "host": {"owner": record}}) == "died"
    assert owner.run_status({"status": "complete", "host": {"owner": record}}) == "complete"


@pytest.mark.mpi
def test_a_run_killed_with_sigkill_is_listed_died_and_resumed(tmp_path, mpi_libraries):
    db = tmp_path / "k.db"
    library = "mpich" if "mpich" in {lib.name for lib in mpi_libraries} else mpi_libraries[0].name
    run, marker = _start_hung_run(db, library, timeout=60)
    _kill(run, marker)
    with Store(db, readonly=True) as store:
        assert store.run(1)["status"] == "running"  # nothing could record an outcome
    listing = commchar("runs", "--db", str(db))
    row = next(line for line in listing.stdout.splitlines() if line.strip("│┃ ").startswith("1 "))
    assert "died" in row, listing.stdout
    resumed = commchar("run", "--db", str(db), "--resume", "1")
    assert resumed.returncode == 0, resumed.stderr
    assert "died while measuring; resuming" in resumed.stdout
    with Store(db, readonly=True) as store:
        assert store.run(1)["status"] == "complete" and store.run(1)["host"]["owner"]["pid"] != run.pid


@pytest.mark.mpi
def test_a_trace_killed_with_sigkill_leaves_its_folder_only_until_the_next_trace(tmp_path, mpi_libraries):
    library = "mpich" if "mpich" in {lib.name for lib in mpi_libraries} else mpi_libraries[0].name
    work = tmp_path / "work"
    work.mkdir()
    tracing = subprocess.Popen([sys.executable, "-m", "commchar", "trace", "--db", str(tmp_path / "t.db"),
                                "--library", library, "--np", "1", "--trace-dir", str(work), "--", "/bin/sleep", "30"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 60
    while not list(work.glob("commchar-trace-*/owner.json")) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = list(work.glob("commchar-trace-*"))
    assert len(left) == 1
    os.killpg(tracing.pid, signal.SIGKILL)
    tracing.wait()
    assert left[0].exists()  # SIGKILL: nothing could remove it
    again = commchar("trace", "--db", str(tmp_path / "t.db"), "--library", library, "--np", "1",
                     "--trace-dir", str(work), "--", "/bin/true")
    assert "Traceback" not in again.stderr
    assert list(work.iterdir()) == []  # the dead trace's folder and the new one are gone


# -- a newcomer's first hour ----------------------------------------------------------

def test_fit_runs_and_report_need_no_flag_beside_a_store(tmp_path):
    store_with_points(tmp_path / "commchar.db", sizes=6)
    for verb in (["fit", "--call-costs", "off"], ["runs"], ["report"]):
        result = limited(*verb, cwd=tmp_path)
        assert result.returncode == 0, (verb, result.stderr)
    assert (tmp_path / "report.html").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    result = limited("fit", cwd=empty)
    assert result.returncode == 2 and "commchar.db" in result.stderr and "does not exist" in result.stderr


def test_runs_fits_an_80_column_terminal(tmp_path):
    db = tmp_path / "w.db"
    store_with_points(db, library="openmpi-4.1.6-built-with-a-rather-long-configuration-name", sizes=2)
    result = commchar("runs", "--db", str(db), env={"COLUMNS": "80"})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines and max(len(line) for line in lines) <= 80, result.stdout
    first = next(i for i, line in enumerate(lines) if line.strip("│┃ ").startswith("1 "))
    rows = [[c.strip() for c in line.strip("│┃").split("│")] for line in lines[first:] if line.startswith("│")]
    cells = rows[0]
    assert cells[0] == "1" and cells[2] == "complete" and cells[5] == "6"
    assert re.fullmatch(r"(\d{4}-)?\d\d-\d\d \d\d:\d\d", cells[1])  # on one line, to the minute
    assert all(row[0] == row[1] == row[2] == "" for row in rows[1:])  # only the libraries go on
    assert "".join(row[3] for row in rows) == "openmpi-4.1.6-built-with-a-rather-long-configuration-name"
    assert "host: test" in result.stdout


def test_the_progress_bar_reads_elapsed_then_time_left():
    from rich.console import Console

    from commchar import terminal

    bar = terminal.sweep_progress(Console(file=io.StringIO(), width=120))
    task = bar.add_task("sweep", total=10)
    clock = bar.columns[-1]
    assert str(clock.render(bar.tasks[0])) == "0:00:00 elapsed, left unknown"
    bar.start_task(task)
    bar.tasks[0].start_time = bar.get_time() - 40.0  # 40 s in, 4 of 10 done: 60 s left
    bar.update(task, completed=4)
    assert str(clock.render(bar.tasks[0])) == "0:00:40 elapsed, 0:01:00 left"


def test_unsupported_operations_are_not_failures_and_findings_put_the_model_first(tmp_path):
    from commchar.report import ReportOptions, build_report
    from commchar.report.findings import GROUPS, ORDER

    db = tmp_path / "u.db"
    store_with_points(db, sizes=8)
    with Store(db) as store:
        for op in ("pbcast", "pallreduce", "partitioned"):
            store.add_failure(1, "openmpi", op, "", 2, 8, "unsupported", "needs MPI-4; the library is MPI 3.1")
        store.add_failure(1, "openmpi", "bcast", "", 4, 8, "crash", "signal 11")
    report = build_report(ReportOptions(str(db), None, None, "si", "exclude", None))
    kinds = [f.category for f in report.findings]
    assert kinds.count("unsupported") == 1 and kinds.count("failure") == 1
    failure = next(f for f in report.findings if f.category == "failure")
    assert "1 crash failure(s)" in failure.text and "pbcast" not in failure.text
    assert "not a failure" in next(f.text for f in report.findings if f.category == "unsupported").lower()
    assert kinds == sorted(kinds, key=ORDER.index) and ORDER[0] == "model" and ORDER[-1] == "unsupported"
    assert [g for g, _ in GROUPS][0] == "How well the model predicts"
    section = report.html[report.html.index('<section id="findings">'):]
    assert section.index("What is wrong") < section.index("<details><summary><strong>Details")
    assert re.search(r"<td>openmpi</td>.*?<td[^>]*>1</td><td[^>]*>0</td><td[^>]*>3</td>", report.html)
