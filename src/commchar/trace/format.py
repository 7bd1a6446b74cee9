"""Read a trace directory written by the PMPI tracer (docs/trace-format.md).

The numpy dtypes below mirror tracer/cc_trace_format.h field for field; a test
checks the call and OTHER-name tables against the header so the two cannot drift.
A file that is cut short, corrupt or never finalized is reported in one line
naming the file; a crashed run's partial trace is read only when asked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from commchar.errors import InputError
from commchar.trace.calls import CALL_NAMES, OTHER_NAMES, PLACED_CALLS, PSEUDO_CALLS, WRITTEN_CALLS

MAGIC = b"CCTRACE1"
VERSION = 2  # what the tracer writes; version 1 (no buffer places) is read too
READS_VERSIONS = (1, 2)
HEADER_BYTES = 256
RECORD_BYTES = 64
FLAG_FINALIZED = 1
FLAG_BUFFERS_FLOOR = 2  # buffer_bytes is a floor: more buffers than the tracer follows
REC_NONBLOCKING = 1
REC_ERROR = 2
REC_COLD = 4  # cold bytes counted: at offset 48 (req) of a blocking call, 56 (aux, aux2) of an Irecv
REC_CANCELLED = 8  # on a COMPLETE record: the request was cancelled and moved nothing
REC_INTER = 16  # on a call that created an intercommunicator: members local then remote, tag = local size
COLD_MIN_BYTES = 64 * 1024  # receive buffers the tracer counts cold bytes of
# bytes and bytes2 of a point-to-point record: the size in the low SIZE_BITS, above them
# PAGE_KNOWN | where that size's buffer lay in its page (address mod PAGE_SPAN), 0: not recorded
SIZE_BITS = 48
SIZE_MASK = (1 << SIZE_BITS) - 1
PAGE_KNOWN = 0x8000
PAGE_SPAN = 4096
# a send's bytes (WRITTEN_CALLS) also holds, in the 3 bits above its place's 12, how much of
# its buffer the program wrote since its last send from it: 0 nothing seen, WRITTEN_ENDS its
# first or last 8 bytes alone, 2 + the fifths of the words between them up to WRITTEN_WHOLE
WRITTEN_SHIFT = 12
WRITTEN_MASK = 7
WRITTEN_ENDS = 1
WRITTEN_WHOLE = 7
MEMBERS_PER_RECORD = 10
FILE_PATTERN = re.compile(r"^rank-(\d+)\.cctrace$")


def rank_file_number(name: str) -> int | None:
    """The rank a file named rank-<r>.cctrace holds, or None for any other name."""
    match = FILE_PATTERN.match(name)
    return int(match.group(1)) if match else None

# The largest message and the longest run a trace may record: far beyond any traced
# program (an MPI count is an int, a run of 13 days), well inside what the replay's
# integer picoseconds hold at any model's gap per byte.
MAX_MESSAGE_BYTES = 1 << 40
MAX_SPAN_NS = 1 << 50

HEADER_DTYPE = np.dtype([
    ("magic", "S8"), ("version", "<u4"), ("record_bytes", "<u4"), ("rank", "<i4"),
    ("size", "<i4"), ("t_init_ns", "<u8"), ("t_finalize_ns", "<u8"), ("records", "<u8"),
    ("flags", "<u4"), ("record_gap_ps", "<u4"), ("host", "S64"), ("library", "S64"),
    ("complete_gap_ps", "<u4"), ("collective_gap_ps", "<u4"), ("buffer_bytes", "<u8"),
    ("reserved1", "V56"),
])
RECORD_DTYPE = np.dtype([
    ("call", "<u2"), ("flags", "<u2"), ("comm", "<i4"), ("peer", "<i4"), ("tag", "<i4"),
    ("bytes", "<u8"), ("bytes2", "<u8"), ("t_start", "<u8"), ("t_end", "<u8"),
    ("req", "<u8"), ("aux", "<i4"), ("aux2", "<i4"),
])
assert HEADER_DTYPE.itemsize == HEADER_BYTES and RECORD_DTYPE.itemsize == RECORD_BYTES

CALL_IDS: dict[str, int] = {name: call for call, name in CALL_NAMES.items()}
COMPLETE, MEMBERS, OTHER, MARK, NEIGHBORS, RMA_IN = (
    CALL_IDS[n] for n in ("COMPLETE", "MEMBERS", "OTHER", "MARK", "NEIGHBORS", "RMA_IN"))
PCONTROL, INIT, FINALIZE = CALL_IDS["Pcontrol"], CALL_IDS["Init"], CALL_IDS["Finalize"]
# unsuccessful calls of one Test* call on one request set: aux names the call, bytes counts
# them, bytes2 is the least time one of them took inside MPI (ns)
TEST_RUN = CALL_IDS["Test_run"]
# calls that create a communicator: MEMBERS records follow
CREATES_COMM = tuple(CALL_IDS[n] for n in (
    "Comm_split", "Comm_dup", "Comm_create", "Cart_create", "Cart_sub", "Graph_create",
    "Dist_graph_create", "Dist_graph_create_adjacent", "Comm_create_group", "Comm_split_type", "Comm_idup",
    "Intercomm_create", "Intercomm_merge"))


_KNOWN_CALLS = np.array(sorted(CALL_NAMES), dtype=np.uint16)
# the calls whose size fields carry their buffers' places
_PLACED_CALLS = np.array(sorted(PLACED_CALLS), dtype=np.uint16)
_WRITTEN_CALLS = np.array(sorted(WRITTEN_CALLS), dtype=np.uint16)


def other_name(index: int) -> str:
    return OTHER_NAMES[index] if 0 <= index < len(OTHER_NAMES) else f"unknown-{index}"


@dataclass(frozen=True)
class RankTrace:
    """One rank's file: its header fields and its records (a RECORD_DTYPE array)."""

    path: Path
    rank: int
    size: int
    host: str
    library: str
    t_init_ns: int
    t_finalize_ns: int
    finalized: bool
    records: np.ndarray
    problem: str | None = None  # why this file is partial (read with allow_partial)
    record_gap_ps: int = 0  # the tracer's own time per call outside the spans (0: unknown)
    complete_gap_ps: int = 0  # ...and per COMPLETE record (0: unknown)
    collective_gap_ps: int = 0  # ...and per blocking collective's wrapper (0: unknown)
    # the bytes of the distinct message buffers the rank's placed calls used (0: unknown);
    # buffers_floor: more buffers than the tracer follows, so at least that many
    buffer_bytes: int = 0
    buffers_floor: bool = False
    # per record, where the buffers of bytes and bytes2 lay in their pages (-1: not recorded)
    places: np.ndarray | None = None
    # per record, how much of a send's buffer was written since its last send (WRITTEN_*; 0
    # on every other record)
    written: np.ndarray | None = None

    @property
    def wall_ns(self) -> int:
        """Init to Finalize; for a file never finalized, Init to the end of its last record."""
        if self.finalized:
            return int(self.t_finalize_ns - self.t_init_ns)
        if len(self.records) == 0:
            return 0
        return max(0, int(self.records["t_end"].max()) - self.t_init_ns)

    def members(self) -> dict[int, list[int]]:
        """World ranks of each communicator this rank created, by comm id (MEMBERS records)."""
        found: dict[int, list[int]] = {}
        creates = np.flatnonzero(np.isin(self.records["call"], CREATES_COMM))
        raw = self.records.view(np.uint8).reshape(-1, RECORD_BYTES)
        for index in creates:
            comm, size = int(self.records["aux"][index]), int(self.records["aux2"][index])
            ranks: list[int] = []
            follow = index + 1
            while follow < len(self.records) and self.records["call"][follow] == MEMBERS:
                count = int(self.records["aux2"][follow])
                ranks += raw[follow, 16:56].view("<i4")[:count].tolist()
                follow += 1
            if comm >= 0:
                found[comm] = ranks[:size]
        return found


