"""Run an application sweep: every case `reps` times untraced, their median its
time, and once more under `commchar trace`'s machinery (the tracer preloaded, the
trace stored) unless tracing is off, the trace prediction replays; each finished
case stored in one transaction.

The time is the untraced runs': the tracer's own work between and inside the
calls (a record per call, each buffer's first use looked up) is what its trace's
replay leaves out, and on a program of many small messages it is 15% of a
traced run (Open MPI, Gaussian elimination of N = 256 in fragments of 256 B: 1.25
to 1.29 ms untraced, 1.45 to 1.52 traced, runs alternated).

A case already stored (or recorded as failed) in the run is never run again,
so an interrupted sweep resumes where it stopped. A wrong answer (the
program's check failed), a crash or a timeout is recorded as the case's
failure and the sweep goes on.
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Iterator, Protocol

from commchar.apps.cases import AppSweepOptions, Case, cases_for
from commchar.measure.build import APPS, ensure_built
from commchar import processes
from commchar.measure.launch import LaunchSpec, describe_exit, is_oversubscribed, program_command
from commchar.measure.libraries import Library
from commchar.measure.runner import stderr_tail
from commchar.store import Store
from commchar.trace.program import TraceRequest, trace_program


class Observer(Protocol):
    """What the command line shows while a sweep runs; the runner never prints."""

    def planned(self, repetitions: int, skipped_cases: int) -> None: ...
    def case_started(self, library: str, case: Case, oversubscribed: bool) -> None: ...
    def repetition_done(self) -> None: ...
    def case_stored(self, library: str, case: Case, record: dict) -> None: ...
    def failure(self, library: str, case: Case, kind: str, message: str,
                repetitions_left: int) -> None: ...


@dataclass
class AppSweepResult:
    run_id: int
    stored: int = 0
    skipped: int = 0
    failures: int = 0


class CaseFailed(Exception):
    """A case that cannot be stored: `kind` is launch, crash, wrong-answer, timeout or trace."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind, self.message = kind, message


def run_app_sweep(store: Store, run_id: int, options: AppSweepOptions, libraries: list[Library],
                  observer: Observer) -> AppSweepResult:
    done = store.app_done_keys(run_id)
    result = AppSweepResult(run_id)
    work: list[tuple[Library, Case]] = []
    for library in libraries:
        for case in cases_for(options, library):
            if case.key(library.name) in done:
                result.skipped += 1
            else:
                work.append((library, case))
    # per case: traced or not, each run in turn (the traced one first)
    order = [True] * options.trace + [False] * options.reps
    runs = len(order)
    observer.planned(len(work) * runs, result.skipped)
    for library, case in work:
        spec = LaunchSpec(options.launcher, Path(options.hostfile) if options.hostfile else None,
                          dict(case.env))
        oversubscribed = is_oversubscribed(spec, case.p)
        # ranks 0 and 1 on cores of their own: each run also says where those cores were
        # (core_rtt_ns), and the prediction takes the runs made in its model's state
        # (estimate.chosen_run); ranks sharing cores would time the scheduler
        distance = ["--core-distance"] if case.p >= 2 and not oversubscribed else []
        program = [str(ensure_built(APPS, library) / case.app), *case.args, *distance]
        observer.case_started(library.name, case, oversubscribed)
        results: list[dict] = []
        job = program_command(library, spec, case.p, program)
        try:
            for traced in order:
                if traced:
                    line = run_traced(store, TraceRequest(
                        library, case.p, program, spec, options.timeout))
                else:
                    line = run_once(job.argv, {**os.environ, **job.env_added}, options.timeout)
                # how busy the machine was: a shared machine's load shows in every time
                results.append({**line, "load_avg_1m": os.getloadavg()[0]})
                observer.repetition_done()
        except CaseFailed as failed:
            store.add_failure(run_id, library.name, f"app:{case.app}", case.config, case.p,
                              case.n, failed.kind, failed.message)
            result.failures += 1
            observer.failure(library.name, case, failed.kind, failed.message,
                             runs - len(results) - 1)
            continue
        record = _record(library, case, oversubscribed, job.argv, job.env_added, results)
        store.add_app_run(run_id, record)
        result.stored += 1
        observer.case_stored(library.name, case, record)
    return result


