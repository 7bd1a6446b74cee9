"""The tracer under real mpirun, with each MPI library: an unmodified program
(tests/programs/trace_calls.c) that calls every followed function is traced
through `commchar trace`, stored, extracted, and its records checked call by
call; a crash and a hang keep what was written; an unwritable trace directory
leaves the program running untraced."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from commchar.measure.build import ensure_tracer
from commchar.store import Store
from commchar.store.traces import extract_trace, trace, traces
from commchar.trace import CALL_IDS, OTHER_NAMES, read_trace
from commchar.trace import format as fmt

pytestmark = pytest.mark.mpi

PROGRAM = Path(__file__).resolve().parent / "programs" / "trace_calls.c"
C = CALL_IDS


def commchar(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "commchar", *args], capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="module", params=["openmpi", "mpich"])
def library(request, mpi_libraries):
    found = {lib.name: lib for lib in mpi_libraries}
    if request.param not in found:
        pytest.fail(f"{request.param} not installed: `make setup` installs both libraries")
    return found[request.param]


@pytest.fixture(scope="module")
def program(library, tmp_path_factory) -> Path:
    binary = tmp_path_factory.mktemp(f"prog-{library.name}") / "trace_calls"
    subprocess.run([library.mpicc, "-std=c11", "-O1", "-o", str(binary), str(PROGRAM)],
                   check=True, capture_output=True, timeout=120)
    return binary


@pytest.fixture(scope="module")
def traced(library, program, tmp_path_factory):
    """One complete traced run, stored and extracted back to a directory."""
    work = tmp_path_factory.mktemp(f"traced-{library.name}")
    db = work / "t.db"
    result = commchar("trace", "--db", str(db), "--library", library.name, "--np", "2",
                      "--", str(program))
    assert result.returncode == 0, result.stderr
    with Store(db) as store:
        (row,) = traces(store)
        directory = extract_trace(store, row["id"], work / "extracted")
    return result, row, read_trace(directory)


def _calls(records: np.ndarray, name: str) -> np.ndarray:
    return records[records["call"] == C[name]]


def test_traced_program_prints_what_it_prints_untraced(traced, library, program):
    untraced = subprocess.run([library.mpirun, "-n", "2", str(program)], capture_output=True,
                              text=True, timeout=120,
                              env={**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1",
                                   "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    assert untraced.returncode == 0, untraced.stderr
    line = [ln for ln in untraced.stdout.splitlines() if ln.startswith("trace_calls")]
    assert line and line[0] in traced[0].stdout.splitlines()


def test_store_keeps_the_job_ranks_and_phases(traced, library):
    _, row, trace = traced
    assert row["status"] == "complete" and row["exit_status"] == 0 and row["p"] == 2
    assert row["library"] == library.name and row["wall_s"] > 0
    assert row["program"][0].endswith("trace_calls")
    assert "LD_PRELOAD" in " ".join(row["launcher_cmd"])
    assert [r["rank"] for r in row["ranks"]] == [0, 1]
    for stored, rank in zip(row["ranks"], trace.ranks):
        assert stored["finalized"] and stored["records"] == len(rank.records)
        assert stored["wall_ns"] == rank.wall_ns > 0
        assert stored["stored_bytes"] < stored["file_bytes"]  # compressed
    assert sorted(row["phases"]) == [0, 1, 2]
    assert all(ns > 0 for ns in row["phases"][1])


def test_runs_lists_the_trace(traced, tmp_path_factory):
    db = Path(traced[2].directory).parent / "t.db"
    listing = commchar("runs", "--db", str(db))
    assert listing.returncode == 0 and "complete" in listing.stdout and "traces" in listing.stdout
    shown = commchar("trace", "--db", str(db), "--show", str(traced[1]["id"]), "--json")
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["status"] == "complete" and data["summary"] == json.loads(json.dumps(
        traced[2].summary().to_dict()))


def test_headers_and_time_order(traced):
    trace = traced[2]
    assert trace.complete and trace.p == 2
    for rank in trace.ranks:
        rec = rank.records
        assert rec["call"][0] == C["Init"] and rec["call"][-1] == C["Finalize"]
        assert (rec["t_end"] >= rec["t_start"]).all()
        assert (np.diff(rec["t_start"].astype(np.int64)) >= 0).all()
        assert rank.t_init_ns == rec["t_end"][0]
        # the tracer's own work at MPI_Finalize (agreeing, measuring itself) is a MARK record
        # between the program's arrival there (the header's Finalize time) and the call
        assert rec["call"][-2] == fmt.MARK and rank.t_finalize_ns == rec["t_start"][-2]


def test_sends_in_every_mode_and_receives_with_their_actual_source_and_tag(traced):
    rank0, rank1 = (r.records for r in traced[2].ranks)
    for mode, tag in (("Send", 1), ("Bsend", 2), ("Ssend", 3), ("Rsend", 4)):
        (send,) = _calls(rank0, mode)[:1]
        assert (send["peer"], send["tag"], send["bytes"], send["comm"]) == (1, tag, 400, 0)
    recvs = _calls(rank1, "Recv")
    wild = recvs[1]  # posted with MPI_ANY_SOURCE, MPI_ANY_TAG and MPI_STATUS_IGNORE
    assert (wild["peer"], wild["tag"], wild["aux"], wild["aux2"], wild["bytes2"]) == (-2, -1, 0, 2, 400)
    for mode in ("Isend", "Ibsend", "Issend", "Irsend", "Irecv"):
        assert (_calls(rank1, mode)["flags"] & fmt.REC_NONBLOCKING).all()
    assert _calls(rank1, "Issend")["bytes"][0] == 80
    sendrecv = _calls(rank1, "Sendrecv")[0]
    assert (sendrecv["peer"], sendrecv["tag"], sendrecv["aux"], sendrecv["aux2"]) == (0, 20, 0, 20)
    assert sendrecv["bytes"] == sendrecv["bytes2"] == 400
    assert _calls(rank1, "Sendrecv_replace")["bytes2"][0] == 200
    probe = _calls(rank1, "Probe")[0]
    assert (probe["peer"], probe["aux"], probe["aux2"], probe["bytes2"]) == (-2, 0, 22, 120)
    assert _calls(rank1, "Iprobe")["aux"][-1] == 1


def test_each_message_buffers_place_in_its_page_is_recorded(traced):
    """The program prints where its buffers lie; every record of a message, and of a reduction's
    or an all-to-all's two buffers, names that place."""
    places = {}
    for line in traced[0].stdout.splitlines():
        if line.startswith("places rank "):
            words = line.split()
            places[int(words[2])] = {words[k]: int(words[k + 1]) for k in (3, 5, 7)}
    assert set(places) == {0, 1}
    for rank in traced[2].ranks:
        at, rec = places[rank.rank], rank.records
        for name, column, buffer in (("Send", 0, "out"), ("Recv", 1, "in"), ("Sendrecv", 0, "out"), ("Sendrecv", 1, "in"),
                                     ("Sendrecv_replace", 0, "big"), ("Sendrecv_replace", 1, "big"),
                                     ("Alltoall", 0, "out"), ("Alltoall", 1, "big")):
            mask = (rec["call"] == C[name]) & ((rec["flags"] & fmt.REC_ERROR) == 0)
            mask &= rec["bytes" if column == 0 else "bytes2"] > 0
            if mask.any():
                assert set(rank.places[mask, column].tolist()) == {at[buffer]}, (rank.rank, name, column)
        # a reduction places its send and its receive buffer (the program's one of a single
        # int, on the stack, aside)
        vector = (rec["call"] == C["Allreduce"]) & (rec["bytes"] > 4)
        assert vector.any() and rank.places[vector].tolist() == [[at["out"], at["in"]]] * int(vector.sum())
        irecv = rec["call"] == C["Irecv"]  # into `big` with tag 13, else into `in`
        expected = np.where(rec["tag"][irecv] == 13, at["big"], at["in"])
        assert rank.places[irecv, 1].tolist() == expected.tolist()
    # the sizes are the sizes alone
    assert _calls(traced[2].ranks[1].records, "Sendrecv")["bytes"][0] == 400


