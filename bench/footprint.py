#!/usr/bin/env python3
"""What a copy pays once a rank's message buffers outgrow its caches: the kernel's
`footprint` probe (the exchange with each rank cycling through 4, 16 or 64 pairs of
buffers, with the other rank and with itself) against the same loop over one pair
(`footprint:x1`, `footprint:self_x1`), measured side by side.

Runs `commchar run --ops footprint` --rounds times, the libraries alternated, and prints
per library, path (peer or self), size and variant the bytes a rank cycled through and the time's ratio to the
one-pair loop of the same run: the median over the rounds and the range. Nothing is
fitted; `commchar fit` of the same store gives the model's `copy_footprint`.

    chrt -f 10 python3 bench/footprint.py [--library mpich,openmpi] [--rounds 3] [--sizes 64K,256K,1M]
"""

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

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", default="mpich,openmpi")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sizes", default="64K,256K,1M")
    args = parser.parse_args()
    if args.rounds < 1:
        print("footprint: --rounds must be at least 1", file=sys.stderr)
        return 2
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "footprint.db"
        for r in range(args.rounds):
            for library in (x for x in args.library.split(",") if x):
                done = subprocess.run([sys.executable, "-m", "commchar", "run", "--db", str(db), "--library", library,
                                       "--np", "2", "--ops", "footprint", "--sizes", args.sizes, "--no-refine"],
                                      cwd=ROOT, env=env, capture_output=True, text=True)
                if done.returncode != 0:
                    print(f"footprint: round {r + 1}, {library}: {done.stderr.strip()}", file=sys.stderr)
                    return 1
        with closing(sqlite3.connect(db)) as conn:
            rows = conn.execute("SELECT run_id, library, variant, n_bytes, t_mean_us, cache_region_bytes FROM points"
                                " WHERE op = 'footprint' AND valid = 1").fetchall()
    # each path against its own one-pair loop: between ranks x1, to oneself self_x1
    path = {variant: variant.rpartition("x")[0] for _, _, variant, _, _, _ in rows}
    one_pairs = ("x1", "self_x1")
    one_pair = {(run, lib, path[v], n): t for run, lib, v, n, t, _ in rows if v in one_pairs}
    ratios: dict[tuple[str, str, int, int], list[float]] = {}
    for run, lib, variant, n, t, region in rows:
        base = one_pair.get((run, lib, path[variant], n))
        if variant not in one_pairs and base:
            ratios.setdefault((lib, path[variant], n, int(variant.rpartition("x")[2])), []).append(t / base)
    print(f"{'library':8s} {'path':>5s} {'bytes':>8s} {'pairs':>5s} {'a rank spans':>13s} {'time / one pair':>16s} "
          f"{'range':>13s}")
    for (lib, to, n, pairs), found in sorted(ratios.items()):
        spans = next(region for _, l2, v, n2, _, region in rows if l2 == lib and n2 == n and v == f"{to}x{pairs}")
        print(f"{lib:8s} {'self' if to else 'peer':>5s} {n:8d} {pairs:5d} {spans / 2**20:9.1f} MiB "
              f"{statistics.median(found):16.2f} {min(found):6.2f}..{max(found):.2f}")
    print(f"{args.rounds} round(s), {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
