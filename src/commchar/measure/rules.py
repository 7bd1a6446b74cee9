"""A sweep under a size rule (`--sizes grid|adaptive|dense`, grid by default).

The planned points of each rule (measure/plan.py) are measured as a list of
sizes is (measure/runner.py: one job per library and p, every point stored as
it arrives, a crashed job relaunched); then the refinement's rounds
(measure/refine.py) add sizes: under grid and dense where the curve changes,
under adaptive also wherever the model being fitted is uncertain
(measure/adaptive.py), every adaptive point to LOOSE_FACTOR x --precision, but the
coarse grid of a series whose sizes the rule chooses to COARSE_FACTOR x it.
"""

from __future__ import annotations

import dataclasses
import math
import time
from pathlib import Path

from commchar.measure.adaptive import (COARSE_FACTOR, LOGGP_OVERHEADS_BELOW, LOOSE_FACTOR, MAX_ROUNDS, Record,
                                       adaptive_proposer, chosen, floored, long_floor)
from commchar.measure.build import ensure_kernel
from commchar.measure.launch import LaunchSpec, spec_hosts
from commchar.measure.libraries import Library
from commchar.measure.operations import OpVariant
from commchar.measure.plan import ADAPTIVE, Point, points_by_rule
from commchar.measure.refine import default_budget, refine
from commchar.measure.runner import (Observer, SweepOptions, SweepResult, _JobRunner, measure_moved,
                                     plan_work, refinement_jobs)
from commchar.store import Store

# The most a loosened precision may be: a CI half-width of a third of the median.
MAX_LOOSE_PRECISION = 0.33
# Under adaptive, the most seconds one point measures (or --max-time, if less): a point that
# cannot reach its precision in this long is noisy (a large message's bimodal times), and the
# model weighs it by its CI. Cutting the samples of a full run (MPICH, 2 cores) at 0.1 s saved
# a quarter of its measuring time and moved its median error against a 1% grid run by 0.1%;
# at 0.05 s a point descheduled throughout (a shared machine) had no samples left to recover.
ADAPTIVE_MAX_TIME_S = 0.1


def _loosened(options: SweepOptions, rule: str, factor: float) -> float:
    """--precision, or under adaptive `factor` times it (at most MAX_LOOSE_PRECISION)."""
    if rule != ADAPTIVE:
        return options.precision
    return min(MAX_LOOSE_PRECISION, max(options.precision, factor * options.precision))


def measuring_precision(options: SweepOptions, rule: str) -> float:
    """The precision each point is measured to where it carries none of its own: --precision,
    loosened under adaptive (the probes' and the sizes the rounds add)."""
    return _loosened(options, rule, LOOSE_FACTOR)


def coarse_precision(options: SweepOptions, rule: str) -> float:
    """The precision of the planned points of a series whose sizes the rule chooses: under
    adaptive its coarse grid's, looser than the rest; --precision under every other rule."""
    return _loosened(options, rule, COARSE_FACTOR)


def planned_points(ops: list[OpVariant], rule: str, p: int, options: SweepOptions) -> list[Point]:
    """The points `rule` plans at p; under adaptive, those of a series whose sizes the rule
    chooses carry the coarse grid's precision, and every point of CHEAP_BYTES or more the rule's
    fewest samples (the probes' too: LogGP's phases take their point's)."""
    points = points_by_rule(ops, rule, p)
    if rule != ADAPTIVE:
        return points
    coarse = coarse_precision(options, rule)
    floor = long_floor(options.min_reps)
    return [floored(dataclasses.replace(pt, precision=coarse) if chosen(pt.op) else pt, floor) for pt in points]


def measuring_max_time(options: SweepOptions, rule: str) -> float:
    """The most seconds each point measures: --max-time, capped under adaptive."""
    return min(options.max_time, ADAPTIVE_MAX_TIME_S) if rule == ADAPTIVE else options.max_time


def loggp_overheads_below(options: SweepOptions, rule: str) -> int:
    """The size from which LogGP's probe times its gap alone: LOGGP_OVERHEADS_BELOW under
    adaptive, the options' own (every size: 0) under every other rule."""
    return LOGGP_OVERHEADS_BELOW if rule == ADAPTIVE else options.loggp_overheads_below


def run_rule(store: Store, run_id: int, options: SweepOptions, libraries: list[Library],
             observer: Observer, rule: str, record: Record | None = None) -> SweepResult:
    """Measure `rule`'s planned points of `libraries`, then refine them (run_sweep's contract:
    what is stored already is not measured again, so a run resumes where it stopped)."""
    base = LaunchSpec(options.launcher, Path(options.hostfile) if options.hostfile else None,
                      dict(options.env))
    hosts = spec_hosts(base)
    several = bool(hosts and len(hosts) > 1)
    # the rule's own view of the options: what the kernel is asked for
    measuring = dataclasses.replace(options, precision=measuring_precision(options, rule),
                                    max_time=measuring_max_time(options, rule),
                                    loggp_overheads_below=loggp_overheads_below(options, rule))
    result = SweepResult(run_id, retried=store.clear_failures(run_id))
    work = plan_work(store, run_id, options, libraries, hosts, result,
                     lambda ops, p: planned_points(ops, rule, p, options))
    observer.planned(sum(len(placed.points) for _, _, placed in work))

    rounds = rule == ADAPTIVE and options.refine and not several
    # Under adaptive, the points that need a fresh job (the cold-start probe's) but the first
    # ride along with the rounds' jobs, each leading one, instead of a launch of their own;
    # what the rounds leave is measured after them.
    riders: dict[tuple[str, int], list[Point]] = {}
    started = time.monotonic()
    for library, p, placed in work:
        spec = LaunchSpec(base.launcher, base.hostfile, base.extra_env, placed.policy if several else None)
        runner = _JobRunner(store, run_id, measuring, spec, library, p, ensure_kernel(library), observer,
                            result, placed)
        todo = placed.points
        if rounds:
            fresh = [pt for pt in todo if runner.fresh(pt)]
            riders[(library.name, p)] = fresh[1:]
            todo = [pt for pt in todo if pt not in fresh[1:]]
        runner.run(todo)
    # As run_sweep: a run across hosts has two point-to-point series (on-node and off-node),
    # which neither the refinement nor the adaptive rule separates yet.
    if options.refine and not result.launched_nothing and not several:
        measure_moved(store, run_id, measuring, base, libraries, observer, result)
        measure = refinement_jobs(store, run_id, measuring, base, libraries, observer, result, riders)
        names = [library.name for library in libraries]
        budget = (options.refine_budget if options.refine_budget is not None
                  else default_budget(time.monotonic() - started))
        if rule == ADAPTIVE:
            # the rounds are the rule (MAX_ROUNDS of them), not an extra: a budget only if given
            budget = options.refine_budget if options.refine_budget is not None else math.inf
            result.refined = refine(store, run_id, names, budget, measure, observer.refining,
                                    propose=adaptive_proposer(options.precision, record,
                                                               long_floor(options.min_reps)),
                                    max_rounds=MAX_ROUNDS)
        else:
            result.refined = refine(store, run_id, names, budget, measure, observer.refining)
    for library, p, placed in work:
        left = riders.get((library.name, p))
        if left:
            _JobRunner(store, run_id, measuring, base, library, p, ensure_kernel(library), observer, result,
                       placed).run(left)
    return result
