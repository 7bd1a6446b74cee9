"""The adaptive size rule: sizes and repetitions chosen by the model being fitted.

A run under this rule (`commchar run` without `--sizes`) measures each
operation's coarse grid first (0, 1 B, 16 B, 256 B, ... every fourth power of
two, and the largest size; measure/plan.py), each point to a looser precision
than `--precision` (COARSE_FACTOR times it for a series whose sizes the rule
chooses, LOOSE_FACTOR times it for the probes). It then fits every series
(library, operation, variant, p) as `commchar fit` fits point-to-point
operations (models/regimes.py: the fewest Hockney segments consistent with the
points' noise) and, round after round, adds sizes only where that model is
uncertain:

- breakpoint: a gap between two segments whose lines disagree at its log
  midpoint by BREAK_TOLERANCE, split in log into 2-fold gaps (BREAK_SIZES at
  most a round), then bisected down to MIN_SPLIT_GAP while they disagree so:
  the prediction between two segments is held between their ends' times
  (segment_gaps), and a curve that bends there from one line to the other
  lies off it by more than MAX_MISS at a 2-fold gap's midpoint where the two
  lines disagree by a few percent;
- gap: a gap between measured sizes inside which the model's lines (in a gap
  between two segments, the line of the one with the nearer bound, extended
  across it) leave the band of the two measured times (TOLERANCE and their
  noise widen it): a communication time does not dip or peak between two
  sizes, so the segments are wrong or unsure there (a segment of one size
  whose slope the fit guessed, the nearer of two segments across a jump),
  even where the model's prediction, which a gap between two segments takes
  between their ends' times (segment_gaps), stays inside; the size, of
  GAP_PROBES evenly in log, where a line leaves the band most;
- coarse gap: a gap between measured sizes wider than MAX_GAP (MIN_GAP up to
  CHEAP_BYTES, where points are cheap) gets its log midpoint, which checks that
  the model holds across it; the gaps out to sizes
  measured beyond the usable ones (below), wider than MIN_GAP, too, so a series
  whose largest points all fell while the host moved its cores is still
  checked up to them;
- deviates: a size added inside a segment of the previous round's model that
  lies further from it than its noise allows (DEVIATION_Z noise levels, the
  series' floor included) and TOLERANCE gets the log midpoints of both its
  gaps (split further, round after round, while wider than MIN_GAP);
- scattered: a series whose sizes lie off the lines through their neighbours
  by more than SCATTERED (its scatter(), below), and by more than TYPICAL_FACTOR
  times its library's typical series (scattered_thresholds()), gets the log
  midpoint of every gap up to CHEAP_BYTES wider than MIN_SPLIT_GAP: such a curve
  is no few straight lines, and a size there is known only where it is measured;
- stepped: a series one of whose added sizes up to CHEAP_BYTES lies off the
  previous round's model by more than STEPPED (a staircase the coarse grid's
  sizes cannot show: they may all sit on its steps) gets the log midpoints a
  scattered series gets within STEPPED_REACH of that size;
- ci: a segment whose predicted time is not known to within the CI target
  (LOOSE_FACTOR times `--precision`, or half the series' noise floor where that
  is looser: point_precision()) at each of its sizes, from the weighted
  least-squares covariance of t_s and t_b under the points' own noise, gets the
  log midpoint of its widest gap: more repetitions where the model is least sure.

The host may hold the ranks' cores in another state from one job to the next
(commchar.core_distance: a cache line's round trip of 100 ns or 450 ns), and a
point below 32 KiB costs 2 to 4 times as much in the far state. Each round
fits the states as groups that share the breakpoints, each with its own line
per segment: a protocol switch is the library's, in every state, and a round
measured in the other state still pins the breakpoints, where a model of
either state alone would lose the other round's sizes, and one of both mixed
would chase the host's moves with segments. A size tests the previous round's
model in its own state only; the gaps and the CIs are those of the state with
the series' most sizes. Points measured while the host moved the cores (their
round trips before and after in different states) are left out.

A point's own CI does not show what moves between jobs, so every check takes
a noise floor in quadrature: the run-to-run DEFAULT_NOISE_FLOOR, or the
series' own scatter where that is larger (each size against the straight line
through its two neighbours of the same state, scatter()), at most MAX_FLOOR so
that a step of twice it is still resolved. On a host that shifts whole jobs by
tens of percent, a floor from the CIs alone cut series into a dozen segments
and asked for sizes to pin each. The sizes a round adds to a series are
measured to point_precision(): repetitions that narrow a point's CI below
half the floor buy the model nothing.

An operation is closed when none of these asks for a size. Rounds are the
refinement's (measure/refine.py): one job per library and p covering every
operation still open, the rendezvous threshold S bisected in the same rounds.
Operations whose model is not a size curve keep their own sizes (barrier, mbw,
coldstart), the LogGP probe its coarse grid, and the rndv probe is refined
only where it jumps. The first-touch probe starts below its largest size and
gets it only while its cost per byte still moves beyond the noise, the
library's floor included (touch_extension()).
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from commchar.core_distance import States, point_pairs, rtt_pair, split
from commchar.errors import InputError
from commchar.measure.operations import OPERATIONS
from commchar.measure.plan import DEFAULT_MIN_REPS, Point
from commchar.measure.refine import Proposer, threshold_proposer
from commchar.models.excess import paired_points
from commchar.models.inputs import spread
from commchar.models.regimes import DEFAULT_NOISE_FLOOR, MAX_MISS, SegmentedHockneyModel

# Added points are measured to LOOSE_FACTOR x --precision (3% at the default 1%); the
# model's predicted time must be known to the same.
LOOSE_FACTOR = 3.0
# The coarse grid of a series whose sizes the rule chooses is measured to COARSE_FACTOR x
# --precision (5%): its medians start the model, whose ci check adds sizes to a segment not
# known to its target; a series as noisy as MAX_FLOOR has its added points at half of that
# (point_precision), so repetitions beyond it buy that model nothing.
COARSE_FACTOR = 5.0
MAX_GAP = 4.0  # a gap wider than this is checked at its log midpoint (the coarse grid has 16-fold ones)
MIN_GAP = 2.05  # a gap this narrow (2-fold, give or take rounding) is not split...
# ...and below this size a gap wider than MIN_GAP is checked too: a point there costs a few
# milliseconds (64 KiB and above: tens), and a curve there is no few straight lines at 10%
CHEAP_BYTES = 65536
# A gap of MIN_GAP or less is split only where a breakpoint lies in it, or in a scattered or
# stepped series (below): down to this (the dense grid steps by 1.33, 1.5)
MIN_SPLIT_GAP = 1.5
GAP_PROBES = 3  # sizes inside a gap at which the model's prediction is checked against the band
TOLERANCE = 0.03  # a size this close to the previous model never splits its gaps
BREAK_TOLERANCE = 0.03  # two segments this close at a gap's midpoint leave it alone
DEVIATION_Z = 2.0  # noise levels (with the series' floor) a new size may lie off the previous model
MAX_FLOOR = 0.10  # the most the scatter raises the floor: structure of twice this is still resolved
SCATTER_POINTS = 6  # sizes between two others of their state that a series' own scatter needs
# A series whose sizes scatter from the lines through their neighbours by more than this (the
# robust spread of scatter(), 2.8 times the run-to-run floor) has its gaps up to CHEAP_BYTES
# split down to MIN_SPLIT_GAP: Open MPI's bcast took 0.29 us at 4 and 8 B and 0.38 at 6 B
SCATTERED = 0.07
# ...and by more than this many times its library's typical series (the median scatter of its
# series this round): a host that moves every series' times from size to size (the Intel Xeon
# guest's 5 to 6%) is no structure of one series', and splitting its gaps measures the host
TYPICAL_FACTOR = 1.5
# A series one of whose sizes up to CHEAP_BYTES, added between two measured ones, lies off the
# previous round's model by more than this (and by more than its noise allows: "deviates") has
# its cheap gaps within STEPPED_REACH of that size (either way) split as a scattered series'
# are: a staircase (Open MPI's allreduce doubles just past each power of two, 2.10 us at 3072
# B, 3.38 at 4096, 3.98 at 6144) lies on a line at the powers of two, and only a size between
# two of them shows it. Splitting every cheap gap of such a series, not only those near the
# step, takes 200 to 600 more points a library
STEPPED = 0.10
STEPPED_REACH = 8.0
BREAK_SIZES = 3  # most sizes a round inside a breakpoint's gap (16-fold to 2-fold in one round)
MAX_ROUNDS = 4  # a round is a job launch per library and p
JUMP_SIZES = 15  # rndv: S bracketed 16-fold a round (a coarse 4 KiB-64 KiB gap to 15 B in 3)
Z95 = 1.959964
# A point of CHEAP_BYTES or more that the rule plans (a probe's too) may stop with LONG_MIN_REPS
# samples (the kernel plan's /M) where the run's --min-reps is its default: the extremes of 6
# samples bound the median at 96.9% (1 - 2/2^6; the order-statistic CI the kernel stops by is
# [min, max] from 6 to 10 samples, and at 5 it would hold 93.8%), and a repetition there lasts
# tens of microseconds to milliseconds (docs/method.md "Which sizes").
LONG_MIN_REPS = 6
# ...and so may the rendezvous probe's points of every size: each of its repetitions lasts the
# receiver's delay (200 us by default), eager or not, and the rule's rounds bisect S with 15 of
# them a round (kernel-protocol.md, rndv).
SLOW_AT_EVERY_SIZE = ("rndv",)
# LogGP's o_s, O and o_r are fitted below the rendezvous threshold S (models/loggp.py), which no
# library puts near 1 MiB (here MPICH's is 8 KiB, Open MPI's 257 B; TCP's eager limit is 64
# KiB): from there on the rule's probe times its gap alone (the kernel's
# --loggp-overheads-below): PRTT(16,d,n) and o_r, 16 messages and delays of PRTT(1,0,n) a
# sample, are most of a large point's time (docs/method.md "Which sizes").
LOGGP_OVERHEADS_BELOW = 1 << 20
# Operations whose sizes the rule chooses: every one measured over sizes whose model is
# a Hockney curve. The LogGP probe's model is its parameters (its coarse grid has sizes
# below and above S), rndv's is S (thresholds.py); the others keep their own sizes.
NOT_CHOSEN = ("loggp", "rndv", "touch", "coldstart", "mbw", "noise", "collstart", "barrier")
# The first-touch probe starts below its largest sizes (Operation.adaptive_sizes) and gets the
# next larger one while the cost per byte it keeps (models/first_touch.py: fresh less resident,
# per byte) moved by more than this (and DEVIATION_Z noise levels, the library's floor taken
# in quadrature with each point's CI) from the size before the largest measured to the
# largest: past a few MiB zeroing and copying both go to memory, and the cost settles.
STEP_TOLERANCE = 0.10
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
    scatter: float | None = None  # the series' own scatter from size to size (scatter())
    noise_floor: float | None = None  # the floor the checks took: scatter bounded by the floors

    def ask(self, n: int, reason: str) -> None:
        self.sizes.setdefault(n, reason)


def noise_floor(scatter: float | None) -> float:
    """The floor a series' checks take: the run-to-run floor, or its scatter where larger, at
    most MAX_FLOOR."""
    return min(max(DEFAULT_NOISE_FLOOR, scatter or 0.0), MAX_FLOOR)


def point_precision(ci_target: float, floor: float | None) -> float:
    """The precision a series' added points are measured to, and its model's CIs are checked
    against: the CI target, or half the series' noise floor where that is larger. Every check
    adds the floor in quadrature, so a point's CI of half of it raises its noise by 12% at
    most; repetitions that narrow it further buy the model nothing."""
    return max(ci_target, (floor or 0.0) / 2)


def long_floor(run_min_reps: int) -> int | None:
    """The fewest samples of the rule's points of CHEAP_BYTES or more: LONG_MIN_REPS where the
    run's --min-reps is its default, else the run's (None): a floor the user gave binds."""
    return LONG_MIN_REPS if run_min_reps == DEFAULT_MIN_REPS else None


def floored(point: Point, floor: int | None) -> Point:
    """`point` with `floor` as its fewest samples where it is CHEAP_BYTES or more, or of an
    operation whose every repetition is slow (SLOW_AT_EVERY_SIZE)."""
    if floor is None or (point.n_bytes < CHEAP_BYTES and point.op not in SLOW_AT_EVERY_SIZE):
        return point
    return dataclasses.replace(point, min_reps=floor)


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


def _side(segment: dict[str, Any], n: float, group: Any) -> list[float]:
    """What a segment's line of `group` predicts at n, a size outside it: its line, or for a
    segment of one size, whose slope it cannot know, either its time or its time per byte."""
    fit = segment["fits"][group]
    if segment["n_max"] > segment["n_min"]:
        return [float(fit.predict([n])[0])]
    t = float(fit.predict([segment["n_min"]])[0])
    return [t, t * n / segment["n_min"]] if segment["n_min"] > 0 else [t]


def predicted_at(model: SegmentedHockneyModel, sizes: list[int] | list[float], group: Any) -> list[float | None]:
    """The line of the segment at each size in `group`'s state (in a gap between two
    segments, the one with the nearer bound, extended across it: what the segments say there,
    not the model's prediction between their ends); None where that segment has no line of
    the state (none of its points were measured in it)."""
    out: list[float | None] = []
    for n, k in zip(sizes, model.segment_index(np.asarray(sizes, dtype=float)).tolist()):
        fit = model.segments_[k]["fits"].get(group)
        out.append(None if fit is None else float(fit.t_s_ + fit.t_b_ * n))
    return out


def predicted(model: SegmentedHockneyModel, n: float, group: Any) -> float | None:
    """The model's time at n in `group`'s state (None: no line of it there, predicted_at)."""
    return predicted_at(model, [n], group)[0]


def off_band(model: SegmentedHockneyModel, a: float, b: float, t_a: float, t_b: float, noise: float,
             group: Any = 0, floor: float = DEFAULT_NOISE_FLOOR) -> int | None:
    """The size inside the gap (a, b) where the model's prediction (its lines of `group`) lies
    furthest outside the band of the times measured at a and b (widened by TOLERANCE and
    DEVIATION_Z noise levels, the `floor` of the series' scatter included), or None when it
    stays inside at GAP_PROBES sizes (or the gap holds no size to measure, or no line of the
    group)."""
    if a <= 0 or b - a < 2 or b / a <= MIN_SPLIT_GAP:
        return None
    inside = sorted({s for s in log_inside(a, b, GAP_PROBES) if a < s < b})
    if not inside:
        return None
    widen = TOLERANCE + DEVIATION_Z * float(np.hypot(noise, floor))
    lo, hi = min(t_a, t_b) * (1 - widen), max(t_a, t_b) * (1 + widen)
    worst, where = 0.0, None
    for size, value in zip(inside, predicted_at(model, inside, group)):
        if value is None:
            continue
        outside = max(lo - value, value - hi) / min(t_a, t_b)
        if outside > worst:
            worst, where = outside, int(size)
    return where


def misses(n: np.ndarray, t: np.ndarray, labels: np.ndarray) -> list[float]:
    """Each positive size's relative miss from the straight line through its two neighbours in
    the same state (exact inside a Hockney segment), scaled to one point's noise."""
    out = []
    for label in np.unique(labels):
        sel = (labels == label) & (n > 0)
        x, y = n[sel], t[sel]
        for i in range(1, x.size - 1):
            w = (x[i] - x[i - 1]) / (x[i + 1] - x[i - 1])
            line = (1 - w) * y[i - 1] + w * y[i + 1]
            if line > 0:
                out.append((y[i] / line - 1) / math.sqrt(1 + w * w + (1 - w) * (1 - w)))
    return out


def robust_spread(values: list[float]) -> float | None:
    """1.4826 x the median absolute value (a normal spread, robust to a few outliers); None
    with fewer than SCATTER_POINTS values."""
    return 1.4826 * float(np.median(np.abs(values))) if len(values) >= SCATTER_POINTS else None


def scatter(n: np.ndarray, t: np.ndarray, labels: np.ndarray) -> float | None:
    """The relative noise from size to size that a series' points show, whatever their own CIs
    say: the robust spread of its misses(); None with fewer than SCATTER_POINTS such sizes. A
    protocol switch moves the one or two sizes beside it, which the median passes over."""
    return robust_spread(misses(n, t, labels))


def _breakpoint_disagreement(before: dict[str, Any], after: dict[str, Any], mid: float) -> float:
    """How far apart two neighbouring segments' lines are at mid, in the state that shows it
    most among those both have lines of (the closer reading of a one-size segment's guess);
    infinite when they share no state, whose lines could tell."""
    common = [g for g in before["fits"] if g in after["fits"]]
    if not common:
        return math.inf
    return max(min(abs(x - y) / min(x, y) if min(x, y) > 0 else math.inf
                   for x in _side(before, mid, g) for y in _side(after, mid, g)) for g in common)


def analyse(n: np.ndarray, t: np.ndarray, noise: np.ndarray, ci_target: float,
            previous: SegmentedHockneyModel | None = None, state: np.ndarray | None = None,
            previous_state: dict[Any, Any] | None = None, left_out: np.ndarray | None = None,
            scattered_above: float = SCATTERED) -> tuple[SeriesState, SegmentedHockneyModel | None]:
    """The sizes one series still needs, its segments with their CIs, and its model.

    `n`, `t`, `noise`: sizes (sorted), median times and relative standard errors, one per size
    and state of the ranks' cores; `state`: the state of each (labels; None: all one state).
    `previous`: the model of the round before, which the sizes added since test, each in its
    own state: `previous_state` maps a state's label to the previous model's label of the same
    state (None: the same labels). `left_out`: sizes the series measured that the rule cannot
    use (Series.left_out); those beyond its usable sizes still bound it, and the gaps out to
    them are split down to 2-fold. `scattered_above`: the scatter beyond which the series is
    scattered (scattered_thresholds())."""
    state_out = SeriesState()
    labels = np.zeros(n.size, dtype=int) if state is None else np.asarray(state)
    if np.unique(n).size < 2:
        return state_out, None
    # the noise no point's own CI shows: the run-to-run floor, or the scatter from size to size
    # the series shows where that is larger (a host that moves the cores within a state)
    state_out.scatter = scatter(n, t, labels)
    floor = state_out.noise_floor = noise_floor(state_out.scatter)
    try:
        model = SegmentedHockneyModel(max_segments=MAX_SEGMENTS, min_sizes=1, bootstrap=0, noise_floor=floor,
                                      max_miss=max(MAX_MISS, DEVIATION_Z * floor)
                                      ).fit(n, t, groups=labels.tolist(), noise=noise)
    except InputError:
        return state_out, None
    # the state with the series' most sizes (the nearer of a tie): its gaps and CIs are checked
    kinds, counts = np.unique(labels, return_counts=True)
    main = kinds[int(np.argmax(counts))]
    mine = labels == main
    segments = model.segments_
    for k in range(len(segments) - 1):
        a, b = float(segments[k]["n_max"]), float(segments[k + 1]["n_min"])
        if a <= 0 or b / a <= MIN_SPLIT_GAP:
            continue
        disagree = _breakpoint_disagreement(segments[k], segments[k + 1], log_mid(a, b))
        # bisected down to MIN_SPLIT_GAP while the two segments disagree by BREAK_TOLERANCE
        if disagree > BREAK_TOLERANCE:
            # as many sizes as leave gaps of 2-fold at most, BREAK_SIZES at most a round
            count = min(BREAK_SIZES, max(1, math.ceil(math.log2(b / a) - 1e-9) - 1))
            for size in log_inside(a, b, count):
                if a < size < b:
                    state_out.ask(size, "breakpoint")
    every = np.unique(n[n > 0])
    gaps = [(lo, hi, MIN_GAP if hi <= CHEAP_BYTES else MAX_GAP) for lo, hi in zip(every[:-1], every[1:])]
    # sizes measured beyond the usable ones (the host moved the cores during their points, or
    # they are alone in their state) are the series' extent all the same, which its model must
    # cover; the rule sees no time there, so nothing tells a breakpoint in the gap out to them
    # (a message leaving the cache between 1 MiB and 4 MiB): it is split down to 2-fold
    if left_out is not None and every.size:
        unusable = np.unique(left_out[left_out > 0])
        below, above = unusable[unusable < every[0]], unusable[unusable > every[-1]]
        for chain in (np.append(below, every[0]), np.insert(above, 0, every[-1])):
            gaps += [(lo, hi, MIN_GAP) for lo, hi in zip(chain[:-1], chain[1:])]
    for lo, hi, widest in gaps:
        if hi / lo > widest:
            state_out.ask(log_mid(lo, hi), "coarse gap")
    mn, mt, mnoise = n[mine], t[mine], noise[mine]
    positive = np.flatnonzero(mn > 0)
    for i, j in zip(positive[:-1], positive[1:]):
        outside = off_band(model, mn[i], mn[j], mt[i], mt[j], max(mnoise[i], mnoise[j]), main, floor)
        if outside is not None:
            state_out.ask(outside, "gap")
    steps: list[float] = []
    if previous is not None:
        # a size added inside one of the previous model's segments tests it in the size's own
        # state (one added in a gap between two is the breakpoint's, which the new segments settle)
        known = set(previous.grid_.tolist())
        inside_before = [(s["n_min"], s["n_max"]) for s in previous.segments_]
        for j in np.flatnonzero(n > 0).tolist():
            if float(n[j]) in known or not any(lo <= n[j] <= hi for lo, hi in inside_before):
                continue
            label = labels[j].item()
            expected = predicted(previous, float(n[j]),
                                 label if previous_state is None else previous_state.get(label))
            if expected is None:
                continue
            allowed = max(DEVIATION_Z * float(np.hypot(noise[j], floor)), TOLERANCE)
            if abs(expected - t[j]) <= allowed * t[j]:
                continue
            same = n[labels == labels[j]]
            below, above = same[same < n[j]], same[same > n[j]]
            if n[j] <= CHEAP_BYTES and abs(expected - t[j]) > STEPPED * t[j]:
                steps.append(float(n[j]))
            for a, b in ((below.max() if below.size else 0.0, float(n[j])),
                         (float(n[j]), above.min() if above.size else 0.0)):
                if a > 0 and b > a * MIN_GAP:
                    state_out.ask(log_mid(a, b), "deviates")
    scattered = (state_out.scatter or 0.0) > scattered_above
    if scattered or steps:
        # sizes that lie off the lines through their neighbours by more than the host's noise,
        # or a size between two that lies off the model: no few straight lines there, and a
        # size is known only where it is measured
        for lo, hi, _ in gaps:
            near = scattered or any(lo >= at / STEPPED_REACH and hi <= at * STEPPED_REACH for at in steps)
            if near and hi <= CHEAP_BYTES and hi / lo > MIN_SPLIT_GAP and lo < (mid := log_mid(lo, hi)) < hi:
                state_out.ask(mid, "scattered" if scattered else "stepped")
    for segment in segments:
        fit = segment["fits"].get(main)
        inside = mine & (n >= segment["n_min"]) & (n <= segment["n_max"])
        if fit is None or not inside.any():
            continue
        cis, rel = segment_ci(n[inside], t[inside], noise[inside], fit.t_s_, fit.t_b_)
        state_out.segments.append({"n_min": int(segment["n_min"]), "n_max": int(segment["n_max"]),
                                   "t_s": fit.t_s_, "t_b": fit.t_b_, "ci95": cis, "ci_rel": rel})
        if rel is not None and rel > point_precision(ci_target, floor):
            sizes = np.unique(n[inside & (n > 0)])
            gaps = [(b / a, a, b) for a, b in zip(sizes[:-1], sizes[1:]) if b / a > MIN_GAP]
            if gaps:
                _, a, b = max(gaps)
                state_out.ask(log_mid(a, b), "ci")
    return state_out, model


@dataclass(frozen=True)
class Series:
    """One series' points for the rule: per size and state of the ranks' cores, the median
    time of repeats and its noise; `state` labels the library's `states` nearest first (0 when
    the points carry no round trips)."""

    n: np.ndarray
    t: np.ndarray
    noise: np.ndarray
    state: np.ndarray
    states: States | None
    left_out: np.ndarray  # sizes measured but not usable: no size of n holds a point of them

    def state_ns(self) -> dict[int, float]:
        """Each of the series' state labels with its state's typical round trip (0: unknown)."""
        return {label: (0.0 if self.states is None else float(np.median(self.states.members[label])))
                for label in set(self.state.tolist())}


def series(points: list[dict]) -> dict[tuple[str, str, str, int], Series]:
    """The series the rule chooses sizes for: valid points of dedicated (not oversubscribed)
    jobs, one per size and state of the ranks' cores (the median time of repeats), the states
    split from each library's points; a point measured while the host moved the cores, or in a
    state where its series has fewer than 2 sizes, is left out."""
    states: dict[str, States | None] = {}
    for library in {pt["library"] for pt in points}:
        states[library] = split(point_pairs(pt for pt in points if pt["library"] == library and pt.get("valid", True)))
    grouped: dict[tuple[str, str, str, int], dict[tuple[int, int], list[tuple[float, float]]]] = defaultdict(
        lambda: defaultdict(list))
    measured: dict[tuple[str, str, str, int], set[int]] = defaultdict(set)
    for pt in points:
        t = pt.get("t_us")
        if (not pt.get("valid", True) or pt.get("oversubscribed") or not chosen(pt["op"])
                or not isinstance(t, (int, float)) or not math.isfinite(t) or t <= 0):
            continue
        measured[(pt["library"], pt["op"], pt.get("variant") or "", int(pt["p"]))].add(int(pt["n_bytes"]))
        found, pair = states[pt["library"]], rtt_pair(pt.get("extra"))
        label = 0 if found is None or pair is None else found.state_of(pair)
        if label is None:
            continue
        grouped[(pt["library"], pt["op"], pt.get("variant") or "", int(pt["p"]))][(label, int(pt["n_bytes"]))].append(
            (float(t), float(spread(pt)["noise"])))
    out = {}
    for key, by_size in grouped.items():
        sizes_of = defaultdict(set)
        for label, size in by_size:
            sizes_of[label].add(size)
        cells = sorted((size, label) for label, size in by_size if len(sizes_of[label]) >= 2)
        if not cells:
            continue
        found = states[key[0]]
        out[key] = Series(
            n=np.array([size for size, _ in cells], dtype=float),
            t=np.array([statistics.median(v[0] for v in by_size[(lb, sz)]) for sz, lb in cells]),
            noise=np.array([statistics.median(v[1] for v in by_size[(lb, sz)]) for sz, lb in cells]),
            state=np.array([lb for _, lb in cells], dtype=int),
            states=found,
            left_out=np.array(sorted(measured[key] - {size for size, _ in cells}), dtype=float))
    return out


def scattered_thresholds(every: dict[tuple[str, str, str, int], Series]) -> dict[str, float]:
    """Per library, the scatter beyond which one of its series is scattered: SCATTERED, or
    TYPICAL_FACTOR times the median of its series' own scatters where that is larger (the
    host's moves from size to size, which every series shows)."""
    own: dict[str, list[float]] = defaultdict(list)
    for (library, *_), found in every.items():
        if (value := scatter(found.n, found.t, found.state)) is not None:
            own[library].append(value)
    return {library: max(SCATTERED, TYPICAL_FACTOR * statistics.median(values)) for library, values in own.items()}


def touch_extension(points: list[dict], floors: dict[str, float] | None = None) -> dict[str, int]:
    """Per library, the next size of the first-touch probe to measure (both variants): the
    next larger of its own sizes while the cost per byte of a first touch moved between its
    two largest measured sizes by more than STEP_TOLERANCE and DEVIATION_Z noise levels (each
    point's own with the library's noise floor, `floors`, in quadrature: DEFAULT_NOISE_FLOOR
    where not given), or was not positive at either."""
    operation = OPERATIONS["touch"]
    out = {}
    for library in sorted({pt["library"] for pt in points if pt["op"] == "touch"}):
        floor = (floors or {}).get(library, DEFAULT_NOISE_FLOOR)
        pairs = paired_points([pt for pt in points if pt["library"] == library], "touch", "fresh", "resident")
        sizes = sorted(n for n, pair in pairs.items() if len(pair) == 2)
        larger = [n for n in operation.sizes or () if sizes and n > sizes[-1]]
        if len(sizes) < 2 or not larger:
            continue
        steps = []
        for n in sizes[-2:]:
            (fresh, slow), (resident, fast) = pairs[n]["fresh"], pairs[n]["resident"]
            excess = fresh - resident
            spread_us = math.hypot(fresh * math.hypot(spread(slow)["noise"], floor),
                                   resident * math.hypot(spread(fast)["noise"], floor))
            steps.append((excess / n, spread_us / excess if excess > 0 else math.inf))
        (before, before_noise), (last, last_noise) = steps
        if before <= 0 or last <= 0 or abs(last / before - 1) > max(
                STEP_TOLERANCE, DEVIATION_Z * math.hypot(before_noise, last_noise)):
            out[library] = larger[0]
    return out


@dataclass
class Record:
    """Per series, what each round asked for and why, and the model's segments when the
    rule stopped (the run's summary and `commchar fit` state them)."""

    rounds: dict[tuple[str, str, str, int], list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    final: dict[tuple[str, str, str, int], SeriesState] = field(default_factory=dict)
    still_open: set[tuple[str, str, str, int]] = field(default_factory=set)


def same_states(found: Series, before: dict[int, float]) -> dict[int, int]:
    """Each state label of this round mapped to the label the previous round gave the same
    state (the previous state whose typical round trip lies in it now), so a size is tested
    against the previous model in its own state although labels renumber as states appear."""
    if found.states is None:
        return {0: 0} if 0 in before else {}
    out: dict[int, int] = {}
    for old, ns in before.items():
        if ns > 0:
            out.setdefault(found.states.index(ns), old)
    return out


def _fingerprint(found: Series) -> tuple:
    """What a series' analysis depends on: its sizes, times and noise, and which of them share
    a state of the cores (labels renumbered in order of appearance: the library's states are
    split again each round, and their typical round trips move as any series gains points,
    so neither the labels nor the round trips say whether this series changed), and the sizes
    it measured but cannot use."""
    order: dict[int, int] = {}
    shared = tuple(order.setdefault(label, len(order)) for label in found.state.tolist())
    return (tuple(found.n.tolist()), tuple(found.t.tolist()), tuple(found.noise.tolist()), shared,
            tuple(found.left_out.tolist()))


def adaptive_proposer(precision: float, record: Record | None = None, long_reps: int | None = None) -> Proposer:
    """The refinement's proposer under the adaptive rule: the threshold changes (rndv's S,
    the standard send's breakpoints) and what every chosen series' model still needs, its
    sizes of CHEAP_BYTES or more with `long_reps` as their fewest samples (long_floor)."""
    thresholds = threshold_proposer(JUMP_SIZES)
    ci_target = LOOSE_FACTOR * precision
    round_no = 0
    # per series, its last model and the typical round trip of each of that model's states
    models: dict[tuple[str, str, str, int], tuple[SegmentedHockneyModel | None, dict[int, float]]] = {}
    # the points each series had when last analysed: one that gained none is not refitted
    seen: dict[tuple[str, str, str, int], tuple[tuple, SeriesState]] = {}

    def propose(points: list[dict], measured: set[tuple], tried: set[tuple]
                ) -> tuple[dict[tuple[str, int], list[Point]], int]:
        nonlocal round_no
        round_no += 1
        todo, open_changes = thresholds(points, measured, tried)
        merged: dict[tuple[str, int], set[Point]] = {k: {floored(pt, long_reps) for pt in v}
                                                     for k, v in todo.items()}
        open_series = 0
        every = series(points)
        # a series too short for a scatter of its own (the coarse grid's) takes its library's:
        # the misses of all its series pooled, which a protocol switch between two coarse sizes
        # raises (the points' precision only, never the checks' floor, takes it)
        pooled: dict[str, list[float]] = defaultdict(list)
        for (library, *_), found in every.items():
            pooled[library] += misses(found.n, found.t, found.state)
        library_scatter = {library: robust_spread(values) for library, values in pooled.items()}
        scattered_above = scattered_thresholds(every)
        for key, found in sorted(every.items()):
            library, op, variant, p = key
            above = scattered_above.get(library, SCATTERED)
            fingerprint = (_fingerprint(found), above)
            if key in seen and seen[key][0] == fingerprint:
                state = seen[key][1]
            else:
                previous, previous_ns = models.get(key, (None, {}))
                state, model = analyse(found.n, found.t, found.noise, ci_target, previous, found.state,
                                       same_states(found, previous_ns), found.left_out, above)
                models[key] = (model, found.state_ns())
                seen[key] = (fingerprint, state)
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
                floor = noise_floor(state.scatter if state.scatter is not None else library_scatter[library])
                precision = point_precision(ci_target, floor)
                merged.setdefault((library, p), set()).update(
                    floored(Point(op, variant, s, precision if precision > ci_target else None), long_reps)
                    for s in asked)
        floors = {library: noise_floor(scatter) for library, scatter in library_scatter.items()}
        for library, size in touch_extension(points, floors).items():
            wanted = {floored(Point("touch", variant, size), long_reps)
                      for variant in OPERATIONS["touch"].variants
                      if (library, "touch", variant, 2, size) not in measured | tried}
            if wanted:
                open_series += 1
                merged.setdefault((library, 2), set()).update(wanted)
        return {k: sorted(v) for k, v in sorted(merged.items()) if v}, open_changes + open_series

    return propose