def test_every_request_completes_once_with_what_arrived(traced):
    for rank in traced[2].ranks:
        rec = rank.records
        starts = rec[(rec["flags"] & fmt.REC_NONBLOCKING) != 0]
        completes = _calls(rec, "COMPLETE")
        assert sorted(completes["req"]) == sorted(starts["req"]) and len(set(starts["req"])) == len(starts)
        by_req = {int(c["req"]): c for c in completes}
        for start in starts:
            done = by_req[int(start["req"])]
            assert done["comm"] == start["comm"]
            if start["call"] == C["Irecv"]:  # received from the peer, with the tag it sent
                assert done["aux"] == 1 - rank.rank and done["aux2"] == start["tag"]
                assert done["bytes2"] == (80 if start["tag"] == 11 else 400)
        # a COMPLETE follows its Wait/Test call directly
        follows = rec["call"][np.flatnonzero(rec["call"] == C["COMPLETE"]) - 1]
        assert set(follows) <= {C[n] for n in ("Wait", "Waitall", "Waitany", "Waitsome", "Test",
                                               "Testall", "Testany", "Testsome", "COMPLETE")}


def test_collectives_roots_bytes_and_ops(traced):
    rank0, rank1 = (r.records for r in traced[2].ranks)
    bcast = _calls(rank1, "Bcast")[0]
    assert (bcast["peer"], bcast["bytes"], bcast["bytes2"]) == (0, 400, 400)
    scatter0, scatter1 = _calls(rank0, "Scatter")[0], _calls(rank1, "Scatter")[0]
    assert (scatter0["bytes"], scatter0["bytes2"], scatter1["bytes2"]) == (80, 40, 40)
    assert _calls(rank0, "Gather")["bytes2"][0] == 80
    assert _calls(rank0, "Gatherv")["bytes2"][0] == 80
    assert tuple(_calls(rank1, "Allgather")[["bytes", "bytes2"]][0]) == (40, 80)
    assert tuple(_calls(rank1, "Alltoallv")[["bytes", "bytes2"]][0]) == (80, 80)
    ops = {name: int(_calls(rank1, name)["aux"][0]) for name in
           ("Reduce", "Allreduce", "Reduce_scatter", "Reduce_scatter_block", "Scan", "Exscan")}
    assert ops == {"Reduce": 1, "Allreduce": 2, "Reduce_scatter": 3, "Reduce_scatter_block": 4,
                   "Scan": 1, "Exscan": 5}
    assert tuple(_calls(rank1, "Reduce_scatter")[["bytes", "bytes2"]][0]) == (80, 40)
    for name in ("Barrier", "Alltoall", "Scatterv", "Allgatherv"):
        assert len(_calls(rank0, name)) >= 1 and len(_calls(rank1, name)) >= 1


