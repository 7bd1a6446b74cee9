"""The trace reader against files written here byte by byte (no MPI): valid,
cut short, corrupt, never finalized; and its tables against the C header."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from commchar.errors import InputError
from commchar.trace import format as fmt
from commchar.trace import read_trace

HEADER = Path(__file__).resolve().parents[1] / "tracer" / "cc_trace_format.h"


def _record(call: int, t0: int, t1: int, **fields: int) -> np.void:
    rec = np.zeros(1, dtype=fmt.RECORD_DTYPE)[0]
    rec["call"], rec["t_start"], rec["t_end"] = call, t0, t1
    for name, value in fields.items():
        rec[name] = value
    return rec


def _write(path: Path, rank: int, size: int, records: list[np.void], finalized: bool = True,
           declared: int | None = None) -> None:
    header = np.zeros(1, dtype=fmt.HEADER_DTYPE)
    header["magic"], header["version"], header["record_bytes"] = fmt.MAGIC, 1, 64
    header["rank"], header["size"] = rank, size
    header["t_init_ns"], header["host"], header["library"] = 1000, b"node0", b"Test MPI 1.0"
    if finalized:
        header["t_finalize_ns"] = 1000 + 10_000
        header["records"] = len(records) if declared is None else declared
        header["flags"] = fmt.FLAG_FINALIZED
    body = np.array(records, dtype=fmt.RECORD_DTYPE)
    path.write_bytes(header.tobytes() + body.tobytes())


def _program(rank: int) -> list[np.void]:
    peer = 1 - rank
    return [
        _record(fmt.INIT, 0, 1000),
        _record(43, 1100, 1110, aux=1),  # Pcontrol(1)
        _record(6, 1200, 1300, peer=peer, tag=7, bytes=64, req=1, flags=1),  # Isend
        _record(10, 1300, 1400, peer=peer, tag=7, bytes2=64, req=2, flags=1),  # Irecv
        _record(14, 1500, 2000, aux=2),  # Waitall
        _record(fmt.COMPLETE, 2000, 2000, req=1, peer=0),
        _record(fmt.COMPLETE, 2000, 2000, req=2, peer=1, aux=peer, aux2=7, bytes2=64),
        _record(34, 3000, 4000, bytes=8, bytes2=8, aux=1),  # Allreduce
        _record(43, 5000, 5010, aux=2),  # Pcontrol(2)
        _record(fmt.OTHER, 6000, 6100, aux=fmt.OTHER_NAMES.index("Win_fence")),
        _record(fmt.FINALIZE, 11_000, 11_500),
    ]


@pytest.fixture
def trace_dir(tmp_path: Path) -> Path:
    for rank in range(2):
        _write(tmp_path / f"rank-{rank}.cctrace", rank, 2, _program(rank))
    return tmp_path


def test_reads_records_and_summarizes(trace_dir: Path) -> None:
    trace = read_trace(trace_dir)
    assert trace.p == 2 and trace.complete
    assert [r.rank for r in trace.ranks] == [0, 1]
    assert trace.ranks[1].records["peer"][2] == 0
    summary = trace.summary()
    assert summary.wall_ns == [10_000, 10_000]
    assert summary.calls["Isend"] == {"count": 2, "bytes": 128, "bytes2": 0, "ns": 200}
    assert "COMPLETE" not in summary.calls
    assert summary.others == {"Win_fence": 2}
    # Pcontrol(1) ends at 1110, Pcontrol(2) starts at 5000; phase 2 runs to Finalize (11_000)
    assert summary.phases == {1: [3890, 3890], 2: [5990, 5990]}
    assert summary.hosts == ["node0", "node0"] and summary.library == "Test MPI 1.0"


def test_members_of_a_new_communicator(tmp_path: Path) -> None:
    records = [_record(fmt.INIT, 0, 1000), _record(39, 1000, 1100, aux=2, aux2=12)]
    members = np.arange(12, dtype="<i4") * 3
    for first in (0, 10):
        rec = _record(fmt.MEMBERS, 1100, 1100, aux=first, aux2=min(10, 12 - first))
        raw = bytearray(rec.tobytes())
        chunk = members[first:first + 10]
        raw[16:16 + 4 * len(chunk)] = chunk.tobytes()
        records.append(np.frombuffer(bytes(raw), dtype=fmt.RECORD_DTYPE)[0])
    _write(tmp_path / "rank-0.cctrace", 0, 1, records)
    assert read_trace(tmp_path).ranks[0].members() == {2: members.tolist()}


@pytest.mark.parametrize("damage, message", [
    (lambda b: b[:100], "shorter than the 256-byte trace header"),
    (lambda b: b"XXXXXXXX" + b[8:], "not a commchar trace"),
    (lambda b: b[:8] + (3).to_bytes(4, "little") + b[12:], "trace format version 3"),
    (lambda b: b[:12] + (32).to_bytes(4, "little") + b[16:], "record size 32"),
    (lambda b: b[:-64], "cut short: header says 11 records, the file holds 10"),
    (lambda b: b[:-20], "cut short"),
    (lambda b: b[:256] + b"\xff\xff" + b[258:], "unknown call id 65535"),
])
def test_damaged_file_is_one_line_error(trace_dir: Path, damage, message: str) -> None:
    path = trace_dir / "rank-1.cctrace"
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(InputError, match=re.escape(message)) as caught:
        read_trace(trace_dir)
    assert "\n" not in str(caught.value) and "rank-1.cctrace" in str(caught.value)


def test_unfinalized_file_needs_allow_partial(trace_dir: Path) -> None:
    path = trace_dir / "rank-1.cctrace"
    _write(path, 1, 2, _program(1)[:5], finalized=False)
    path.write_bytes(path.read_bytes() + b"\0" * 10)  # a record half written when it died
    with pytest.raises(InputError, match="never finalized"):
        read_trace(trace_dir)
    trace = read_trace(trace_dir, allow_partial=True)
    assert not trace.complete
    assert len(trace.ranks[1].records) == 5
    assert trace.ranks[1].wall_ns == 2000 - 1000
    assert trace.summary().partial[0].startswith("rank-1.cctrace: never finalized")


def test_missing_rank_and_empty_directory(trace_dir: Path, tmp_path_factory) -> None:
    (trace_dir / "rank-0.cctrace").unlink()
    with pytest.raises(InputError, match="missing rank-0.cctrace"):
        read_trace(trace_dir)
    assert len(read_trace(trace_dir, allow_partial=True).ranks) == 1
    with pytest.raises(InputError, match="no rank-<r>.cctrace files"):
        read_trace(tmp_path_factory.mktemp("empty"))


def test_tables_match_the_c_header() -> None:
    """The generated call tables are what the header gives today (the simulator generates
    its ids from the header at build time), and each table agrees with it independently."""
    generator = HEADER.parents[1] / "scripts" / "gen-trace-calls.py"
    checked = subprocess.run([sys.executable, str(generator), "--check"], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    text = HEADER.read_text()
    calls = {int(v): k for k, v in re.findall(r"CC_([A-Z_]+) = (\d+)", text.split("enum cc_call")[1]
                                             .split("};")[0])}
    assert {k: fmt.CALL_NAMES[k].upper() for k in calls} == calls
    assert set(calls) == set(fmt.CALL_NAMES)
    block = text.split("#define CC_TRACE_OTHER_NAMES(X)")[1].split("\n\n")[0]
    assert tuple(re.findall(r"X\((\w+)\)", block)) == fmt.OTHER_NAMES
    for name, value in [("CC_TRACE_HEADER_BYTES", fmt.HEADER_BYTES),
                        ("CC_TRACE_RECORD_BYTES", fmt.RECORD_BYTES)]:
        assert re.search(rf"#define {name} {value}\b", text)


def test_a_size_field_carries_its_buffers_place_in_the_page(tmp_path: Path) -> None:
    placed = lambda n, at: n | ((fmt.PAGE_KNOWN | at) << fmt.SIZE_BITS)  # noqa: E731
    records = [_record(fmt.INIT, 0, 1000),
               _record(11, 1200, 1300, peer=0, tag=3, bytes=placed(32768, 16),  # Sendrecv
                       bytes2=placed(32768, 4095), aux=0, aux2=3),
               _record(1, 1400, 1500, peer=0, tag=3, bytes=64),  # Send: no place recorded
               _record(34, 1600, 1700, bytes=64, bytes2=placed(64, 48)),  # Allreduce, in place
               _record(fmt.FINALIZE, 11_000, 11_500)]
    _write(tmp_path / "rank-0.cctrace", 0, 1, records)
    rank = read_trace(tmp_path).ranks[0]
    # the sizes alone, and the places beside them
    assert rank.records["bytes"].tolist() == [0, 32768, 64, 64, 0]
    assert rank.records["bytes2"].tolist() == [0, 32768, 0, 64, 0]
    assert rank.places.tolist() == [[-1, -1], [16, 4095], [-1, -1], [-1, 48], [-1, -1]]


def test_a_sends_size_field_says_how_much_of_its_buffer_was_written(tmp_path: Path) -> None:
    def sent(n: int, at: int, code: int) -> int:
        return n | ((fmt.PAGE_KNOWN | (code << fmt.WRITTEN_SHIFT) | at) << fmt.SIZE_BITS)
    records = [_record(fmt.INIT, 0, 1000),
               _record(1, 1200, 1300, peer=0, tag=3, bytes=sent(4096, 16, fmt.WRITTEN_ENDS)),  # Send
               _record(6, 1400, 1500, peer=0, tag=3, bytes=sent(4096, 16, 0)),  # Isend, nothing seen
               _record(11, 1600, 1700, peer=0, tag=3, bytes=sent(32768, 48, fmt.WRITTEN_WHOLE),  # Sendrecv
                       bytes2=32768 | ((fmt.PAGE_KNOWN | 32) << fmt.SIZE_BITS), aux=0, aux2=3),
               _record(fmt.FINALIZE, 11_000, 11_500)]
    _write(tmp_path / "rank-0.cctrace", 0, 1, records)
    rank = read_trace(tmp_path).ranks[0]
    assert rank.records["bytes"].tolist() == [0, 4096, 4096, 32768, 0]
    assert rank.places.tolist() == [[-1, -1], [16, -1], [16, -1], [48, 32], [-1, -1]]
    assert rank.written.tolist() == [0, fmt.WRITTEN_ENDS, 0, fmt.WRITTEN_WHOLE, 0]


# Send: written bits without a place; Recv: written bits on a call that sends nothing; Bcast
@pytest.mark.parametrize("call, high", [(1, 0x1000), (5, fmt.PAGE_KNOWN | 0x1000 | 16), (24, fmt.PAGE_KNOWN | 16)])
def test_high_bits_that_are_no_place_are_a_corrupt_size(tmp_path: Path, call: int, high: int) -> None:
    """A place is PAGE_KNOWN | offset (with a send's written bits), on a call that places its
    buffers only: anything else above the 48 bits is a size beyond what a trace may hold."""
    records = [_record(fmt.INIT, 0, 1000), _record(call, 1200, 1300, peer=0, bytes=(high << fmt.SIZE_BITS) | 64),
               _record(fmt.FINALIZE, 11_000, 11_500)]
    _write(tmp_path / "rank-0.cctrace", 0, 1, records)
    with pytest.raises(InputError, match="more than the 1099511627776"):
        read_trace(tmp_path)
