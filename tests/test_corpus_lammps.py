"""LAMMPS (Debian's `lammps`, Open MPI only): a molecular-dynamics code with a 3-D
domain decomposition over MPI_Cart_create, halo exchanges by Irecv/Send/Wait and
thermodynamic reductions.  A small Lennard-Jones melt (864 atoms, 100 steps) is
traced at p = 2, replayed without flags and predicted; the traced run's
thermodynamic output must equal the untraced run's (same p, deterministic)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from _corpus import check_predicted, replay, require, trace, write_model
from commchar.store import Store
from commchar.store.traces import extract_trace, traces
from commchar.trace import read_trace

pytestmark = pytest.mark.mpi

MELT = Path("/usr/share/lammps/examples/melt/in.melt")


def _input(directory: Path) -> Path:
    """Debian's melt example on a 6x6x6 lattice (864 atoms) for 100 steps."""
    text = require(str(MELT)).read_text()
    text = text.replace("block 0 10 0 10 0 10", "block 0 6 0 6 0 6")
    text = text.replace("run\t\t250", "run\t\t100").replace("thermo\t\t50", "thermo\t\t100")
    assert "0 6 0 6 0 6" in text and "run\t\t100" in text
    path = directory / "in.melt"
    path.write_text(text)
    return path


def _thermo(stdout: str) -> list[str]:
    """The thermodynamic table LAMMPS prints: its header and the rows after it."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:1] == ["Step"])
    return [" ".join(line.split()) for line in lines[start:start + 3]]


def test_lammps_is_traced_replayed_and_predicted(tmp_path: Path, mpi_libraries):
    lmp = require("lmp")
    found = {lib.name: lib for lib in mpi_libraries}
    if "openmpi" not in found:
        pytest.fail("openmpi not installed: `make setup` installs both libraries")
    script = _input(tmp_path)
    argv = [str(lmp), "-in", script.name, "-log", "none"]
    untraced = subprocess.run([found["openmpi"].mpirun, "-n", "2", *argv], capture_output=True,
                              text=True, timeout=240, cwd=tmp_path,
                              env={**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1",
                                   "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    assert untraced.returncode == 0, untraced.stderr
    db = tmp_path / "t.db"
    traced = trace(db, "openmpi", argv, tmp_path)
    # the answer: the same energies, temperature and pressure at steps 0 and 100
    assert _thermo(traced.stdout) == _thermo(untraced.stdout)
    assert _thermo(traced.stdout)[2].startswith("100 ")

    with Store(db) as store:
        (row,) = traces(store)
        directory = extract_trace(store, row["id"], tmp_path / "extracted")
    summary = read_trace(directory).summary()
    assert summary.others == {}
    assert summary.calls["Cart_create"]["count"] == 2
    assert summary.calls["Irecv"]["count"] > 100

    doc = replay(db, write_model(tmp_path / "m.json"), "openmpi")
    check_predicted(doc)