def cold_bytes(records: np.ndarray) -> np.ndarray:
    """Per record, the bytes of its receive buffer in pages not resident at the call's
    entry (REC_COLD; 0 where not counted: a buffer under COLD_MIN_BYTES, a trace older
    than the count, a record of no receive)."""
    flagged = (records["flags"] & REC_COLD) != 0
    irecv = records["call"] == CALL_IDS["Irecv"]
    split = (records["aux"].astype(np.int64) & 0xFFFFFFFF) | (
        (records["aux2"].astype(np.int64) & 0xFFFFFFFF) << 32)
    return np.where(flagged, np.where(irecv, split.astype(np.uint64), records["req"]), 0).astype(np.uint64)


@dataclass(frozen=True)
class TraceSummary:
    p: int
    library: str
    hosts: list[str]
    wall_ns: list[int]  # per rank, Init to Finalize
    mpi_ns: list[int]  # per rank, time inside followed MPI calls
    calls: dict[str, dict[str, int]]  # name -> {count, bytes, bytes2, ns}
    phases: dict[int, list[int]]  # Pcontrol level -> per-rank ns
    others: dict[str, int]  # OTHER calls by name
    records: list[int]  # per rank
    partial: list[str]  # one line per file read partially

    def to_dict(self) -> dict[str, Any]:
        return {
            "p": self.p, "library": self.library, "hosts": self.hosts,
            "wall_ns": self.wall_ns, "mpi_ns": self.mpi_ns, "calls": self.calls,
            "phases": {str(level): times for level, times in self.phases.items()},
            "others": self.others, "records": self.records, "partial": self.partial,
        }


