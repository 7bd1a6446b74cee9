"""TEST_RUN records read back (no MPI): a run counts as the Test* calls it stands for, its
time inside MPI is their count times the least one took, and a record no program can make
is still refused while a run's count is not taken for a message size."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from commchar.errors import InputError
from commchar.trace import format as fmt
from commchar.trace import read_trace
from commchar.trace.synthetic import T_INIT_NS, write_rank


def _records(*rows: dict) -> np.ndarray:
    rec = np.zeros(len(rows), dtype=fmt.RECORD_DTYPE)
    for i, row in enumerate(rows):
        rec["comm"][i], rec["peer"][i], rec["tag"][i], rec["aux2"][i] = -1, -1, -1, -1
        for key, value in row.items():
            rec[key][i] = value
    return rec


def _run(call: str, count: int, least: int, start: int, end: int) -> dict:
    return {"call": fmt.TEST_RUN, "aux": fmt.CALL_IDS[call], "aux2": 1, "bytes": count,
            "bytes2": least, "req": 7, "t_start": T_INIT_NS + start, "t_end": T_INIT_NS + end}


def test_a_run_counts_as_its_calls(tmp_path: Path) -> None:
    rec = _records(_run("Testany", 1_000_000, 25, 0, 40_000_000), _run("Test", 10, 30, 5, 40_000_010),
                   {"call": fmt.CALL_IDS["Testany"], "aux": 1, "t_start": T_INIT_NS + 40_000_100,
                    "t_end": T_INIT_NS + 40_000_200})
    write_rank(tmp_path / "rank-0.cctrace", 0, 1, rec, t_finalize_ns=T_INIT_NS + 50_000_000)
    trace = read_trace(tmp_path)
    summary = trace.summary()
    assert summary.calls["Testany"] == {"count": 1_000_001, "bytes": 0, "bytes2": 0,
                                        "ns": 25_000_000 + 100}
    assert summary.calls["Test"]["count"] == 10 and summary.calls["Test"]["ns"] == 300
    assert "Test_run" not in summary.calls
    assert summary.mpi_ns == [25_000_000 + 300 + 100]
    assert summary.records == [3]  # a million polls in 192 bytes
    assert list(fmt.test_run_ns(trace.ranks[0].records)) == [25_000_000, 300, 0]


def test_the_bounds_check_skips_a_runs_count_but_not_a_message(tmp_path: Path) -> None:
    rec = _records(_run("Testsome", 1 << 41, 1, 0, 10))
    write_rank(tmp_path / "rank-0.cctrace", 0, 1, rec, t_finalize_ns=T_INIT_NS + 100)
    assert read_trace(tmp_path).summary().calls["Testsome"]["count"] == 1 << 41
    rec = _records({"call": fmt.CALL_IDS["Send"], "peer": 0, "bytes": 1 << 41,
                    "t_start": T_INIT_NS, "t_end": T_INIT_NS})
    write_rank(tmp_path / "rank-0.cctrace", 0, 1, rec, t_finalize_ns=T_INIT_NS + 100)
    with pytest.raises(InputError, match="2\\^40"):
        read_trace(tmp_path)
