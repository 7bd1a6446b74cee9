#!/usr/bin/env python3
"""What a collective's start synchronization adds to its time.

The kernel times a collective repetition from each rank's start to its end and
keeps the slowest rank's (docs/kernel-protocol.md). After a barrier (`--sync
barrier`) the rank the barrier lets out first waits inside the call for the
last, so the barrier's exit skew is in the time; back to back (`--sync none`)
each call starts as the previous one left the ranks, as a program's loop of
them does, and a rooted collective's calls can overlap (a root sends the next
broadcast while the leaves still copy the last). This runs `commchar run` of
the operations under each synchronization in turn, the libraries and
synchronizations alternated over --rounds rounds, and prints per library,
operation and size the median time under each and the ratio of the first to
the second. Every point carries the cores' round trip (docs/method.md, "Where
the ranks' cores are"); the host's states of the cores are shown apart, since
the skew is of the order of that round trip.

    python3 bench/collective_sync.py [--library mpich,openmpi] [--rounds 8]
        [--ops allreduce:sum,alltoall,bcast] [--sizes 256,4K,32K] [--syncs barrier,none]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from kernel_points import measure

from commchar.core_distance import split


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", default="mpich,openmpi")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--ops", default="allreduce:sum,alltoall,bcast")
    parser.add_argument("--sizes", default="256,4K,32K")
    parser.add_argument("--syncs", default="barrier,none", help="two of auto, barrier, none, window")
    args = parser.parse_args()
    syncs = [x for x in args.syncs.split(",") if x]
    if len(syncs) != 2:
        parser.error("--syncs takes two synchronizations")
    libraries = [x for x in args.library.split(",") if x]
    rows: list[tuple[str, str, int, str, float, tuple[float, float] | None]] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for library in libraries:
                for sync in syncs:
                    db = Path(tmp) / f"{library}-{sync}-{r}.db"
                    for pt in measure(db, library, args.ops, args.sizes, ["--sync", sync]):
                        rows.append((library, pt.operation, pt.n, sync, pt.t_us, pt.cores))
            print(f"round {r + 1}/{args.rounds}", file=sys.stderr, end="\r")
    print(f"{args.rounds} rounds in {time.monotonic() - started:.0f} s")
    states = split(pair for *_, pair in rows if pair is not None)
    kept: dict[tuple[str, str, int, int], dict[str, list[float]]] = {}
    for library, key, n, sync, t, pair in rows:
        state = states.state_of(pair) if states is not None and pair is not None else -1
        kept.setdefault((state, library, key, n), {}).setdefault(sync, []).append(t)
    first, second = syncs
    print(f"{'cores (ns)':>10s} {'library':8s} {'operation':15s} {'bytes':>7s} {first + ' (us)':>14s} "
          f"{second + ' (us)':>14s} {'ratio':>6s} {'points':>7s}")
    for (state, library, key, n), by_sync in sorted(kept.items()):
        if first not in by_sync or second not in by_sync:
            continue
        a, b = statistics.median(by_sync[first]), statistics.median(by_sync[second])
        cores = f"{statistics.median(states.members[state]):.0f}" if states is not None and state >= 0 else "-"
        print(f"{cores:>10s} {library:8s} {key:15s} {n:7d} {a:14.3f} {b:14.3f} {a / b:6.2f} "
              f"{len(by_sync[first]):3d}/{len(by_sync[second]):<3d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
