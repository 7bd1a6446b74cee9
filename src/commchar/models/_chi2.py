"""The chi-square distribution's upper quantile at whole degrees of freedom, in the standard
library: what the regime fit tests each candidate segment's residuals against.

scipy.special.chdtri gives the same numbers (tests/test_chi2.py compares them: within 1e-13
at the levels the fit uses), but importing scipy.special takes 0.16-0.19 s, and the adaptive
rule's first analysis runs between two measuring jobs, where every tenth of a second the
runner spends is wall time of the characterization. At a whole k the upper tail has a closed
form (the regularized upper incomplete gamma function at an integer or half-integer shape),
summed here in logs so that no term overflows, and the quantile is found by Newton's method
on it.
"""

from __future__ import annotations

import functools
import math
from statistics import NormalDist

import numpy as np

_STEPS = 200  # Newton steps, each bisecting instead where it would leave the bracket


def chi2_upper_tail(x: float, k: int) -> float:
    """P(X > x) for X chi-square with k (a whole number >= 1) degrees of freedom."""
    if x <= 0.0:
        return 1.0
    h = 0.5 * x
    log_h = math.log(h)
    if k % 2 == 0:
        total = sum(math.exp(-h + j * log_h - math.lgamma(j + 1.0)) for j in range(k // 2))
    else:
        total = math.erfc(math.sqrt(h)) + sum(math.exp(-h + (j + 0.5) * log_h - math.lgamma(j + 1.5))
                                              for j in range((k - 1) // 2))
    return min(total, 1.0)


@functools.lru_cache(maxsize=4096)
def chi2_upper_quantile(k: int, alpha: float) -> float:
    """The x with P(X > x) = alpha for X chi-square with k degrees of freedom (0 < alpha < 1):
    Newton's method on the tail from the Wilson-Hilferty approximation, kept inside a bracket
    that every step narrows (a step that would leave it bisects it instead)."""
    if k < 1 or not 0.0 < alpha < 1.0:
        raise ValueError(f"chi-square quantile: k = {k} and alpha = {alpha} are out of range")
    c = 2.0 / (9.0 * k)
    x = k * max(1.0 - c + NormalDist().inv_cdf(1.0 - alpha) * math.sqrt(c), 0.1) ** 3
    lo, hi = 0.0, math.inf
    log_norm = 0.5 * k * math.log(2.0) + math.lgamma(0.5 * k)
    for _ in range(_STEPS):
        tail = chi2_upper_tail(x, k)
        if tail > alpha:
            lo = x
        else:
            hi = x
        density = math.exp((0.5 * k - 1.0) * math.log(x) - 0.5 * x - log_norm)
        step = (tail - alpha) / density if density > 0.0 else math.inf
        after = x + step
        if not lo < after < hi:
            after = 0.5 * (lo + hi) if math.isfinite(hi) else 2.0 * x
        if abs(after - x) <= 1e-15 * x:
            return after
        x = after
    return x


def chi2_upper_quantiles(dof: np.ndarray, alpha: float) -> np.ndarray:
    """chi2_upper_quantile at each element of `dof` (whole numbers >= 1, of any float or int
    dtype), the array's shape kept."""
    values, inverse = np.unique(np.asarray(dof), return_inverse=True)
    table = np.array([chi2_upper_quantile(int(round(float(v))), alpha) for v in values])
    return table[inverse].reshape(np.shape(dof))
