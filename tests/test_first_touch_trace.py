"""The tracer's cold-byte count under real mpirun (tests/programs/first_touch.c): a
receive into a fresh mapping records every byte cold, one into touched memory none, a
half-touched one half, a buffer under 64 KiB is not counted; Irecv, Sendrecv, Scatter
(the root's own part too) and Bcast (not at the root) likewise."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from commchar.store import Store
from commchar.store.traces import extract_trace, traces
from commchar.trace import CALL_IDS, read_trace
from commchar.trace.format import RECORD_DTYPE, REC_COLD, cold_bytes

pytestmark = pytest.mark.mpi

PROGRAM = Path(__file__).resolve().parent / "programs" / "first_touch.c"
KIB, MIB = 1024, 1024 * 1024


@pytest.fixture(scope="module", params=["openmpi", "mpich"])
def traced(request, mpi_libraries, tmp_path_factory):
    found = {lib.name: lib for lib in mpi_libraries}
    if request.param not in found:
        pytest.fail(f"{request.param} not installed: `make setup` installs both libraries")
    library = found[request.param]
    work = tmp_path_factory.mktemp(f"touch-{library.name}")
    binary = work / "first_touch"
    subprocess.run([library.mpicc, "-std=c11", "-O1", "-o", str(binary), str(PROGRAM)],
                   check=True, capture_output=True, timeout=120)
    result = subprocess.run([sys.executable, "-m", "commchar", "trace", "--db", str(work / "t.db"),
                             "--library", library.name, "--np", "2", "--", str(binary)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "first_touch ok" in result.stdout
    with Store(work / "t.db") as store:
        (row,) = traces(store)
        directory = extract_trace(store, row["id"], work / "extracted")
    return read_trace(directory)


def _cold(rank, call: str) -> list[int]:
    rec = rank.records
    return cold_bytes(rec)[rec["call"] == CALL_IDS[call]].tolist()


def test_the_header_carries_the_tracers_own_time_and_not_its_calibration(traced):
    for rank in traced.ranks:
        # measured at MPI_Finalize on the wrappers: tens of ns a call, far below a microsecond
        assert 0 < rank.record_gap_ps < 1_000_000
        # and per COMPLETE record a wait writes after its span: less than a wrapper's whole
        assert 0 < rank.complete_gap_ps < 1_000_000
        assert 0 < rank.collective_gap_ps < 1_000_000
        # the calibration's calls are not the program's: it starts with MPI_Init, and its
        # first request has id 1
        assert rank.records["call"][0] == CALL_IDS["Init"]
        started = rank.records[(rank.records["req"] > 0) & (rank.records["call"] == CALL_IDS["Irecv"])]
        assert started.size == 0 or int(started["req"].min()) == 1


def test_receives_count_bytes_in_pages_not_resident(traced):
    receiver = traced.ranks[1]
    assert _cold(receiver, "Recv") == [MIB, 0, MIB // 2, 0]
    assert _cold(receiver, "Irecv") == [256 * KIB]
    assert _cold(receiver, "Sendrecv") == [128 * KIB]
    assert _cold(receiver, "Scatter") == [512 * KIB]
    assert _cold(receiver, "Bcast") == [256 * KIB]
    # the Irecv keeps its request id; the count is beside it
    irecv = receiver.records[receiver.records["call"] == CALL_IDS["Irecv"]][0]
    assert irecv["req"] > 0 and irecv["flags"] & REC_COLD


def test_root_counts_its_own_part_and_not_its_broadcast(traced):
    root = traced.ranks[0]
    assert _cold(root, "Scatter") == [512 * KIB]
    assert _cold(root, "Bcast") == [0]
    assert _cold(root, "Sendrecv") == [128 * KIB]
    sends = root.records[root.records["call"] == CALL_IDS["Send"]]
    assert not np.any(sends["flags"] & REC_COLD)


def test_an_uncounted_record_reads_zero():
    records = np.zeros(2, dtype=RECORD_DTYPE)
    records["call"] = CALL_IDS["Recv"]
    records["req"] = [5, 5]
    records["flags"] = [0, REC_COLD]
    assert cold_bytes(records).tolist() == [0, 5]
