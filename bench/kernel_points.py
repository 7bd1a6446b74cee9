"""`commchar run` at p = 2 into a store of its own, and the valid points it measured: what the
bench scripts that set kernel options side by side (buffer_offset.py, collective_sync.py)
alternate and compare."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from commchar.core_distance import rtt_pair  # noqa: E402
from commchar.jsonio import loads  # noqa: E402

ENV = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


class Point(NamedTuple):
    operation: str  # op, or op:variant
    n: int
    t_us: float
    cores: tuple[float, float] | None  # the ranks' cores' round trips (docs/method.md)


def measure(db: Path, library: str, ops: str, sizes: str, options: list[str]) -> list[Point]:
    """One run of `ops` at `sizes` with `options` (no refinement) into `db`: its valid points."""
    subprocess.run([sys.executable, "-m", "commchar", "run", "--db", str(db), "--library", library, "--np", "2",
                    "--ops", ops, "--sizes", sizes, "--no-refine", *options],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
        return [Point(f"{op}:{variant}" if variant else op, int(n), float(t),
                      rtt_pair(loads(extra, "extra") if extra else {}))
                for op, variant, n, t, extra in con.execute(
                    "SELECT op, variant, n_bytes, t_us, extra_json FROM points WHERE valid = 1")]