@dataclass(frozen=True)
class Trace:
    directory: Path
    ranks: list[RankTrace] = field(default_factory=list)

    @property
    def p(self) -> int:
        return self.ranks[0].size if self.ranks else 0

    @property
    def complete(self) -> bool:
        return all(r.problem is None for r in self.ranks) and len(self.ranks) == self.p

    def summary(self) -> TraceSummary:
        calls: dict[str, dict[str, int]] = {}
        others: dict[str, int] = {}
        phases: dict[int, list[int]] = {}
        mpi_ns = []
        for position, rank in enumerate(self.ranks):
            rec = rank.records
            real = ~np.isin(rec["call"], list(PSEUDO_CALLS))
            spans = (rec["t_end"].astype(np.int64) - rec["t_start"].astype(np.int64))
            runs = rec["call"] == TEST_RUN
            # a run of tests was in MPI for its calls' time, not its span
            spans = np.where(runs, np.minimum(test_run_ns(rec), spans), spans)
            mpi_ns.append(int(spans[real & ~np.isin(rec["call"], [INIT, FINALIZE])].sum()))
            for call in np.unique(rec["call"][real & ~runs]):
                mask = rec["call"] == call
                entry = calls.setdefault(CALL_NAMES.get(int(call), f"unknown-{call}"),
                                         {"count": 0, "bytes": 0, "bytes2": 0, "ns": 0})
                entry["count"] += int(mask.sum())
                entry["bytes"] += int(rec["bytes"][mask].sum())
                entry["bytes2"] += int(rec["bytes2"][mask].sum())
                entry["ns"] += int(spans[mask].sum())
            for call in np.unique(rec["aux"][runs]):  # counted as the calls they are
                mask = runs & (rec["aux"] == call)
                entry = calls.setdefault(CALL_NAMES.get(int(call), f"unknown-{call}"),
                                         {"count": 0, "bytes": 0, "bytes2": 0, "ns": 0})
                entry["count"] += int(rec["bytes"][mask].sum())
                entry["ns"] += int(spans[mask].sum())
            for index, count in zip(*np.unique(rec["aux"][rec["call"] == OTHER],
                                               return_counts=True)):
                name = other_name(int(index))
                others[name] = others.get(name, 0) + int(count)
            for level, ns in phase_times(rank).items():
                phases.setdefault(level, [0] * len(self.ranks))[position] = ns
        return TraceSummary(
            p=self.p, library=self.ranks[0].library if self.ranks else "",
            hosts=[r.host for r in self.ranks], wall_ns=[r.wall_ns for r in self.ranks],
            mpi_ns=mpi_ns, calls=dict(sorted(calls.items())), phases=dict(sorted(phases.items())),
            others=dict(sorted(others.items())), records=[len(r.records) for r in self.ranks],
            partial=[f"{r.path.name}: {r.problem}" for r in self.ranks if r.problem],
        )


def test_run_ns(records: np.ndarray) -> np.ndarray:
    """Per record, the time a TEST_RUN's calls spent inside MPI (ns), estimated as their
    count times the least time one took; 0 for other records."""
    runs = records["call"] == TEST_RUN
    return np.where(runs, records["bytes"].astype(np.int64) * records["bytes2"].astype(np.int64), 0)


def phase_times(rank: RankTrace) -> dict[int, int]:
    """A phase runs from one Pcontrol(level) to the next Pcontrol, or to Finalize."""
    rec = rank.records
    marks = np.flatnonzero(rec["call"] == PCONTROL)
    if len(marks) == 0:
        return {}
    end_of_run = rank.t_finalize_ns if rank.finalized else int(rec["t_end"].max())
    starts = rec["t_end"][marks].astype(np.int64)
    ends = np.append(rec["t_start"][marks[1:]].astype(np.int64), end_of_run)
    times: dict[int, int] = {}
    for level, start, end in zip(rec["aux"][marks], starts, ends):
        times[int(level)] = times.get(int(level), 0) + max(0, int(end - start))
    return times


