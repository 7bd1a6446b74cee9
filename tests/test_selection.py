"""Which algorithm each library runs (commchar.simulate.selection): known decisions, each
checked against the rule it comes from, overrides, and one-line errors."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from commchar.errors import InputError, UsageError
from commchar.simulate.selection import LIBRARIES, OPERATIONS, choose, decide, load_overrides, rules_for

KiB, MiB = 1024, 1024 * 1024


@pytest.mark.parametrize("op, n, p, algorithm, library_algorithm", [
    # ompi_coll_tuned_allreduce_intra_dec_fixed, p < 4: < 8 ring, < 4096 recursive doubling,
    # < 8192 ring, < 16384 rd, < 65536 ring, < 262144 segmented ring, else rabenseifner
    ("allreduce", 4, 2, "allreduce:ring", "ring"),
    ("allreduce", 8, 2, "allreduce:recursive_doubling", "recursive_doubling"),
    ("allreduce", 64 * KiB, 2, "allreduce:ring", "segmented_ring"),
    ("allreduce", MiB, 2, "allreduce:rabenseifner", "rabenseifner"),
    # ... p < 8: >= 8192 rabenseifner, folded at p = 6; p < 16: < 8192 recursive doubling, folded
    ("allreduce", MiB, 6, "allreduce:rabenseifner", "rabenseifner"),
    ("allreduce", 16, 12, "allreduce:recursive_doubling", "recursive_doubling"),
    # bcast, p < 4: < 32768 basic linear; p < 32: >= 1 MiB scatter_allgather
    ("bcast", KiB, 2, "bcast:linear", "basic_linear"),
    ("bcast", MiB, 16, "bcast:scatter_allgather", "scatter_allgather"),
    # alltoall, p == 2 on scount: < 256 pairwise, < 4096 two_proc
    ("alltoall", 100, 2, "alltoall:pairwise", "pairwise"),
    ("alltoall", 1000, 2, "alltoall:pairwise", "two_proc"),
    # allgather on scount = n/p: p == 2 two_proc; p < 32 recursive doubling
    ("allgather", 64 * KiB, 2, "allgather:recursive_doubling", "two_proc"),
    ("allgather", 64 * KiB, 8, "allgather:recursive_doubling", "recursive_doubling"),
    # ... which at p = 12 calls Bruck's (ompi_coll_base_allgather_intra_recursivedoubling)
    ("allgather", 12288, 12, "allgather:bruck", "bruck"),
    ("allgather", 3 * KiB, 3, "allgather:bruck", "bruck"),
    # p < 16 on rcount: < 32 recursive halving (folded at p = 12), < 128 butterfly
    ("reduce_scatter", 12 * 16, 12, "reduce_scatter:recursive_halving", "recursive_halving"),
    # reduce_scatter_block on rcount = n/p, p < 4: < 4 rd, < 8 butterfly, < 16 recursive halving
    ("reduce_scatter", 2 * 12, 2, "reduce_scatter:recursive_halving", "recursive_halving"),
    # barrier p < 4: recursive doubling; scan: coll/basic's linear scan
    ("barrier", 0, 2, "barrier:dissemination", "recursive_doubling"),
    ("scan", 8, 2, "scan:linear", "basic_linear"),
    ("scan", MiB, 7, "scan:linear", "basic_linear"),
    # gather, p < 4 on the per-rank block: < 2 linear_sync, < 4 basic linear, < 32 KiB binomial
    ("gather", 2, 2, "gather:linear_sync", "linear_sync"),
    ("gather", 4, 2, "gather:linear", "basic_linear"),
    ("gather", 1024, 2, "gather:binomial", "binomial"),
])
def test_open_mpi_tuned_decisions(op, n, p, algorithm, library_algorithm):
    choice = decide("openmpi", op, n, p)
    assert (choice.algorithm, choice.library_algorithm) == (algorithm, library_algorithm)
    assert "coll_tuned_decision_fixed.c" in choice.source or "coll_basic_scan.c" in choice.source


@pytest.mark.parametrize("op, n, p, nodes, algorithm, library_algorithm", [
    # one node: ch4 generic.json sends allreduce/bcast/reduce/barrier to POSIX release_gather ...
    ("allreduce", 8, 2, 1, "allreduce:reduce_bcast", "MPIDI_POSIX_mpi_allreduce_release_gather"),
    ("bcast", MiB, 2, 1, "bcast:binomial", "MPIDI_POSIX_mpi_bcast_release_gather"),
    ("bcast", MiB, 6, 1, "bcast:binomial", "MPIDI_POSIX_mpi_bcast_release_gather"),
    # ... except a bcast of 8 or more ranks, which composition gamma hands to the MPIR tree
    # from 12 KiB at other p, from 512 KiB at powers of two
    ("bcast", 12 * KiB - 1, 12, 1, "bcast:binomial", "MPIDI_POSIX_mpi_bcast_release_gather"),
    ("bcast", 12 * KiB, 12, 1, "bcast:binomial", "MPIR_Bcast_intra_binomial"),
    ("bcast", 16 * KiB, 12, 1, "bcast:scatter_allgather", "MPIR_Bcast_intra_scatter_ring_allgather"),
    ("bcast", 256 * KiB, 16, 1, "bcast:binomial", "MPIDI_POSIX_mpi_bcast_release_gather"),
    ("bcast", 512 * KiB, 16, 1, "bcast:scatter_allgather",
     "MPIR_Bcast_intra_scatter_recursive_doubling_allgather"),
    ("bcast", MiB, 8, 1, "bcast:scatter_allgather", "MPIR_Bcast_intra_scatter_ring_allgather"),
    # several nodes: the MPIR tree (mpir/generic.json): allreduce rd up to 8 B, then
    # reduce-scatter + allgather for MPI_SUM with count >= pof2
    ("allreduce", 8, 4, 2, "allreduce:recursive_doubling", "MPIR_Allreduce_intra_recursive_doubling"),
    ("allreduce", 64 * KiB, 4, 2, "allreduce:rabenseifner", "MPIR_Allreduce_intra_reduce_scatter_allgather"),
    ("bcast", 64 * KiB, 16, 2, "bcast:scatter_allgather",
     "MPIR_Bcast_intra_scatter_recursive_doubling_allgather"),
    # allgather: 2^k ranks: rd below 512 KiB total, else ring; other p: Bruck below 80 KiB
    ("allgather", 64 * KiB, 2, 1, "allgather:recursive_doubling", "MPIR_Allgather_intra_recursive_doubling"),
    ("allgather", MiB, 2, 1, "allgather:ring", "MPIR_Allgather_intra_ring"),
    ("allgather", KiB, 3, 1, "allgather:bruck", "MPIR_Allgather_intra_brucks"),
    # any p: recursive doubling, reduce-scatter + allgather and recursive halving fold the extra ranks
    ("allreduce", 8, 12, 2, "allreduce:recursive_doubling", "MPIR_Allreduce_intra_recursive_doubling"),
    ("allreduce", MiB, 24, 2, "allreduce:rabenseifner", "MPIR_Allreduce_intra_reduce_scatter_allgather"),
    ("reduce_scatter", 12 * KiB, 12, 1, "reduce_scatter:recursive_halving",
     "MPIR_Reduce_scatter_block_intra_recursive_halving"),
    ("reduce_scatter", 12 * MiB, 12, 1, "reduce_scatter:pairwise", "MPIR_Reduce_scatter_block_intra_pairwise"),
    # alltoall (comm_size < 8): scattered up to 32 KiB per peer, then pairwise
    ("alltoall", 32 * KiB, 2, 1, "alltoall:direct", "MPIR_Alltoall_intra_scattered"),
    ("alltoall", 64 * KiB, 2, 1, "alltoall:pairwise", "MPIR_Alltoall_intra_pairwise"),
])
def test_mpich_decisions(op, n, p, nodes, algorithm, library_algorithm):
    choice = decide("mpich", op, n, p, nodes=nodes)
    assert (choice.algorithm, choice.library_algorithm) == (algorithm, library_algorithm)
    assert choice.source.startswith("MPICH v4.0.2 maint/tuning/coll/")


@pytest.mark.usefixtures("simulator")
def test_every_choice_is_a_simulator_algorithm():
    from commchar.simulate import list_collectives

    known = set(list_collectives())
    for library in LIBRARIES:
        for op in OPERATIONS:
            for p in (2, 3, 4, 8, 64, 1000, 5000):
                for n in [0] + [4 ** k for k in range(12)]:
                    assert choose(library, op, n * p, p) in known, (library, op, n, p)


@pytest.mark.parametrize("library, op, n, p", [
    ("openmpi", "allreduce", 16, 12), ("openmpi", "allgather", 12288, 12), ("mpich", "allreduce", 8, 3),
    ("mpich", "reduce_scatter", 24 * KiB, 24), ("mpich", "reduce_scatter", 24 * MiB, 24),
])
def test_the_libraries_own_algorithm_is_simulated_off_powers_of_two(library, op, n, p):
    choice = decide(library, op, n, p, nodes=2)
    assert choice.exact and not choice.overridden, choice


def test_open_mpis_folded_rabenseifner_is_the_nearest_schedule():
    """Open MPI folds by exchanging half vectors, the simulator (and MPICH) by handing one over."""
    assert decide("openmpi", "allreduce", MiB, 8).exact
    folded = decide("openmpi", "allreduce", MiB, 12)
    assert folded.algorithm == "allreduce:rabenseifner" and not folded.exact


@pytest.mark.usefixtures("simulator")
def test_every_choice_simulates_at_any_rank_count():
    """What each library runs at p = 3, 12, 24 (one node and several) goes through the simulator."""
    from commchar.simulate.binary import run_simulator

    runs = {(choose(library, op, n, p, nodes=nodes), n, p)
            for library in LIBRARIES for op in OPERATIONS for p in (3, 12, 24) for nodes in (1, 2)
            for n in (8 * p, 1536 * p, 256 * KiB * p)}
    assert {alg for alg, _, _ in runs} >= {"allreduce:recursive_doubling", "allreduce:rabenseifner",
                                           "allgather:bruck", "reduce_scatter:recursive_halving",
                                           "reduce_scatter:pairwise"}
    for algorithm, n, p in sorted(runs):
        result = run_simulator(["--collective", algorithm, "--p", str(p), "--n", str(n)])
        assert result["makespan"] > 0, (algorithm, n, p)


def test_overrides_replace_a_rule(tmp_path: Path):
    path = tmp_path / "sel.json"
    path.write_text(json.dumps({"allreduce": "ring", "mpich": {"bcast": "bcast:linear"}}))
    overrides = load_overrides(path)
    forced = decide("openmpi", "allreduce", 8, 2, overrides=overrides)
    assert forced.algorithm == "allreduce:ring" and forced.overridden
    assert choose("mpich", "bcast", 8, 2, overrides=overrides) == "bcast:linear"
    assert choose("openmpi", "bcast", KiB, 2, overrides=overrides) == "bcast:linear"  # the rule: basic_linear
    assert choose("openmpi", "bcast", 64 * KiB, 2, overrides=overrides) == "bcast:binomial"


@pytest.mark.parametrize("text, needle", [
    ("[1]", "must be a JSON object"),
    ('{"allreduce": "bcast:linear"}', "cannot be simulated"),
    ('{"foo": "ring"}', "expected an operation"),
    ("{", "not valid JSON"),
])
def test_bad_overrides_are_input_errors(tmp_path: Path, text, needle):
    path = tmp_path / "sel.json"
    path.write_text(text)
    with pytest.raises(InputError, match=needle):
        load_overrides(path)


def test_a_second_installation_and_a_split_library_follow_their_familys_rules():
    """A second MPICH on PATH is found as 'mpich-default'; points told apart by locality or
    cache are fitted as 'mpich off-node' or 'mpich cache-cold': each is MPICH's library."""
    for name in ("mpich-default", "mpich off-node", "mpich off-node cache-cold", "MPICH-default"):
        assert rules_for(name) == "mpich"
        assert decide(name, "allreduce", 64, 12) == replace(decide("mpich", "allreduce", 64, 12),
                                                            library=name.lower())
    assert rules_for("openmpi-default") == "openmpi"
    assert choose("openmpi-default", "bcast", 1 << 20, 8) == choose("openmpi", "bcast", 1 << 20, 8)
    for name in ("mpi", "lam", "am", "pvm", "mpichx"):
        assert rules_for(name) is None


