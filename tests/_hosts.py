"""Emulated hosts for tests (scripts/emulated-hosts.sh): built for a test module, torn
down by the fixture's finalizer whatever the tests did. Root only."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "emulated-hosts.sh"
LINK_MB_S = 125.0  # 1 Gbit/s in MB/s (10^6 bytes), the rate the script shapes each link to
# Each tbf lets a 512 KB burst through at once after an idle gap, so every large message
# is about 4 ms early: at 1 MiB that offset made the fit read 180 MB/s on a quiet machine.
# From 4 MiB it is at most 13% of a message's time and the fit reads the link within 3%.
SIZES = "0,4M,8M,16M"


@dataclass
class Hosts:
    dir: Path
    hostfile: Path
    addresses: list[str]
    names: list[str]
    namespaces: list[str]
    env: dict[str, str]

    def env_flags(self, **override: str) -> list[str]:
        """The launchers' settings as `commchar run --env` flags."""
        flags: list[str] = []
        for key, value in {**self.env, **override}.items():
            flags += ["--env", f"{key}={value}"]
        return flags

    @property
    def subnet(self) -> str:
        return self.addresses[0].rsplit(".", 1)[0]


def skip_unless_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("emulated hosts need root (network namespaces, veth, tc, one sshd per host)")


@contextlib.contextmanager
def emulated_hosts(where: Path, count: int = 2) -> Iterator[Hosts]:
    skip_unless_root()
    where.mkdir(parents=True, exist_ok=True)
    try:
        built = subprocess.run([str(SCRIPT), "up", str(where), str(count)], capture_output=True,
                               text=True, timeout=120)
        assert built.returncode == 0, built.stderr
        rows = [line.split() for line in (where / "hosts").read_text().splitlines()]
        env = dict(line.split("=", 1) for line in (where / "env").read_text().splitlines() if line)
        yield Hosts(where, where / "hostfile", [r[0] for r in rows], [r[1] for r in rows],
                    [r[2] for r in rows], env)
    finally:
        subprocess.run([str(SCRIPT), "down", str(where)], capture_output=True, timeout=120)


def commchar(*args: str, check: bool = True, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([sys.executable, "-m", "commchar", *args], capture_output=True,
                            text=True, timeout=timeout)
    if check:
        assert result.returncode == 0, result.stderr[-2000:]
    return result


SLURM_SCRIPT = SCRIPT.parent / "emulated-slurm.sh"


@contextlib.contextmanager
def emulated_slurm(hosts: Hosts) -> Iterator[Path]:
    """munged, slurmctld and a slurmd per emulated host; yields the slurm.conf to use."""
    try:
        started = subprocess.run([str(SLURM_SCRIPT), "up", str(hosts.dir)], capture_output=True,
                                 text=True, timeout=120)
        assert started.returncode == 0, started.stderr
        yield hosts.dir / "slurm" / "slurm.conf"
    finally:
        subprocess.run([str(SLURM_SCRIPT), "down", str(hosts.dir)], capture_output=True, timeout=120)


def off_and_on_node_bandwidth(model: dict, library: str, op: str = "pingpong:send") -> tuple[float, float]:
    """The fitted asymptotic bandwidth (MB/s) off-node and on-node of a model file."""
    def bw(where: str) -> float:
        return float(model["libraries"][f"{library} {where}"]["operations"][op]["metrics"]["Bw_as"])
    return bw("off-node"), bw("on-node")
