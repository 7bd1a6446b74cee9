"""Protocol regimes: penalised segmented least squares over sorted sizes.

Exact dynamic programming over the breakpoints: for every number of segments
K the partition of the sorted sizes minimising the total relative squared
error is found exactly (O(K N^2) with N ~ 24-70 sizes, each candidate
segment's Hockney fit costing O(1) from prefix moments), then K is chosen.
Several groups (one per p, or per variant and p) may share the breakpoints
while each has its own t_s, t_b per segment: collectives switch algorithm at
a size, for every p.

K is chosen one of two ways. Given each point's noise (the relative standard
error of its median, from the samples' CI), the fewest segments whose every
segment is consistent with that noise: residuals weighted by the noise (with
a floor for the machine's run-to-run noise) pass a chi-square test per
segment and no point lies more than MAX_Z noise levels, nor max_miss, off. Without the
noise, K minimises BIC with an extra charge per breakpoint.
"""

from __future__ import annotations

from typing import Any, Hashable

import numpy as np


from commchar.errors import InputError
from commchar.models import _lsq
from commchar.models._base import Estimator, number_in, positive_int
from commchar.models._chi2 import chi2_upper_quantiles
from commchar.models.hockney import HockneyModel, check_sizes_times
from commchar.segment_gaps import Threshold, close_at, is_threshold, locate, nearest, price

RSS_FLOOR = 1e-14  # per point: noise-free data must not give log(0)
# BIC charges log(N) per parameter; each breakpoint is charged DEFAULT_PENALTY
# times log(N) more, because the dynamic programme picks the best of ~N
# positions and plain BIC then lets noise add regimes (docs/models.md: 3 of
# 300 synthetic series wrong at 3, none at 4.5). The extra charge is per
# breakpoint, not per parameter: the search does not grow with the groups.
DEFAULT_PENALTY = 4.5
# The most distinct sizes one fit searches for regimes: the search holds several
# sizes x sizes matrices and checks every point under every segment (about a second
# at 512 sizes, growing with the cube); more is refused, not run out of memory.
MAX_SIZES = 512
# The relative noise a point's own CI cannot show: the same size measured again
# (another job, another placement in memory) differs by about this much on the
# machines tried (docs/models.md "Protocol regimes"). Added in quadrature.
DEFAULT_NOISE_FLOOR = 0.025
# A segment is consistent with the noise when its weighted residuals pass a
# chi-square test at this level and no point lies more than MAX_Z noise levels off.
DEFAULT_CONFIDENCE = 0.99
MAX_Z = 4.0
# values per block of the check that every point lies within MAX_Z noise levels of its segment
WORST_BLOCK = 1 << 20
# Nor does it leave any point further off than this, whatever the point's noise: a model
# that misses a measured time by more is reported (report/findings.py), and a point whose
# own CI is wide (a bimodal size) is still the best estimate of its time.
MAX_MISS = 0.10
# A time more than this many times what the neighbouring sizes allow is a spike
# (a descheduled repetition on a shared machine), not a protocol: see spikes().
DEFAULT_OUTLIER_FACTOR = 10.0


def spikes(n: np.ndarray, t: np.ndarray, factor: float) -> np.ndarray:
    """Mask of gross upward outliers in one series sorted by size.

    An affine T(n) with t_s, t_b >= 0 grows at most in proportion to the
    size, T(n2) <= T(n1) n2/n1 for n1 < n2, and never shrinks by much as n
    grows. Scanning up from the least positive size, a point above `factor`
    times what the last kept point allows is a spike; scanning down, so is one
    above `factor` times the next larger kept point. Protocol switches stay far
    inside these bounds; a descheduled repetition (100x or more) does not. A
    zero-byte time bounds nothing above it: T(n)/T(0) = 1 + n t_b/t_s has no
    limit as t_s goes to 0, and a library that returns from a zero-byte call
    at once (4 to 11 ns) starts every larger size 100 times above it.
    factor <= 0 disables.
    """
    out = np.zeros(n.size, dtype=bool)
    if factor <= 0 or n.size < 3:
        return out
    positive = np.flatnonzero(n > 0)
    if positive.size == 0:
        return out
    ref = int(positive[0])
    for i in range(ref + 1, n.size):
        growth = (n[i] + 1.0) / (n[ref] + 1.0)
        if t[i] > factor * growth * t[ref]:
            out[i] = True
        else:
            ref = i
    ref = n.size - 1
    while out[ref] and ref > 0:
        ref -= 1
    for i in range(ref - 1, -1, -1):
        if out[i]:
            continue
        if t[i] > factor * t[ref]:
            out[i] = True
        else:
            ref = i
    return out


