"""The adaptive size rule: sizes and repetitions chosen by the model being fitted.

A run under this rule (`commchar run` without `--sizes`) measures each
operation's coarse grid first (0, 1 B, 16 B, 256 B, ... every fourth power of
two, and the largest size; measure/plan.py), each point to a looser precision
than `--precision` (LOOSE_FACTOR times it). It then fits every series
(library, operation, variant, p) as `commchar fit` fits point-to-point
operations (models/regimes.py: the fewest Hockney segments consistent with the
points' noise) and, round after round, adds sizes only where that model is
uncertain:

- breakpoint: a gap between two segments whose lines disagree at its log
  midpoint by BREAK_TOLERANCE, split in log into 2-fold gaps (BREAK_SIZES at
  most a round), then bisected down to MIN_JUMP_GAP while they disagree by
  more than MAX_MISS (a jump);
- gap: a gap between measured sizes inside which the model's prediction
  leaves the band of the two measured times (TOLERANCE and their noise
  widen it): a communication time does not dip or peak between two sizes,
  so the model is wrong there (a segment of one size whose slope it guessed,
  the nearer of two segments chosen across a jump); the size, of GAP_PROBES
  evenly in log, where it leaves the band most;
- coarse gap: a gap between measured sizes wider than MAX_GAP gets its log
  midpoint, which checks that the model holds across it;
- deviates: a size added inside a segment of the previous round's model that
  lies further from it than its noise allows (DEVIATION_Z noise levels, the
  run-to-run floor included) and TOLERANCE gets the log midpoints of both its
  gaps (split further, round after round, while wider than MIN_GAP);
- ci: a segment whose predicted time is not known to within the CI target
  (LOOSE_FACTOR times `--precision`) at each of its sizes, from the weighted
  least-squares covariance of t_s and t_b under the points' own noise, gets the
  log midpoint of its widest gap: more repetitions where the model is least sure.

Each round analyses the points of the library's main state of the ranks'
cores only (models/core_distance_policy.py, as `commchar fit`): a point the
host measured with the cores elsewhere would be modelled as a segment.

An operation is closed when none of these asks for a size. Rounds are the
refinement's (measure/refine.py): one job per library and p covering every
operation still open, the rendezvous threshold S bisected in the same rounds.
Operations whose model is not a size curve keep their own sizes (barrier, mbw,
touch, coldstart), the LogGP probe its coarse grid, and the rndv probe is
refined only where it jumps.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from commchar.errors import InputError
from commchar.measure.operations import OPERATIONS
from commchar.measure.plan import Point
from commchar.measure.refine import Proposer, threshold_proposer
from commchar.models.core_distance_policy import keep_one_state
from commchar.models.inputs import spread
from commchar.models.regimes import DEFAULT_NOISE_FLOOR, MAX_MISS, SegmentedHockneyModel

# Coarse and added points are measured to LOOSE_FACTOR x --precision (3% at the
# default 1%); the model's predicted time must be known to the same.
LOOSE_FACTOR = 3.0
MAX_GAP = 4.0  # a gap wider than this is checked at its log midpoint (the coarse grid has 16-fold ones)
MIN_GAP = 2.05  # a gap this narrow (2-fold, give or take rounding) is not split...
MIN_JUMP_GAP = 1.5  # ...unless a jump lies in it: then down to this (the dense grid steps by 1.33, 1.5)
GAP_PROBES = 3  # sizes inside a gap at which the model's prediction is checked against the band
TOLERANCE = 0.03  # a size this close to the previous model never splits its gaps
BREAK_TOLERANCE = 0.03  # two segments this close at a gap's midpoint leave it alone
DEVIATION_Z = 2.0  # noise levels (with the run-to-run floor) a new size may lie off the previous model
BREAK_SIZES = 3  # most sizes a round inside a breakpoint's gap (16-fold to 2-fold in one round)
MAX_ROUNDS = 3  # a round is a job launch per library and p
JUMP_SIZES = 15  # rndv: S bracketed 16-fold a round (a coarse 4 KiB-64 KiB gap to 15 B in 3)
Z95 = 1.959964
# Operations whose sizes the rule chooses: every one measured over sizes whose model is
# a Hockney curve. The LogGP probe's model is its parameters (its coarse grid has sizes
# below and above S), rndv's is S (thresholds.py); the others keep their own sizes.
NOT_CHOSEN = ("loggp", "rndv", "touch", "coldstart", "mbw", "barrier")
# Segments fitted with the fit's own settings (models/assemble.py: P2P_MAX_SEGMENTS).
MAX_SEGMENTS = 12


def chosen(op: str) -> bool:
    """Whether the adaptive rule chooses `op`'s sizes beyond its coarse grid."""
    operation = OPERATIONS.get(op)
    return (operation is not None and op not in NOT_CHOSEN and operation.sizes is None
            and operation.unit != "none")


