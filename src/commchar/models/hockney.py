"""The Hockney model T(n) = t_s + t_b n, fitted on relative error, with bootstrap CIs."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from commchar.errors import InputError
from commchar.models import _lsq
from commchar.models._base import Estimator, number_in, positive_int


# Relative-error weights are 1/t^2 and the moments multiply them in pairs, so times
# beyond these bounds (far from anything measurable) would overflow to inf or 0.
TIME_RANGE_US = (1e-30, 1e30)


def check_sizes_times(n: Any, t: Any, who: str) -> tuple[np.ndarray, np.ndarray]:
    n = np.asarray(n, dtype=float).ravel()
    t = np.asarray(t, dtype=float).ravel()
    if n.shape != t.shape:
        raise InputError(f"{who}: {n.size} sizes but {t.size} times")
    if n.size < 2:
        raise InputError(f"{who}: too few points to fit ({n.size}; need at least 2)")
    # min and max once each (every fit of a segment checks its points: the adaptive rule fits
    # hundreds of segments between two jobs); min and max propagate NaN, and hold any inf
    n_lo, n_hi, t_lo, t_hi = n.min(), n.max(), t.min(), t.max()
    if not all(map(math.isfinite, (n_lo, n_hi, t_lo, t_hi))):
        raise InputError(f"{who}: sizes and times must be finite numbers")
    if n_lo < 0 or t_lo <= 0:
        raise InputError(f"{who}: sizes must be >= 0 and times > 0")
    if t_lo < TIME_RANGE_US[0] or t_hi > TIME_RANGE_US[1]:
        raise InputError(f"{who}: times must be between {TIME_RANGE_US[0]:g} and {TIME_RANGE_US[1]:g} us")
    if n_lo == n_hi:
        raise InputError(f"{who}: a single size ({n[0]:g} B): t_b cannot be fitted")
    return n, t


def fit_quality(n: np.ndarray, t: np.ndarray, t_s: float, t_b: float) -> dict[str, float]:
    """R^2 of the relative-error fit (weights 1/T^2) and the largest relative residual."""
    rel = (t_s + t_b * n - t) / t
    w = 1.0 / (t * t)
    mean = np.sum(w * t) / np.sum(w)
    total = float(np.sum(w * (t - mean) ** 2))
    r2 = 1.0 - float(np.sum(rel * rel)) / total if total > 0 else 1.0
    worst = int(np.argmax(np.abs(rel)))
    return {"points": int(n.size), "r2": r2, "max_rel_residual": float(abs(rel[worst]))}


def bootstrap_draws(n: np.ndarray, t: np.ndarray, draws: int, seed: int,
                    noise: np.ndarray | None = None) -> np.ndarray:
    """(t_s, t_b) for `draws` resamplings of the points with replacement: shape (k, 2).

    Resampling with replacement is a multinomial count per point, used as a
    weight, so every draw is one vectorised moment computation. Draws that
    picked a single distinct size cannot determine t_b and are dropped.
    """
    if draws <= 0:
        return np.empty((0, 2))
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n.size, np.full(n.size, 1.0 / n.size), size=draws).astype(float)
    scale = max(float(n.max()), 1.0)
    x = n / scale
    w = counts / (t * t) if noise is None else counts / (t * t * noise * noise)
    a, b, _ = _lsq.solve(_lsq.moments(x, t, w))
    distinct = np.array([np.unique(x[c > 0]).size >= 2 for c in counts])
    return np.column_stack([a, b / scale])[distinct]


def interval(values: np.ndarray, level: float) -> list[float] | None:
    values = values[np.isfinite(values)]
    if values.size < 10:
        return None
    tail = (1.0 - level) / 2.0 * 100.0
    lo, hi = np.percentile(values, [tail, 100.0 - tail])
    return [float(lo), float(hi)]


class HockneyModel(Estimator):
    """T(n) = t_s + t_b n minimising relative error; t_s, t_b >= 0.

    Fitted: t_s_, t_b_ (us, us/B), quality_ (points, r2, max_rel_residual),
    ci_ (95% bootstrap intervals of t_s, t_b, Bw_as, n_half, pi_s in us, us/B,
    B/us, B, 1/us), draws_ (the bootstrap (t_s, t_b) pairs).
    """

    _parameter_constraints = {
        "bootstrap": positive_int(0),
        "seed": positive_int(0),
        "confidence": number_in(0.5, 0.999),
    }

    def __init__(self, bootstrap: int = 200, seed: int = 0, confidence: float = 0.95) -> None:
        self.bootstrap = bootstrap
        self.seed = seed
        self.confidence = confidence

    def fit(self, n: Any, t: Any, noise: Any = None) -> "HockneyModel":
        """`noise`: each point's relative standard error (> 0): residuals are weighted by it,
        so a noisy point counts less; None weighs every relative residual alike."""
        self._validate_params()
        n, t = check_sizes_times(n, t, type(self).__name__)
        s = None
        if noise is not None:
            s = np.asarray(noise, dtype=float).ravel()
            if s.shape != n.shape or not np.all(np.isfinite(s)) or np.any(s <= 0):
                raise InputError(f"{type(self).__name__}: noise must be one positive number per point")
        self.t_s_, self.t_b_ = _lsq.relative_fit(n, t, noise=s)
        self.quality_ = fit_quality(n, t, self.t_s_, self.t_b_)
        self.draws_ = bootstrap_draws(n, t, self.bootstrap, self.seed, s)
        ts, tb = self.draws_[:, 0], self.draws_[:, 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            self.ci_ = {
                "t_s": interval(ts, self.confidence),
                "t_b": interval(tb, self.confidence),
                "Bw_as": interval(1.0 / tb, self.confidence),
                "n_half": interval(ts / tb, self.confidence),
                "pi_s": interval(1.0 / ts, self.confidence),
            }
        return self

    def fit_one_size(self, n: float, t: float, growth: float | None = None) -> "HockneyModel":
        """The segment of a single measured size (a regime of its own): T = t_b n through the
        origin, so the cost per byte carries to the sizes around it (at n = 0, T = t_s). With
        `growth`, the relative slope t_b / T at n of other series measured at more sizes of the
        same regime (1/B, held in [0, 1/n]), T takes that shape through t at n instead."""
        self._validate_params()
        check_sizes_times([n, n + 1.0], [t, t], type(self).__name__)
        if growth is not None:
            t_b = float(t) * min(max(growth, 0.0), 1.0 / n if n > 0 else 0.0)
            self.t_s_, self.t_b_ = float(t) - t_b * float(n), t_b
        else:
            self.t_s_, self.t_b_ = (float(t), 0.0) if n == 0 else (0.0, float(t) / float(n))
        self.quality_ = {"points": 1, "r2": 1.0, "max_rel_residual": 0.0}
        self.draws_ = np.empty((0, 2))
        self.ci_ = {name: None for name in ("t_s", "t_b", "Bw_as", "n_half", "pi_s")}
        return self

    def predict(self, n: Any) -> np.ndarray:
        self._check_fitted()
        return self.t_s_ + self.t_b_ * np.asarray(n, dtype=float)
