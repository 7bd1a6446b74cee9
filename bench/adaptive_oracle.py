#!/usr/bin/env python3
"""The adaptive size rule replayed on a dense reference: its sizes' error without the machine.

A fast run and a dense reference are two runs, minutes apart: on a shared
machine their times at the same size differ by a few percent (the figure this
prints first), which no choice of sizes removes. This replays the rule
(measure/adaptive.py: the coarse grid, then its rounds) with the reference as
the measurement: each size a round asks for is answered by the reference's
point at the nearest dense size (in log) not yet taken, so every time comes
from one run; the model fitted to the points taken (as `commchar fit` fits,
one state of the ranks' cores) then predicts every reference size measured
in that state, and this prints per library the points taken, the median and
worst error and how many sizes are missed by more than 10% (the errors
relative to the reference time, or to 0.05 us where shorter, and the state
as bench/adaptive_accuracy.py takes them). The points taken are 1% points
where a run measures 3%: the figure is the rule's and the model's, at a
noise below a fast run's. No MPI is run.

    python bench/adaptive_oracle.py --reference DB [--library mpich,openmpi] [--by-operation]
        [--fast DB ...]   # also: how far each fast run's times lie from the reference's
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from adaptive_accuracy import (WORST_BAR, curve_misses, dense_runs, drift, in_fast_state,  # noqa: E402
                               points_of, relative)

from commchar.measure.adaptive import MAX_ROUNDS, adaptive_proposer, chosen  # noqa: E402
from commchar.measure.operations import OPERATIONS  # noqa: E402
from commchar.measure.plan import ADAPTIVE, rule_sizes  # noqa: E402


def key(pt: dict) -> tuple[str, str]:
    return pt["op"], pt["variant"] or ""


def replay(reference: list[dict]) -> tuple[list[dict], int]:
    """The reference points the rule takes, and its rounds."""
    by_series: dict[tuple[str, str], dict[int, dict]] = {}
    for pt in reference:
        by_series.setdefault(key(pt), {})[int(pt["n_bytes"])] = pt
    taken: dict[tuple[str, str, int], dict] = {}
    for (op, variant), sizes in by_series.items():
        coarse = (rule_sizes(OPERATIONS[op].default_max_bytes, ADAPTIVE) if chosen(op) else list(sizes))
        for n in {OPERATIONS[op].effective_size(n, 2) for n in coarse}:  # as the runner rounds them
            if n in sizes:
                taken[(op, variant, n)] = sizes[n]
    propose = adaptive_proposer(0.01)
    tried: set[tuple] = set()
    rounds = 0
    for _ in range(MAX_ROUNDS):
        points = list(taken.values())
        measured = {(pt["library"], pt["op"], pt["variant"], pt["p"], pt["n_bytes"]) for pt in points}
        todo, _ = propose(points, measured, tried)
        if not todo:
            break
        rounds += 1
        for (library, p), asked in todo.items():
            for point in asked:
                tried.add((library, point.op, point.variant, p, point.n_bytes))
                sizes = by_series.get((point.op, point.variant or ""), {})
                free = [n for n in sizes if (point.op, point.variant or "", n) not in taken]
                if not free:
                    continue
                near = min(free, key=lambda n: abs(math.log((n + 0.5) / (point.n_bytes + 0.5))))
                taken[(point.op, point.variant or "", near)] = sizes[near]
    return list(taken.values()), rounds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reference", type=Path, required=True)
    parser.add_argument("--library", default="mpich,openmpi")
    parser.add_argument("--fast", type=Path, nargs="*", default=[])
    parser.add_argument("--by-operation", action="store_true")
    args = parser.parse_args()
    if not args.reference.exists():
        print(f"adaptive_oracle: no reference database {args.reference}", file=sys.stderr)
        return 2
    for library in args.library.split(","):
        runs = dense_runs(args.reference, library)
        if not runs:
            print(f"{library:8} no dense run in {args.reference}")
            continue
        reference = points_of(args.reference, library, runs)
        for db in args.fast:
            d = drift(points_of(db, library, []), reference)
            if d:
                print(f"{library:8} {db}: at the {len(d)} sizes both measured, its times lie"
                      f" {100 * statistics.median(d):.2f}% from the reference's (median),"
                      f" {sum(e > WORST_BAR for e in d)} beyond 10%")
        taken, rounds = replay(reference)
        # as bench/adaptive_accuracy.py scores a fast run: the model of the points taken (as
        # `commchar fit` keeps them, one state of the ranks' cores) against the reference's
        # points of that state
        kept, scored, state = in_fast_state(taken, reference)
        print(f"  cores (the points the rule took, as a fast run): {state}")
        errors = relative(curve_misses(kept, scored, library))
        every = [e for pairs in errors.values() for _, e in pairs]
        took = {(pt["op"], pt["variant"], pt["n_bytes"]) for pt in taken}
        untaken = [e for op, pairs in errors.items() for n, e in pairs
                   if (*(op.split(":") + [""])[:2], n) not in took]
        if args.by_operation:
            for op, pairs in sorted(errors.items()):
                n, worst = max(pairs, key=lambda ne: ne[1])
                print(f"  {op:22} median {100 * statistics.median(e for _, e in pairs):5.1f}%"
                      f"  worst {100 * worst:6.1f}% at {n} B")
        print(f"{library:8} the rule replayed on the reference: {len(taken)} of {len(reference)} points"
              f" in {rounds} rounds; {len(every)} reference sizes: median error"
              f" {100 * statistics.median(every):.2f}%, worst {100 * max(every):.1f}%,"
              f" {sum(e > WORST_BAR for e in every)} beyond 10%; at the {len(untaken)} sizes not taken:"
              f" median {100 * statistics.median(untaken):.2f}%, {sum(e > WORST_BAR for e in untaken)} beyond 10%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
