"""Collectives: T(n, p) = t_s(p) + t_b(p) n + t_c(p) n, per p and as laws in p.

Breakpoints are shared by every p and variant (an algorithm switch happens at
a size); within each regime every (variant, p) gets its own Hockney fit, t_c(p)
is the per-byte term of `sum` minus that of `nop`, and each of t_s, t_b, t_c
becomes a law in p chosen by how well it predicts the larger measured p from
the smaller ones (laws.py, `LawSelector(select="extrapolate")`; `laws="loo"`
chooses by leave-one-out cross-validation instead).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from commchar.errors import InputError
from commchar.models._base import Estimator, number_in, positive_int
from commchar.models.laws import SELECTIONS, STEP_FORMS, Law, LawSelector
from commchar.models.regimes import (DEFAULT_PENALTY, MAX_MISS, THRESHOLD_PARAMETER, SegmentedHockneyModel,
                                     segment_index)
from commchar.segment_gaps import Threshold, locate, price

# With the points' noise the regimes are as many as it asks for (one size may be one, a step
# a Hockney segment cannot follow), as for point-to-point (assemble.P2P_MAX_SEGMENTS).
NOISE_MAX_SEGMENTS = 12


# The law of the bytes every process moves through the node's shared memory per byte of n
# (metrics.AGGREGATE_FACTOR): when the ranks share the memory bandwidth, t_b grows with it.
# n is the whole buffer for scatter and gather, of which (p-1)/p crosses.
NODE_TRAFFIC = {"alltoall": "pairs", "bcast": "linear", "reduce": "linear", "allreduce": "linear",
                "allgather": "linear", "reduce_scatter": "linear", "scan": "linear",
                "scatter": "share", "gather": "share"}


def _arrays(n: Any, p: Any, t: Any, variant: Any) -> tuple[np.ndarray, ...]:
    n = np.asarray(n, dtype=float).ravel()
    p = np.asarray(p, dtype=float).ravel()
    t = np.asarray(t, dtype=float).ravel()
    v = np.asarray([""] * n.size if variant is None else variant, dtype=object).ravel()
    if not (n.size == p.size == t.size == v.size):
        raise InputError("CollectiveModel: n, p, t and variant must have the same length")
    if n.size == 0:
        raise InputError("CollectiveModel: no points")
    if np.any(p < 1) or np.any(n < 0) or np.any(t <= 0) or not np.all(np.isfinite(t)):
        raise InputError("CollectiveModel: need p >= 1, n >= 0 and times > 0")
    return n, p, t, v


class CollectiveModel(Estimator):
    """Regimes shared over p, a Hockney fit per (variant, p) and regime, laws in p.

    Fitted: variants_ (measured variants), primary_ ("sum" when measured,
    else the only variant), segments_ (list of dicts: n_min, n_max,
    per_p {variant: {p: {t_s, t_b, r2, max_rel_residual, points}}},
    t_c {p: value} and laws {variant: {"t_s"|"t_b"|"t_c": LawSelector}}; a
    zero-byte regime [0, 0] first when n = 0 was measured), breakpoints_,
    p_values_, outliers_ ((variant, p), n, t) left out as spikes, regimes_ (the
    SegmentedHockneyModel of the sizes n > 0, None for a single size: its selection_,
    chi2_ or bic_ say how the regimes were chosen).

    Given each point's noise (fit's `noise`), the regimes are chosen as point-to-point's
    are: the fewest shared by every (variant, p) each consistent with the noise, no point
    more than max_miss off (0: no bound), a single size a regime of its own where a
    Hockney segment cannot follow (min_sizes 1), up to NOISE_MAX_SEGMENTS; without it,
    by BIC with max_segments and min_sizes. `threshold`: SegmentedHockneyModel's, for the
    regimes.
    """

    _parameter_constraints = {
        "max_segments": positive_int(1),
        "min_sizes": positive_int(2),
        "max_miss": number_in(0.0, 1e6),
        "penalty": number_in(0.0, 1000.0),
        "laws": (lambda v: v in SELECTIONS, f"one of {', '.join(SELECTIONS)}"),
        "op": (lambda v: v is None or isinstance(v, str), "None or an operation name"),
        "threshold": THRESHOLD_PARAMETER,
    }

    def __init__(self, max_segments: int = 4, min_sizes: int = 3, penalty: float = DEFAULT_PENALTY,
                 laws: str = "extrapolate", op: str | None = None, max_miss: float = MAX_MISS,
                 threshold: Threshold | None = None) -> None:
        self.max_segments = max_segments
        self.max_miss = max_miss
        self.min_sizes = min_sizes
        self.penalty = penalty
        self.laws = laws
        self.op = op
        self.threshold = threshold

    def fit(self, n: Any, p: Any, t: Any, variant: Any = None, noise: Any = None) -> "CollectiveModel":
        """`noise`: each point's relative standard error (0 where unknown), or None for BIC
        selection of the regimes."""
        self._validate_params()
        n, p, t, v = _arrays(n, p, t, variant)
        if noise is not None:
            noise = np.asarray(noise, dtype=float).ravel()
            if noise.size != n.size:
                raise InputError(f"CollectiveModel: {noise.size} noise levels for {n.size} points")
        self.regimes_: SegmentedHockneyModel | None = None
        self.variants_ = sorted(set(v.tolist()))
        self.primary_ = "sum" if "sum" in self.variants_ else self.variants_[0]
        self.p_values_ = sorted(set(int(x) for x in p))
        self.outliers_: list[tuple] = []
        if np.all(n == n[0]):
            self._fit_startup_only(n, p, t, v)
        else:
            # A zero-byte collective is its own regime: libraries return at once
            # (0.01 us against microseconds at 1 B), so it must not bend the first fit.
            zero = n == 0
            self.segments_ = []
            if zero.any():
                self._fit_startup_only(n[zero], p[zero], t[zero], v[zero])
                n, p, t, v = n[~zero], p[~zero], t[~zero], v[~zero]
                noise = None if noise is None else noise[~zero]
            groups = [(str(a), int(b)) for a, b in zip(v, p)]
            if noise is None:
                regimes = SegmentedHockneyModel(max_segments=self.max_segments, min_sizes=self.min_sizes,
                                                penalty=self.penalty, bootstrap=0,
                                                threshold=self.threshold).fit(n, t, groups)
            else:
                regimes = SegmentedHockneyModel(max_segments=NOISE_MAX_SEGMENTS, min_sizes=1, bootstrap=0,
                                                max_miss=self.max_miss, threshold=self.threshold
                                                ).fit(n, t, groups, noise=noise)
            self.regimes_ = regimes
            self.outliers_ = regimes.outliers_
            self.breakpoints_ = regimes.breakpoints_
            if zero.any():
                self.breakpoints_ = [{"after": 0.0, "at": regimes.segments_[0]["n_min"]}, *self.breakpoints_]
            for seg in regimes.segments_:
                per_p: dict[str, dict[int, dict]] = {var: {} for var in self.variants_}
                for (var, pp), h in seg["fits"].items():
                    per_p[var][pp] = {"t_s": h.t_s_, "t_b": h.t_b_, **h.quality_}
                self.segments_.append(self._with_laws(seg["n_min"], seg["n_max"], per_p))
        self._borrow_missing_laws()
        return self

    def _fit_startup_only(self, n: np.ndarray, p: np.ndarray, t: np.ndarray, v: np.ndarray) -> None:
        """A single size (barrier: n = 0): t_s(p) is the median time, t_b = 0."""
        per_p: dict[str, dict[int, dict]] = {var: {} for var in self.variants_}
        for var in self.variants_:
            for pp in self.p_values_:
                sel = (v == var) & (p == pp)
                if sel.any():
                    ts = float(np.median(t[sel]))
                    per_p[var][pp] = {"t_s": ts, "t_b": 0.0, "points": int(sel.sum()),
                                      "max_rel_residual": float(np.max(np.abs(t[sel] - ts) / t[sel]))}
        self.breakpoints_ = []
        self.segments_ = [self._with_laws(float(n[0]), float(n[0]), per_p)]

    def startup_only(self) -> bool:
        """True when every point had the same size (barrier): no t_b to speak of."""
        self._check_fitted()
        return len(self.segments_) == 1 and self.segments_[0]["n_min"] == self.segments_[0]["n_max"]

    def _with_laws(self, n_min: float, n_max: float, per_p: dict[str, dict[int, dict]]) -> dict[str, Any]:
        """Laws in p of one regime. A variant not measured in this regime gets none (fit()
        borrows the nearest regime's); t_c exists only at the p where both `sum` and `nop`
        were measured, and is 0 with a note when there is no such p."""
        sums, nops = per_p.get("sum", {}), per_p.get("nop", {})
        both = [q for q in sorted(sums) if q in nops] if "sum" in per_p and "nop" in per_p else []
        t_c = {q: sums[q]["t_b"] - nops[q]["t_b"] for q in both
               if math.isfinite(sums[q]["t_b"] - nops[q]["t_b"])}
        notes: list[str] = []
        laws: dict[str, dict[str, LawSelector]] = {}
        for var, fits in per_p.items():
            if not fits:
                continue
            ps = sorted(fits)
            # The sum's transfer term is the nop's slope, at the p where both were measured.
            source = {q: nops[q] for q in t_c} if var == "sum" and t_c else fits
            laws[var] = {
                "t_s": self._selector().fit(ps, [fits[q]["t_s"] for q in ps]),
                "t_b": self._selector(transfer=True).fit(sorted(source), [source[q]["t_b"] for q in sorted(source)]),
            }
            if var == "sum" and t_c:
                ps_c = sorted(t_c)
                laws[var]["t_c"] = self._selector().fit(ps_c, [t_c[q] for q in ps_c],
                                                        scale=[max(sums[q]["t_b"], 1e-300) for q in ps_c])
            elif var == "sum" and "nop" in per_p:
                notes.append("t_c = 0: no process count has both sum and nop measured in this regime")
        return {"n_min": n_min, "n_max": n_max, "per_p": per_p, "t_c": t_c, "laws": laws, "notes": notes}

    def _selector(self, transfer: bool = False) -> LawSelector:
        """The law selector of one term; the transfer term (t_b) may also follow the node's
        traffic (NODE_TRAFFIC) when the operation is known."""
        traffic = NODE_TRAFFIC.get(self.op or "") if transfer else None
        return LawSelector(select=self.laws, steps=STEP_FORMS + ((traffic,) if traffic else ()))

    def _borrow_missing_laws(self) -> None:
        """A variant measured at other sizes only has no fit in some regime: use the laws of
        its nearest regime that has one, and say so."""
        for var in self.variants_:
            own = [k for k, seg in enumerate(self.segments_) if var in seg["laws"]]
            if not own:
                raise InputError(f"CollectiveModel: variant {var!r} has no regime with a fit")
            for k, seg in enumerate(self.segments_):
                if var not in seg["laws"]:
                    src = min(own, key=lambda j: (abs(j - k), j))
                    seg["laws"][var] = self.segments_[src]["laws"][var]
                    seg["notes"].append(f"{var or 'this variant'}: not measured in this regime;"
                                        f" laws of the regime from {self.segments_[src]['n_min']:g} B")

    def segment_index(self, n: Any) -> np.ndarray:
        self._check_fitted()
        return segment_index(self.segments_, n)

    def terms(self, k: int, p: Any, variant: str | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """t_s(p), t_b(p), t_c(p) of segment k from the laws."""
        self._check_fitted()
        laws = self.segments_[k]["laws"][variant or self.primary_]
        zero = lambda q: np.zeros_like(np.asarray(q, dtype=float))  # noqa: E731
        return laws["t_s"].predict(p), laws["t_b"].predict(p), (laws["t_c"].predict if "t_c" in laws else zero)(p)

    def predict(self, n: Any, p: Any, variant: str | None = None) -> np.ndarray:
        self._check_fitted()
        n = np.atleast_1d(np.asarray(n, dtype=float))
        p = np.broadcast_to(np.asarray(p, dtype=float), n.shape)
        idx = self.segment_index(n)
        out = np.empty(n.size)
        for k in set(idx.tolist()):
            sel = idx == k
            out[sel] = self._time(k, p[sel], n[sel], variant)
        # a size in a gap between two segments: within their times at its ends (segment_gaps)
        bounds = [(s["n_min"], s["n_max"]) for s in self.segments_]
        for i, size in enumerate(n.tolist()):
            lower, upper, _ = locate(bounds, size)
            if lower != upper:
                out[i] = price(bounds, size, lambda k, at: float(self._time(k, p[i:i + 1], np.array([at]), variant)[0]))
        return out

    def _time(self, k: int, p: np.ndarray, n: np.ndarray, variant: str | None) -> np.ndarray:
        """Segment k's time at (n, p) from its laws."""
        ts, tb, tc = self.terms(k, p, variant)
        return ts + (tb + tc) * n

    def law(self, k: int, term: str, variant: str | None = None) -> Law | None:
        sel = self.segments_[k]["laws"][variant or self.primary_].get(term)
        return None if sel is None else sel.law_
