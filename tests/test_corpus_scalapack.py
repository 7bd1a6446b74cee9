"""ScaLAPACK's test drivers (Debian's `scalapack-mpi-test`, built for Open MPI and
for MPICH): xdlu, a Fortran program, factors and solves dense systems on BLACS
process grids (communicators from Comm_split, Comm_create and Comm_dup; broadcasts,
reductions, Isend/Recv/Testall).  Two sizes on the 1x2 and 2x1 grids are traced at
p = 2 with each library, replayed without flags and predicted; the program checks
its own residuals, and all four must pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from _corpus import check_predicted, replay, require, trace, write_model
from commchar.store import Store
from commchar.store.traces import extract_trace, traces
from commchar.trace import read_trace

pytestmark = pytest.mark.mpi

LU_DAT = """'SCALAPACK, LU factorization input file'
'MPI Machine'
'LU.out'\t\toutput file name (if any)
6\t\t\tdevice out
2\t\t\tnumber of problems sizes
300 600\t\t\tvalues of M
300 600\t\t\tvalues of N
1\t\t\tnumber of NB's
32\t\t\tvalues of NB
1\t\t\tnumber of NRHS's
1\t\t\tvalues of NRHS
1\t\t\tNumber of NBRHS's
1\t\t\tvalues of NBRHS
2\t\t\tnumber of process grids (ordered pairs of P & Q)
1 2\t\t\tvalues of P
2 1\t\t\tvalues of Q
1.0\t\t\tthreshold
F\t\t\t(T or F) Test Cond. Est. and Iter. Ref. Routines
"""


@pytest.mark.parametrize("library", ["openmpi", "mpich"])
def test_scalapack_lu_is_traced_replayed_and_predicted(tmp_path: Path, mpi_libraries, library: str):
    if library not in {lib.name for lib in mpi_libraries}:
        pytest.fail(f"{library} not installed: `make setup` installs both libraries")
    xdlu = require(f"/usr/lib/x86_64-linux-gnu/scalapack/{library}-tests/xdlu")
    (tmp_path / "LU.dat").write_text(LU_DAT)  # the driver reads its input from the working directory
    db = tmp_path / "t.db"
    traced = trace(db, library, [str(xdlu)], tmp_path)
    assert "4 tests completed and passed residual checks." in traced.stdout
    assert "0 tests completed and failed residual checks." in traced.stdout

    with Store(db) as store:
        (row,) = traces(store)
        directory = extract_trace(store, row["id"], tmp_path / "extracted")
    summary = read_trace(directory).summary()
    assert summary.others == {}
    assert summary.calls["Comm_create"]["count"] > 0 and summary.calls["Bcast"]["count"] > 100

    doc = replay(db, write_model(tmp_path / "m.json"), library)
    check_predicted(doc)