@dataclass
class SeriesState:
    """What the rule found for one series at one round: the sizes it asks for and why."""

    sizes: dict[int, str] = field(default_factory=dict)  # n -> reason
    segments: list[dict[str, Any]] = field(default_factory=list)  # n_min, n_max, t_s, t_b, ci95, ci_rel

    def ask(self, n: int, reason: str) -> None:
        self.sizes.setdefault(n, reason)


def log_mid(a: float, b: float) -> int:
    return int(round(math.sqrt(max(a, 1.0) * b)))


def log_inside(a: float, b: float, count: int) -> list[int]:
    lo = max(a, 1.0)
    return [int(round(lo * (b / lo) ** (k / (count + 1)))) for k in range(1, count + 1)]


def segment_ci(n: np.ndarray, t: np.ndarray, noise: np.ndarray, t_s: float, t_b: float
               ) -> tuple[dict[str, list[float] | None], float | None]:
    """95% CIs of t_s and t_b from the weighted least-squares covariance (relative error
    weights, each point's own noise), and the largest relative half-width of the time
    they predict at the segment's sizes; (None CIs, None) for a single size."""
    if np.unique(n).size < 2:
        return {"t_s": None, "t_b": None}, None
    sigma = np.maximum(noise, 1e-4) * t
    x = np.column_stack([np.ones_like(n), n])
    w = 1.0 / (sigma * sigma)
    info = x.T @ (x * w[:, None])
    try:
        cov = np.linalg.inv(info)
    except np.linalg.LinAlgError:
        return {"t_s": None, "t_b": None}, None
    se = np.sqrt(np.maximum(np.diag(cov), 0.0))
    predicted = t_s + t_b * n
    spread_at = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", x, cov, x), 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(predicted > 0, Z95 * spread_at / predicted, np.inf)
    cis: dict[str, list[float] | None] = {"t_s": [t_s - Z95 * float(se[0]), t_s + Z95 * float(se[0])],
                                          "t_b": [t_b - Z95 * float(se[1]), t_b + Z95 * float(se[1])]}
    return cis, float(np.max(rel))


def _side(segment: dict[str, Any], n: float) -> list[float]:
    """What a segment predicts at n, a size outside it: its line, or for a segment of one
    size, whose slope it cannot know, either its time or its time per byte."""
    fit = segment["fits"][0]
    if segment["n_max"] > segment["n_min"]:
        return [float(fit.predict([n])[0])]
    t = float(fit.predict([segment["n_min"]])[0])
    return [t, t * n / segment["n_min"]] if segment["n_min"] > 0 else [t]


def off_band(model: SegmentedHockneyModel, a: float, b: float, t_a: float, t_b: float, noise: float
             ) -> int | None:
    """The size inside the gap (a, b) where the model's prediction lies furthest outside the
    band of the times measured at a and b (widened by TOLERANCE and DEVIATION_Z noise levels,
    the run-to-run floor included), or None when it stays inside at GAP_PROBES sizes (or the
    gap holds no size to measure)."""
    if a <= 0 or b - a < 2 or b / a <= MIN_JUMP_GAP:
        return None
    inside = sorted({s for s in log_inside(a, b, GAP_PROBES) if a < s < b})
    if not inside:
        return None
    widen = TOLERANCE + DEVIATION_Z * float(np.hypot(noise, DEFAULT_NOISE_FLOOR))
    lo, hi = min(t_a, t_b) * (1 - widen), max(t_a, t_b) * (1 + widen)
    predicted = model.predict(np.array(inside, dtype=float))
    outside = np.maximum(lo - predicted, predicted - hi) / min(t_a, t_b)
    k = int(np.argmax(outside))
    return int(inside[k]) if outside[k] > 0 else None


