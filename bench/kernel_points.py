"""`commchar run` at p = 2 into a store of its own, and the valid points it measured: what the
bench scripts that set kernel options side by side (buffer_offset.py, collective_sync.py,
batch_span.py) alternate and compare; and two settings alternated, compared per state of the
ranks' cores."""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from commchar.core_distance import rtt_pair, split  # noqa: E402
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


def ab_parser(doc: str, ops: str, sizes: str, rounds: int) -> argparse.ArgumentParser:
    """The options every two-setting comparison takes (its own are added by the caller)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--library", default="mpich,openmpi")
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--ops", default=ops)
    parser.add_argument("--sizes", default=sizes)
    return parser


def alternate(libraries: list[str], ops: str, sizes: str, settings: dict[str, list[str]], rounds: int) -> None:
    """Each library under each of two settings (label: `commchar run` options) in turn, --rounds
    times, then per state of the ranks' cores, library, operation and size the median time under
    each and the first's ratio to the second (the states apart: the host moves the two vCPUs
    between them, docs/method.md, "Where the ranks' cores are")."""
    rows: list[tuple[str, str, int, str, float, tuple[float, float] | None]] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for library in libraries:
                for i, (label, options) in enumerate(settings.items()):
                    db = Path(tmp) / f"{library}-{i}-{r}.db"
                    for pt in measure(db, library, ops, sizes, options):
                        rows.append((library, pt.operation, pt.n, label, pt.t_us, pt.cores))
            print(f"round {r + 1}/{rounds}", file=sys.stderr, end="\r")
    print(f"{rounds} rounds in {time.monotonic() - started:.0f} s")
    states = split(pair for *_, pair in rows if pair is not None)
    kept: dict[tuple[int, str, str, int], dict[str, list[float]]] = {}
    moved = 0
    for library, key, n, label, t, pair in rows:
        state = states.state_of(pair) if states is not None and pair is not None else -1
        if state is None:  # the cores moved while the point was measured
            moved += 1
            continue
        kept.setdefault((state, library, key, n), {}).setdefault(label, []).append(t)
    if moved:
        print(f"{moved} point(s) left out: the ranks' cores moved while they were measured")
    first, second = settings
    print(f"{'cores (ns)':>10s} {'library':8s} {'operation':15s} {'bytes':>7s} {first + ' (us)':>14s} "
          f"{second + ' (us)':>14s} {'ratio':>6s} {'points':>7s}")
    for (state, library, key, n), by_label in sorted(kept.items()):
        if first not in by_label or second not in by_label:
            continue
        a, b = statistics.median(by_label[first]), statistics.median(by_label[second])
        cores = f"{statistics.median(states.members[state]):.0f}" if states is not None and state >= 0 else "-"
        print(f"{cores:>10s} {library:8s} {key:15s} {n:7d} {a:14.3f} {b:14.3f} {a / b:6.2f} "
              f"{len(by_label[first]):3d}/{len(by_label[second]):<3d}")