# an estimator's `threshold`: where the library's rendezvous threshold S lies (segment_gaps)
THRESHOLD_PARAMETER = (is_threshold, "None or [low, high], sizes with 1 <= low <= high")


def segment_index(segments: list[dict], n: Any) -> np.ndarray:
    """Index of the segment ({"n_min", "n_max"} in size order) used at each size: the
    covering one, else the one with the nearest bound; the first and last are open-ended."""
    n = np.asarray(n, dtype=float)
    bounds = [(s["n_min"], s["n_max"]) for s in segments]
    return np.array([nearest(*locate(bounds, size)) for size in n.ravel().tolist()], dtype=int).reshape(n.shape)


def spans_threshold(grid: np.ndarray, threshold: Threshold | None) -> np.ndarray:
    """[i, j]: whether a segment over grid sizes i..j holds both a size the library sends
    eagerly (below the threshold's low end) and one it sends by rendezvous (from its high end
    on); all False without a threshold. The protocol switch is the library's: a line through
    both sides prices the sizes between them on neither (Open MPI's ping-pong of 256 B, eager,
    and 512 B, rendezvous, as one segment put every size from S = 257 B on below the
    rendezvous time)."""
    m = grid.size
    if threshold is None:
        return np.zeros((m, m), dtype=bool)
    low, high = threshold
    return (grid < low)[:, None] & (grid >= high)[None, :]