def test_communicators_members_and_peers(traced):
    for rank in traced[2].ranks:
        rec = rank.records
        split, dup, created = (_calls(rec, n)[0] for n in ("Comm_split", "Comm_dup", "Comm_create"))
        members = rank.members()
        assert members[int(split["aux"])] == [1, 0]  # ordered by key = size - rank
        assert members[int(dup["aux"])] == members[int(created["aux"])] == [0, 1]
        assert split["aux2"] == 2 and len({split["aux"], dup["aux"], created["aux"]}) == 3
        send = rec[(rec["call"] == C["Send"]) & (rec["tag"] == 30)][0]
        assert send["comm"] == split["aux"] and send["peer"] == 0
        assert sorted(_calls(rec, "Comm_free")["comm"]) == sorted([split["aux"], dup["aux"], created["aux"]])


def test_failed_calls_are_flagged_and_their_arguments_left_alone(traced):
    assert "an invalid call succeeded" not in traced[0].stdout
    for rank in traced[2].ranks:
        rec = rank.records
        failed = rec[(rec["flags"] & fmt.REC_ERROR) != 0]
        assert [fmt.CALL_NAMES[int(c)] for c in failed["call"]] == ["Send", "Bcast"]
        assert failed["tag"][0] == 40 and failed["bytes"][0] == 0


def test_pcontrol_phases_and_a_nonblocking_collective(traced):
    summary = traced[2].summary()
    for rank in traced[2].ranks:
        assert _calls(rank.records, "Pcontrol")["aux"].tolist() == [1, 2, 0]
        ibarrier = _calls(rank.records, "Ibarrier")
        assert len(ibarrier) == 1 and ibarrier["req"][0] == 0
        # replayed as the blocking call where it starts: its Wait has no COMPLETE
        after = np.flatnonzero(rank.records["call"] == C["Ibarrier"])[0] + 1
        assert rank.records["call"][after] == C["Wait"]
        assert rank.records["call"][after + 1] != C["COMPLETE"]
    assert summary.others == {}
    assert sorted(summary.phases) == [0, 1, 2]


