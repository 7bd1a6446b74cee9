"""Summary statistics of one measured point, computed from every raw sample.

The 95% confidence interval of the median uses order statistics (distribution
free, exact enough from about 10 samples): the ranks floor((n - 1.96 sqrt n)/2)
and ceil(1 + (n + 1.96 sqrt n)/2), 1-based. The kernel's stopping rule uses the
same interval, so "precision met" means the same thing on both sides.
"""

from __future__ import annotations

import math

import numpy as np

Z95 = 1.959963984540054
OUTLIER_RULE = "Tukey fences: outside [p25 - 1.5 IQR, p75 + 1.5 IQR]"


def median_ci_ranks(n: int) -> tuple[int, int]:
    """0-based indices into the sorted samples bounding the 95% CI of the median."""
    half_width = Z95 * math.sqrt(n)
    lo = math.floor((n - half_width) / 2.0)
    hi = math.ceil(1.0 + (n + half_width) / 2.0)
    return max(lo, 1) - 1, min(hi, n) - 1


def summarize(samples: list[float] | np.ndarray) -> dict:
    """Median, percentiles, mean, spread, CI of the median and outlier count."""
    x = np.sort(np.asarray(samples, dtype=float))
    n = int(x.size)
    if n == 0:
        raise ValueError("no samples")
    p25, median, p75, p95 = np.percentile(x, [25, 50, 75, 95])
    lo, hi = median_ci_ranks(n)
    iqr = p75 - p25
    outliers = int(np.count_nonzero((x < p25 - 1.5 * iqr) | (x > p75 + 1.5 * iqr)))
    return {
        "reps": n,
        "t_us": float(median),
        "t_min_us": float(x[0]),
        "t_p25_us": float(p25),
        "t_mean_us": float(x.mean()),
        "t_p75_us": float(p75),
        "t_p95_us": float(p95),
        "t_max_us": float(x[-1]),
        "t_std_us": float(x.std(ddof=1)) if n > 1 else 0.0,
        "ci_lo_us": float(x[lo]),
        "ci_hi_us": float(x[hi]),
        "outliers": outliers,
        "outlier_rule": OUTLIER_RULE,
    }


def relative_ci_halfwidth(summary: dict, reference_us: float = 0.0, tick_us: float = 0.0) -> float:
    """The larger side of the median's CI, relative to the median, or to
    `reference_us` when that is larger: the rendezvous probe judges its short
    eager sends against the receiver's delay, as the kernel's stopping rule does.
    No side is taken narrower than half a timer tick of one sample (`tick_us`):
    order statistics that agree to the tick bound the median no closer."""
    median = summary["t_us"]
    yardstick = max(median, reference_us)
    side = max(median - summary["ci_lo_us"], summary["ci_hi_us"] - median, tick_us / 2)
    if yardstick <= 0:
        return math.inf if side > 0 else 0.0
    return side / yardstick