class SegmentedHockneyModel(Estimator):
    """One Hockney segment per protocol regime, breakpoints shared by all groups.

    Fitted: segments_ (list of dicts: n_min, n_max, fits {group: HockneyModel} of the groups measured in it),
    outliers_ ((group, n, t) of the spikes left out, see spikes()),
    breakpoints_ (list of {"after": last size of a regime, "at": first size of
    the next}), grid_ (sorted sizes), selection_ ("noise": the fewest segments
    consistent with the points' noise; "noise, closest": no partition into
    max_segments was, the one of least chi2 + (3K - 1) ln N; "bic": BIC, no
    noise given), bic_ (BIC per number of segments tried, BIC selection) or
    chi2_ (least chi-square per number of segments, noise selection).

    `threshold` ([low, high], or None): where the library's rendezvous threshold S lies; no
    segment holds both a size below low and one from high on (spans_threshold), the gap
    between two segments that holds it is closed there (segment_gaps.close_at), and its
    breakpoint is {"after": the last size known below S, "at": S}.
    """

    _parameter_constraints = {
        "max_segments": positive_int(1),
        "min_sizes": positive_int(1),
        "penalty": number_in(0.0, 1000.0),
        "bootstrap": positive_int(0),
        "seed": positive_int(0),
        "outlier_factor": number_in(0.0, 1e6),
        "noise_floor": number_in(0.0, 1.0),
        "confidence": number_in(0.5, 0.999999),
        "max_miss": number_in(0.0, 1e6),
        "threshold": THRESHOLD_PARAMETER,
    }

    def __init__(self, max_segments: int = 5, min_sizes: int = 3, penalty: float = DEFAULT_PENALTY,
                 bootstrap: int = 200, seed: int = 0, outlier_factor: float = DEFAULT_OUTLIER_FACTOR,
                 noise_floor: float = DEFAULT_NOISE_FLOOR, confidence: float = DEFAULT_CONFIDENCE,
                 max_miss: float = MAX_MISS, threshold: Threshold | None = None) -> None:
        self.outlier_factor = outlier_factor
        self.max_segments = max_segments
        self.min_sizes = min_sizes
        self.penalty = penalty
        self.bootstrap = bootstrap
        self.seed = seed
        self.noise_floor = noise_floor
        self.confidence = confidence
        self.max_miss = max_miss
        self.threshold = threshold

    def fit(self, n: Any, t: Any, groups: Any = None, noise: Any = None) -> "SegmentedHockneyModel":
        """`noise`: each point's relative standard error (0 where unknown), or None for
        BIC selection; the floor noise_floor is added to it in quadrature."""
        self._validate_params()
        n, t = check_sizes_times(n, t, type(self).__name__)
        labels = np.empty(n.size if groups is None else len(groups), dtype=object)
        labels[:] = [0] * n.size if groups is None else list(groups)
        if labels.size != n.size:
            raise InputError(f"{type(self).__name__}: {labels.size} group labels for {n.size} points")
        sigma = None
        if noise is not None:
            raw = np.asarray(noise, dtype=float).ravel()
            if raw.size != n.size:
                raise InputError(f"{type(self).__name__}: {raw.size} noise levels for {n.size} points")
            if not np.all(np.isfinite(raw)) or np.any(raw < 0):
                raise InputError(f"{type(self).__name__}: noise levels must be finite numbers >= 0")
            sigma = np.hypot(raw, self.noise_floor)
            if np.any(sigma <= 0):
                raise InputError(f"{type(self).__name__}: noise 0 with noise_floor 0 cannot weigh a point")
        keys = sorted(set(labels.tolist()), key=str)
        data = {}
        self.outliers_: list[tuple[Hashable, float, float]] = []
        for g in keys:
            sel = np.array([label == g for label in labels], dtype=bool)
            gn, gt = check_sizes_times(n[sel], t[sel], f"{type(self).__name__} group {g}")
            gs = np.ones(gn.size) if sigma is None else sigma[sel]
            order = np.argsort(gn, kind="stable")
            gn, gt, gs = gn[order], gt[order], gs[order]
            bad = spikes(gn, gt, self.outlier_factor)
            if np.unique(gn[~bad]).size < 2:
                bad[:] = False
            self.outliers_ += [(g, float(x), float(y)) for x, y in zip(gn[bad], gt[bad])]
            data[g] = (gn[~bad], gt[~bad], gs[~bad])
        self.grid_ = np.unique(np.concatenate([gn for gn, _, _ in data.values()]))
        if self.grid_.size > MAX_SIZES:
            raise InputError(f"{type(self).__name__}: {self.grid_.size} distinct sizes, more than the {MAX_SIZES}"
                             " the regime search takes (its time grows with the cube of the sizes):"
                             " fit a subset of the sizes")
        kept = sum(gn.size for gn, _, _ in data.values())
        if sigma is None:
            cost, _ = self._cost_matrix(data, nonneg=False, worst=False)
            bounds, self.bic_ = self._best_partition(cost, n.size, len(keys))
            self.selection_ = "bic"
        else:
            bounds = self._noise_partition(data, kept, len(keys))
        self.segments_: list[dict[str, Any]] = []
        for k, (i, j) in enumerate(bounds):
            measured: dict[Hashable, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
            for g, (gn, gt, gs) in data.items():
                sel = (gn >= self.grid_[i]) & (gn <= self.grid_[j])
                if sel.any():  # else the group was not measured at these sizes
                    measured[g] = (gn[sel], gt[sel], gs[sel])
            lines = {g: HockneyModel(bootstrap=self.bootstrap, seed=self.seed + k).fit(
                         gn, gt, noise=None if sigma is None else gs)
                     for g, (gn, gt, gs) in measured.items() if np.unique(gn).size > 1}
            # a size that is a regime of its own takes its cost per byte through the origin; a
            # group measured at one size of a regime others measured at more keeps their shape
            # there (the protocol's), not a slope through the origin: MPICH's ibcast measured
            # at 1 B alone (0.91 us) in a regime of 1 to 64 B made 58 us at 64 B
            fits: dict[Hashable, HockneyModel] = {}
            for g, (gn, gt, _) in measured.items():
                if g in lines:
                    fits[g] = lines[g]
                    continue
                n1, t1 = float(gn[0]), float(np.median(gt))
                shapes = [float(f.t_b_) / at for f in lines.values() if (at := float(f.predict([n1])[0])) > 0]
                fits[g] = HockneyModel(bootstrap=self.bootstrap, seed=self.seed + k).fit_one_size(
                    n1, t1, float(np.median(shapes)) if shapes else None)
            self.segments_.append({"n_min": float(self.grid_[i]), "n_max": float(self.grid_[j]), "fits": fits})
        closed = None if self.threshold is None else close_at(self.segments_, self.threshold)
        self.breakpoints_ = [
            {"after": self.segments_[k]["n_max"], "at": self.segments_[k + 1]["n_min"]}
            for k in range(len(self.segments_) - 1)
        ]
        if closed is not None:
            k, after, switch = closed
            self.breakpoints_[k] = {"after": float(after), "at": float(switch)}
        return self

    def _cost_matrix(self, data: dict, nonneg: bool, worst: bool) -> tuple[np.ndarray, np.ndarray]:
        """cost[i, j]: summed weighted relative RSS of one segment over grid sizes i..j (inf if
        too few); with `worst`, also whether each segment keeps every point within MAX_Z noise
        levels and max_miss (0: no bound) of its time."""
        grid = self.grid_
        m = grid.size
        cost = np.zeros((m, m))
        within = np.ones((m, m), dtype=bool)
        too_few = np.zeros((m, m), dtype=bool)
        whole = np.zeros((m, m), dtype=bool)
        whole[0, m - 1] = True
        for gn, gt, gs in data.values():
            scale = max(float(gn.max()), 1.0)
            x = gn / scale
            prefix = _lsq.prefix_moments(x, gt, 1.0 / (gt * gt * gs * gs))
            distinct = np.concatenate([[0], np.cumsum(np.r_[True, np.diff(gn) > 0])])
            lo = np.searchsorted(gn, grid, side="left")
            hi = np.searchsorted(gn, grid, side="right")
            mom = prefix[:, hi[None, :]] - prefix[:, lo[:, None]]
            a, b, rss = _lsq.solve(tuple(mom), nonneg=nonneg)
            sizes = distinct[hi[None, :]] - distinct[lo[:, None]]
            cost += rss
            if worst:
                # the residual of every point under every segment [i, j], some rows i at a time
                # (rows x m x points values each)
                index = np.arange(gn.size)
                allowed = MAX_Z * gs if self.max_miss <= 0 else np.minimum(MAX_Z * gs, self.max_miss)
                rows = max(1, WORST_BLOCK // max(1, m * gn.size))
                for i in range(0, m, rows):
                    block = slice(i, min(m, i + rows))
                    rel = np.abs(a[block, :, None] + b[block, :, None] * x - gt) / gt
                    inside = (index >= lo[block, None, None]) & (index < hi[None, :, None])
                    within[block] &= ~(inside & (rel > allowed)).any(axis=2)
            # A regime needs min_sizes sizes in every group measured inside it (a group whose
            # sizes end below it, a p measured to smaller sizes only, has no fit there and no
            # say); the single segment 2 in every group.
            too_few |= np.where(whole, sizes < 2, (sizes > 0) & (sizes < self.min_sizes))
        cost[too_few] = np.inf
        cost[np.tril_indices(m, -1)] = np.inf
        cost[spans_threshold(grid, self.threshold)] = np.inf
        return cost, within

    def _partitions(self, cost: np.ndarray) -> tuple[list[np.ndarray], dict[int, float]]:
        """Exact least-cost partitions for K = 1..max_segments: the back-pointers per K and
        the least total cost of each K that can cover the grid."""
        m = cost.shape[0]
        # best[j]: least cost of covering sizes 0..j-1 with k segments; back[k][j]: start of the last.
        best = np.full(m + 1, np.inf)
        best[0] = 0.0
        backs, totals = [], {}
        for k in range(1, self.max_segments + 1):
            # cand[i, j] = best[i] + cost of segment i..j-1
            cand = best[:m, None] + np.concatenate([np.full((m, 1), np.inf), cost], axis=1)
            back = np.argmin(cand, axis=0)
            best = cand[back, np.arange(m + 1)]
            backs.append(back)
            if np.isfinite(best[m]):
                totals[k] = float(best[m])
        return backs, totals

    @staticmethod
    def _bounds(backs: list[np.ndarray], chosen: int, m: int) -> list[tuple[int, int]]:
        bounds = []
        j = m
        for k in range(chosen, 0, -1):
            i = int(backs[k - 1][j])
            bounds.append((i, j - 1))
            j = i
        return bounds[::-1]

    def _best_partition(self, cost: np.ndarray, points: int, groups: int
                        ) -> tuple[list[tuple[int, int]], dict[int, float]]:
        backs, totals = self._partitions(cost)
        bic = {}
        for k, total in totals.items():
            rss = max(total, RSS_FLOOR * points)
            params = 2 * k * groups + (k - 1)
            bic[k] = float(points * np.log(rss / points) + (params + self.penalty * (k - 1)) * np.log(points))
        if not bic:
            raise InputError(f"{type(self).__name__}: too few sizes to fit one segment")
        chosen = min(bic, key=lambda k: (bic[k], k))
        return self._bounds(backs, chosen, cost.shape[0]), bic

    def _noise_partition(self, data: dict, points: int, groups: int) -> list[tuple[int, int]]:
        """The fewest segments each consistent with the noise, of least chi-square among them."""
        cost, within = self._cost_matrix(data, nonneg=True, worst=True)
        m = cost.shape[0]
        counts = np.zeros((m, m))
        for gn, _, _ in data.values():
            lo = np.searchsorted(gn, self.grid_, side="left")
            hi = np.searchsorted(gn, self.grid_, side="right")
            counts += hi[None, :] - lo[:, None]
        dof = np.maximum(counts - 2 * groups, 1)
        passes = (cost <= chi2_upper_quantiles(dof, 1.0 - self.confidence)) & within
        backs, totals = self._partitions(np.where(passes, cost, np.inf))
        self.chi2_ = {k: float(v) for k, v in totals.items()}
        if totals:
            self.selection_ = "noise"
            return self._bounds(backs, min(totals), m)
        # Nothing is consistent with the noise within max_segments: least chi2 + (3K - 1) ln N.
        backs, totals = self._partitions(cost)
        if not totals:
            raise InputError(f"{type(self).__name__}: too few sizes to fit one segment")
        self.chi2_ = {k: float(v) for k, v in totals.items()}
        score = {k: v + (3 * k - 1) * np.log(points) for k, v in totals.items()}
        self.selection_ = "noise, closest"
        return self._bounds(backs, min(score, key=lambda k: (score[k], k)), m)

    def segment_index(self, n: Any) -> np.ndarray:
        """Index of the segment used at each size: the covering one, else the nearest bound."""
        self._check_fitted()
        return segment_index(self.segments_, n)

    def predict(self, n: Any, groups: Any = None) -> np.ndarray:
        self._check_fitted()
        n = np.atleast_1d(np.asarray(n, dtype=float))
        if groups is None:
            first = next(iter(self.segments_[0]["fits"]))
            groups = [first] * n.size
        bounds = [(s["n_min"], s["n_max"]) for s in self.segments_]
        out = np.empty(n.size)

        def line(k: int, size: float, g: Any) -> float:
            fit = self.segments_[k]["fits"].get(g)
            if fit is None:
                raise InputError(f"{type(self).__name__}: no fit for group {g!r}")
            return float(fit.t_s_ + fit.t_b_ * size)

        for i, (size, g) in enumerate(zip(n, groups)):
            out[i] = price(bounds, float(size), lambda k, at: line(k, at, g))
        return out
