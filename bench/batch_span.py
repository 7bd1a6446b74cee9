#!/usr/bin/env python3
"""What a batched sample's length does to the time per call.

The kernel times a fast call in batches of back-to-back calls and divides
(docs/method.md, "How the kernel measures"). Each sample also holds its bounds:
the timer read that ends it and the one that starts it, and where the slowest
rank's time is kept (the collectives), the ranks' skew at its start. Those cost
the same however many calls the sample holds, so a short sample inflates the
time per call. This runs `commchar run` with each of two `--batch-min-us`
values in turn (0: only the timer's resolution sizes the batch, samples of a
few microseconds on this VM; the default 20), the libraries and the values
alternated over --rounds rounds, and prints per state of the ranks' cores,
library, operation and size the median time under each and their ratio.

    python3 bench/batch_span.py [--library mpich,openmpi] [--rounds 6]
        [--ops allreduce:sum,alltoall,barrier,pingpong:send,exchange:sendrecv]
        [--sizes 0,8,256,4K] [--spans 0,20]
"""

from __future__ import annotations

import sys

from kernel_points import ab_parser, alternate

from commchar.commands.run import KERNEL_MAX_BATCH_MIN_US


def main() -> int:
    parser = ab_parser(__doc__, "allreduce:sum,alltoall,barrier,pingpong:send,exchange:sendrecv", "0,8,256,4K",
                       rounds=6)
    parser.add_argument("--spans", default="0,20", help="two --batch-min-us values (microseconds)")
    args = parser.parse_args()
    spans = [x for x in args.spans.split(",") if x]
    if len(spans) != 2:
        parser.error("--spans takes two values")
    try:
        values = [float(x) for x in spans]
    except ValueError:
        parser.error(f"--spans: not numbers: {args.spans}")
    if not all(0 <= v <= KERNEL_MAX_BATCH_MIN_US for v in values) or values[0] == values[1]:
        parser.error(f"--spans: two different values from 0 to {KERNEL_MAX_BATCH_MIN_US:g} microseconds, "
                     f"not {args.spans}")
    libraries = [x for x in args.library.split(",") if x]
    settings = {f"{v:g} us": ["--batch-min-us", repr(v)] for v in values}
    alternate(libraries, args.ops, args.sizes, settings, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
