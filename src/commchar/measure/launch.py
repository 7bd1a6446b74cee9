"""Launcher command lines (argument lists, never a shell string) for Open MPI,
MPICH (Hydra) and Slurm's srun, with root, oversubscription and host files.

Vendor quirks of launching live here and nowhere else (Open MPI's parameter
files, which decide what a job on this machine may leave unloaded, in
measure/ompi_mca.py).
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass, field
from pathlib import Path

from commchar.errors import UsageError
from commchar.measure.libraries import Library
from commchar.measure.ompi_mca import mtl_exclusion
from commchar.measure.placement import Host, hosts_used, rank_hosts, read_hostfile, slurm_hosts

LAUNCHERS = ("mpirun", "srun")


@dataclass(frozen=True)
class LaunchSpec:
    launcher: str = "mpirun"  # mpirun (the library's own) | srun
    hostfile: Path | None = None
    extra_env: dict[str, str] = field(default_factory=dict)
    placement: str | None = None  # block | cyclic; None leaves it to the launcher


def spec_hosts(spec: LaunchSpec) -> list[Host] | None:
    """The hosts the job may run on: the host file's, or the Slurm allocation's under srun."""
    if spec.launcher == "srun":
        return slurm_hosts()
    return read_hostfile(spec.hostfile) if spec.hostfile is not None else None


@dataclass(frozen=True)
class Job:
    argv: list[str]
    env_added: dict[str, str]
    oversubscribed: bool


def available_slots(spec: LaunchSpec) -> int:
    """Cores this job may use without oversubscribing: the hosts' slots, else this machine's."""
    hosts = spec_hosts(spec)
    if hosts:
        return sum(h.slots for h in hosts)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


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
        hosts = spec_hosts(spec)
        if spec.placement is not None and hosts:
            nodes = len(hosts_used(rank_hosts(hosts, p, spec.placement)))
            argv += ["--nodes", str(nodes), f"--distribution={spec.placement}"]
        if oversubscribed:
            argv.append("--overcommit")
        if rank_env:
            argv.append("--export=" + ",".join(["ALL", *(f"{k}={v}" for k, v in rank_env.items())]))
    elif library.family == "openmpi":
        argv = [library.mpirun, "-np", str(p)]
        if spec.hostfile is not None:
            # The hosts as a list rather than the file: one host file serves every library.
            argv += ["--host", ",".join(f"{h.name}:{h.slots}" for h in read_hostfile(spec.hostfile))]
        if spec.placement is not None:
            argv += ["--map-by", "node" if spec.placement == "cyclic" else "slot"]
        if oversubscribed:
            # Time-sharing ranks must yield when they poll, and cannot be bound one per core.
            argv += ["--oversubscribe", "--bind-to", "none", "--mca", "mpi_yield_when_idle", "1"]
        if os.geteuid() == 0:
            env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        if spec.hostfile is None:
            # this machine alone: MTLs whose adapter it lacks stay unloaded (0.2 s an MPI_Init)
            argv += mtl_exclusion(library.mpirun, {**os.environ, **env})
        for key, value in rank_env.items():
            argv += ["-x", f"{key}={value}"]
    else:
        argv = [library.mpirun, "-n", str(p)]
        if spec.hostfile is not None:
            # Hydra reads "host:N" only; the list on the command line places the ranks too
            # (one slot a host deals them out in turn).
            cyclic = spec.placement == "cyclic"
            argv += ["-hosts", ",".join(f"{h.name}:{1 if cyclic else h.slots}"
                                        for h in read_hostfile(spec.hostfile))]
        if oversubscribed:
            env.setdefault("MPIR_CVAR_POLLS_BEFORE_YIELD", "1")
        for key, value in rank_env.items():
            argv += ["-genv", key, value]
    if oversubscribed and spec.launcher != "srun":
        argv = _time_shared(argv)
    return Job(argv + program, env, oversubscribed)


# Real-time scheduling policies: a process under one runs until it blocks or yields to
# a process of its own priority or higher.
_REAL_TIME = {getattr(os, name) for name in ("SCHED_FIFO", "SCHED_RR") if hasattr(os, name)}


def _time_shared(argv: list[str]) -> list[str]:
    """Ranks that share cores run under the normal scheduler even when commchar itself
    runs at a real-time priority (`chrt -f`): ranks that poll at a real-time priority
    starve the others and every process of normal priority, the job's own launcher and
    its timeout included (3 ranks on 2 cores under `chrt -f 10`: no progress in 10
    minutes; under the normal scheduler the same job took 5.6 s)."""
    try:
        policy = os.sched_getscheduler(0)
    except (AttributeError, OSError):
        return argv
    if policy not in _REAL_TIME:
        return argv
    return ["chrt", "--other", "0", *argv]


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
