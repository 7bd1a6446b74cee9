"""A private PVM virtual machine for one job: its own directory, its own daemon, always halted.

PVM keeps a daemon's socket, address and log files in PVM_TMP (pvmd.<uid>,
pvml.<uid>, pvmtmp<pid>.0) and reads a host file for where its programs are.
The machine made here points both at a fresh directory, so neither the user's
~/.pvmd state nor anyone else's virtual machine is touched. The daemon is
started through commchar.processes (a session of its own, known to the
watchdog), so it ends with commchar however commchar ends. Halting is asked
for first (the daemon then stops its tasks, the group server among them), then
what is left of the daemon's group and descendants is ended, then the directory
is removed. A directory left behind by a commchar killed with SIGKILL (whose
daemon the watchdog ended) is removed when the next machine starts.

Several hosts: the MPI host file's host names become the PVM host file; the
master daemon starts the others through $PVM_RSH (ssh unless set), which needs
PVM installed at the same PVM_ROOT on every host and password-less ssh. PVM
has no way to move a remote daemon's files, so those stay in the remote /tmp
until the machine is halted (docs/pvm.md).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from commchar import processes
from commchar.errors import MeasurementError

DEFAULT_ROOT = "/usr/lib/pvm3"
DIR_PREFIX = "commchar-pvm-"
START_TIMEOUT_S = 30.0
HALT_TIMEOUT_S = 10.0


class MachineError(MeasurementError):
    """The virtual machine could not be started."""


@dataclass(frozen=True)
class Machine:
    env: dict[str, str]  # what every task needs to enrol in this machine and only this one
    version: str  # PVM's, as its console tells it ("" when it does not)


def pvm_root() -> Path:
    return Path(os.environ.get("PVM_ROOT") or DEFAULT_ROOT)


def _program(name: str) -> str | None:
    """Debian puts the daemon, console and group server on PATH and under PVM_ROOT/lib."""
    under_root = pvm_root() / "lib" / name
    if under_root.is_file() and os.access(under_root, os.X_OK):
        return str(under_root)
    return shutil.which(name)


def _header() -> Path | None:
    for candidate in (pvm_root() / "include" / "pvm3.h", Path("/usr/include/pvm3.h")):
        if candidate.is_file():
            return candidate
    return None


def installation_problem() -> str | None:
    """Why PVM cannot be measured here, None when it can."""
    missing = [what for what, found in (("pvmd", _program("pvmd")), ("pvm", _program("pvm")),
                                        ("pvmgs", _program("pvmgs")), ("pvm3.h", _header()))
               if not found]
    if missing:
        return (f"PVM is not installed ({', '.join(missing)} not found): install Debian's pvm and "
                "pvm-dev (`make setup` does) or set PVM_ROOT")
    return None


def host_names(hostfile: Path | None) -> list[str]:
    """This host, then every other host an MPI host file names (Open MPI's or MPICH's form)."""
    names = [socket.gethostname()]
    if hostfile is None:
        return names
    try:
        text = hostfile.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise MachineError(f"cannot read host file {hostfile}: {exc}") from None
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name = re.split(r"[\s:]", line, maxsplit=1)[0]
        if name in ("localhost", "127.0.0.1"):
            name = names[0]
        if name not in names:
            names.append(name)
    return names


# PVM's messages go through its daemons, which need a core when a message moves:
# ranks that spin in the loop's MPI control calls (start barrier, reductions) would
# take the cores from them, so they yield (Open MPI's and MPICH's own settings).
YIELDING_MPI = {"OMPI_MCA_mpi_yield_when_idle": "1", "MPIR_CVAR_POLLS_BEFORE_YIELD": "1"}


def _machine_env(directory: Path) -> dict[str, str]:
    """What the daemon and every task need to find this machine and only this one."""
    env = {"PVM_ROOT": str(pvm_root()), "PVM_TMP": str(directory), **YIELDING_MPI}
    if os.geteuid() == 0:
        env["PVM_ALLOW_ROOT"] = "1"  # PVM refuses root otherwise
    return env


def _remove_stale() -> None:
    """Directories of machines whose commchar is gone (killed before it could halt them)."""
    for directory in Path(tempfile.gettempdir()).glob(DIR_PREFIX + "*"):
        try:
            owner = int((directory / "owner").read_text())
        except (OSError, ValueError):
            owner = -1
        if owner > 0 and processes.alive(owner):
            continue
        try:
            daemon = int((directory / "daemon").read_text())
        except (OSError, ValueError):
            daemon = -1
        if daemon > 0 and processes.alive(daemon) and str(directory) in _cmdline(daemon):
            processes.end_groups([daemon])
        shutil.rmtree(directory, ignore_errors=True)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@contextmanager
def private_machine(hostfile: Path | None = None) -> Iterator[Machine]:
    """Start a virtual machine, yield it, halt it on the way out (normal end, exception,
    Ctrl-C). MachineError when it cannot be started."""
    problem = installation_problem()
    if problem:
        raise MachineError(problem)
    _remove_stale()
    directory = Path(tempfile.mkdtemp(prefix=DIR_PREFIX))
    daemon: subprocess.Popen | None = None
    try:
        (directory / "owner").write_text(str(os.getpid()))
        env = _machine_env(directory)
        hosts = directory / "hosts"
        # '*' sets the defaults of every host: the group server is found under
        # PVM_ROOT/lib (Debian's layout), tasks start in the private directory
        lines = [f"* ep={pvm_root() / 'lib'} wd={directory}", *host_names(hostfile)]
        hosts.write_text("\n".join(lines) + "\n")
        daemon_env = {**os.environ, **env, "HOME": str(directory)}
        daemon_env.setdefault("PVM_RSH", "ssh")
        with open(directory / "pvmd.out", "w") as out:
            daemon = processes.start([_program("pvmd") or "pvmd", str(hosts)], stdin=subprocess.DEVNULL,
                                     stdout=out, stderr=subprocess.STDOUT, env=daemon_env)
        (directory / "daemon").write_text(str(daemon.pid))
        _wait_until_up(daemon, directory)
        yield Machine(env, _console(directory, "version\nquit\n"))
    finally:
        if daemon is not None:
            _halt(daemon, directory)
        shutil.rmtree(directory, ignore_errors=True)


def _wait_until_up(daemon: subprocess.Popen, directory: Path) -> None:
    """The daemon writes its address file (pvmd.<uid>) once it accepts tasks."""
    address = directory / f"pvmd.{os.getuid()}"
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if daemon.poll() is not None:
            raise MachineError(f"the PVM daemon exited with {daemon.returncode}: {_said(directory)}")
        if address.is_file() and address.stat().st_size > 0:
            return
        time.sleep(0.05)
    raise MachineError(f"the PVM daemon did not start within {START_TIMEOUT_S:g} s: {_said(directory)}")


def _said(directory: Path) -> str:
    texts = []
    for name in ("pvmd.out", f"pvml.{os.getuid()}"):
        try:
            texts += [ln.strip() for ln in (directory / name).read_text(errors="replace").splitlines()
                      if ln.strip()]
        except OSError:
            pass
    return " | ".join(texts[-2:])[-300:] or "no output"


def _console(directory: Path, commands: str) -> str:
    """Commands to PVM's console for this machine; the version it printed, if any. Only
    while the daemon runs: a console that finds none starts one."""
    env = {**os.environ, **_machine_env(directory), "HOME": str(directory)}
    try:
        said = subprocess.run([_program("pvm") or "pvm"], input=commands, text=True, env=env,
                              capture_output=True, timeout=HALT_TIMEOUT_S).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""
    found = re.search(r"^(\d+\.\d+\.\d+)\s*$", said, re.MULTILINE)
    return found.group(1) if found else ""


def _halt(daemon: subprocess.Popen, directory: Path) -> None:
    """`halt` through PVM's console, which ends every task and daemon of the machine; then
    the daemon's group and descendants, should anything still run."""
    if daemon.poll() is None:
        _console(directory, "halt\n")
        deadline = time.monotonic() + HALT_TIMEOUT_S
        while daemon.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
    processes.stop(daemon)
