"""Finding and running the `commchar-sim` binary: one run per process (`run_simulator`), or
many runs answered by one process (`Session`, the simulator's `--batch` mode)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import threading
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Callable, NoReturn

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
        _fail(process.returncode, failure_cause(stderr, process.returncode))
    if not expect_json:
        return {}
    result: dict[str, Any] = jsonio.loads(stdout, "the simulator's output", SimulationError)
    return result


def _fail(status: int, message: str) -> NoReturn:
    """The error of a run that ended with exit status `status`: 2 the flags, 3 a file."""
    if status == 2:
        raise UsageError(message)
    if status == 3:
        raise InputError(message)
    raise SimulationError(message)


class Session:
    """One simulator process answering many runs (`commchar-sim --batch`): each model file
    and trace is read once, and a replay asked again with other engine parameters is copied
    instead of read again. `run` takes the flags `run_simulator` takes and gives the same
    result, or raises the same error; the process ends with the `with` block.

        with Session() as sim:
            a = sim.run(["--collective", "bcast:binomial", "--n", "8"])
    """

    def __init__(self) -> None:
        self._process: subprocess.Popen | None = None
        self._stderr: IO[str] | None = None

    def __enter__(self) -> Session:
        binary = find_binary()
        # stderr to a file: a process that fails must not block on a full pipe nobody reads
        self._stderr = tempfile.TemporaryFile("w+", prefix="commchar-sim-", errors="replace")
        try:
            self._process = processes.start([str(binary), "--batch"], stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, stderr=self._stderr, text=True,
                                            errors="replace")
        except OSError as exc:
            self._stderr.close()
            raise SimulationError(f"cannot run {binary}: {exc.strerror}") from None
        return self

    def run(self, args: list[str], *, expect_json: bool = True) -> dict[str, Any]:
        """The answer to one run's flags (its --json result; {} without `expect_json`)."""
        process = self._process
        if process is None or process.stdin is None or process.stdout is None:
            raise ValueError("Session.run outside its with block")  # the caller's bug
        try:
            process.stdin.write(json.dumps([a for a in args if a != "--json"]) + "\n")
            process.stdin.flush()
            line = process.stdout.readline()
        except BrokenPipeError:
            line = ""
        if not line:  # the process ended (a crash, a signal): say why as a single run would
            status = process.wait()
            processes.finished(process)
            self._process = None
            raise SimulationError(failure_cause(self._stderr_text(), status))
        answer = jsonio.loads(line, "the simulator's output", SimulationError)
        if isinstance(answer, dict) and set(answer) == {"error", "exit_code"}:
            _fail(int(answer["exit_code"]), str(answer["error"]))
        if not expect_json:
            return {}
        if not isinstance(answer, dict):
            raise SimulationError("the simulator's answer is not a JSON object")
        return answer

    def _stderr_text(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        return self._stderr.read()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        process, self._process = self._process, None
        try:
            if process is not None:
                if kind is None and process.stdin is not None:
                    try:
                        process.stdin.close()  # the end of the requests: the simulator exits
                        process.wait(timeout=60)
                    except (BrokenPipeError, subprocess.TimeoutExpired):
                        processes.stop(process)
                else:  # Ctrl-C, SIGTERM or a failed request's error: the simulator stops with it
                    processes.stop(process)
                processes.finished(process)
        finally:
            if self._stderr is not None:
                self._stderr.close()
                self._stderr = None


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
