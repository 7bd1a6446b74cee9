#!/usr/bin/env python3
"""What threshold refinement adds to a default run's time.

Runs `commchar run --np 2` (every library found, default operations, sizes and
precision) with refinement and with `--no-refine`, alternating so that a load
that changes over time weighs on both alike, and prints each run's wall time,
the refined points, the refinement phase's own seconds (from the run's end back
to its last planned point: a figure the machine's load disturbs far less than
the difference of two whole runs), and the ratio of the medians.

    python bench/refine_overhead.py [--pairs 2] [--library openmpi,mpich]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from commchar.store import Store


def refinement_seconds(store: Store) -> float:
    """From the run's last planned point to its end: the time refinement added."""
    from datetime import datetime

    run = store.runs()[-1]
    planned = max(p["point_id"] for p in store.points() if not p["refined"])
    row = store.connection.execute("SELECT created_at FROM points WHERE id = ?", (planned,)).fetchone()
    return (datetime.fromisoformat(run["finished_at"]) - datetime.fromisoformat(row[0])).total_seconds()


def one_run(db: Path, library: str | None, refine: bool) -> tuple[float, int, int, float]:
    argv = [sys.executable, "-m", "commchar", "run", "--db", str(db), "--np", "2"]
    argv += ["--library", library] if library else []
    argv += [] if refine else ["--no-refine"]
    started = time.monotonic()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=7200)
    seconds = time.monotonic() - started
    with Store(db, readonly=True) as store:
        points = store.points()
        phase = refinement_seconds(store) if refine else 0.0
    return seconds, len(points), sum(1 for p in points if p["refined"]), phase


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2, help="runs with and without refinement (each)")
    parser.add_argument("--library", help="comma-separated libraries (default: every one found)")
    args = parser.parse_args()
    times: dict[bool, list[float]] = {True: [], False: []}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.pairs):
            # alternate which goes first, so neither always meets the same moment of the load
            for refine in ((True, False) if i % 2 == 0 else (False, True)):
                seconds, points, refined, phase = one_run(Path(tmp) / f"{i}-{refine}.db", args.library,
                                                          refine)
                times[refine].append(seconds)
                share = f", refinement phase {phase:.0f} s = {phase / (seconds - phase):.1%} of the rest" \
                    if refine else ""
                print(f"pair {i + 1} {'refine   ' if refine else 'no-refine'}: {seconds:7.1f} s,"
                      f" {points} points ({refined} refined){share}", flush=True)
    with_refine, without = statistics.median(times[True]), statistics.median(times[False])
    print(f"median with refinement {with_refine:.1f} s, without {without:.1f} s:"
          f" ratio {with_refine / without:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
