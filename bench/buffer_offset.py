#!/usr/bin/env python3
"""What the place of a message buffer within its page costs.

The kernel's message buffers start `--buffer-offset` bytes past a page
boundary (16 by default, where glibc's malloc puts a large block). A program's
buffers lie wherever its allocator put them: a second buffer of n + 1 bytes
malloc'd after a first starts 16 bytes further on. This runs `commchar run`
of the ping-pong and the exchange at each offset in turn, the libraries and
offsets alternated over --rounds rounds, and prints, per library, operation
and size, the median time at each offset and its ratio to the default's.
With --move recv only the receive buffers move (`--recv-offset`), the send
buffers staying at 16: what a copy pays for where its two ends lie relative
to each other.
Every point carries the cores' round trip (docs/method.md, "Where the ranks'
cores are"); only points in the main state of the whole are compared.

    python3 bench/buffer_offset.py [--library mpich,openmpi] [--rounds 5] [--offsets 0,16,32,48]
        [--sizes 4K,32K,256K] [--ops pingpong:send,exchange:sendrecv] [--move both|recv]
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
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--offsets", default="0,16,32,48")
    parser.add_argument("--sizes", default="4K,32K,256K")
    parser.add_argument("--ops", default="pingpong:send,exchange:sendrecv")
    parser.add_argument("--move", choices=("both", "recv"), default="both",
                        help="which buffers start at each offset: all (--buffer-offset), or the receive"
                             " buffers alone (--recv-offset, the send buffers at 16)")
    args = parser.parse_args()
    flag = "--buffer-offset" if args.move == "both" else "--recv-offset"
    offsets = [int(x) for x in args.offsets.split(",")]
    libraries = [x for x in args.library.split(",") if x]
    rows: list[tuple[str, str, int, int, float, tuple[float, float] | None]] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for library in libraries:
                for offset in offsets:
                    db = Path(tmp) / f"{library}-{offset}-{r}.db"
                    for pt in measure(db, library, args.ops, args.sizes,
                                      ["--precision", "0.02", "--max-time", "0.1", flag, str(offset)]):
                        rows.append((library, pt.operation, pt.n, offset, pt.t_us, pt.cores))
            print(f"round {r + 1}/{args.rounds}", file=sys.stderr, end="\r")
    print(f"{args.rounds} rounds in {time.monotonic() - started:.0f} s")
    states = split(pair for *_, pair in rows if pair is not None)
    main_state = states.main() if states else None
    if states is not None:
        print(f"cores' round trip: main state {statistics.median(states.members[main_state]):.0f} ns "
              f"({len(states.members[main_state])} of {sum(len(m) for m in states.members)} points); "
              "only its points are compared")
    kept: dict[tuple[str, str, int], dict[int, list[float]]] = {}
    for library, key, n, offset, t, pair in rows:
        if states is not None and (pair is None or states.state_of(pair) != main_state):
            continue
        kept.setdefault((library, key, n), {}).setdefault(offset, []).append(t)
    print(f"{'library':8s} {'operation':18s} {'bytes':>7s} "
          + " ".join(f"{f'{args.move} +{o} (us)':>14s}" for o in offsets)
          + " " + " ".join(f"{f'/ +16 at +{o}':>12s}" for o in offsets if o != 16))
    for (library, key, n), by_offset in sorted(kept.items()):
        med = {o: statistics.median(v) for o, v in by_offset.items()}
        base = med.get(16)
        cells = " ".join(f"{med[o]:14.3f}" if o in med else f"{'-':>14s}" for o in offsets)
        ratios = " ".join(f"{med[o] / base:12.2f}" if o in med and base else f"{'-':>12s}"
                          for o in offsets if o != 16)
        print(f"{library:8s} {key:18s} {n:7d} {cells} {ratios}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