def analyse(n: np.ndarray, t: np.ndarray, noise: np.ndarray, ci_target: float,
            previous: SegmentedHockneyModel | None = None) -> tuple[SeriesState, SegmentedHockneyModel | None]:
    """The sizes one series still needs (sorted distinct sizes `n`, median times `t`,
    relative standard errors `noise`), its segments with their CIs, and its model.
    `previous`: the model of the round before, which the sizes added since test."""
    state = SeriesState()
    if n.size < 2:
        return state, None
    try:
        model = SegmentedHockneyModel(max_segments=MAX_SEGMENTS, min_sizes=1, bootstrap=0,
                                      max_miss=MAX_MISS).fit(n, t, noise=noise)
    except InputError:
        return state, None
    segments = model.segments_
    for k in range(len(segments) - 1):
        a, b = float(segments[k]["n_max"]), float(segments[k + 1]["n_min"])
        if a <= 0 or b / a <= MIN_JUMP_GAP:
            continue
        mid = log_mid(a, b)
        disagree = min(abs(x - y) / min(x, y) if min(x, y) > 0 else math.inf
                       for x in _side(segments[k], mid) for y in _side(segments[k + 1], mid))
        # down to a 2-fold gap when the two segments disagree by BREAK_TOLERANCE, beyond it only
        # while they disagree by more than the fit lets a point miss (a jump)
        if disagree > (BREAK_TOLERANCE if b / a > MIN_GAP else MAX_MISS):
            # as many sizes as leave gaps of 2-fold at most, BREAK_SIZES at most a round
            count = min(BREAK_SIZES, max(1, math.ceil(math.log2(b / a) - 1e-9) - 1))
            for size in log_inside(a, b, count):
                if a < size < b:
                    state.ask(size, "breakpoint")
    positive = n > 0
    pn = n[positive]
    for i in range(pn.size - 1):
        if pn[i + 1] / pn[i] > MAX_GAP:
            state.ask(log_mid(pn[i], pn[i + 1]), "coarse gap")
    for i in range(pn.size - 1):
        outside = off_band(model, pn[i], pn[i + 1], t[positive][i], t[positive][i + 1],
                           max(noise[positive][i], noise[positive][i + 1]))
        if outside is not None:
            state.ask(outside, "gap")
    if previous is not None:
        # a size added inside one of the previous model's segments tests it (one added in a gap
        # between two is the breakpoint's, which the new segments settle)
        known = set(previous.grid_.tolist())
        inside_before = [(s["n_min"], s["n_max"]) for s in previous.segments_]
        for j in np.flatnonzero(positive).tolist():
            if float(n[j]) in known or not any(lo <= n[j] <= hi for lo, hi in inside_before):
                continue
            expected = float(previous.predict([n[j]])[0])
            allowed = max(DEVIATION_Z * float(np.hypot(noise[j], DEFAULT_NOISE_FLOOR)), TOLERANCE)
            if abs(expected - t[j]) <= allowed * t[j]:
                continue
            neighbours = [float(x) for x in (n[j - 1] if j > 0 else 0.0, n[j + 1] if j + 1 < n.size else 0.0)]
            for a, b in ((neighbours[0], float(n[j])), (float(n[j]), neighbours[1])):
                if a > 0 and b > a * MIN_GAP:
                    state.ask(log_mid(a, b), "deviates")
    for segment in segments:
        fit = segment["fits"][0]
        inside = (n >= segment["n_min"]) & (n <= segment["n_max"])
        cis, rel = segment_ci(n[inside], t[inside], noise[inside], fit.t_s_, fit.t_b_)
        state.segments.append({"n_min": int(segment["n_min"]), "n_max": int(segment["n_max"]),
                               "t_s": fit.t_s_, "t_b": fit.t_b_, "ci95": cis, "ci_rel": rel})
        if rel is not None and rel > ci_target:
            sizes = np.unique(n[inside & (n > 0)])
            gaps = [(b / a, a, b) for a, b in zip(sizes[:-1], sizes[1:]) if b / a > MIN_GAP]
            if gaps:
                _, a, b = max(gaps)
                state.ask(log_mid(a, b), "ci")
    return state, model