def test_a_small_buffer_streams_to_disk_with_marks(library, program, tmp_path):
    db = tmp_path / "t.db"
    result = commchar("trace", "--db", str(db), "--library", library.name, "--buffer", "64",
                      "--", str(program))
    assert result.returncode == 0, result.stderr
    with Store(db) as store:
        directory = extract_trace(store, traces(store)[0]["id"], tmp_path / "x")
    for rank in read_trace(directory).ranks:
        marks = np.flatnonzero(rank.records["call"] == C["MARK"])
        assert len(marks) >= 1
        # a flush never separates a call from its COMPLETE or MEMBERS records
        assert not np.isin(rank.records["call"][marks + 1], [C["COMPLETE"], C["MEMBERS"]]).any()


def test_crash_keeps_a_failed_partial_trace(library, program, tmp_path):
    db = tmp_path / "t.db"
    result = commchar("trace", "--db", str(db), "--library", library.name, "--",
                      str(program), "crash")
    assert result.returncode != 0
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("commchar:")]
    assert len(errors) == 1 and "failed" in errors[0] and "kept" in errors[0]
    assert "Traceback" not in result.stderr
    with Store(db) as store:
        row = traces(store)[0]
        assert row["status"] == "failed" and row["exit_status"] != 0
        directory = extract_trace(store, row["id"], tmp_path / "x")
    partial = read_trace(directory, allow_partial=True)
    crashed = partial.ranks[1]
    assert not crashed.finalized and crashed.problem.startswith("never finalized")
    assert len(_calls(crashed.records, "Testsome")) >= 1  # what it did before abort()
    assert len(_calls(crashed.records, "Sendrecv")) == 0
    with pytest.raises(Exception, match="never finalized"):
        read_trace(directory)


def test_hang_is_killed_at_the_timeout_and_recorded(library, program, tmp_path):
    db = tmp_path / "t.db"
    result = commchar("trace", "--db", str(db), "--library", library.name, "--timeout", "5",
                      "--", str(program), "hang")
    assert result.returncode != 0 and "timeout" in result.stderr
    with Store(db) as store:
        row = trace(store, 1)
    assert row["status"] == "timeout" and 5 <= row["wall_s"] < 30
    assert [r["rank"] for r in row["ranks"]] == [0, 1]
    assert not any(r["finalized"] for r in row["ranks"])
    # a loaded machine may still hold a rank in MPI_Init at the timeout; the other hung
    assert max(r["records"] for r in row["ranks"]) > 10


def test_unwritable_trace_directory_warns_once_and_runs_untraced(library, program, tmp_path):
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("")
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    tracer = str(ensure_tracer(library))
    if library.family == "openmpi":
        argv = [library.mpirun, "-np", "2", "-x", f"LD_PRELOAD={tracer}",
                "-x", f"COMMCHAR_TRACE_DIR={blocked}"]
    else:
        argv = [library.mpirun, "-n", "2", "-genv", "LD_PRELOAD", tracer,
                "-genv", "COMMCHAR_TRACE_DIR", str(blocked)]
    result = subprocess.run([*argv, str(program)], capture_output=True, text=True, timeout=120,
                            env=env)
    assert result.returncode == 0, result.stderr
    assert "trace_calls checksum" in result.stdout
    warnings = [ln for ln in result.stderr.splitlines() if ln.startswith("commchar-trace:")]
    assert len(warnings) == 1 and "cannot trace to" in warnings[0], result.stderr
    assert "no rank keeps its trace" in warnings[0]


def _heap_places(stdout: str) -> dict[int, list[int]]:
    # the launcher may run the ranks' lines together
    return {int(rank): [int(p) for p in places.split()]
            for rank, places in re.findall(r"heap_places rank (\d+):((?: \d+)+)", stdout)}


