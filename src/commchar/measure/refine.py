"""Refinement: measure more sizes where a sweep's curve changes between two
neighbouring sizes (models/thresholds.py finds the changes), round after round,
until each is pinned or the time budget is spent.

Each round reads what the store holds, so the sizes a round asks for depend only
on stored points: an interrupted run resumed with `--resume` proposes the same
sizes again, minus those already stored. Refined points are ordinary points
marked `refined` in the store.

What a round asks for comes from a proposer: by default the changes of the curve
(`threshold_proposer`); the adaptive size rule (measure/adaptive.py) adds the
sizes its model still needs to the same rounds.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Callable

from commchar.measure.plan import Point
from commchar.models.thresholds import JUMP, SLOPE_TOLERANCE, Change, find_changes
from commchar.store import Store, point_order

# Sizes per gap and round. A jump's gap shrinks 8-fold a round (a factor-of-two
# gap of 8 KiB is pinned to the byte in 5 rounds): every round costs a job launch
# (a second or two), and each size above S costs repetitions of the receiver's
# delay, so 7 balances the two (15 a round spent more on sizes above S than it
# saved in launches; plain bisection launches 13 jobs). A slope's gap shrinks
# 4-fold in log a round (a factor of two to 4.4% in 2 rounds).
JUMP_SIZES_PER_ROUND = 7
SLOPE_SIZES_PER_ROUND = 3
# Enough for a 2 GiB gap at 16-fold a round; the budget usually ends it sooner.
MAX_ROUNDS = 8
# The default budget: this share of the sweep's own measuring time, at least
# MIN_BUDGET_S (a launch of mpirun alone takes a second or two, and a jump needs
# about four rounds).
BUDGET_SHARE = 0.12
MIN_BUDGET_S = 30.0


def default_budget(sweep_seconds: float) -> float:
    return max(MIN_BUDGET_S, BUDGET_SHARE * sweep_seconds)


@dataclass
class RefineResult:
    rounds: int = 0
    points: int = 0  # refined points asked for (stored or failed)
    open_changes: int = 0  # changes still not pinned when refinement stopped
    out_of_budget: bool = False


# (library name, p, points to measure) -> measures them, storing each as refined
MeasureJob = Callable[[str, int, list[Point]], None]


# (stored point dicts of the libraries refined, keys measured, keys tried) ->
# (points to measure next per (library, p), how many things are still open)
Proposer = Callable[[list[dict], set[tuple], set[tuple]], tuple[dict[tuple[str, int], list[Point]], int]]


def proposals(changes: list[Change], measured: set[tuple], tried: set[tuple],
              jump_sizes: int = JUMP_SIZES_PER_ROUND) -> dict[tuple[str, int], list[Point]]:
    """The sizes to measure next per (library, p): inside every change not yet pinned,
    leaving out what is stored and what this refinement already tried (a size that
    failed is not asked for again and again)."""
    todo: dict[tuple[str, int], set[Point]] = defaultdict(set)
    for change in changes:
        if change.pinned(SLOPE_TOLERANCE):
            continue
        count = jump_sizes if change.kind == JUMP else SLOPE_SIZES_PER_ROUND
        for n in change.inside(count):
            key = (change.library, change.op, change.variant, change.p, n)
            if key not in measured and key not in tried:
                todo[(change.library, change.p)].add(Point(change.op, change.variant, n))
    return {k: sorted(v) for k, v in sorted(todo.items()) if v}


def threshold_proposer(jump_sizes: int = JUMP_SIZES_PER_ROUND) -> Proposer:
    """Sizes inside every change of the curve not yet pinned (models/thresholds.py)."""
    def propose(points: list[dict], measured: set[tuple], tried: set[tuple]
                ) -> tuple[dict[tuple[str, int], list[Point]], int]:
        changes = find_changes(points)
        return (proposals(changes, measured, tried, jump_sizes),
                sum(1 for c in changes if not c.pinned(SLOPE_TOLERANCE)))
    return propose


def refine(store: Store, run_id: int, libraries: list[str], budget_s: float,
           measure: MeasureJob, on_round: Callable[[int, int], None] | None = None,
           propose: Proposer | None = None, max_rounds: int = MAX_ROUNDS) -> RefineResult:
    """Refine the changes of `libraries` in run `run_id` (or what `propose` asks for) until
    nothing is open, `max_rounds`, or `budget_s` seconds (checked before each job: a job
    started runs to its end)."""
    result = RefineResult()
    started = time.monotonic()
    tried: set[tuple] = set()
    last_job: dict[str, float] = {}  # seconds the library's last refinement job took
    propose = propose or threshold_proposer()
    known: dict[int, dict] = {}  # the run's points read so far: a round reads only those stored since
    for round_no in range(1, max_rounds + 2):
        known.update((pt["point_id"], pt) for pt in store.points([run_id], after_id=max(known, default=None))
                     if pt["library"] in libraries)
        points = sorted(known.values(), key=point_order)
        measured = {(pt["library"], pt["op"], pt["variant"], pt["p"], pt["n_bytes"]) for pt in points}
        todo, result.open_changes = propose(points, measured, tried)
        if not todo or round_no > max_rounds:
            break
        if on_round is not None:
            on_round(round_no, sum(len(v) for v in todo.values()))
        for (library, p), job_points in todo.items():
            # a job is started only if it should end within the budget, judged by the
            # library's previous refinement job (rounds shrink, so it rarely errs short)
            if time.monotonic() - started + last_job.get(library, 0.0) > budget_s:
                result.out_of_budget = True
                return result
            tried.update((library, pt.op, pt.variant, p, pt.n_bytes) for pt in job_points)
            result.points += len(job_points)
            job_started = time.monotonic()
            measure(library, p, job_points)
            last_job[library] = time.monotonic() - job_started
        result.rounds = round_no
    return result
