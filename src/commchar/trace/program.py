"""Run an unmodified MPI program under the tracer and keep its trace in the store.

The program's own output passes through. Whatever it wrote is stored, even when
it crashed or was killed at the timeout: the trace is then marked failed or
timeout, and the files say which ranks stopped where.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from commchar.provenance import build_identity
from commchar import processes
from commchar.errors import InputError, Interrupted, UsageError
from commchar.measure.build import ensure_tracer
from commchar.measure.launch import LaunchSpec, describe_exit, program_command
from commchar.measure.libraries import Library, linked_family
from commchar.store import Store, owner
from commchar.store.traces import RankRow, add_rank, begin_trace, finish_trace
from commchar.trace.format import (RankTrace, Trace, TraceSummary, phase_times, rank_file_number,
                                   read_rank)


@dataclass(frozen=True)
class TraceRequest:
    library: Library
    p: int
    program: list[str]
    spec: LaunchSpec = LaunchSpec()
    timeout: float | None = None  # seconds of wall time before the job is killed
    buffer_records: int | None = None  # the tracer's buffer ($COMMCHAR_TRACE_BUFFER)
    work_dir: Path | None = None  # where ranks write (shared by every host); default /tmp


@dataclass(frozen=True)
class TraceOutcome:
    trace_id: int
    status: str  # complete | failed | timeout
    exit_status: int | None
    wall_s: float
    message: str | None  # why it is not complete
    summary: TraceSummary | None  # None when no rank wrote a readable trace


def resolve_program(program: list[str], library: Library) -> list[str]:
    """The program's argv with its path resolved, checked against the library."""
    if not program:
        raise UsageError("trace: no program given (commchar trace [options] -- ./app ARGS)")
    path = program[0] if "/" in program[0] else shutil.which(program[0])
    if path is None or not Path(path).is_file():
        raise UsageError(f"trace: program '{program[0]}' not found")
    if not os.access(path, os.X_OK):
        raise UsageError(f"trace: program '{path}' is not executable")
    family = linked_family(path)
    if family is not None and library.family in ("openmpi", "mpich") and family != library.family:
        raise UsageError(f"trace: {path} is linked against {family}, not {library.name} "
                         "(choose it with --library)")
    return [str(Path(path).resolve()), *program[1:]]


WORK_PREFIX = "commchar-trace-"
OWNER_FILE = "owner.json"  # in each work folder: the process that made it (store/owner.py)


def sweep_work_dirs(parent: Path) -> list[Path]:
    """Remove the work folders in `parent` whose process died (a `trace` killed, SIGKILL
    included, before it could remove its own); returns those removed. Folders of live
    processes, of other hosts and without an owner file are left alone."""
    removed: list[Path] = []
    try:
        candidates = [d for d in parent.iterdir() if d.name.startswith(WORK_PREFIX) and d.is_dir()
                      and not d.is_symlink()]
    except OSError:
        return removed
    for directory in candidates:
        try:
            record = json.loads((directory / OWNER_FILE).read_text())
        except (OSError, ValueError):
            continue
        if owner.alive(record) is False:
            shutil.rmtree(directory, ignore_errors=True)
            removed.append(directory)
    return removed


@contextmanager
def work_dir(parent: Path | None) -> Iterator[str]:
    """A fresh folder for the ranks' files in `parent` (default: the system's temporary
    folder), removed afterwards; dead traces' folders there are removed first."""
    where = Path(tempfile.gettempdir()) if parent is None else parent
    if parent is not None and not parent.is_dir():
        raise UsageError(f"--trace-dir: {parent} is not a directory")
    sweep_work_dirs(where)
    try:
        directory = tempfile.mkdtemp(prefix=WORK_PREFIX, dir=where)
        (Path(directory) / OWNER_FILE).write_text(json.dumps(owner.current()))
    except OSError as exc:
        raise UsageError(f"--trace-dir: cannot make a folder in {where}: {(exc.strerror or str(exc)).lower()}"
                         if parent is not None else
                         f"trace: cannot make a folder in {where}: {(exc.strerror or str(exc)).lower()}") from None
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def trace_program(store: Store, request: TraceRequest) -> TraceOutcome:
    program = resolve_program(request.program, request.library)
    tracer = ensure_tracer(request.library)
    with work_dir(request.work_dir) as directory:
        rank_env = {"LD_PRELOAD": str(tracer), "COMMCHAR_TRACE_DIR": directory}
        if request.buffer_records:
            rank_env["COMMCHAR_TRACE_BUFFER"] = str(request.buffer_records)
        job = program_command(request.library, request.spec, request.p, program, rank_env)
        trace_id = begin_trace(
            store, commchar_version=build_identity(), library=request.library.name, p=request.p,
            program=program, launcher_cmd=job.argv,
            env=job.env_added, oversubscribed=job.oversubscribed)
        try:
            status, exit_status, message, wall_s = _run(job.argv, job.env_added, request.timeout,
                                                        Path(directory))
        except UsageError as exc:
            finish_trace(store, trace_id, status="failed", exit_status=None, wall_s=0.0,
                         message=str(exc))
            raise
        if status != "complete":
            _settle(Path(directory))
        ranks = read_ranks(Path(directory), request.p)
        interrupted = status == "interrupted"
        if interrupted:
            status = "failed"
        for rank, path in ranks:
            add_rank(store, trace_id, _rank_row(rank, path), path)
        readable = [r for r, _ in ranks if isinstance(r, RankTrace)]
        if status == "complete":
            message = _incomplete(ranks, request.p)
            if message:
                status = "failed"
        summary = Trace(Path(directory), readable).summary() if readable else None
        finish_trace(store, trace_id, status=status, exit_status=exit_status, wall_s=wall_s,
                     message=message, library_version=readable[0].library if readable else None,
                     hosts=sorted({r.host for r in readable}))
    if interrupted:
        raise Interrupted(f"trace {trace_id}: interrupted, kept what the ranks wrote")
    return TraceOutcome(trace_id, status, exit_status, wall_s, message, summary)


