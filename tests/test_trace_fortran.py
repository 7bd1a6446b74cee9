"""Fortran programs under the tracer, with each library and each binding (mpif.h,
`use mpi`, `use mpi_f08`): Open MPI's bindings and MPICH's mpi_f08 reach the
library below MPI_, so the tracer wraps their Fortran entry points
(tracer/cc_trace_fortran.c).  Each run is traced at p = 2, every call is recorded
(the wildcard receive with its actual source), and the trace replays without flags."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from _corpus import check_predicted, replay, trace, write_model
from commchar.store import Store
from commchar.store.traces import extract_trace, traces
from commchar.trace import CALL_IDS, read_trace

pytestmark = pytest.mark.mpi

PROGRAMS = Path(__file__).resolve().parent / "programs"
EXPECTED = {"Init": 2, "Send": 2, "Recv": 2, "Irecv": 2, "Isend": 2, "Waitall": 2,
            "Comm_split": 2, "Bcast": 2, "Allreduce": 2, "Comm_free": 2, "Barrier": 2,
            "Finalize": 2}


@pytest.mark.parametrize("binding", ["mpif", "mpi", "f08"])
@pytest.mark.parametrize("library", ["openmpi", "mpich"])
def test_a_fortran_program_is_traced_and_replayed(tmp_path: Path, mpi_libraries, library: str,
                                                  binding: str):
    if library not in {lib.name for lib in mpi_libraries}:
        pytest.fail(f"{library} not installed: `make setup` installs both libraries")
    compiler = shutil.which(f"mpifort.{library}")
    if not compiler:
        pytest.fail(f"mpifort.{library} not found: `make setup` installs gfortran (scripts/ensure-deps.sh corpus)")
    program = tmp_path / f"fortran_{binding}"
    subprocess.run([compiler, "-O1", "-o", str(program), str(PROGRAMS / f"fortran_{binding}.f90")],
                   check=True, capture_output=True, timeout=180, cwd=tmp_path)
    db = tmp_path / "t.db"
    traced = trace(db, library, [str(program)], tmp_path)
    assert "fortran: total 15 from 1" in traced.stdout  # (7 + 0) + (7 + 1); rank 1's buffer
    with Store(db) as store:
        (row,) = traces(store)
        directory = extract_trace(store, row["id"], tmp_path / "extracted")
    found = read_trace(directory)
    summary = found.summary()
    assert {name: entry["count"] for name, entry in summary.calls.items()} == EXPECTED
    recv = found.ranks[1].records[found.ranks[1].records["call"] == CALL_IDS["Recv"]]
    assert recv["peer"].tolist() == [-2] and recv["aux"].tolist() == [0] and recv["bytes2"].tolist() == [8000]
    check_predicted(replay(db, write_model(tmp_path / "m.json"), library))


def test_the_tracer_loads_where_the_library_has_no_fortran_bindings(mpi_libraries):
    # a library built without Fortran (MPICH's Python wheel) lacks the Fortran sentinels the
    # wrappers compare arguments with: the tracer refers to them weakly, or it would not load
    from commchar.measure.build import TRACER, ensure_built

    for library in mpi_libraries:
        lib = ensure_built(TRACER, library) / "libcommchar-trace.so"
        undefined = subprocess.run(["nm", "-D", "--undefined-only", str(lib)], check=True,
                                   capture_output=True, text=True).stdout.splitlines()
        sentinels = [line.split() for line in undefined
                     if any(s in line for s in ("MPIR_F08_", "mpi_fortran_"))]
        assert sentinels, f"{library}: the tracer compares no Fortran sentinel"
        assert all(kind in ("w", "v") for kind, _ in sentinels), (library, sentinels)
