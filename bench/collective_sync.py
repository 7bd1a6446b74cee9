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

import sys

from kernel_points import ab_parser, alternate


def main() -> int:
    parser = ab_parser(__doc__, "allreduce:sum,alltoall,bcast", "256,4K,32K", rounds=8)
    parser.add_argument("--syncs", default="barrier,none", help="two of auto, barrier, none, window")
    args = parser.parse_args()
    syncs = [x for x in args.syncs.split(",") if x]
    if len(syncs) != 2 or syncs[0] == syncs[1]:
        parser.error("--syncs takes two different synchronizations")
    libraries = [x for x in args.library.split(",") if x]
    alternate(libraries, args.ops, args.sizes, {sync: ["--sync", sync] for sync in syncs}, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
