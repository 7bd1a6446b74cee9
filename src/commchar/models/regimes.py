"""Protocol regimes: penalised segmented least squares over sorted sizes.

Exact dynamic programming over the breakpoints: for every number of segments
K the partition of the sorted sizes minimising the total relative squared
error is found exactly (O(K N^2) with N ~ 24-70 sizes, each candidate
segment's Hockney fit costing O(1) from prefix moments), then K is chosen by
BIC. Several groups (one per p, or per variant and p) may share the
breakpoints while each has its own t_s, t_b per segment: collectives switch
algorithm at a size, for every p.
"""

from __future__ import annotations

from typing import Any, Hashable

import numpy as np

from commchar.errors import InputError
from commchar.models import _lsq
from commchar.models._base import Estimator, number_in, positive_int
from commchar.models.hockney import HockneyModel, check_sizes_times

RSS_FLOOR = 1e-14  # per point: noise-free data must not give log(0)
# BIC charges log(N) per parameter; each breakpoint is charged DEFAULT_PENALTY
# times log(N) more, because the dynamic programme picks the best of ~N
# positions and plain BIC then lets noise add regimes (docs/models.md: 3 of
# 300 synthetic series wrong at 3, none at 4.5). The extra charge is per
# breakpoint, not per parameter: the search does not grow with the groups.
DEFAULT_PENALTY = 4.5
# A time more than this many times what the neighbouring sizes allow is a spike
# (a descheduled repetition on a shared machine), not a protocol: see spikes().
DEFAULT_OUTLIER_FACTOR = 10.0


def spikes(n: np.ndarray, t: np.ndarray, factor: float) -> np.ndarray:
    """Mask of gross upward outliers in one series sorted by size.

    An affine T(n) with t_s, t_b >= 0 grows at most in proportion to the
    size, T(n2) <= T(n1) n2/n1 for n1 < n2, and never shrinks by much as n
    grows. Scanning up, a point above `factor` times what the last kept point
    allows is a spike; scanning down, so is one above `factor` times the next
    larger kept point. Protocol switches stay far inside these bounds; a
    descheduled repetition (100x or more) does not. factor <= 0 disables.
    """
    out = np.zeros(n.size, dtype=bool)
    if factor <= 0 or n.size < 3:
        return out
    ref = 0
    for i in range(1, n.size):
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


def segment_index(segments: list[dict], n: Any) -> np.ndarray:
    """Index of the segment ({"n_min", "n_max"} in size order) used at each size: the
    covering one, else the one with the nearest bound; the first and last are open-ended."""
    n = np.asarray(n, dtype=float)
    lows = np.array([s["n_min"] for s in segments], dtype=float)
    highs = np.array([s["n_max"] for s in segments], dtype=float)
    lows[0], highs[-1] = -np.inf, np.inf
    distance = np.maximum(lows[None, :] - n[..., None], 0) + np.maximum(n[..., None] - highs[None, :], 0)
    return np.argmin(distance, axis=-1)