def read_rank(path: Path, allow_partial: bool = False) -> RankTrace:
    """Read one rank's file, raising InputError (one line naming the file) if it is bad."""
    path = Path(path)
    try:
        length = path.stat().st_size
        with path.open("rb") as handle:
            raw_header = handle.read(HEADER_BYTES)
    except OSError as exc:
        raise InputError(f"{path}: cannot read trace: {exc.strerror}") from None
    if len(raw_header) < HEADER_BYTES:
        raise InputError(f"{path}: {length} bytes, shorter than the {HEADER_BYTES}-byte trace header")
    header = np.frombuffer(raw_header, dtype=HEADER_DTYPE)[0]
    if header["magic"] != MAGIC:
        raise InputError(f"{path}: not a commchar trace (magic {bytes(header['magic'])!r})")
    if header["version"] not in READS_VERSIONS:
        raise InputError(f"{path}: trace format version {header['version']}, "
                         f"this commchar reads versions {', '.join(map(str, READS_VERSIONS))}")
    if header["record_bytes"] != RECORD_BYTES:
        raise InputError(f"{path}: record size {header['record_bytes']} bytes, expected {RECORD_BYTES}")
    rank, size = int(header["rank"]), int(header["size"])
    if size < 1 or not 0 <= rank < size:
        raise InputError(f"{path}: corrupt header (rank {rank} of size {size})")
    body = length - HEADER_BYTES
    whole = body // RECORD_BYTES
    finalized = bool(header["flags"] & FLAG_FINALIZED)
    declared = int(header["records"])
    problem = None
    if not finalized:
        problem = f"never finalized (the program did not reach MPI_Finalize), {whole} records"
    elif declared != whole or body % RECORD_BYTES:
        problem = (f"cut short: header says {declared} records, the file holds "
                   f"{body / RECORD_BYTES:g}")
    if body % RECORD_BYTES and problem and "cut short" not in problem:
        problem += f" and a partial record of {body % RECORD_BYTES} bytes"
    if problem and not allow_partial:
        raise InputError(f"{path}: {problem}")
    count = min(whole, declared) if finalized else whole
    records = np.fromfile(path, dtype=RECORD_DTYPE, count=count, offset=HEADER_BYTES)
    places, written = split_places(records)
    unknown = ~np.isin(records["call"], _KNOWN_CALLS)
    if unknown.any():
        first = int(np.flatnonzero(unknown)[0])
        raise InputError(f"{path}: corrupt record {first} (unknown call id {records['call'][first]})")
    _check_bounds(path, records, int(header["t_init_ns"]))
    return RankTrace(
        path=path, rank=rank, size=size, host=_text(header["host"]),
        library=_text(header["library"]), t_init_ns=int(header["t_init_ns"]),
        t_finalize_ns=int(header["t_finalize_ns"]), finalized=finalized and problem is None,
        records=records, problem=problem, record_gap_ps=int(header["record_gap_ps"]),
        complete_gap_ps=int(header["complete_gap_ps"]),
        collective_gap_ps=int(header["collective_gap_ps"]), places=places, written=written,
        buffer_bytes=int(header["buffer_bytes"]), buffers_floor=bool(header["flags"] & FLAG_BUFFERS_FLOOR),
    )


