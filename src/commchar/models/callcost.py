"""What a collective call costs beyond the LogGOPS messages of its algorithm.

The simulator prices a collective as the messages and reductions of the
algorithm the library chooses, each message at its point-to-point (ping-pong)
cost. Measured collectives differ from that in ways the LogGOPS parameters
leave out: the library's per-call work (argument checks, algorithm choice,
temporary buffers and their page faults, local copies of the caller's own
block), and data paths that are not the point-to-point ones (MPICH's
shared-memory release/gather collectives move a message cheaper than a
ping-pong; Open MPI's reductions at p = 2 cost several ping-pongs).

`CallCostModel` fits, per operation, T(n) = fixed + per_byte * n + scale *
bare(n) to the measured times of that collective at one dedicated p, where
bare(n) is the simulated time of the library's algorithm at n without call
costs. `fixed + per_byte * n` is CPU time every rank spends before its first
message (per-call work, and the copies and temporary buffers that grow with
the vector: Open MPI's linear scan costs 0.6 ns/B beyond its one message with
MPI_SUM and with an empty operation alike), `scale` multiplies every cost of
the call's messages and reductions; all >= 0 (a time cannot be negative),
fitted on relative error. The sizes are segmented by the same exact dynamic
programme as the protocol regimes (models/regimes.py) with a BIC charge per
breakpoint, since algorithm and protocol switches change every term at a
size. The per-byte term is a second model, not a free extra: the operation
keeps it only when its BIC, which counts the third parameter of every
segment, beats the two-term fit's.

This is calibration from the collective itself: the per-call terms are
fitted from the measured collective, so a check against the same points is
in-sample. `bench/simulation_check.py --holdout K` refits without every K-th
size and scores only the sizes left out.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, Callable

import numpy as np

from commchar.errors import InputError
from commchar.models._base import Estimator, number_in, positive_int

# A breakpoint costs this many ln(N) on top of BIC's 2 ln(N) for a segment's two
# parameters: lower than the protocol regimes' 4.5, because here a missed switch
# is an error of every size past it while a spurious one costs only a little fit.
DEFAULT_CALL_PENALTY = 1.0
RSS_FLOOR = 1e-4  # per point: (1%)^2, the precision the kernel measures to; a closer fit is noise


class CallCostModel(Estimator):
    """fixed + per_byte * n + scale * bare(n) per size segment, on relative error.

    Fitted: segments_ (list of {n_min, n_max, fixed, per_byte, scale, points,
    max_rel_residual}), rel_errors_ (per point, in fit order), terms_ (2: per_byte
    is 0 everywhere; 3: the per-byte model won on BIC).
    """

    _parameter_constraints = {"max_segments": positive_int(), "penalty": number_in(0.0, 1000.0),
                              "min_sizes": positive_int()}

    def __init__(self, max_segments: int = 8, min_sizes: int = 2, penalty: float = DEFAULT_CALL_PENALTY) -> None:
        self.max_segments = max_segments
        self.min_sizes = min_sizes
        self.penalty = penalty

    def fit(self, n: Any, measured: Any, bare: Any) -> "CallCostModel":
        """n: sizes; measured: times (us, > 0); bare: simulated times without call costs (us, > 0)."""
        self._validate_params()
        n, t, b = (np.asarray(v, dtype=float) for v in (n, measured, bare))
        if not (n.shape == t.shape == b.shape) or n.ndim != 1 or n.size == 0:
            raise InputError("CallCostModel: n, measured and bare must be equal-length, non-empty lists")
        if np.any(~np.isfinite(t)) or np.any(t <= 0) or np.any(~np.isfinite(b)) or np.any(b < 0):
            raise InputError("CallCostModel: times must be finite, measured > 0 and bare >= 0")
        order = np.argsort(n, kind="stable")
        n, t, b = n[order], t[order], b[order]
        if np.unique(n).size != n.size:
            raise InputError("CallCostModel: one time per size")
        fits = [self._partition(n, b, t, terms) for terms in (2, 3)]
        total, cuts, terms = min(fits, key=lambda f: f[0])
        segments = []
        errors = np.empty_like(t)
        for k, (i, j) in enumerate(zip(cuts[:-1], cuts[1:])):
            fixed, per_byte, scale, _ = _terms(n[i:j], b[i:j], t[i:j], terms)
            rel = (fixed + per_byte * n[i:j] + scale * b[i:j] - t[i:j]) / t[i:j]
            errors[i:j] = rel
            segments.append({"n_min": int(n[i]), "n_max": None if k == len(cuts) - 2 else int(n[j - 1]),
                             "fixed": fixed, "per_byte": per_byte, "scale": scale, "points": int(j - i),
                             "max_rel_residual": float(np.max(np.abs(rel)))})
        self.segments_ = segments
        self.rel_errors_ = errors
        self.terms_ = terms
        return self

    def _partition(self, n: np.ndarray, b: np.ndarray, t: np.ndarray, terms: int) -> tuple[float, list[int], int]:
        """(BIC, segment starts and the end, terms) minimising RSS + the BIC charges, exactly."""
        size = t.size

        @lru_cache(maxsize=None)
        def rss(i: int, j: int) -> float:
            return _terms(n[i:j], b[i:j], t[i:j], terms)[3]

        lo = min(self.min_sizes, size)
        best_total, best_cuts = math.inf, [0, size]
        for k in range(1, min(self.max_segments, max(size // lo, 1)) + 1):
            cost, cuts = _best_k(size, k, lo, rss)
            if cuts is None:
                continue
            total = size * math.log(max(cost / size, RSS_FLOOR)) + math.log(size) * (
                terms * k + self.penalty * (k - 1))
            if total < best_total - 1e-9:
                best_total, best_cuts = total, cuts
        return best_total, best_cuts, terms

    def predict(self, n: Any, bare: Any) -> np.ndarray:
        self._check_fitted()
        n, b = np.asarray(n, dtype=float), np.asarray(bare, dtype=float)
        out = np.empty_like(b)
        for i, (size, base) in enumerate(zip(n.ravel(), b.ravel())):
            seg = _segment_for(self.segments_, size)
            out.flat[i] = seg["fixed"] + seg.get("per_byte", 0.0) * size + seg["scale"] * base
        return out


def _terms(n: np.ndarray, bare: np.ndarray, t: np.ndarray, terms: int) -> tuple[float, float, float, float]:
    """(fixed, per_byte, scale, RSS) >= 0 minimising sum ((fixed [+ per_byte n] + scale bare - t) / t)^2."""
    if bare.size == 1:
        # one size cannot tell the terms apart: keep the messages as measured by
        # the ping-pong where the call costs more, shrink them where it costs less
        scale = min(1.0, float(t[0] / bare[0])) if bare[0] > 0 else 1.0
        return max(float(t[0] - scale * bare[0]), 0.0), 0.0, scale, 0.0
    unit = max(float(np.max(n)), 1.0)  # columns of like magnitude for the solver
    columns = [np.ones_like(t), bare] if terms == 2 else [np.ones_like(t), n / unit, bare]
    from scipy.optimize import nnls  # loaded by a fit alone: evaluating verbs start faster

    x, residual = nnls(np.column_stack(columns) / t[:, None], np.ones_like(t))
    if terms == 2:
        return float(x[0]), 0.0, float(x[1]), float(residual) ** 2
    return float(x[0]), float(x[1]) / unit, float(x[2]), float(residual) ** 2


def _best_k(size: int, k: int, lo: int, rss: Callable[[int, int], float]) -> tuple[float, list[int] | None]:
    """Exact DP: the partition of [0, size) into k runs of >= lo points with least total RSS."""
    inf = math.inf
    cost = [[inf] * (size + 1) for _ in range(k + 1)]
    back = [[-1] * (size + 1) for _ in range(k + 1)]
    cost[0][0] = 0.0
    for parts in range(1, k + 1):
        for j in range(parts * lo, size + 1):
            for i in range((parts - 1) * lo, j - lo + 1):
                if cost[parts - 1][i] == inf:
                    continue
                c = cost[parts - 1][i] + rss(i, j)
                if c < cost[parts][j]:
                    cost[parts][j], back[parts][j] = c, i
    if cost[k][size] == inf:
        return inf, None
    cuts = [size]
    for parts in range(k, 0, -1):
        cuts.append(back[parts][cuts[-1]])
    return cost[k][size], cuts[::-1]


def _segment_for(segments: list[dict[str, Any]], n: float) -> dict[str, Any]:
    """The segment covering n; in a gap the nearest bound (ties: the lower), below the first the first."""
    for k, seg in enumerate(segments):
        upper = math.inf if seg["n_max"] is None else seg["n_max"]
        if n <= upper:
            if k > 0 and n < seg["n_min"]:
                prev = segments[k - 1]["n_max"]
                return segments[k - 1] if n - prev <= seg["n_min"] - n else seg
            return seg
    return segments[-1]
