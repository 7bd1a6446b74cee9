"""Launcher command lines (argument lists, never a shell string) for Open MPI,
MPICH (Hydra) and Slurm's srun, with root, oversubscription and host files.

Vendor quirks of launching live here and nowhere else.
"""

from __future__ import annotations

import os
import re
import signal
from dataclasses import dataclass, field
from pathlib import Path

from commchar.errors import UsageError
from commchar.measure.libraries import Library

LAUNCHERS = ("mpirun", "srun")


@dataclass(frozen=True)
class LaunchSpec:
    launcher: str = "mpirun"  # mpirun (the library's own) | srun
    hostfile: Path | None = None
    extra_env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Job:
    argv: list[str]
    env_added: dict[str, str]
    oversubscribed: bool


def available_slots(spec: LaunchSpec) -> int:
    """Cores this job may use without oversubscribing: the host file's slots, else this machine's."""
    if spec.hostfile is not None:
        slots = _hostfile_slots(spec.hostfile)
        if slots:
            return slots
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _hostfile_slots(path: Path) -> int:
    try:
        text = path.read_text()
    except OSError as exc:
        raise UsageError(f"--hostfile: cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"--hostfile: {path} is not a text file") from None
    total = 0
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        # Open MPI writes "host slots=4", MPICH "host:4"
        match = re.search(r"slots\s*=\s*(\d+)", line) or re.search(r":(\d+)\s*$", line)
        total += int(match.group(1)) if match else 1
    return total


def is_oversubscribed(spec: LaunchSpec, p: int) -> bool:
    return p > available_slots(spec)


def job_command(library: Library, spec: LaunchSpec, p: int, kernel: Path,
                kernel_args: list[str]) -> Job:
    return program_command(library, spec, p, [str(kernel), *kernel_args])


def program_command(library: Library, spec: LaunchSpec, p: int, program: list[str],
                    rank_env: dict[str, str] | None = None) -> Job:
    """Launch `program` (any argv) on p ranks.  `rank_env` reaches the ranks only, never
    the launcher itself (LD_PRELOAD must not load a tracer into mpirun)."""
    oversubscribed = is_oversubscribed(spec, p)
    env: dict[str, str] = dict(spec.extra_env)
    rank_env = rank_env or {}
    if spec.launcher == "srun":
        argv = ["srun", "--ntasks", str(p), "--kill-on-bad-exit=1"]
        if oversubscribed:
            argv.append("--overcommit")
        if rank_env:
            argv.append("--export=" + ",".join(["ALL", *(f"{k}={v}" for k, v in rank_env.items())]))
    elif library.family == "openmpi":
        argv = [library.mpirun, "-np", str(p)]
        if spec.hostfile is not None:
            argv += ["--hostfile", str(spec.hostfile)]
        if oversubscribed:
            # Time-sharing ranks must yield when they poll, and cannot be bound one per core.
            argv += ["--oversubscribe", "--bind-to", "none", "--mca", "mpi_yield_when_idle", "1"]
        if os.geteuid() == 0:
            env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        for key, value in rank_env.items():
            argv += ["-x", f"{key}={value}"]
    else:
        argv = [library.mpirun, "-n", str(p)]
        if spec.hostfile is not None:
            argv += ["-f", str(spec.hostfile)]
        if oversubscribed:
            env.setdefault("MPIR_CVAR_POLLS_BEFORE_YIELD", "1")
        for key, value in rank_env.items():
            argv += ["-genv", key, value]
    return Job(argv + program, env, oversubscribed)


def parse_env(items: list[str]) -> dict[str, str]:
    """--env KEY=VALUE flags, checked."""
    env = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not key.replace("_", "").isalnum():
            raise UsageError(f"--env: '{item}' is not KEY=VALUE")
        env[key] = value
    return env


def describe_exit(status: int | None) -> str:
    if status is None:
        return "unknown status"
    if status < 0:
        try:
            return f"signal {signal.Signals(-status).name}"
        except ValueError:
            return f"signal {-status}"
    return f"exit code {status}"
