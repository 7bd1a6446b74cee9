"""Which collective algorithm an MPI library runs at (n, p), as a simulator algorithm.

`choose(library, op, n_bytes, p)` returns the name of the simulator's
algorithm (`commchar simulate --list`) that stands for what the library
runs; `decide` returns the whole `Choice`: the library's own algorithm, the
rule's source, and whether the simulator's schedule is that algorithm or the
nearest one it has. `n_bytes` follows commchar's meaning of n
(docs/kernel-protocol.md: the whole vector for bcast and reductions, the
whole gathered buffer for scatter, gather and allgather, the block per peer
for alltoall); each rule converts it to the size the library decides on.

The rules are written here as tables read from each library's source
(nothing is copied): for every operation, the communicator-size classes in
order, each with its message-size thresholds. They cover commutative
reductions (every reduction commchar measures is commutative).

- Open MPI 4.1 (coll/tuned, the component that runs by default: priority 30,
  while coll/sm, han and adapt have priority 0): the fixed decision rules of
  ompi/mca/coll/tuned/coll_tuned_decision_fixed.c (v4.1.4), functions
  ompi_coll_tuned_<op>_intra_dec_fixed. Scan is not in tuned; coll/basic's
  linear scan runs (ompi/mca/coll/basic/coll_basic_scan.c).
- MPICH 4.0 (ch4, Debian's ch4:ucx build, which includes the POSIX shared-
  memory module): the ch4 selection tree maint/tuning/coll/ch4/generic.json
  sends allreduce, bcast, reduce and barrier of a communicator inside one node
  to the POSIX module (maint/tuning/coll/ch4/posix_generic.json:
  release_gather, src/mpid/ch4/shm/posix/posix_coll_release_gather.h) once
  MPIR_CVAR_POSIX_NUM_COLLS_THRESHOLD (5) calls have been made, except a bcast
  of 8 or more ranks from 12 KiB (512 KiB at a power of two), which the tree's
  composition gamma hands to the netmod; that, and everything else, goes through
  the netmod to the MPIR tree maint/tuning/coll/mpir/generic.json (v4.0.2; the
  ch4 and MPIR trees of bcast, allreduce, reduce and barrier are the same in
  v5.0.1). All ranks are assumed on one
  node (the machine commchar measured); `nodes > 1` follows the trees'
  multi-node branches.

Every rule holds at any p, as the libraries' own code does: at a p that is not
a power of two the simulator's recursive doubling, recursive halving and
Rabenseifner schedules fold the extra ranks in the libraries' way (the first
2r ranks pair up, the even one of each pair hands its vector to the odd one,
the 2^floor(log2 p) survivors run the algorithm, the result goes back), and
Open MPI's recursive doubling allgather runs Bruck's algorithm instead, as
the library itself does there. Open MPI's Rabenseifner folds with an exchange
of half vectors where the simulator (and MPICH) hand over the whole vector:
that choice is marked as the nearest schedule, not the same one.

Overrides: a JSON object `{"openmpi": {"allreduce": "allreduce:ring"}}` (or
`{"allreduce": "allreduce:ring"}` for every library) replaces the rule for an
operation; `load_overrides(path)` reads one. `commchar simulate
--show-selection` prints the table.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from commchar.errors import InputError, UsageError
from commchar.store.locality import split_label

LIBRARIES = ("openmpi", "mpich")
OPERATIONS = ("allgather", "allreduce", "alltoall", "barrier", "bcast", "gather", "reduce",
              "reduce_scatter", "scan", "scatter")

_OMPI_SOURCE = "Open MPI v4.1.4 ompi/mca/coll/tuned/coll_tuned_decision_fixed.c"
_MPICH_CH4 = "MPICH v4.0.2 maint/tuning/coll/ch4/generic.json"
_MPICH_POSIX = "MPICH v4.0.2 maint/tuning/coll/ch4/posix_generic.json (release_gather)"
_MPICH_MPIR = "MPICH v4.0.2 maint/tuning/coll/mpir/generic.json"


@dataclass(frozen=True)
class Choice:
    """What a library runs for one call, and the simulator algorithm standing for it."""

    library: str
    op: str
    n_bytes: int
    p: int
    algorithm: str
    library_algorithm: str
    exact: bool
    source: str
    overridden: bool = False


# ---- Open MPI 4.1: coll/tuned fixed decisions ----------------------------------
#
# Per operation: the algorithm numbers of the function's comment block, each
# with the simulator algorithm standing for it and whether that is the same
# schedule (True) or the nearest one (False); then the communicator-size
# classes: (p below which the class applies, or None for the rest,
# ((size below which, algorithm number), ...), algorithm number otherwise).
# `size` is what the function decides on: the whole vector for bcast, reduce
# and allreduce; the per-rank block (scount, rcount) for the others.

_OMPI_ALGORITHMS: dict[str, dict[int, tuple[str, str, bool]]] = {
    "allreduce": {1: ("basic_linear", "allreduce:reduce_bcast", False),
                  2: ("nonoverlapping", "allreduce:reduce_bcast", False),
                  3: ("recursive_doubling", "allreduce:recursive_doubling", True),
                  4: ("ring", "allreduce:ring", True),
                  5: ("segmented_ring", "allreduce:ring", False),
                  6: ("rabenseifner", "allreduce:rabenseifner", True)},
    "alltoall": {1: ("linear", "alltoall:direct", True),
                 2: ("pairwise", "alltoall:pairwise", True),
                 3: ("modified_bruck", "alltoall:pairwise", False),
                 4: ("linear_sync", "alltoall:direct", False),
                 5: ("two_proc", "alltoall:pairwise", True)},
    "barrier": {1: ("linear", "barrier:dissemination", False),
                2: ("double_ring", "barrier:dissemination", False),
                3: ("recursive_doubling", "barrier:dissemination", False),
                4: ("bruck", "barrier:dissemination", True),
                5: ("two_proc", "barrier:dissemination", True),
                6: ("tree", "barrier:dissemination", False)},
    "bcast": {1: ("basic_linear", "bcast:linear", True),
              2: ("chain", "bcast:linear", False),
              3: ("pipeline", "bcast:linear", False),
              4: ("split_binary_tree", "bcast:binomial", False),
              5: ("binary_tree", "bcast:binomial", False),
              6: ("binomial", "bcast:binomial", True),
              7: ("knomial", "bcast:binomial", False),
              8: ("scatter_allgather", "bcast:scatter_allgather", True),
              9: ("scatter_allgather_ring", "bcast:scatter_allgather", False)},
    "reduce": {1: ("linear", "reduce:binomial", False),
               2: ("chain", "reduce:binomial", False),
               3: ("pipeline", "reduce:binomial", False),
               4: ("binary", "reduce:binomial", False),
               5: ("binomial", "reduce:binomial", True),
               6: ("in-order_binary", "reduce:binomial", False),
               7: ("rabenseifner", "reduce:binomial", False)},
    "reduce_scatter": {1: ("basic_linear", "reduce_scatter:recursive_halving", False),
                       2: ("recursive_doubling", "reduce_scatter:recursive_halving", False),
                       3: ("recursive_halving", "reduce_scatter:recursive_halving", True),
                       4: ("butterfly", "reduce_scatter:recursive_halving", False)},
    "allgather": {1: ("linear", "allgather:direct", False),
                  2: ("bruck", "allgather:bruck", True),
                  3: ("recursive_doubling", "allgather:recursive_doubling", True),
                  4: ("ring", "allgather:ring", True),
                  5: ("neighbor", "allgather:ring", False),
                  6: ("two_proc", "allgather:recursive_doubling", True)},
    "gather": {1: ("basic_linear", "gather:linear", True),
               2: ("binomial", "gather:binomial", True),
               3: ("linear_sync", "gather:linear_sync", True)},
    "scatter": {1: ("basic_linear", "scatter:linear", True),
                2: ("binomial", "scatter:binomial", True),
                3: ("linear_nb", "scatter:linear", True)},
}

_Classes = tuple[tuple[int | None, tuple[tuple[int, int], ...], int], ...]

_OMPI_RULES: dict[str, tuple[str, _Classes]] = {
    # (function, classes); every class: (p below, ((size below, alg), ...), alg otherwise)
    "allreduce": ("ompi_coll_tuned_allreduce_intra_dec_fixed (commutative op)", (
        (4, ((8, 4), (4096, 3), (8192, 4), (16384, 3), (65536, 4), (262144, 5)), 6),
        (8, ((16, 4), (8192, 3)), 6),
        (16, ((8192, 3),), 6),
        (32, ((64, 5), (4096, 3)), 6),
        (64, ((128, 5),), 6),
        (128, ((262144, 3),), 6),
        (256, ((131072, 2), (262144, 3)), 6),
        (512, ((4096, 2),), 6),
        (2048, ((2048, 2), (16384, 3)), 6),
        (4096, ((2048, 2), (4096, 5), (16384, 3)), 6),
        (None, ((2048, 2), (16384, 5), (32768, 3)), 6))),
    "alltoall": ("ompi_coll_tuned_alltoall_intra_dec_fixed (size: scount bytes)", (
        (3, ((2, 2), (4, 5), (16, 2), (64, 5), (256, 2), (4096, 5), (32768, 2), (262144, 4),
             (1048576, 5)), 2),
        (8, ((8192, 4), (16384, 1), (65536, 4), (524288, 1), (1048576, 2)), 1),
        (16, ((262144, 4),), 1),
        (32, ((4, 4), (512, 3), (8192, 4), (32768, 1), (262144, 4), (524288, 1)), 4),
        (64, ((512, 3), (524288, 1)), 4),
        (128, ((1024, 3), (2048, 1), (4096, 4), (262144, 1)), 2),
        (256, ((1024, 3), (2048, 4), (262144, 1)), 2),
        (512, ((1024, 3), (8192, 4), (32768, 1)), 2),
        (1024, ((512, 3), (8192, 4), (16384, 1), (131072, 4), (262144, 1)), 2),
        (2048, ((512, 3), (1024, 4), (2048, 1), (16384, 4), (262144, 1)), 4),
        (4096, ((1024, 3), (4096, 4), (8192, 1), (131072, 4)), 1),
        (None, ((2048, 3), (8192, 4), (16384, 1), (32768, 4), (65536, 1)), 4))),
    "barrier": ("ompi_coll_tuned_barrier_intra_dec_fixed", (
        (4, (), 3), (8, (), 1), (64, (), 3), (256, (), 4), (512, (), 6), (1024, (), 4),
        (4096, (), 6), (None, (), 4))),
    "bcast": ("ompi_coll_tuned_bcast_intra_dec_fixed", (
        (4, ((32, 3), (256, 5), (512, 3), (1024, 7), (32768, 1), (131072, 5), (262144, 2),
             (524288, 1), (1048576, 6)), 5),
        (8, ((64, 5), (128, 6), (2048, 5), (8192, 6), (1048576, 1)), 2),
        (16, ((8, 7), (64, 5), (4096, 7), (16384, 5), (32768, 6)), 1),
        (32, ((4096, 7), (1048576, 6)), 8),
        (64, ((2048, 6),), 7),
        (128, (), 7),
        (256, ((2, 6), (16384, 5), (32768, 1), (65536, 5)), 7),
        (1024, ((16384, 7), (32768, 4)), 7),
        (2048, ((524288, 7),), 8),
        (4096, ((262144, 7),), 8),
        (None, ((8192, 7), (16384, 5), (262144, 7)), 8))),
    "reduce": ("ompi_coll_tuned_reduce_intra_dec_fixed (commutative op)", (
        (4, ((8, 7), (16, 4), (32, 3), (262144, 1), (524288, 3), (1048576, 2)), 3),
        (8, ((4096, 4), (65536, 2), (262144, 5), (524288, 1), (1048576, 5)), 1),
        (16, ((8192, 4),), 5),
        (32, ((4096, 4),), 5),
        (256, (), 5),
        (512, ((8192, 5), (16384, 6)), 5),
        (2048, (), 5),
        (4096, ((512, 5), (1024, 6), (8192, 5), (16384, 6)), 5),
        (None, ((16, 5), (32, 6), (1024, 5), (2048, 6), (8192, 5), (16384, 6)), 5))),
    # the kernel calls MPI_Reduce_scatter_block: the _block decision, on rcount bytes
    "reduce_scatter": ("ompi_coll_tuned_reduce_scatter_block_intra_dec_fixed (commutative op)", (
        (4, ((4, 2), (8, 4), (16, 3), (128, 4), (256, 3), (4096, 4), (8192, 3), (131072, 4)), 1),
        (8, ((8, 3), (32, 2), (256, 4), (8192, 3), (16384, 4), (1048576, 3)), 1),
        (16, ((4, 1), (32, 3), (128, 4), (524288, 3), (4194304, 1)), 4),
        (32, ((32, 1), (524288, 3), (2097152, 1), (4194304, 3)), 4),
        (None, ((4, 3), (16, 1), (65536, 4), (262144, 1)), 4))),
    "allgather": ("ompi_coll_tuned_allgather_intra_dec_fixed (size: scount bytes)", (
        (3, (), 6),
        (32, (), 3),
        (64, ((1024, 3), (65536, 5)), 4),
        (128, ((512, 3), (65536, 5)), 4),
        (256, ((512, 3), (131072, 5), (524288, 4), (1048576, 5)), 4),
        (512, ((32, 3), (128, 2), (1024, 3), (131072, 5), (524288, 4), (1048576, 5)), 4),
        (1024, ((64, 3), (256, 2), (2048, 3)), 5),
        (2048, ((4, 3), (8, 2), (16, 3), (32, 2), (256, 3), (512, 2), (4096, 3)), 5),
        (4096, ((32, 2), (128, 3), (512, 2), (4096, 3)), 5),
        (None, ((2, 3), (8, 2), (16, 3), (512, 2), (4096, 3)), 5))),
    "gather": ("ompi_coll_tuned_gather_intra_dec_fixed (size: the per-rank block)", (
        (4, ((2, 3), (4, 1), (32768, 2), (65536, 1), (131072, 2)), 3),
        (8, ((1024, 2), (8192, 1), (32768, 2), (262144, 1)), 3),
        (256, (), 2),
        (512, ((2048, 2), (8192, 1)), 2),
        (None, (), 2))),
    "scatter": ("ompi_coll_tuned_scatter_intra_dec_fixed (size: the per-rank block)", (
        (4, ((2, 3), (131072, 1), (262144, 3)), 1),
        (8, ((2048, 2), (4096, 1), (8192, 2), (32768, 1), (1048576, 3)), 1),
        (16, ((16384, 2), (1048576, 3)), 1),
        (32, ((16384, 2), (32768, 1)), 3),
        (64, ((512, 2), (8192, 3), (16384, 2)), 3),
        (None, ((512, 2),), 3))),
}

# the size each rule decides on, from commchar's n
_WHOLE = ("allreduce", "bcast", "reduce", "barrier", "scan")


def _decided_size(op: str, n: int, p: int) -> int:
    if op in _WHOLE or op == "alltoall":
        return n
    return n // p  # scatter, gather, allgather, reduce_scatter: the per-rank block


def _class_rule(classes: _Classes, size: int, p: int) -> int:
    for below_p, thresholds, otherwise in classes:
        if below_p is None or p < below_p:
            for below, alg in thresholds:
                if size < below:
                    return alg
            return otherwise
    raise AssertionError("the last class has no bound")


def _openmpi(op: str, n: int, p: int) -> tuple[str, str, bool, str]:
    if op == "scan":
        return ("basic_linear", "scan:linear", True,
                "Open MPI v4.1.4 ompi/mca/coll/basic/coll_basic_scan.c (tuned has no scan)")
    function, classes = _OMPI_RULES[op]
    number = _class_rule(classes, _decided_size(op, n, p), p)
    name, algorithm, exact = _OMPI_ALGORITHMS[op][number]
    if not _pow2(p):
        if algorithm == "allgather:recursive_doubling" and p > 2:
            # ompi_coll_base_allgather_intra_recursivedoubling calls Bruck's at such p
            name, algorithm = "bruck", "allgather:bruck"
        elif algorithm == "allreduce:rabenseifner":
            exact = False  # the library's fold exchanges half vectors; the simulator's hands over one
    return name, algorithm, exact, f"{_OMPI_SOURCE}: {function}"


# ---- MPICH 4.0: ch4 tree, then POSIX release_gather or the MPIR tree ----------

def _pow2(p: int) -> bool:
    return p > 0 and p & (p - 1) == 0


def _mpich_bcast_through_netmod(n: int, p: int) -> bool:
    """ch4 generic.json's bcast on a communicator whose ranks share a node: from 8 ranks,
    composition gamma (the netmod's bcast on the whole communicator, which runs the MPIR
    tree) from 512 KiB at a power of two and from 12 KiB at any other p; below, and under
    8 ranks, alpha and beta (the POSIX module's release_gather on the node's ranks)."""
    if p < 8:
        return False
    return n >= (524288 if _pow2(p) else 12288)


def _mpich(op: str, n: int, p: int, nodes: int) -> tuple[str, str, bool, str]:
    one_node = nodes <= 1
    if op in ("allreduce", "bcast", "reduce", "barrier") and one_node and p > 1 \
            and not (op == "bcast" and _mpich_bcast_through_netmod(n, p)):
        # release_gather: ranks write into (gather) and read from (release) one shared
        # buffer along a k-ary tree; the nearest simulator schedules are these
        nearest = {"allreduce": "allreduce:reduce_bcast", "bcast": "bcast:binomial", "reduce": "reduce:binomial",
                   "barrier": "barrier:dissemination"}[op]
        return (f"MPIDI_POSIX_mpi_{op}_release_gather", nearest, False,
                f"{_MPICH_CH4} -> {_MPICH_POSIX}")
    if op == "bcast":
        source = f"{_MPICH_CH4} (gamma) -> {_MPICH_MPIR}" if one_node else _MPICH_MPIR
        if n <= 12288 or p < 8:
            return "MPIR_Bcast_intra_binomial", "bcast:binomial", True, source
        if _pow2(p) and n <= 524288:
            return ("MPIR_Bcast_intra_scatter_recursive_doubling_allgather", "bcast:scatter_allgather",
                    False, source)
        return "MPIR_Bcast_intra_scatter_ring_allgather", "bcast:scatter_allgather", True, source
    if op == "allreduce":
        # built-in op (MPI_SUM): recursive doubling up to 8 B or fewer doubles than
        # the largest power of two <= p, else reduce-scatter + allgather
        if n <= 8 or n // 8 < _pow2_floor(p):
            return "MPIR_Allreduce_intra_recursive_doubling", "allreduce:recursive_doubling", True, _MPICH_MPIR
        return ("MPIR_Allreduce_intra_reduce_scatter_allgather", "allreduce:rabenseifner", True,
                _MPICH_MPIR)
    if op == "reduce":
        count = n // 8
        if n <= 2048 or count < _pow2_floor(p):
            return "MPIR_Reduce_intra_binomial", "reduce:binomial", True, _MPICH_MPIR
        return "MPIR_Reduce_intra_reduce_scatter_gather", "reduce:binomial", False, _MPICH_MPIR
    if op == "barrier":
        return "MPIR_Barrier_intra_dissemination", "barrier:dissemination", True, _MPICH_MPIR
    if op == "allgather":
        if _pow2(p):
            if n < 524288:
                return ("MPIR_Allgather_intra_recursive_doubling", "allgather:recursive_doubling", True,
                        _MPICH_MPIR)
            return "MPIR_Allgather_intra_ring", "allgather:ring", True, _MPICH_MPIR
        if n < 81920:
            return "MPIR_Allgather_intra_brucks", "allgather:bruck", True, _MPICH_MPIR
        return "MPIR_Allgather_intra_ring", "allgather:ring", True, _MPICH_MPIR
    if op == "reduce_scatter":
        if n < 524288:
            return ("MPIR_Reduce_scatter_block_intra_recursive_halving", "reduce_scatter:recursive_halving",
                    True, _MPICH_MPIR)
        return "MPIR_Reduce_scatter_block_intra_pairwise", "reduce_scatter:pairwise", True, _MPICH_MPIR
    if op == "gather":
        return "MPIR_Gather_intra_binomial", "gather:binomial", True, _MPICH_MPIR
    if op == "scatter":
        return "MPIR_Scatter_intra_binomial", "scatter:binomial", True, _MPICH_MPIR
    if op == "alltoall":
        if p >= 8 and n <= 256:
            return "MPIR_Alltoall_intra_brucks", "alltoall:pairwise", False, _MPICH_MPIR
        if n <= 32768:
            return "MPIR_Alltoall_intra_scattered", "alltoall:direct", True, _MPICH_MPIR
        return "MPIR_Alltoall_intra_pairwise", "alltoall:pairwise", True, _MPICH_MPIR
    if op == "scan":
        # consecutive ranks on a node: MPIR_Scan_intra_smp, which on one node is the
        # node communicator's recursive doubling
        return "MPIR_Scan_intra_smp", "scan:recursive_doubling", one_node, _MPICH_MPIR
    raise AssertionError(op)


def _pow2_floor(p: int) -> int:
    return 1 << (p.bit_length() - 1)


# ---- the interface --------------------------------------------------------------

def rules_for(library: str) -> str | None:
    """Whose selection rules a library's name follows (one of LIBRARIES), or None: its own,
    its family's for a second installation found as 'mpich-default' (measure/libraries.py),
    and the bare library's for its points told apart by locality or cache ('mpich off-node',
    'mpich cache-cold', store/locality.py)."""
    name = split_label(library.lower())[0].removesuffix("-default")
    return name if name in LIBRARIES else None


def decide(library: str, op: str, n_bytes: int, p: int, *, nodes: int = 1,
           overrides: Mapping[str, Any] | None = None) -> Choice:
    """The library's choice for one call of `op` (n as commchar counts it) on p ranks."""
    library, op = library.lower(), op.split(":")[0].lower()
    rules = rules_for(library)
    if rules is None:
        raise UsageError(f"no selection rules for library '{library}' (known: {', '.join(LIBRARIES)})")
    if op not in OPERATIONS:
        raise UsageError(f"no selection rules for operation '{op}' (known: {', '.join(OPERATIONS)})")
    if p < 1 or n_bytes < 0:
        raise UsageError(f"selection needs p >= 1 and n >= 0, got p={p}, n={n_bytes}")
    forced = _override(overrides, library, op)
    if rules == "openmpi":
        name, algorithm, exact, source = _openmpi(op, n_bytes, p)
    else:
        name, algorithm, exact, source = _mpich(op, n_bytes, p, nodes)
    if forced is not None:
        return Choice(library, op, n_bytes, p, forced, name, False, "override", overridden=True)
    return Choice(library, op, n_bytes, p, algorithm, name, exact, source)