def series(points: list[dict]) -> dict[tuple[str, str, str, int], tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(n, t, noise) per series the rule chooses sizes for: valid points of dedicated
    (not oversubscribed) jobs, one per size (the median time of repeats)."""
    grouped: dict[tuple[str, str, str, int], dict[int, list[tuple[float, float]]]] = defaultdict(
        lambda: defaultdict(list))
    for pt in points:
        t = pt.get("t_us")
        if (not pt.get("valid", True) or pt.get("oversubscribed") or not chosen(pt["op"])
                or not isinstance(t, (int, float)) or not math.isfinite(t) or t <= 0):
            continue
        grouped[(pt["library"], pt["op"], pt.get("variant") or "", int(pt["p"]))][int(pt["n_bytes"])].append(
            (float(t), float(spread(pt)["noise"])))
    out = {}
    for key, by_size in grouped.items():
        sizes = sorted(by_size)
        t = np.array([float(np.median([v[0] for v in by_size[s]])) for s in sizes])
        noise = np.array([float(np.median([v[1] for v in by_size[s]])) for s in sizes])
        out[key] = (np.array(sizes, dtype=float), t, noise)
    return out


@dataclass
class Record:
    """Per series, what each round asked for and why, and the model's segments when the
    rule stopped (the run's summary and `commchar fit` state them)."""

    rounds: dict[tuple[str, str, str, int], list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    final: dict[tuple[str, str, str, int], SeriesState] = field(default_factory=dict)
    still_open: set[tuple[str, str, str, int]] = field(default_factory=set)


def adaptive_proposer(precision: float, record: Record | None = None) -> Proposer:
    """The refinement's proposer under the adaptive rule: the threshold changes (rndv's S,
    the standard send's breakpoints) and what every chosen series' model still needs."""
    thresholds = threshold_proposer(JUMP_SIZES)
    ci_target = LOOSE_FACTOR * precision
    round_no = 0
    models: dict[tuple[str, str, str, int], SegmentedHockneyModel | None] = {}
    # the sizes each series had when last analysed: one that gained none is not refitted
    seen: dict[tuple[str, str, str, int], tuple[tuple[float, ...], SeriesState]] = {}

    def propose(points: list[dict], measured: set[tuple], tried: set[tuple]
                ) -> tuple[dict[tuple[str, int], list[Point]], int]:
        nonlocal round_no
        round_no += 1
        todo, open_changes = thresholds(points, measured, tried)
        merged: dict[tuple[str, int], set[Point]] = {k: set(v) for k, v in todo.items()}
        open_series = 0
        # points measured while the host held the ranks' cores in another state than most of
        # the library's describe another machine: a model of both would chase the host's moves
        # with segments, and ask for sizes to pin them (core_distance.py; `fit` leaves them out too)
        in_state, _ = keep_one_state(points)
        for key, (n, t, noise) in sorted(series(in_state).items()):
            library, op, variant, p = key
            if key in seen and seen[key][0] == tuple(n.tolist()):
                state = seen[key][1]
            else:
                state, models[key] = analyse(n, t, noise, ci_target, models.get(key))
                seen[key] = (tuple(n.tolist()), state)
            asked: dict[int, str] = {}
            for size, reason in sorted(state.sizes.items()):
                effective = OPERATIONS[op].effective_size(size, p)
                if (library, op, variant, p, effective) in measured or (library, op, variant, p, effective) in tried \
                        or effective in asked:
                    continue
                asked[effective] = reason
            if record is not None:
                record.final[key] = state
                (record.still_open.add if asked else record.still_open.discard)(key)
                if asked:
                    record.rounds[key].append({"round": round_no, "sizes": sorted(asked),
                                               "why": sorted(set(asked.values()))})
            if asked:
                open_series += 1
                merged.setdefault((library, p), set()).update(Point(op, variant, s) for s in asked)
        return {k: sorted(v) for k, v in sorted(merged.items()) if v}, open_changes + open_series

    return propose
