"""`commchar run --batch-min-us` under real mpirun: the kernel gets the span, the job records
it, and a fast call's batch grows with it (docs/method.md, "How the kernel measures")."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing

import pytest

from commchar.cli import main

pytestmark = pytest.mark.mpi


def _run(db, library: str, *extra: str) -> tuple[set[float], dict[str, int]]:
    assert main(["run", "--db", str(db), "--library", library, "--ops", "pingpong:send,allreduce:sum",
                 "--sizes", "8", "--np", "2", "--no-refine", "--max-time", "0.2", *extra]) == 0
    with closing(sqlite3.connect(db)) as con:
        spans = {json.loads(o)["batch_min_us"] for (o,) in con.execute("SELECT kernel_options_json FROM jobs")}
        batches = dict(con.execute("SELECT op, batch FROM points WHERE valid = 1").fetchall())
    return spans, batches


def test_the_batch_span_reaches_the_kernel_and_sizes_its_batches(tmp_path, mpi_libraries):
    library = mpi_libraries[0].name
    spans, default = _run(tmp_path / "default.db", library)
    assert spans == {20.0}
    spans, short = _run(tmp_path / "short.db", library, "--batch-min-us", "0")
    assert spans == {0.0}
    assert set(default) == set(short) == {"pingpong", "allreduce"}
    # calls of a microsecond or less: 20 us holds tens of them, a few timer ticks a handful
    assert all(short[op] < default[op] for op in default), (short, default)