def _run(argv: list[str], env_added: dict[str, str], timeout: float | None,
         directory: Path) -> tuple[str, int | None, str | None, float]:
    """(status, exit status, message, wall seconds); the program's output passes through."""
    start = time.monotonic()
    stdin = subprocess.DEVNULL if _interactive_or_absent(sys.stdin) else sys.stdin
    try:
        process = processes.start(argv, env={**os.environ, **env_added}, stdin=stdin)
    except OSError as exc:
        raise UsageError(f"trace: cannot start {argv[0]}: {exc.strerror}") from None
    try:
        exit_status = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _terminate_ranks(directory)
        processes.stop(process)
        return ("timeout", process.returncode, f"killed after the {timeout:g} s timeout",
                time.monotonic() - start)
    except KeyboardInterrupt:
        _terminate_ranks(directory)
        processes.stop(process)
        return "interrupted", process.returncode, "interrupted", time.monotonic() - start
    wall_s = time.monotonic() - start
    processes.finished(process)
    if exit_status != 0:
        return "failed", exit_status, f"the program ended with {describe_exit(exit_status)}", wall_s
    return "complete", exit_status, None, wall_s


def _interactive_or_absent(stream: object) -> bool:
    """No stdin to pass on: none, a terminal, or a stand-in without a file (a test runner's)."""
    try:
        return stream is None or stream.isatty() or stream.fileno() < 0  # type: ignore[attr-defined]
    except (OSError, ValueError, AttributeError):
        return True


def _terminate_ranks(directory: Path, grace: float = 3.0) -> None:
    """SIGTERM this machine's ranks of the job before the launcher, and give them time
    to write out their buffers: a launcher's own clean-up may SIGKILL a rank first
    (Hydra does), which loses what the rank had not yet written.  The ranks are the
    processes whose environment names this trace directory."""
    marker = f"COMMCHAR_TRACE_DIR={directory}".encode()
    ranks = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker in (entry / "environ").read_bytes().split(b"\0"):
                ranks.append(int(entry.name))
        except OSError:
            continue  # gone, or not ours to read
    for pid in ranks:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
    deadline = time.monotonic() + grace
    while ranks and time.monotonic() < deadline:
        ranks = [pid for pid in ranks if processes.alive(pid)]
        time.sleep(0.05)


def _settle(directory: Path, quiet: float = 0.5, limit: float = 10.0) -> None:
    """Wait until the rank files stop growing: a launcher may exit before its ranks
    (Hydra starts them in sessions of their own) have written out their buffers."""
    def state() -> list[tuple[str, int]]:
        return sorted((p.name, p.stat().st_size) for p in directory.glob("rank-*.cctrace"))

    deadline = time.monotonic() + limit
    last, since = state(), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.05)
        now = state()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return


def read_ranks(directory: Path, p: int) -> list[tuple[RankTrace | str, Path]]:
    """Each rank file of a directory with its path, parsed (partial files too) or,
    when it cannot be, the one-line reason."""
    found: list[tuple[int, RankTrace | str, Path]] = []
    for path in sorted(directory.iterdir()):
        number = rank_file_number(path.name)
        if number is None or number >= p:
            continue
        rank: RankTrace | str
        try:
            rank = read_rank(path, allow_partial=True)
        except InputError as exc:
            rank = str(exc).replace(str(directory) + "/", "")
        found.append((number, rank, path))
    return [(rank, path) for _, rank, path in sorted(found, key=lambda item: item[0])]


def _rank_row(rank: RankTrace | str, path: Path) -> RankRow:
    number = rank_file_number(path.name)
    if number is None:  # read_ranks keeps only rank files
        raise ValueError(f"{path.name} is not a rank file")
    if isinstance(rank, str):
        return RankRow(number, "", 0, 0, False, rank, {})
    return RankRow(number, rank.host, rank.wall_ns, len(rank.records), rank.finalized,
                   rank.problem, phase_times(rank))


def _incomplete(ranks: list[tuple[RankTrace | str, Path]], p: int) -> str | None:
    """Why a run that exited 0 still has no complete trace, or None."""
    if not ranks:
        return ("no trace written: is it an MPI program linked dynamically with this library, "
                "and could the tracer write its files?")
    missing = p - len(ranks)
    if missing:
        return f"{missing} of {p} ranks wrote no trace"
    for rank, path in ranks:
        if isinstance(rank, str):
            return rank
        if rank.problem:
            return f"{path.name}: {rank.problem}"
    return None
