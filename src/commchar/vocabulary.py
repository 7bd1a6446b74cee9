"""The words every verb shares: operation names, variants, the `op:variant` key,
byte sizes as people type and read them, and the names of the unit systems.

One home, so `run --sizes`, `simulate --n`, `predict --n` and `app --fragment`
accept the same spellings, and `predict`, `advise` and `report` print a size
the same way. The catalogue of what the kernel can measure (unit of n,
default sizes) stays in measure/operations.py; this module holds only names.

Size spellings (README.md, "Measuring"): an integer or decimal, an optional
exponent, and an optional suffix K, M or G, in either case, with an optional `i`
and an optional `B`. Every suffix is binary, as MPI benchmarks use them:
1K = 1k = 1Ki = 1KiB = 1KB = 1024 bytes; 1.5K = 1536; 64B = 64. A byte count
must come out whole (`1.3` is refused where bytes are counted; `predict --n`
takes any non-negative number).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

from commchar.errors import UsageError

# --- operations ----------------------------------------------------------------

MPI_P2P_OPS = ("pingpong", "bw", "bibw", "exchange", "ddt_pingpong", "partitioned")
RMA_OPS = ("put", "get", "acc")  # one-sided, origin rank 0 to target rank 1: fitted per synchronisation
RMA_VARIANTS = ("fence", "pscw", "lock", "fence_bw", "pscw_bw", "lock_bw")
# the active-message layer's latency and bandwidth series fit like point-to-point
AM_P2P_OPS = ("am_rtt", "am_store", "am_get", "am_pipe", "am_exchange")
# PVM's packing alone (pvm_initsend + pvm_pkbyte): a cost per message and per byte
PVM_P2P_OPS = ("pack",)
P2P_OPS = MPI_P2P_OPS + AM_P2P_OPS + PVM_P2P_OPS + RMA_OPS
LOGGP_OPS = ("loggp", "rndv", "post", "coldstart", "touch", "skew", "written", "footprint")  # probes of the model file's loggp section
# single calls and one size per loss rate: reported as measured, not fitted
UNFITTED_OPS = ("am_cost", "am_loss")
NONBLOCKING = ("ibcast", "iallreduce", "ialltoall", "iallgather")  # variants pure, overlap
NBC_VARIANTS = ("pure", "overlap")
COLLECTIVES = ("barrier", "bcast", "scatter", "gather", "allgather", "alltoall",
               "reduce", "allreduce", "reduce_scatter", "scan") + NONBLOCKING + (
               "neighbor_allgather", "neighbor_alltoall", "ddt_bcast", "pbcast", "pallreduce")
REDUCTIONS = ("reduce", "allreduce", "reduce_scatter", "scan")
# collectives whose n is the whole buffer, split among the ranks: a rank's block is n / p (the
# operations measure/operations.py sizes per rank)
SPLIT_COLLECTIVES = ("scatter", "gather", "allgather", "reduce_scatter", "iallgather")
SEND_MODES = ("send", "bsend", "ssend", "rsend", "isend")  # pingpong's variants
EXCHANGE_VARIANTS = ("sendrecv", "replace", "self", "isend", "isend2")  # MPI_Sendrecv, MPI_Sendrecv_replace, to oneself, halo-style one and two each way
# footprint's: the exchange cycling through 1 (the others' baseline), 4, 16 or 64 pairs of buffers,
# with the other rank (xK) and with itself (self_xK)
FOOTPRINT_VARIANTS = ("x1", "x4", "x16", "x64", "self_x1", "self_x4", "self_x16", "self_x64")
REDUCTION_VARIANTS = ("sum", "nop")
# skew's: a ping-pong whose receive buffers lie where the send buffers do in their page, or
# 16 bytes ahead, and the same to oneself, or 80 bytes ahead (models/misaligned_copy.py)
SKEW_VARIANTS = ("aligned", "ahead", "self_aligned", "self_ahead", "ahead80")
# written's: a ping-pong whose send buffers are clean, or written at their ends or throughout
# before each round trip, and a loop of exchanges whose ranks write their ends before each
# (exchange_ends) or the same stores elsewhere (exchange_clean); the model's written_send
# keeps each written variant's excess over its clean one, under the written variant's name
WRITTEN_VARIANTS = ("clean", "ends", "whole", "exchange_clean", "exchange_ends")
WRITTEN_EXCESSES = (("ends", "clean"), ("whole", "clean"), ("exchange_ends", "exchange_clean"))

# A key without a variant asks for the default variant (docs/model-format.md):
# the standard send, and reductions that really add (their arithmetic is part of the cost).
DEFAULT_VARIANTS = {"pingpong": "send", **{op: "sum" for op in REDUCTIONS}}
# PVM has no MPI_Send: where a library has no `pingpong:send`, its plain send is
# pvm_psend (docs/pvm.md)
ALTERNATE_VARIANTS = {"pingpong": "psend"}


def op_key(op: str, variant: str) -> str:
    """`pingpong`, `send` -> `pingpong:send`; an operation without variants is its own key."""
    return f"{op}:{variant}" if variant else op


def split_key(key: str) -> tuple[str, str]:
    """`reduce:sum` -> (`reduce`, `sum`); `bcast` -> (`bcast`, ``)."""
    op, _, variant = key.partition(":")
    return op, variant


def key_op(key: str) -> str:
    """The operation of a key: `reduce:sum` -> `reduce`."""
    return key.partition(":")[0]


def default_key(key: str) -> str:
    """`pingpong` -> `pingpong:send`, `reduce` -> `reduce:sum`; other keys unchanged."""
    if ":" in key or key not in DEFAULT_VARIANTS:
        return key
    return op_key(key, DEFAULT_VARIANTS[key])


def is_collective(key: str) -> bool:
    return key_op(key) in COLLECTIVES


def switches_at_threshold(op: str, variant: str, ps: Iterable[int]) -> bool:
    """Whether a series' messages are n bytes long, so that its protocol switches at the
    library's rendezvous threshold S: MPI's point-to-point operations between two ranks (a
    message to oneself takes no rendezvous), and a collective measured at p = 2 alone whose n
    is not split among the ranks (at a larger p the length of its messages at n depends on
    its algorithm)."""
    if op in MPI_P2P_OPS:
        return variant != "self"
    return op in COLLECTIVES and op not in SPLIT_COLLECTIVES and set(ps) == {2}


def key_order(key: str) -> tuple[int, int, str]:
    """The order keys are shown in: point-to-point, LogGP, then collectives as listed;
    send modes in their order, the default variant of a reduction before `nop`."""
    op, variant = split_key(key)
    order = MPI_P2P_OPS + LOGGP_OPS + COLLECTIVES
    rank = order.index(op) if op in order else len(order)
    sub = SEND_MODES.index(variant) if variant in SEND_MODES else (0 if variant in ("", "sum") else 1)
    return rank, sub, key


# --- sizes ---------------------------------------------------------------------

_SCALE = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
NUMBER = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*(?:([kKmMgG])i?)?[bB]?\s*$")
SIZE_EXAMPLES = "0, 64, 1.5K, 4Mi, 1MiB"


def is_number(text: str) -> bool:
    """Whether `text` is written as a number (with an optional size suffix), not an expression."""
    return NUMBER.match(text) is not None


def parse_number(text: str, flag: str, what: str = "a number") -> float:
    """A non-negative number with an optional binary suffix: `1.5K` -> 1536.0."""
    match = NUMBER.match(text)
    if not match:
        raise UsageError(f"{flag}: {text.strip()!r} is not {what} (examples: {SIZE_EXAMPLES})")
    value = float(match.group(1) + (match.group(2) or "")) * _SCALE[(match.group(3) or "").lower()]
    if not math.isfinite(value):
        raise UsageError(f"{flag}: {text.strip()!r} is too large")
    return value


def parse_size(text: str, flag: str = "--sizes", limit: int | None = None) -> int:
    """A byte count: `0`, `64`, `1K`, `1.5K`, `4Mi`, `1MiB`; above `limit` is refused."""
    value = parse_number(text, flag, "a byte count")
    if not value.is_integer():
        raise UsageError(f"{flag}: {text.strip()!r} is not a whole number of bytes")
    if limit is not None and value > limit:
        raise UsageError(f"{flag}: {text.strip()} is larger than {format_size(limit)}")
    return int(value)


def format_size(n: float) -> str:
    """Bytes as they are printed everywhere: a binary unit from 1 KiB up with at most
    4 significant digits (1024 -> '1 KiB', 1536 -> '1.5 KiB', 8276.2 -> '8.082 KiB'),
    whole bytes below (a fraction only under 10 B, where it matters)."""
    n = float(n)
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= scale:
            return f"{n / scale:.4g} {unit}"
    return f"{n:.0f} B" if abs(n) >= 10 or n.is_integer() else f"{n:.3g} B"


# --- times ---------------------------------------------------------------------

def format_us(t: float) -> str:
    """A time in a column headed `us`: one decimal from 100 us up, three significant digits below."""
    return f"{t:.1f}" if abs(t) >= 100 else f"{t:.3g}"


def format_time(us: float | None) -> str:
    """A time with its unit (us, ms, s), three significant digits; '–' when unknown."""
    if us is None or not math.isfinite(us):
        return "–"
    if abs(us) >= 1e6:
        return f"{us / 1e6:.3g} s"
    if abs(us) >= 1e3:
        return f"{us / 1e3:.3g} ms"
    return f"{us:.3g} us"


# --- unit systems --------------------------------------------------------------

# Rates are printed in SI (MB/s, kB/s) or IEC binary (MiB/s, KiB/s, as the
# published tables give them). `binary` was the report's name for `iec`.
UNIT_SYSTEMS = ("si", "iec")
UNIT_ALIASES = {"binary": "iec"}
UNIT_CHOICES = UNIT_SYSTEMS + tuple(UNIT_ALIASES)
UNITS_HELP = "rate units: si (MB/s, kB/s; default) or iec (MiB/s, KiB/s, as published; 'binary' also accepted)"


def unit_system(name: str) -> str:
    """The canonical unit-system name for `name` ('binary' -> 'iec')."""
    canonical = UNIT_ALIASES.get(name, name)
    if canonical not in UNIT_SYSTEMS:
        raise UsageError(f"units must be one of {', '.join(UNIT_CHOICES)}, got {name!r}")
    return canonical