def choose(library: str, op: str, n_bytes: int, p: int, *, nodes: int = 1,
           overrides: Mapping[str, Any] | None = None) -> str:
    """The simulator algorithm (`op:algorithm`) standing for what `library` runs."""
    return decide(library, op, n_bytes, p, nodes=nodes, overrides=overrides).algorithm


def _override(overrides: Mapping[str, Any] | None, library: str, op: str) -> str | None:
    if not overrides:
        return None
    scoped = overrides.get(library)
    if isinstance(scoped, Mapping) and op in scoped:
        value = scoped[op]
    elif op in overrides and isinstance(overrides[op], str):
        value = overrides[op]
    else:
        return None
    return value if ":" in value else f"{op}:{value}"


def load_overrides(path: str | Path) -> dict[str, Any]:
    """Reads an override file: {"allreduce": "ring"} or {"mpich": {"bcast": "bcast:linear"}}."""
    try:
        data = json.loads(Path(path).read_text())
    except OSError as exc:
        raise InputError(f"cannot read selection overrides {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: selection overrides must be a JSON object")
    for key, value in data.items():
        entries = value.items() if isinstance(value, dict) else [(key, value)]
        for op, alg in entries:
            if op.split(":")[0] not in OPERATIONS or not isinstance(alg, str):
                raise InputError(f"{path}: '{op}': expected an operation name mapped to an algorithm")
            if ":" in alg and alg.split(":")[0] != op:
                raise InputError(f"{path}: '{op}' cannot be simulated by '{alg}'")
    return data


def table(library: str, p: int, sizes: list[int], *, nodes: int = 1,
          overrides: Mapping[str, Any] | None = None) -> list[Choice]:
    """Every operation's choice at each size, for --show-selection."""
    return [decide(library, op, n, p, nodes=nodes, overrides=overrides) for op in OPERATIONS for n in sizes]
