"""Intercommunicators under real mpirun with each library (tests/programs/intercomm.c):
MPI_Intercomm_create and MPI_Intercomm_merge are recorded with both groups' world ranks,
messages between the groups (named peers, a wildcard receive, a duplicate) replay without
--other-as-compute, and a collective on an intercommunicator is refused in one line."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from _corpus import commchar, write_model
from commchar.store import Store
from commchar.store.traces import extract_trace, traces
from commchar.trace import CALL_IDS, read_trace
from commchar.trace import format as fmt

pytestmark = pytest.mark.mpi

PROGRAM = Path(__file__).resolve().parent / "programs" / "intercomm.c"
NP = 4


def _trace(library, work: Path, *args: str) -> tuple[Path, subprocess.CompletedProcess]:
    binary = work / "intercomm"
    if not binary.exists():
        subprocess.run([library.mpicc, "-std=c11", "-O1", "-o", str(binary), str(PROGRAM)],
                       check=True, capture_output=True, timeout=120)
    db = work / f"t{len(args)}.db"
    result = commchar("trace", "--db", str(db), "--library", library.name, "--np", str(NP),
                      "--timeout", "120", "--", str(binary), *args, cwd=work)
    assert result.returncode == 0, result.stderr
    return db, result


@pytest.fixture(scope="module", params=["openmpi", "mpich"])
def library(request, mpi_libraries):
    found = {lib.name: lib for lib in mpi_libraries}
    if request.param not in found:
        pytest.fail(f"{request.param} not installed: `make setup` installs both libraries")
    return found[request.param]


def test_intercommunicators_are_recorded_and_replayed(library, tmp_path):
    db, result = _trace(library, tmp_path)
    assert f"intercomm: {NP} ranks, 0 failed checks" in result.stdout
    with Store(db) as store:
        (row,) = traces(store)
        trace = read_trace(extract_trace(store, row["id"], tmp_path / "extracted"))
    assert trace.summary().others == {}
    for rank in trace.ranks:
        rec = rank.records
        (create,) = rec[rec["call"] == CALL_IDS["Intercomm_create"]]
        (merge,) = rec[rec["call"] == CALL_IDS["Intercomm_merge"]]
        dup = rec[rec["call"] == CALL_IDS["Comm_dup"]]
        assert create["flags"] & fmt.REC_INTER and dup["flags"][0] & fmt.REC_INTER
        assert not merge["flags"] & fmt.REC_INTER
        members = rank.members()
        me = rank.rank
        evens, odds = list(range(0, NP, 2)), list(range(1, NP, 2))
        local, remote = (evens, odds) if me % 2 == 0 else (odds, evens)
        # local group, then remote, the local size in the tag
        assert members[int(create["aux"])] == local + remote and create["tag"] == len(local)
        assert sorted(members[int(merge["aux"])]) == list(range(NP))
    model = write_model(tmp_path / "model.json")
    replayed = commchar("replay", "--db", str(db), "--trace", "1", "--model", str(model),
                        "--library", library.name, "--json")
    assert replayed.returncode == 0, replayed.stderr
    doc = json.loads(replayed.stdout)
    assert doc["trace"]["p"] == NP
    for key in ("loggps", "loggp"):
        assert doc["predictions"][key]["makespan"] > 0


def test_a_collective_on_an_intercommunicator_is_refused_in_one_line(library, tmp_path):
    db, result = _trace(library, tmp_path, "barrier")
    assert f"intercomm: {NP} ranks, 0 failed checks" in result.stdout
    model = write_model(tmp_path / "model.json")
    replayed = commchar("replay", "--db", str(db), "--trace", "1", "--model", str(model),
                        "--library", library.name)
    assert replayed.returncode != 0
    lines = replayed.stderr.strip().splitlines()
    assert len(lines) == 1 and "barrier on an intercommunicator cannot be replayed" in lines[0]
    assert "Traceback" not in replayed.stderr
