"""Finding and running the `commchar-sim` binary."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from pathlib import Path
from typing import Any, Callable

from commchar import jsonio, processes
from commchar.errors import CommcharError, InputError, UsageError

ENV_VAR = "COMMCHAR_SIM"
_REPO = Path(__file__).resolve().parents[3]
# `cargo build --release`: what `cargo test` uses
PLAIN_BINARY = _REPO / "sim" / "target" / "release" / "commchar-sim"
# scripts/build-sim.sh: the same code optimized from a profile of its own runs
OPTIMIZED_BINARY = _REPO / "sim" / "target" / "pgo" / "commchar-sim"
MAX_CAUSE_CHARS = 400


class SimulationError(CommcharError):
    """The simulator is missing, or a schedule could not finish (deadlock)."""

    exit_code = 1


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def default_binary() -> Path:
    """The newer of the profile-optimized and the plain build: a plain `cargo build` after a
    source change is never shadowed by an older optimized binary."""
    built = [b for b in (OPTIMIZED_BINARY, PLAIN_BINARY) if _executable(b)]
    return max(built, key=lambda b: b.stat().st_mtime) if built else PLAIN_BINARY


def find_binary() -> Path:
    """The simulator binary: $COMMCHAR_SIM, else the newest build under sim/target."""
    path = Path(os.environ[ENV_VAR]) if os.environ.get(ENV_VAR) else default_binary()
    if not _executable(path):
        raise SimulationError(f"simulator binary not found at {path}: run `make sim` to build it")
    return path


ProgressCallback = Callable[[int, "int | None", float], None]


def run_simulator(args: list[str], *, expect_json: bool = True,
                  on_progress: ProgressCallback | None = None) -> dict[str, Any]:
    """Runs the simulator with `args` (plus --json) and returns its parsed result.
    With `on_progress`, the simulator reports about once a second and the callback gets
    (operations done, operations in all or None when unknown, seconds so far)."""
    binary = find_binary()
    argv = [str(binary), *args] + (["--json"] if expect_json and "--json" not in args else [])
    if on_progress is not None:
        argv.append("--progress")
    try:
        process = processes.start(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  errors="replace")
    except OSError as exc:
        raise SimulationError(f"cannot run {binary}: {exc.strerror}") from None
    try:
        if on_progress is None:
            stdout, stderr = process.communicate()
        else:
            stdout, stderr = _communicate_with_progress(process, on_progress)
    except BaseException:  # Ctrl-C or SIGTERM to commchar: the simulator stops with it
        processes.stop(process)
        raise
    processes.finished(process)
    if process.returncode != 0:
        message = failure_cause(stderr, process.returncode)
        if process.returncode == 2:
            raise UsageError(message)
        if process.returncode == 3:
            raise InputError(message)
        raise SimulationError(message)
    if not expect_json:
        return {}
    result: dict[str, Any] = jsonio.loads(stdout, "the simulator's output", SimulationError)
    return result


def _communicate_with_progress(process: subprocess.Popen,
                               on_progress: ProgressCallback) -> tuple[str, str]:
    """stdout read whole; stderr line by line, its progress lines handed to the callback
    and the others kept (they say why a run failed)."""
    stdout, stderr = process.stdout, process.stderr
    if stdout is None or stderr is None:  # the caller's bug: both must be pipes
        raise ValueError("the simulator's progress needs stdout and stderr piped")
    chunks: list[str] = []
    reader = threading.Thread(target=lambda: chunks.append(stdout.read()), daemon=True)
    reader.start()
    kept: list[str] = []
    for line in stderr:
        parts = line.split()
        if len(parts) == 4 and parts[0] == "progress" and parts[1].isdigit():
            total = int(parts[2]) if parts[2].isdigit() else None
            on_progress(int(parts[1]), total, float(parts[3]))
        else:
            kept.append(line)
    process.wait()
    reader.join()
    return "".join(chunks), "".join(kept)


def failure_cause(stderr: str, status: int) -> str:
    """One line saying why the simulator failed: its own error line when it wrote one,
    else what a crash printed (a panic's message, an allocation that failed) and the signal,
    without Rust's advice lines."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    own = [ln.removeprefix("commchar-sim: ") for ln in lines if ln.startswith("commchar-sim: ")]
    if own:
        return own[-1]
    cause = [ln for ln in lines if not ln.startswith(("note: ", "stack backtrace", "fatal runtime error"))]
    text = "; ".join(cause)[-MAX_CAUSE_CHARS:]
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        ended = f"the simulator was killed by {name}"
        if -status == signal.SIGKILL:
            ended += " (out of memory?)"
        return f"{ended}: {text}" if text else ended
    return f"the simulator failed with status {status}: {text}" if text else \
        f"the simulator failed with status {status}"


def list_collectives() -> list[str]:
    """The simulator's `op:algorithm` names."""
    binary = find_binary()
    done = subprocess.run([str(binary), "--list"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SimulationError(f"{binary} --list failed: {done.stderr.strip()}")
    return done.stdout.split()
