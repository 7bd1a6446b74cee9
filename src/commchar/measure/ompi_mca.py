"""Open MPI's MTL components that cannot run on this machine, left unloaded.

Every Open MPI process opens each MTL component its `mtl` selection allows, and
two of them link a library whose constructor waits for its adapter: libpsm2
(Omni-Path, `/dev/hfi1*`) and libpsm_infinipath (QLogic InfiniPath,
`/dev/ipath*`) each poll for their device for 0.1 s. On a machine without
either adapter they cannot be chosen, yet they make every MPI_Init 0.2 s
longer (Debian's Open MPI 4.1: a two-rank job of one ping-pong point takes
0.35 s, 0.14 s without them). A job on this machine alone then excludes them
by adding them to the `mtl` selection the library would use anyway; nothing
the library can select changes.

The selection is the library's own when it can be known: a user's
`OMPI_MCA_mtl` (or parameter files named in the environment) leaves it alone,
and so does an inclusion list or a system parameter file that is not where
the installation keeps it. Open MPI reads the user's file
(`~/.openmpi/mca-params.conf`) before the system's
(`<sysconfdir>/openmpi-mca-params.conf`), and the first value found wins.
"""

from __future__ import annotations

import glob
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

# MTL component -> device paths of its adapter
ADAPTER_BOUND: Mapping[str, tuple[str, ...]] = {
    "psm": ("/dev/ipath*", "/sys/class/infiniband/qib*"),
    "psm2": ("/dev/hfi1*", "/sys/class/infiniband/hfi1*"),
}

# parameters that point Open MPI at parameter files this module would not read
_OTHER_FILES = ("OMPI_MCA_mca_base_param_files", "OMPI_MCA_mca_base_envar_file_prefix",
                "OMPI_MCA_mca_base_param_file_prefix", "OMPI_MCA_mca_base_override_param_file")


def system_param_file(mpirun: str) -> Path:
    """Where the installation of `mpirun` keeps its parameter file: `<prefix>/etc`, or
    /etc/openmpi for a system installation under /usr (Debian's sysconfdir)."""
    prefix = Path(os.path.realpath(shutil.which(mpirun) or mpirun)).parent.parent
    sysconf = Path("/etc/openmpi") if prefix == Path("/usr") else prefix / "etc"
    return sysconf / "openmpi-mca-params.conf"


def file_value(path: Path, name: str) -> str | None:
    """The value `path` gives parameter `name` (its last line for it), None if it gives none."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    value = None
    for line in text.splitlines():
        key, sep, rest = line.split("#", 1)[0].partition("=")
        if sep and key.strip() == name:
            value = rest.strip()
    return value


def mtl_exclusion(mpirun: str, env: Mapping[str, str], home: Path | None = None,
                  device_globs: Mapping[str, tuple[str, ...]] = ADAPTER_BOUND) -> list[str]:
    """`--mca mtl VALUE` that leaves out the adapter-bound MTLs whose adapter this machine
    lacks, added to the selection the library would use; [] where there is nothing to
    leave out or the selection is the user's or cannot be known."""
    absent = [mtl for mtl, patterns in device_globs.items()
              if not any(glob.glob(pattern) for pattern in patterns)]
    if not absent or "OMPI_MCA_mtl" in env or any(name in env for name in _OTHER_FILES):
        return []
    system = system_param_file(mpirun)
    if not system.is_file():
        return []
    # the job's $HOME, as Open MPI reads it (none: no user file, never an error)
    home = home if home is not None else (Path(env["HOME"]) if env.get("HOME") else None)
    selection = file_value(home / ".openmpi" / "mca-params.conf", "mtl") if home is not None else None
    if selection is None:
        selection = file_value(system, "mtl") or ""
    if selection and not selection.startswith("^"):
        return []  # an inclusion list: only what it names is opened
    excluded = [name.strip() for name in selection.lstrip("^").split(",") if name.strip()]
    excluded += [mtl for mtl in absent if mtl not in excluded]
    return ["--mca", "mtl", "^" + ",".join(excluded)]
