#!/usr/bin/env python3
"""What threshold refinement adds to a default run's time.

Runs `commchar run --np 2` (every library found, default operations, sizes and
precision) with refinement and with `--no-refine`, alternating so that a load
that changes over time weighs on both alike, and prints each run's wall time,
the refined points and thresholds, and the ratio of the medians.

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


def one_run(db: Path, library: str | None, refine: bool) -> tuple[float, int, int]:
    argv = [sys.executable, "-m", "commchar", "run", "--db", str(db), "--np", "2"]
    argv += ["--library", library] if library else []
    argv += [] if refine else ["--no-refine"]
    started = time.monotonic()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=7200)
    seconds = time.monotonic() - started
    with Store(db, readonly=True) as store:
        points = store.points()
    return seconds, len(points), sum(1 for p in points if p["refined"])


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
                seconds, points, refined = one_run(Path(tmp) / f"{i}-{refine}.db", args.library, refine)
                times[refine].append(seconds)
                print(f"pair {i + 1} {'refine   ' if refine else 'no-refine'}: {seconds:7.1f} s,"
                      f" {points} points ({refined} refined)", flush=True)
    with_refine, without = statistics.median(times[True]), statistics.median(times[False])
    print(f"median with refinement {with_refine:.1f} s, without {without:.1f} s:"
          f" ratio {with_refine / without:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
