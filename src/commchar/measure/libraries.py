"""Find the MPI libraries on this machine: a compiler wrapper and a launcher each.

Debian installs several side by side (mpicc.openmpi, mpicc.mpich); a cluster
usually has one `mpicc` on PATH from a module. Both are found; vendor quirks
(how to ask a wrapper who it is) stay in this module.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass

from commchar.errors import MeasurementError, UsageError


@dataclass(frozen=True)
class Library:
    name: str  # how runs, exports and models call it: openmpi, mpich, ...
    family: str  # openmpi | mpich | unknown: decides launcher flags
    mpicc: str
    mpirun: str
    transport: str = "mpi"  # mpi | am | pvm: which operations it measures


# The active-message layer (am/) is measured like a library: the same kernel,
# built and launched with the first MPI library found, which only bootstraps it.
ACTIVE_MESSAGES = "am"


def active_messages(base: Library) -> Library:
    return Library(ACTIVE_MESSAGES, base.family, base.mpicc, base.mpirun, transport="am")


# PVM (Debian's pvm and pvm-dev) is measured like a library too: the kernel built
# with its operations (kernels/pvm/) is launched with the first MPI library found,
# whose ranks enrol in a private virtual machine (measure/pvm.py); only the timing
# loop's control traffic goes through MPI.
PVM = "pvm"


def pvm(base: Library) -> Library:
    return Library(PVM, base.family, base.mpicc, base.mpirun, transport="pvm")


def pvm_installed() -> bool:
    """A PVM daemon to start and a header and group library to build against."""
    from commchar.measure.pvm import installation_problem  # a vendor corner of its own
    return installation_problem() is None


_SUFFIXED = (
    ("openmpi", "openmpi", "mpicc.openmpi", ("mpirun.openmpi", "mpiexec.openmpi")),
    ("mpich", "mpich", "mpicc.mpich", ("mpiexec.mpich", "mpirun.mpich", "mpiexec.hydra")),
)


def _wrapper_says(argv: list[str]) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return (out.stdout + out.stderr).lower() if out.returncode == 0 else ""


def _family_of(mpicc: str) -> str:
    # Open MPI's wrapper answers -showme:version; MPICH's prints its link line for -show.
    if "open mpi" in _wrapper_says([mpicc, "-showme:version"]):
        return "openmpi"
    if "mpich" in _wrapper_says([mpicc, "-show"]):
        return "mpich"
    return "unknown"


def discover() -> list[Library]:
    found: list[Library] = []
    seen_wrappers: set[str] = set()
    for name, family, cc, runners in _SUFFIXED:
        cc_path = shutil.which(cc)
        run_path = next((shutil.which(r) for r in runners if shutil.which(r)), None)
        if cc_path and run_path:
            found.append(Library(name, family, cc_path, run_path))
            seen_wrappers.add(os.path.realpath(cc_path))
    generic_cc = shutil.which("mpicc")
    generic_run = shutil.which("mpirun") or shutil.which("mpiexec")
    if generic_cc and generic_run and os.path.realpath(generic_cc) not in seen_wrappers:
        family = _family_of(generic_cc)
        name = family if family != "unknown" else "mpi"
        if any(lib.name == name for lib in found):
            name = f"{name}-default"
        found.append(Library(name, family, generic_cc, generic_run))
    return found


def select(names: list[str] | None, *, mpi_only: bool = False) -> list[Library]:
    """The libraries named (every MPI library found when none is, and PVM when it is
    installed). `mpi_only`: the caller runs MPI programs (a traced program, an
    application), which neither the active-message layer nor PVM can stand in for."""
    available = discover()
    if not available:
        raise MeasurementError(
            "no MPI library found (need mpicc and mpirun on PATH): run `make setup` or load your MPI")
    if not names:
        return available if mpi_only or not pvm_installed() else [*available, pvm(available[0])]
    by_name = {lib.name: lib for lib in available}
    if not mpi_only:
        by_name.setdefault(ACTIVE_MESSAGES, active_messages(available[0]))
        by_name.setdefault(PVM, pvm(available[0]))
    chosen = []
    for name in names:
        if name == PVM and not mpi_only and not pvm_installed():
            from commchar.measure.pvm import installation_problem
            raise MeasurementError(f"--library pvm: {installation_problem()}")
        if name not in by_name:
            raise UsageError(
                f"--library: '{name}' not found here (found: {', '.join(by_name) or 'none'})")
        chosen.append(by_name[name])
    return chosen


def linked_family(program: str) -> str | None:
    """Which MPI family a dynamically linked program uses (openmpi | mpich), None if unknown.

    A tracer preloaded into a program linked against the other library would not
    resolve its symbols, so commands that preload ask this first."""
    try:
        out = subprocess.run(["ldd", program], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in out.stdout.splitlines():
        name = line.strip().split(" ", 1)[0]
        if name.startswith("libmpich.so") or name.startswith("libmpi.so.12"):
            return "mpich"
        if name.startswith("libmpi.so"):
            return "openmpi"
    return None
