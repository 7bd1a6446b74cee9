"""Finding and running the `commchar-sim` binary."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from commchar.errors import CommcharError, InputError, UsageError

ENV_VAR = "COMMCHAR_SIM"
_REPO = Path(__file__).resolve().parents[3]
DEFAULT_BINARY = _REPO / "sim" / "target" / "release" / "commchar-sim"


class SimulationError(CommcharError):
    """The simulator is missing, or a schedule could not finish (deadlock)."""

    exit_code = 1


def find_binary() -> Path:
    """The simulator binary: $COMMCHAR_SIM, else sim/target/release/commchar-sim."""
    path = Path(os.environ[ENV_VAR]) if os.environ.get(ENV_VAR) else DEFAULT_BINARY
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise SimulationError(f"simulator binary not found at {path}: run `make sim` to build it")
    return path


def run_simulator(args: list[str], *, expect_json: bool = True) -> dict[str, Any]:
    """Runs the simulator with `args` (plus --json) and returns its parsed result."""
    binary = find_binary()
    argv = [str(binary), *args] + (["--json"] if expect_json and "--json" not in args else [])
    try:
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise SimulationError(f"cannot run {binary}: {exc.strerror}") from None
    if done.returncode != 0:
        lines = [ln for ln in done.stderr.strip().splitlines() if ln.strip()]
        message = lines[-1] if lines else f"simulator exited with status {done.returncode}"
        message = message.removeprefix("commchar-sim: ")
        if done.returncode == 2:
            raise UsageError(message)
        if done.returncode == 3:
            raise InputError(message)
        raise SimulationError(message)
    if not expect_json:
        return {}
    try:
        result: dict[str, Any] = json.loads(done.stdout)
    except json.JSONDecodeError as exc:
        raise SimulationError(f"the simulator printed something that is not JSON ({exc.msg})") from None
    return result


def list_collectives() -> list[str]:
    """The simulator's `op:algorithm` names."""
    binary = find_binary()
    done = subprocess.run([str(binary), "--list"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SimulationError(f"{binary} --list failed: {done.stderr.strip()}")
    return done.stdout.split()