def split_places(records: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Take the buffers' places out of the records' size fields (left holding the sizes
    alone): an (n, 2) array of where the buffers of bytes and bytes2 lay in their pages,
    -1 where not recorded, and an (n,) array of the sends' WRITTEN codes (0 elsewhere)."""
    places = np.full((len(records), 2), -1, dtype=np.int16)
    written = np.zeros(len(records), dtype=np.uint8)
    placed = np.isin(records["call"], _PLACED_CALLS)
    sends = np.isin(records["call"], _WRITTEN_CALLS)
    written_bits = np.uint64(WRITTEN_MASK << WRITTEN_SHIFT)
    for column, name in enumerate(("bytes", "bytes2")):
        high = records[name] >> np.uint64(SIZE_BITS)
        # a place is PAGE_KNOWN | offset (with a send's WRITTEN bits on its bytes); any other
        # high bits are a corrupt size, left whole
        allowed = np.where(sends, written_bits, np.uint64(0)) if column == 0 else np.uint64(0)
        known = placed & ((high & np.uint64(PAGE_KNOWN)) != 0)
        known &= (high & ~(np.uint64(PAGE_KNOWN | (PAGE_SPAN - 1)) | allowed)) == 0
        places[known, column] = (high[known] % np.uint64(PAGE_SPAN)).astype(np.int16)
        if column == 0:
            written[known] = ((high[known] >> np.uint64(WRITTEN_SHIFT)) & np.uint64(WRITTEN_MASK)).astype(np.uint8)
        records[name][known] &= np.uint64(SIZE_MASK)
    return places, written


class OutOfBounds(InputError):
    """A record beyond MAX_MESSAGE_BYTES or MAX_SPAN_NS (see _check_bounds)."""


def check_bounds(directory: str | Path) -> None:
    """Refuse a trace directory whose records the replay cannot represent (OutOfBounds,
    one line naming the file and record); anything else wrong with the files is left to
    the reader that follows (the simulator names it)."""
    try:
        files = sorted(p for p in Path(directory).iterdir() if rank_file_number(p.name) is not None)
    except OSError:
        return
    for path in files:
        try:
            read_rank(path, allow_partial=True)
        except OutOfBounds:
            raise
        except InputError:
            continue


def _check_bounds(path: Path, records: np.ndarray, t_init_ns: int) -> None:
    """Refuse a record no traced program can have made and the replay cannot represent: a
    message over MAX_MESSAGE_BYTES, or a time more than MAX_SPAN_NS from the rank's start."""
    if not records.size:
        return
    cold = cold_bytes(records)
    if (cold > MAX_MESSAGE_BYTES).any():
        first = int(np.flatnonzero(cold > MAX_MESSAGE_BYTES)[0])
        name = CALL_NAMES.get(int(records["call"][first]), "unknown")
        raise OutOfBounds(f"{path.name}: record {first} ({name}) has {int(cold[first])} cold bytes, more than"
                          f" the {MAX_MESSAGE_BYTES} (2^40) a trace may hold")
    large = (np.maximum(records["bytes"], records["bytes2"]) > MAX_MESSAGE_BYTES) & (records["call"] != TEST_RUN)
    if large.any():
        first = int(np.flatnonzero(large)[0])
        value = int(max(records["bytes"][first], records["bytes2"][first]))
        raise OutOfBounds(f"{path}: record {first} ({CALL_NAMES.get(int(records['call'][first]), '?')}) has"
                         f" {value} bytes, more than the {MAX_MESSAGE_BYTES} (2^40) a trace may hold")
    start = min(t_init_ns, int(records["t_start"].min()))
    late = np.maximum(records["t_start"], records["t_end"]) - np.uint64(start) > np.uint64(MAX_SPAN_NS)
    if late.any():
        first = int(np.flatnonzero(late)[0])
        raise OutOfBounds(f"{path}: record {first} ends more than {MAX_SPAN_NS // 86_400_000_000_000} days"
                         f" ({MAX_SPAN_NS} ns, 2^50) after the rank's start: not a time the replay can represent")


def read_trace(directory: str | Path, allow_partial: bool = False) -> Trace:
    """Read every rank-<r>.cctrace of a directory, checking that the ranks make one job.

    With allow_partial, files never finalized or cut short (a crashed run) are read
    up to their last whole record, and missing ranks are tolerated.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise InputError(f"{directory}: not a trace directory")
    files = sorted((int(m.group(1)), directory / name) for name in (p.name for p in directory.iterdir())
                   if (m := FILE_PATTERN.match(name)))
    if not files:
        raise InputError(f"{directory}: no rank-<r>.cctrace files")
    ranks = [read_rank(path, allow_partial) for _, path in files]
    for (number, path), rank in zip(files, ranks):
        if number != rank.rank:
            raise InputError(f"{path}: holds rank {rank.rank}, not {number}")
        if rank.size != ranks[0].size:
            raise InputError(f"{path}: world size {rank.size}, but {files[0][1].name} says "
                             f"{ranks[0].size}: files of different runs mixed")
    missing = sorted(set(range(ranks[0].size)) - {r.rank for r in ranks})
    if missing and not allow_partial:
        shown = ", ".join(f"rank-{r}.cctrace" for r in missing[:3])
        raise InputError(f"{directory}: missing {shown}{' ...' if len(missing) > 3 else ''} "
                         f"(world size {ranks[0].size})")
    return Trace(directory=directory, ranks=ranks)


def _text(raw: bytes) -> str:
    return " ".join(raw.split(b"\0", 1)[0].decode("utf-8", "replace").split())