def test_unknown_library_or_operation_is_a_usage_error():
    with pytest.raises(UsageError, match="no selection rules for library"):
        choose("lam", "bcast", 8, 2)
    with pytest.raises(UsageError, match="no selection rules for operation"):
        choose("mpich", "exscan", 8, 2)


@pytest.mark.usefixtures("simulator")
@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("p", [12, 24])
def test_a_program_on_twelve_or_twenty_four_ranks_replays_its_allreduce_expanded(tmp_path: Path, library, p):
    """The replay expands each collective into the library's choice at the trace's p."""
    from commchar.simulate.replay import ReplayRequest, replay
    from commchar.trace.synthetic import ALLREDUCE_BYTES, exchange_program

    model = tmp_path / "m.json"
    model.write_text(json.dumps({"format": "commchar-model", "version": 1, "libraries": {library: {
        "operations": {}, "loggp": {"L": 1.0, "o_s": 0.5, "o_r": 0.5, "g": 0.5, "G": 0.001, "S": 65536}}}}))
    exchange_program(tmp_path / "trace", p=p, iterations=8, allreduce_every=2)
    doc = replay(ReplayRequest(tmp_path / "trace", str(model), library, collectives="expanded"))
    (row,) = doc["signatures"]
    assert (row["call"], row["p"], row["n"], row["mode"]) == ("allreduce", p, ALLREDUCE_BYTES, "expanded")
    assert row["algorithm"] == choose(library, "allreduce", ALLREDUCE_BYTES, p)
    assert doc["predictions"]["loggps"]["makespan"] > 0
