"""Run an application sweep: every case `reps` times, the median kept, each
finished case stored in one transaction.

A case already stored (or recorded as failed) in the run is never run again,
so an interrupted sweep resumes where it stopped. A wrong answer (the
program's check failed), a crash or a timeout is recorded as the case's
failure and the sweep goes on.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from commchar.apps.build import ensure_apps
from commchar.apps.cases import AppSweepOptions, Case, cases_for
from commchar.measure.launch import LaunchSpec, is_oversubscribed, job_command
from commchar.measure.libraries import Library
# one way to stop a job, describe its exit and quote its stderr, shared with the kernel's runner
from commchar.measure.runner import _describe_status, _kill, _tail
from commchar.store import Store

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
    observer.planned(len(work) * options.reps, result.skipped)
    for library, case in work:
        binary = ensure_apps(library)[case.app]
        spec = LaunchSpec(options.launcher, Path(options.hostfile) if options.hostfile else None,
                          dict(case.env))
        oversubscribed = is_oversubscribed(spec, case.p)
        observer.case_started(library.name, case, oversubscribed)
        results: list[dict] = []
        try:
            for _ in range(options.reps):
                job = job_command(library, spec, case.p, binary, list(case.args))
                results.append(run_once(job.argv, {**os.environ, **job.env_added},
                                        options.timeout))
                observer.repetition_done()
        except CaseFailed as failed:
            store.add_failure(run_id, library.name, f"app:{case.app}", case.config, case.p,
                              case.n, failed.kind, failed.message)
            result.failures += 1
            observer.failure(library.name, case, failed.kind, failed.message,
                             options.reps - len(results) - 1)
            continue
        record = _record(library, case, oversubscribed, job.argv, job.env_added, results)
        store.add_app_run(run_id, record)
        result.stored += 1
        observer.case_stored(library.name, case, record)
    return result


def run_once(argv: list[str], env: dict[str, str], timeout: float) -> dict:
    """One run of an application: its result line, or CaseFailed."""
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as stderr:
        try:
            process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=stderr,
                                       stdin=subprocess.DEVNULL, text=True, env=env,
                                       start_new_session=True)
        except OSError as exc:
            raise CaseFailed("launch", f"cannot start {argv[0]}: {exc.strerror}") from None
        try:
            stdout, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(process)
            raise CaseFailed("timeout", f"still running after {timeout:g} s: killed") from None
        except KeyboardInterrupt:
            _kill(process)
            raise
        stderr.seek(0)
        tail = _tail(stderr.read())
    lines = [_json(line) for line in stdout.splitlines()]
    found = [m for m in lines if m and m.get("type") == "result"]
    errors = [str(m.get("message")) for m in lines if m and m.get("type") == "error"]
    if found and found[-1].get("verified") is False:
        raise CaseFailed("wrong-answer", "the answer failed its check: "
                         + ", ".join(f"{k} {found[-1][k]:.3g}" for k in ("max_error", "residual")
                                     if isinstance(found[-1].get(k), (int, float))))
    if process.returncode != 0 or not found:
        reason = errors[0] if errors else f"exited with {_describe_status(process.returncode)}"
        raise CaseFailed("crash", f"{reason}{': ' + tail if tail and not errors else ''}")
    return found[-1]


def _record(library: Library, case: Case, oversubscribed: bool, argv: list[str],
            env: dict[str, str], results: list[dict]) -> dict:
    phases = sorted({name for r in results for name in r.get("phases_s", {})})
    return {
        "library": library.name, "app": case.app, "config": case.config, "n": case.n,
        "p": case.p, "oversubscribed": oversubscribed,
        "elapsed_s": statistics.median(r["elapsed_s"] for r in results),
        "phases_s": {name: statistics.median(r["phases_s"].get(name, 0.0) for r in results)
                     for name in phases},
        "results": results, "launcher_cmd": argv, "env": env,
    }


def _json(line: str) -> dict | None:
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        value = json.loads(line)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None