@pytest.mark.parametrize("library", ["mpich"], indirect=True)
def test_a_traced_programs_buffers_lie_where_they_lie_untraced(library, tmp_path):
    """The tracer takes its memory from pages of its own and makes no MPI call of its own
    before MPI_Finalize, so the program's heap, and where its buffers lie in their pages
    (which decides what their copies cost), is the untraced run's.  MPICH: its heap is the
    same from run to run (Open MPI's is not, whatever is preloaded)."""
    mpich = library
    binary = tmp_path / "heap_places"
    subprocess.run([mpich.mpicc, "-std=c11", "-O1", "-o", str(binary),
                    str(PROGRAM.parent / "heap_places.c")], check=True, capture_output=True,
                   timeout=120)
    untraced = subprocess.run([mpich.mpirun, "-n", "2", str(binary)], capture_output=True,
                              text=True, timeout=120)
    assert untraced.returncode == 0, untraced.stderr
    traced = commchar("trace", "--db", str(tmp_path / "t.db"), "--library", mpich.name,
                      "--np", "2", "--", str(binary))
    assert traced.returncode == 0, traced.stderr
    places = _heap_places(untraced.stdout)
    assert len(places) == 2 and _heap_places(traced.stdout) == places


def test_the_tracers_records_take_no_page_fault_between_the_programs_calls(library, tmp_path):
    """The record buffer's pages are faulted in when it is mapped: a first write to a
    fresh page costs microseconds, and 4096 records (a full buffer) fill 64 pages, whose
    faults would lie between the program's calls, where the replay sees computation."""
    binary = tmp_path / "trace_faults"
    subprocess.run([library.mpicc, "-std=c11", "-O1", "-o", str(binary),
                    str(PROGRAM.parent / "trace_faults.c")], check=True, capture_output=True,
                   timeout=120)
    traced = commchar("trace", "--db", str(tmp_path / "t.db"), "--library", library.name,
                      "--np", "2", "--", str(binary))
    assert traced.returncode == 0, traced.stderr
    faults = [int(f) for f in re.findall(r"trace_faults rank \d+: (\d+)", traced.stdout)]
    assert len(faults) == 2 and max(faults) < 8, faults


def test_each_send_says_how_much_of_its_buffer_the_program_wrote(library, tmp_path):
    """tests/programs/written_sends.c changes its send buffers in known ways between sends:
    the first send of a buffer and an unchanged one say nothing (0), a changed first or last
    byte the ends, a buffer changed throughout the whole, its first half 5 (2 + round(5 x 7
    of the 14 words between the ends)); a strided type is not read; a 64-byte buffer's ends
    are its whole."""
    binary = tmp_path / "written_sends"
    subprocess.run([library.mpicc, "-std=c11", "-O1", "-o", str(binary),
                    str(PROGRAM.parent / "written_sends.c")], check=True, capture_output=True,
                   timeout=120)
    db = tmp_path / "t.db"
    result = commchar("trace", "--db", str(db), "--library", library.name, "--np", "2", "--", str(binary))
    assert result.returncode == 0, result.stderr
    with Store(db) as store:
        (row,) = traces(store)
        ranks = read_trace(extract_trace(store, row["id"], tmp_path / "extracted")).ranks
    sender = ranks[0]
    sends = sender.records["call"] == C["Send"]
    assert sender.records["bytes"][sends].tolist() == [4096] * 8 + [128] * 2 + [64] * 4
    ends, whole = fmt.WRITTEN_ENDS, fmt.WRITTEN_WHOLE
    assert sender.written[sends].tolist() == [0, 0, ends, ends, whole, 5, 0, 0, 0, 0, 0, 0, whole, whole]
    assert sender.places[sends, 0].min() >= 0  # the places are kept beside the codes
    assert not ranks[1].written.any()  # receives carry none


def test_a_store_without_trace_tables_lists_none(tmp_path):
    with Store(tmp_path / "old.db") as store:
        assert traces(store) == []
    with sqlite3.connect(tmp_path / "old.db") as db:
        assert db.execute("SELECT name FROM sqlite_master WHERE name = 'traces'").fetchone() is None


def test_the_library_wraps_every_call_the_format_names(library):
    exported = subprocess.run(["nm", "-D", "--defined-only", str(ensure_tracer(library))],
                              capture_output=True, text=True, check=True).stdout
    wrapped = {line.split()[-1][4:] for line in exported.splitlines() if " T MPI_" in line}
    followed = {name for call, name in fmt.CALL_NAMES.items()
                if call not in fmt.PSEUDO_CALLS and call not in (fmt.OTHER, fmt.TEST_RUN)}  # TEST_RUN: several Test* calls
    assert followed | set(OTHER_NAMES) | {"Abort", "Init_thread"} == wrapped
