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
