"""The chi-square distribution's upper quantile at whole degrees of freedom, in the standard
library: what the regime fit tests each candidate segment's residuals against.

scipy.special.chdtri gives the same numbers (tests/test_chi2.py compares them to 1e-10),
but importing scipy.special takes 0.16-0.19 s, and the adaptive rule's first analysis runs
between two measuring jobs, where every tenth of a second the runner spends is wall time of
the characterization. At a whole k the upper tail has a closed form (the regularized upper
incomplete gamma function at an integer or half-integer shape), summed here in logs so that
no term overflows, and the quantile is found by bisection on it.
"""

from __future__ import annotations

import functools
import math

import numpy as np

_BISECTIONS = 200  # far more than the 60-odd halvings a double's mantissa allows: the loop stops on its own


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
    """The x with P(X > x) = alpha for X chi-square with k degrees of freedom (0 < alpha < 1)."""
    if k < 1 or not 0.0 < alpha < 1.0:
        raise ValueError(f"chi-square quantile: k = {k} and alpha = {alpha} are out of range")
    lo, hi = 0.0, k + 10.0 * math.sqrt(2.0 * k) + 50.0
    while chi2_upper_tail(hi, k) > alpha:
        lo, hi = hi, 2.0 * hi
    for _ in range(_BISECTIONS):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if chi2_upper_tail(mid, k) > alpha:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def chi2_upper_quantiles(dof: np.ndarray, alpha: float) -> np.ndarray:
    """chi2_upper_quantile at each element of `dof` (whole numbers >= 1, of any float or int
    dtype), the array's shape kept."""
    values, inverse = np.unique(np.asarray(dof), return_inverse=True)
    table = np.array([chi2_upper_quantile(int(round(float(v))), alpha) for v in values])
    return table[inverse].reshape(np.shape(dof))
