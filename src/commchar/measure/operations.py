"""The catalogue of measurable operations and the meaning of n for each.

n follows models.md section 2. The runner rounds each requested size up to
the nearest size the operation can use at p (a multiple of p for scatter,
gather and allgather, of 8 bytes for reductions, of 8p for reduce_scatter), so
the kernel only ever sees sizes it can measure and stored points carry the
size actually moved.
"""

from __future__ import annotations

from dataclasses import dataclass

from commchar.errors import UsageError
from commchar.vocabulary import (EXCHANGE_VARIANTS, FOOTPRINT_VARIANTS, NBC_VARIANTS, REDUCTION_VARIANTS, RMA_VARIANTS,
                                 SEND_MODES, SKEW_VARIANTS, WRITTEN_VARIANTS, op_key)

KiB = 1024
MiB = 1024 * KiB


@dataclass(frozen=True)
class Operation:
    name: str
    kind: str  # "p2p" (ranks 0 and 1), "collective", "loggp"
    variants: tuple[str, ...] = ("",)
    unit: str = "byte"  # byte | per_rank | double | double_per_rank | word | none
    default_max_bytes: int = MiB
    in_default: bool = True
    transport: str = "mpi"  # mpi | am | pvm: which libraries measure it (libraries.py)
    sizes: tuple[int, ...] | None = None  # the default sizes, when not 0 and powers of two
    min_bytes: int = 0
    max_bytes: int | None = None  # larger sizes cannot be measured and are left out
    kernel_name: str | None = None  # the kernel's name when it differs (PVM's share MPI's names)
    fresh_process: bool = False  # measured as the first traffic of a job of its own
    # under --sizes adaptive: the sizes of its own measured first; the rule adds the next
    # larger one while the model still changes there (measure/adaptive.py)
    adaptive_sizes: tuple[int, ...] | None = None

    @property
    def in_kernel(self) -> str:
        return self.kernel_name or self.name

    def size_quantum(self, p: int) -> int:
        return {"byte": 1, "per_rank": p, "double": 8, "double_per_rank": 8 * p, "word": 4,
                "none": 0}[self.unit]

    def effective_size(self, n: int, p: int) -> int:
        quantum = self.size_quantum(p)
        if quantum == 0:
            return 0
        return -(-max(n, self.min_bytes) // quantum) * quantum


MBW_SIZES = tuple(8 * 4 ** k for k in range(9)) + (MiB,)  # 8 B .. 512 KiB by 4, and 1 MiB
_AM_BULK = tuple(1 << k for k in range(4, 23))  # 16 B to 4 MiB, as the study measured
AM_LOSS_RATES = ("0", "0.001", "0.01", "0.05", "0.1")

OPERATIONS: dict[str, Operation] = {
    op.name: op
    for op in (
        Operation("pingpong", "p2p", SEND_MODES,
                  default_max_bytes=4 * MiB),
        Operation("bw", "p2p", default_max_bytes=4 * MiB),
        Operation("bibw", "p2p", default_max_bytes=4 * MiB),
        # Both ranks swap n bytes at once (cc_ops_exchange.c): Sendrecv, and Sendrecv_replace,
        # whose extra cost is the model's replace_copy (models/replace_copy.py).
        Operation("exchange", "p2p", EXCHANGE_VARIANTS, default_max_bytes=4 * MiB),
        # Every rank at once (cc_ops_mbw.c): p/2 pairs stream windows as bw does, so it is
        # measured at every p, like a collective; n is one message. It feeds the model's
        # concurrency section (models/concurrency.py): about 4 s a p at the default sizes.
        Operation("mbw", "collective", sizes=MBW_SIZES),
        # Every rank reads the clock in a tight loop at once (cc_ops_noise.c): the detours
        # the node takes from a rank while all work, for the model's noise (models/noise.py).
        # Half a second a p; its barrier time is not fitted.
        Operation("noise", "collective", unit="none"),
        # A communicator's first collectives (cc_ops_collstart.c): twelve calls of each kind on a
        # fresh communicator, in a fresh job, for the model's collective_start (models/collstart.py).
        Operation("collstart", "collective", unit="none", fresh_process=True),
        Operation("barrier", "collective", unit="none"),
        Operation("bcast", "collective"),
        Operation("scatter", "collective", unit="per_rank"),
        Operation("gather", "collective", unit="per_rank"),
        Operation("allgather", "collective", unit="per_rank"),
        Operation("alltoall", "collective"),
        Operation("reduce", "collective", REDUCTION_VARIANTS, unit="double"),
        Operation("allreduce", "collective", REDUCTION_VARIANTS, unit="double"),
        Operation("reduce_scatter", "collective", REDUCTION_VARIANTS, unit="double_per_rank"),
        Operation("scan", "collective", REDUCTION_VARIANTS, unit="double"),
        # One-sided (kernels/mpi/cc_ops_rma.c): variant = synchronisation; *_bw: W operations per epoch.
        Operation("put", "p2p", RMA_VARIANTS),
        Operation("get", "p2p", RMA_VARIANTS),
        Operation("acc", "p2p", RMA_VARIANTS, unit="double"),
        # Non-blocking collectives (kernels/mpi/cc_ops_nbc.c): pure, and overlapped with as long a computation.
        Operation("ibcast", "collective", NBC_VARIANTS),
        Operation("iallreduce", "collective", NBC_VARIANTS, unit="double"),
        Operation("ialltoall", "collective", NBC_VARIANTS),
        Operation("iallgather", "collective", NBC_VARIANTS, unit="per_rank"),
        # Neighbourhood collectives on a periodic 2-D Cartesian grid (cc_ops_neighbor.c): n per neighbour.
        Operation("neighbor_allgather", "collective"),
        Operation("neighbor_alltoall", "collective"),
        # A strided vector datatype (cc_ops_ddt.c): n bytes of payload in 8-byte blocks every 16.
        # Past 1 MiB a strided message costs milliseconds a repetition and only grows linearly
        # (MPICH 4.0: 6.1 ms at 1 MiB, 12.3 at 2 MiB, 22.3 at 4 MiB).
        Operation("ddt_pingpong", "p2p", unit="double"),
        Operation("ddt_bcast", "collective", unit="double"),
        # MPI-4 (cc_ops_mpi4.c): recorded as unsupported by an MPI-3 library.
        Operation("pbcast", "collective"),
        Operation("pallreduce", "collective", unit="double"),
        Operation("partitioned", "p2p", unit="double", default_max_bytes=4 * MiB),
        Operation("loggp", "loggp", default_max_bytes=4 * MiB),
        Operation("rndv", "loggp", default_max_bytes=4 * MiB),
        # Rank 0 times bursts of MPI_Isend, each call returning with its request open
        # (cc_ops_p2p.c): what a program's non-blocking send costs to post, where a blocking
        # send's o_s also holds the progress that completes it (models/send_post.py).
        Operation("post", "loggp", sizes=(8, 64, 256, KiB, 2 * KiB, 4 * KiB, 8 * KiB, 16 * KiB, 32 * KiB,
                                          64 * KiB, 128 * KiB, 256 * KiB)),
        # A program's first sends (cc_ops_coldstart.c): each size in a fresh job, eager sizes;
        # 64 B below the others, where MPICH's cells are warm from the start (what a cell's
        # first use faults in lies beyond its first bytes).
        Operation("coldstart", "loggp", sizes=(64, 512, 2 * KiB, 8 * KiB), fresh_process=True),
        # A receive into never-touched memory against one into resident memory
        # (cc_ops_touch.c): the first-touch cost of a freshly allocated receive buffer.
        # Under adaptive, 64 KiB to 4 MiB first: the cost per byte has settled by 1 MiB, and
        # each larger size (its pair of points takes about half a second at 16 MiB) is added
        # only while the last step still moved it (measure/adaptive.py: touch_extension).
        Operation("touch", "loggp", ("fresh", "resident"),
                  sizes=tuple(64 * KiB * 4 ** k for k in range(6)), min_bytes=1,
                  adaptive_sizes=tuple(64 * KiB * 4 ** k for k in range(4))),
        # A ping-pong whose receive buffers lie 16 bytes further into their page than
        # the send buffers, against one where they lie alike (cc_ops_p2p.c): what a copy
        # pays for its relative alignment, below and above where the libraries copy once;
        # the same with each rank sending to itself (the library's own copy in memory); and
        # 80 bytes further, the same place in the next line: which distances copy slowly.
        Operation("skew", "loggp", SKEW_VARIANTS, sizes=(4 * KiB, 32 * KiB, 256 * KiB, MiB),
                  min_bytes=1),
        # A ping-pong whose ranks store into every cache line of their send buffers (whole) or
        # into its first and last 8 bytes (ends) before each round trip, against one whose
        # buffers are clean (cc_ops_p2p.c): what a message its sender just wrote costs to pull
        # from the sender's cache, as a program's packed halo or updated rows do (written_send,
        # models/written_send.py); and a loop of 16 exchanges (MPI_Sendrecv) a sample whose
        # ranks write their ends before each, against the same loop storing elsewhere, as a
        # program's loop stamps and exchanges. 15 points of a few milliseconds.
        Operation("written", "loggp", WRITTEN_VARIANTS, sizes=(4 * KiB, 32 * KiB, 256 * KiB), min_bytes=1),
        # The exchange with each rank cycling through 4, 16 or 64 pairs of buffers, one pair a
        # call (cc_ops_exchange.c): what a copy pays when a program's buffers outgrow the
        # caches (2, 8 and 32 MiB a rank at 256 KiB), for the model's copy_footprint
        # (models/copy_footprint.py), against the same loop over one pair (x1) measured
        # beside them; the self_ variants the same with each rank sending to itself.
        # Sizes given below 64 KiB are measured at 64 KiB: smaller buffers span little memory.
        Operation("footprint", "loggp", FOOTPRINT_VARIANTS, sizes=(256 * KiB,), min_bytes=64 * KiB),
        # The active-message layer (am/), after the SP-2 Active Messages study.
        # am_rtt: n is 4 bytes per argument word; am_pipe: 1 MiB in requests of n;
        # am_cost: single calls; am_loss: variants are the injected loss rate.
        Operation("am_rtt", "p2p", unit="word", transport="am", sizes=(4, 8, 12, 16),
                  min_bytes=4, max_bytes=16),
        Operation("am_store", "p2p", transport="am", sizes=_AM_BULK),
        Operation("am_get", "p2p", transport="am", sizes=_AM_BULK),
        Operation("am_pipe", "p2p", ("blocking", "async"), transport="am",
                  sizes=tuple(1 << k for k in range(6, 21)), min_bytes=1),
        Operation("am_exchange", "p2p", ("blocking", "async"), transport="am", sizes=_AM_BULK),
        Operation("am_cost", "p2p", ("request", "reply", "poll_empty", "poll_msg"), unit="none",
                  transport="am"),
        Operation("am_loss", "p2p", AM_LOSS_RATES, transport="am", sizes=(MiB,), min_bytes=1),
    )
}


# PVM (kernels/pvm/), after the AP3000 study: stored under MPI's names where the
# meaning of n is the same, so fits, laws, predictions and the report's comparison
# line PVM up with the MPI libraries. pingpong: psend, or pvm_send of a message
# packed beforehand with each encoding; pack: pvm_initsend + pvm_pkbyte alone (the
# packing the pingpong leaves out); mcast: pvm_mcast from the root to the others.
# PVM refuses gather, scatter and reduce of nothing: their smallest size is one element a rank.
# A PVM message costs tens of microseconds, so by default sizes go up by 4, not 2.
_PVM_SIZES = (0,) + tuple(4 ** k for k in range(11))  # 0, 1 B .. 1 MiB
PVM_OPERATIONS: dict[str, Operation] = {
    op.name: op
    for op in (
        Operation("pingpong", "p2p", ("psend", "default", "raw", "inplace"), transport="pvm",
                  sizes=_PVM_SIZES, kernel_name="pvm_pingpong"),
        Operation("pack", "p2p", ("default", "raw", "inplace"), transport="pvm", sizes=_PVM_SIZES,
                  kernel_name="pvm_pack"),
        Operation("mcast", "collective", transport="pvm", sizes=_PVM_SIZES, kernel_name="pvm_mcast"),
        Operation("bcast", "collective", transport="pvm", sizes=_PVM_SIZES, kernel_name="pvm_bcast"),
        Operation("barrier", "collective", unit="none", transport="pvm", kernel_name="pvm_barrier"),
        Operation("reduce", "collective", REDUCTION_VARIANTS, unit="double", transport="pvm",
                  sizes=_PVM_SIZES, min_bytes=8, kernel_name="pvm_reduce"),
        Operation("gather", "collective", unit="per_rank", transport="pvm", sizes=_PVM_SIZES,
                  min_bytes=1, kernel_name="pvm_gather"),
        Operation("scatter", "collective", unit="per_rank", transport="pvm", sizes=_PVM_SIZES,
                  min_bytes=1, kernel_name="pvm_scatter"),
    )
}


def catalogue(transport: str) -> dict[str, Operation]:
    """The operations a transport's libraries measure, by stored name."""
    if transport == "pvm":
        return PVM_OPERATIONS
    return {name: op for name, op in OPERATIONS.items() if op.transport == transport}


@dataclass(frozen=True, order=True)
class OpVariant:
    op: str
    variant: str
    transport: str = "mpi"

    @property
    def operation(self) -> Operation:
        return (PVM_OPERATIONS if self.transport == "pvm" else OPERATIONS)[self.op]

    def __str__(self) -> str:
        return op_key(self.op, self.variant)


def parse_ops(text: str | None, transport: str = "mpi") -> list[OpVariant]:
    """`pingpong` means every send mode, `pingpong:ssend` one; None means the
    defaults of `transport`. Named operations are checked against every transport
    (a name or variant none has is an error); for "mpi" they are returned whatever
    their transport (MPI's catalogue holds the active-message layer's too), for
    "pvm" those PVM has."""
    if text is None:
        ops = catalogue(transport)
        return [OpVariant(n, v, transport) for n, op in ops.items() if op.in_default for v in op.variants]
    pvm = transport == "pvm"
    chosen: list[OpVariant] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            raise UsageError(f"--ops: empty operation name in '{text}'")
        name, _, variant = item.partition(":")
        known_ops = [c[name] for c in (OPERATIONS, PVM_OPERATIONS) if name in c]
        if not known_ops:
            known = ", ".join(dict.fromkeys([*OPERATIONS, *PVM_OPERATIONS]))
            raise UsageError(f"--ops: unknown operation '{name}' (known: {known})")
        variants = list(dict.fromkeys(v for op in known_ops for v in op.variants))
        if variant and variant not in variants:
            known = ", ".join(v for v in variants if v) or "none"
            raise UsageError(f"--ops: '{name}' has no variant '{variant}' (variants: {known})")
        op = (PVM_OPERATIONS if pvm else OPERATIONS).get(name)
        if op is None:
            continue
        for v in ([variant] if variant else list(op.variants)):
            if v in op.variants and OpVariant(name, v, transport if pvm else "mpi") not in chosen:
                chosen.append(OpVariant(name, v, transport if pvm else "mpi"))
    return chosen