def run_once(argv: list[str], env: dict[str, str], timeout: float) -> dict:
    """One untraced run of an application: its result line, or CaseFailed."""
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as stderr:
        try:
            process = processes.start(argv, stdout=subprocess.PIPE, stderr=stderr,
                                      stdin=subprocess.DEVNULL, text=True, env=env)
        except OSError as exc:
            raise CaseFailed("launch", f"cannot start {argv[0]}: {exc.strerror}") from None
        try:
            stdout, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            processes.stop(process)
            raise CaseFailed("timeout", f"still running after {timeout:g} s: killed") from None
        except KeyboardInterrupt:
            processes.stop(process)
            raise
        processes.finished(process)
        stderr.seek(0)
        tail = stderr_tail(stderr.read())
    return _result(stdout, process.returncode, tail)


def run_traced(store: Store, request: TraceRequest) -> dict:
    """One run under the tracer, its trace stored: the result line with `trace_id`
    added, or CaseFailed (the trace of a failed run stays in the store, marked)."""
    with _captured_output() as (out, err):
        outcome = trace_program(store, request)
    out.seek(0)
    err.seek(0)
    if outcome.status == "timeout":
        raise CaseFailed("timeout", f"trace {outcome.trace_id}: {outcome.message}")
    result = _result(out.read(), outcome.exit_status, stderr_tail(err.read()))
    if outcome.status != "complete":
        raise CaseFailed("trace", f"trace {outcome.trace_id}: {outcome.message}")
    return {**result, "trace_id": outcome.trace_id, "trace_wall_s": outcome.wall_s}


@contextlib.contextmanager
def _captured_output() -> Iterator[tuple[IO[str], IO[str]]]:
    """Point file descriptors 1 and 2 at temporary files while the block runs:
    trace_program lets the program's output through, and it must neither reach
    the terminal under the progress bar nor be lost."""
    saved: list[int] = []
    files: list[IO[str]] = []
    try:
        for fd in (1, 2):
            for stream in (sys.stdout, sys.stderr):
                stream.flush()
            handle = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
            saved.append(os.dup(fd))
            os.dup2(handle.fileno(), fd)
            files.append(handle)
        yield files[0], files[1]
    finally:
        for fd, copy in zip((1, 2), saved):
            os.dup2(copy, fd)
            os.close(copy)


def _result(stdout: str, returncode: int | None, tail: str) -> dict:
    """The run's result line, or CaseFailed: a wrong answer or a crash."""
    lines = [_json(line) for line in stdout.splitlines()]
    found = [m for m in lines if m and m.get("type") == "result"]
    errors = [str(m.get("message")) for m in lines if m and m.get("type") == "error"]
    if found and found[-1].get("verified") is False:
        raise CaseFailed("wrong-answer", "the answer failed its check: "
                         + ", ".join(f"{k} {found[-1][k]:.3g}" for k in ("max_error", "residual")
                                     if isinstance(found[-1].get(k), (int, float))))
    if returncode != 0 or not found:
        reason = errors[0] if errors else f"exited with {describe_exit(returncode)}"
        raise CaseFailed("crash", f"{reason}{': ' + tail if tail and not errors else ''}")
    return found[-1]


def _record(library: Library, case: Case, oversubscribed: bool, argv: list[str],
            env: dict[str, str], results: list[dict]) -> dict:
    """The case as stored: its time, phases and load the medians of its untraced runs."""
    timed = [r for r in results if "trace_id" not in r]
    phases = sorted({name for r in timed for name in r.get("phases_s", {})})
    return {
        "library": library.name, "app": case.app, "config": case.config, "n": case.n,
        "p": case.p, "oversubscribed": oversubscribed, "reps": len(timed),
        "elapsed_s": statistics.median(r["elapsed_s"] for r in timed),
        "load_avg_1m": statistics.median(r["load_avg_1m"] for r in timed),
        "phases_s": {name: statistics.median(r["phases_s"].get(name, 0.0) for r in timed)
                     for name in phases},
        "results": results, "launcher_cmd": argv, "env": env,
        "trace": _median_trace(results),
    }


def _median_trace(results: list[dict]) -> dict | None:
    """The traces of a case: every traced run's id, and the one of median elapsed time's;
    None when no run was traced."""
    traced = sorted((r for r in results if "trace_id" in r), key=lambda r: r["elapsed_s"])
    if not traced:
        return None
    return {"ids": [r["trace_id"] for r in traced], "median": traced[(len(traced) - 1) // 2]["trace_id"]}


def _json(line: str) -> dict | None:
    # a progress bar sharing the captured stream may have written before it on the line
    start = line.find('{"type":')
    if start < 0:
        return None
    try:
        value = json.loads(line[start:])
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None