class SegmentedHockneyModel(Estimator):
    """One Hockney segment per protocol regime, breakpoints shared by all groups.

    Fitted: segments_ (list of dicts: n_min, n_max, fits {group: HockneyModel}),
    outliers_ ((group, n, t) of the spikes left out, see spikes()),
    breakpoints_ (list of {"after": last size of a regime, "at": first size of
    the next}), bic_ (BIC per number of segments tried), grid_ (sorted sizes).
    """

    _parameter_constraints = {
        "max_segments": positive_int(1),
        "min_sizes": positive_int(2),
        "penalty": number_in(0.0, 1000.0),
        "bootstrap": positive_int(0),
        "seed": positive_int(0),
        "outlier_factor": number_in(0.0, 1e6),
    }

    def __init__(self, max_segments: int = 5, min_sizes: int = 3, penalty: float = DEFAULT_PENALTY,
                 bootstrap: int = 200, seed: int = 0, outlier_factor: float = DEFAULT_OUTLIER_FACTOR) -> None:
        self.outlier_factor = outlier_factor
        self.max_segments = max_segments
        self.min_sizes = min_sizes
        self.penalty = penalty
        self.bootstrap = bootstrap
        self.seed = seed

    def fit(self, n: Any, t: Any, groups: Any = None) -> "SegmentedHockneyModel":
        self._validate_params()
        n, t = check_sizes_times(n, t, type(self).__name__)
        labels = np.empty(n.size if groups is None else len(groups), dtype=object)
        labels[:] = [0] * n.size if groups is None else list(groups)
        if labels.size != n.size:
            raise InputError(f"{type(self).__name__}: {labels.size} group labels for {n.size} points")
        keys = sorted(set(labels.tolist()), key=str)
        data = {}
        self.outliers_: list[tuple[Hashable, float, float]] = []
        for g in keys:
            sel = np.array([label == g for label in labels], dtype=bool)
            gn, gt = check_sizes_times(n[sel], t[sel], f"{type(self).__name__} group {g}")
            order = np.argsort(gn, kind="stable")
            gn, gt = gn[order], gt[order]
            bad = spikes(gn, gt, self.outlier_factor)
            if np.unique(gn[~bad]).size < 2:
                bad[:] = False
            self.outliers_ += [(g, float(x), float(y)) for x, y in zip(gn[bad], gt[bad])]
            data[g] = (gn[~bad], gt[~bad])
        self.grid_ = np.unique(np.concatenate([gn for gn, _ in data.values()]))
        cost = self._cost_matrix(data)
        bounds, self.bic_ = self._best_partition(cost, n.size, len(keys))
        self.segments_: list[dict[str, Any]] = []
        for k, (i, j) in enumerate(bounds):
            fits: dict[Hashable, HockneyModel] = {}
            for g, (gn, gt) in data.items():
                sel = (gn >= self.grid_[i]) & (gn <= self.grid_[j])
                fits[g] = HockneyModel(bootstrap=self.bootstrap, seed=self.seed + k).fit(gn[sel], gt[sel])
            self.segments_.append({"n_min": float(self.grid_[i]), "n_max": float(self.grid_[j]), "fits": fits})
        self.breakpoints_ = [
            {"after": self.segments_[k]["n_max"], "at": self.segments_[k + 1]["n_min"]}
            for k in range(len(self.segments_) - 1)
        ]
        return self

    def _cost_matrix(self, data: dict) -> np.ndarray:
        """cost[i, j]: summed relative RSS of one segment over grid sizes i..j (inf if too few)."""
        grid = self.grid_
        m = grid.size
        cost = np.zeros((m, m))
        too_few = np.zeros((m, m), dtype=bool)
        whole = np.zeros((m, m), dtype=bool)
        whole[0, m - 1] = True
        for gn, gt in data.values():
            scale = max(float(gn.max()), 1.0)
            prefix = _lsq.prefix_moments(gn / scale, gt, 1.0 / (gt * gt))
            distinct = np.concatenate([[0], np.cumsum(np.r_[True, np.diff(gn) > 0])])
            lo = np.searchsorted(gn, grid, side="left")
            hi = np.searchsorted(gn, grid, side="right")
            mom = prefix[:, hi[None, :]] - prefix[:, lo[:, None]]
            _, _, rss = _lsq.solve(tuple(mom), nonneg=False)
            sizes = distinct[hi[None, :]] - distinct[lo[:, None]]
            cost += rss
            # A regime needs min_sizes sizes in every group; the single segment only 2.
            too_few |= np.where(whole, sizes < 2, sizes < self.min_sizes)
        cost[too_few] = np.inf
        cost[np.tril_indices(m, -1)] = np.inf
        return cost

    def _best_partition(self, cost: np.ndarray, points: int, groups: int
                        ) -> tuple[list[tuple[int, int]], dict[int, float]]:
        m = cost.shape[0]
        # best[j]: least cost of covering sizes 0..j-1 with k segments; back[k][j]: start of the last.
        best = np.full(m + 1, np.inf)
        best[0] = 0.0
        backs, bic, totals = [], {}, {}
        for k in range(1, self.max_segments + 1):
            # cand[i, j] = best[i] + cost of segment i..j-1
            cand = best[:m, None] + np.concatenate([np.full((m, 1), np.inf), cost], axis=1)
            back = np.argmin(cand, axis=0)
            best = cand[back, np.arange(m + 1)]
            backs.append(back)
            if not np.isfinite(best[m]):
                continue
            rss = max(float(best[m]), RSS_FLOOR * points)
            params = 2 * k * groups + (k - 1)
            bic[k] = points * np.log(rss / points) + (params + self.penalty * (k - 1)) * np.log(points)
            totals[k] = best[m]
        if not bic:
            raise InputError(f"{type(self).__name__}: too few sizes to fit one segment")
        chosen = min(bic, key=lambda k: (bic[k], k))
        bounds = []
        j = m
        for k in range(chosen, 0, -1):
            i = int(backs[k - 1][j])
            bounds.append((i, j - 1))
            j = i
        return bounds[::-1], {k: float(v) for k, v in bic.items()}

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
        idx = self.segment_index(n)
        out = np.empty(n.size)
        for i, (size, g, k) in enumerate(zip(n, groups, idx)):
            fit = self.segments_[k]["fits"].get(g)
            if fit is None:
                raise InputError(f"{type(self).__name__}: no fit for group {g!r}")
            out[i] = fit.t_s_ + fit.t_b_ * size
        return out
