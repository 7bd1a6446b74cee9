"""The calls beyond point-to-point and the classic collectives, under real mpirun with
each library (tests/programs/trace_more.c): topologies with their NEIGHBORS, the
neighborhood collectives, Comm_split_type / Comm_create_group / Comm_idup,
non-blocking collectives, Alltoallw, persistent requests and MPI-IO are recorded
as calls of their own, one-sided operations with what each target received at
each fence, and the trace replays without --other-as-compute (MPI-IO as
computation, said in a warning)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from _corpus import check_predicted, replay, trace, write_model
from commchar.store import Store
from commchar.store.traces import extract_trace, traces
from commchar.trace import CALL_IDS, read_trace
from commchar.trace import format as fmt

pytestmark = pytest.mark.mpi

PROGRAM = Path(__file__).resolve().parent / "programs" / "trace_more.c"
C = CALL_IDS


@pytest.fixture(scope="module", params=["openmpi", "mpich"])
def traced(request, mpi_libraries, tmp_path_factory):
    found = {lib.name: lib for lib in mpi_libraries}
    if request.param not in found:
        pytest.fail(f"{request.param} not installed: `make setup` installs both libraries")
    work = tmp_path_factory.mktemp(f"more-{request.param}")
    binary = work / "trace_more"
    subprocess.run([found[request.param].mpicc, "-std=c11", "-O1", "-w", "-o", str(binary), str(PROGRAM)],
                   check=True, capture_output=True, timeout=120)
    db = work / "t.db"
    result = trace(db, request.param, [str(binary), str(work)], work)
    with Store(db) as store:
        (row,) = traces(store)
        directory = extract_trace(store, row["id"], work / "extracted")
    return request.param, result, read_trace(directory), db, work


def _calls(records: np.ndarray, name: str) -> np.ndarray:
    return records[records["call"] == C[name]]


def test_the_program_checks_its_results(traced):
    assert "trace_more: 2 ranks, 0 failed checks" in traced[1].stdout


def test_nothing_is_left_as_other(traced):
    summary = traced[2].summary()
    assert summary.others == {}
    for name in ("Cart_create", "Cart_sub", "Graph_create", "Dist_graph_create_adjacent",
                 "Comm_split_type", "Comm_create_group", "Comm_idup", "Neighbor_alltoall",
                 "Neighbor_allgather", "Ineighbor_alltoall", "Neighbor_allgatherv", "Ibcast",
                 "Iallreduce", "Ialltoall", "Igatherv", "Ibarrier", "Alltoallw", "Send_init",
                 "Recv_init", "File_open", "File_write_at_all", "File_read_at", "File_close",
                 "Win_allocate", "Get", "Accumulate", "Win_post", "Win_start", "Win_complete",
                 "Win_wait", "Win_free"):
        assert summary.calls[name]["count"] == 2, name  # once per rank
    assert summary.calls["Startall"]["count"] == 6 and summary.calls["Request_free"]["count"] == 4
    assert summary.calls["Win_fence"]["count"] == 6 and summary.calls["Win_lock"]["count"] == 4


def test_topologies_name_members_and_neighbors(traced):
    for position, rank in enumerate(traced[2].ranks):
        rec = rank.records
        members = rank.members()
        cart = _calls(rec, "Cart_create")[0]
        assert members[int(cart["aux"])] == [0, 1]
        neighbors = rec[(rec["call"] == fmt.NEIGHBORS) & (rec["comm"] == cart["aux"])]
        raw = neighbors.view(np.uint8).reshape(-1, fmt.RECORD_BYTES)
        # a periodic ring of 2: left and right are the other rank, both ways
        assert neighbors["tag"].tolist() == [0, 1] and neighbors["aux2"].tolist() == [2, 2]
        assert raw[:, 16:24].view("<i4").tolist() == [[1 - position] * 2] * 2
        a2a = _calls(rec, "Neighbor_alltoall")[0]
        assert (a2a["comm"], a2a["bytes"], a2a["bytes2"]) == (cart["aux"], 8, 8)
        assert tuple(_calls(rec, "Neighbor_allgather")[["bytes", "bytes2"]][0]) == (65536, 65536)
        dist = _calls(rec, "Dist_graph_create_adjacent")[0]
        dist_neighbors = rec[(rec["call"] == fmt.NEIGHBORS) & (rec["comm"] == dist["aux"])]
        assert dist_neighbors["peer"].tolist() == [1, 1]  # one source, one destination
        for name in ("Comm_split_type", "Comm_create_group", "Comm_idup"):
            made = _calls(rec, name)[0]
            assert members[int(made["aux"])] == [0, 1], name


def test_nonblocking_collectives_and_persistent_requests(traced):
    for rank in traced[2].ranks:
        rec = rank.records
        ibcast = _calls(rec, "Ibcast")[0]
        assert (ibcast["peer"], ibcast["bytes"], ibcast["req"]) == (0, 4, 0)
        assert _calls(rec, "Iallreduce")["aux"].tolist() == [1]  # MPI_SUM
        starts = _calls(rec, "Start")
        # three Startall of two requests, then two Starts
        assert len(starts) == 8 and len(set(starts["req"].tolist())) == 8
        assert sorted(set(starts["aux"].tolist())) == [C["Send_init"], C["Recv_init"]]
        assert set(starts["bytes"][starts["aux"] == C["Send_init"]].tolist()) == {8192}
        completed = set(_calls(rec, "COMPLETE")["req"].tolist())
        assert set(starts["req"].tolist()) <= completed
        assert _calls(rec, "File_write_at_all")["bytes"].tolist() == [32768]


def test_one_sided_operations_and_what_each_target_received(traced):
    for position, rank in enumerate(traced[2].ranks):
        rec = rank.records
        window = int(_calls(rec, "Win_allocate")["aux"][0])
        puts, get = _calls(rec, "Put"), _calls(rec, "Get")[0]
        # the fence epoch's Put (aux2 0) and the PSCW epoch's (aux2 2), to the other rank
        assert puts["bytes"].tolist() == [8192, 8] and puts["aux2"].tolist() == [0, 2]
        assert puts["peer"].tolist() == [1 - position] * 2 and (puts["aux"] == window).all()
        assert (get["bytes2"], get["aux2"]) == (4096, 0)
        assert _calls(rec, "Accumulate")["aux2"].tolist() == [1]
        # each fence that closes an epoch follows the RMA_IN records of what arrived in it
        fences = np.flatnonzero(rec["call"] == C["Win_fence"])
        rma_in = rec[rec["call"] == fmt.RMA_IN]
        assert len(fences) == 3 and rec["call"][fences[1] - 1] == fmt.RMA_IN
        # then the PSCW epoch: at Win_complete what this origin moved to its target (tag 1),
        # at Win_wait what the origin of the post group moved here (tag -1, as a fence's)
        complete, wait = (np.flatnonzero(rec["call"] == C[n])[0] for n in ("Win_complete", "Win_wait"))
        assert rec["call"][complete - 1] == fmt.RMA_IN and rec["tag"][complete - 1] == 1
        assert rec["call"][wait - 1] == fmt.RMA_IN and rec["tag"][wait - 1] == -1
        assert rma_in["peer"].tolist() == [1 - position] * 4
        assert rma_in[["bytes", "bytes2"]].tolist() == [(8192, 0), (0, 4096), (8, 0), (8, 0)]


def test_the_trace_replays_without_flags(traced, tmp_path):
    library, db = traced[0], traced[3]
    doc = replay(db, write_model(tmp_path / "m.json"), library)
    check_predicted(doc)
    assert any(w.startswith("MPI-IO replayed as computation") and "MPI_File_write_at_all ×2" in w
               for w in doc["warnings"])
