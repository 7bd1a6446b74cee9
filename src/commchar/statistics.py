"""Summary statistics of one measured point, computed from every raw sample.

The 95% confidence interval of the median uses order statistics (distribution
free, exact enough from about 10 samples): the ranks floor((n - 1.96 sqrt n)/2)
and ceil(1 + (n + 1.96 sqrt n)/2), 1-based. The kernel's stopping rule uses the
same interval, so "precision met" means the same thing on both sides.

The mean is the steady state's: what a program that calls the operation
thousands of times pays per call, tail included, without the warm-up transient
some series start with (a protocol's first calls, a page or connection set up
after the kernel's warm-up called the series steady). The transient is found
as in simulation output analysis: the truncation point that minimises the
marginal standard error of what remains (MSER, White 1997), on medians of
batches of 5 samples so that a lone spike is not taken for a transient, and kept
only when the samples it cuts off are larger than the rest beyond doubt (a
one-sided Mann-Whitney test at 0.1%); bench/transient_rule.py measures how
often it cuts series shuffled so that no transient can exist. The median and
every percentile stay over all samples.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import mannwhitneyu

Z95 = 1.959963984540054
OUTLIER_RULE = "Tukey fences: outside [p25 - 1.5 IQR, p75 + 1.5 IQR]"
TRANSIENT_BATCH = 5  # samples per batch median of the transient's search
TRANSIENT_ALPHA = 1e-3  # the test's level: a cut-off prefix must be larger beyond this doubt


def median_ci_ranks(n: int) -> tuple[int, int]:
    """0-based indices into the sorted samples bounding the 95% CI of the median."""
    half_width = Z95 * math.sqrt(n)
    lo = math.floor((n - half_width) / 2.0)
    hi = math.ceil(1.0 + (n + half_width) / 2.0)
    return max(lo, 1) - 1, min(hi, n) - 1


def transient_length(samples: list[float] | np.ndarray) -> int:
    """How many of the first samples, in the order measured, are a warm-up transient (0: none;
    never more than half): see the module's docstring."""
    x = np.asarray(samples, dtype=float)
    batches = x.size // TRANSIENT_BATCH
    if batches < 4 or not np.all(np.isfinite(x)):
        return 0
    medians = np.median(x[:batches * TRANSIENT_BATCH].reshape(batches, TRANSIENT_BATCH), axis=1)
    # MSER(d) for every cut d of the first half at once, from sums over each remainder
    rest = np.arange(batches, 0, -1, dtype=float)[:batches // 2 + 1]
    total = np.cumsum(medians[::-1])[::-1][:rest.size]
    squares = np.cumsum((medians - medians.mean())[::-1] ** 2)[::-1][:rest.size]
    shifted = total - rest * medians.mean()  # sums of the centred medians: no cancellation
    mser = np.maximum(squares - shifted ** 2 / rest, 0.0) / rest ** 2
    cut = int(np.flatnonzero(mser <= mser.min() * (1 + 1e-12) + 1e-300)[0]) * TRANSIENT_BATCH
    if cut == 0:
        return 0
    # all-equal samples give no p-value (nan): no transient then
    p_value = float(mannwhitneyu(x[:cut], x[cut:], alternative="greater").pvalue)
    return cut if p_value < TRANSIENT_ALPHA else 0


def summarize(samples: list[float] | np.ndarray) -> dict:
    """Median, percentiles, CI of the median and outlier count over every sample; the mean and
    standard deviation of the steady state (after the `transient` first samples)."""
    ordered = np.asarray(samples, dtype=float)
    x = np.sort(ordered)
    n = int(x.size)
    if n == 0:
        raise ValueError("no samples")
    transient = transient_length(ordered)
    steady = ordered[transient:]
    p25, median, p75, p95 = np.percentile(x, [25, 50, 75, 95])
    lo, hi = median_ci_ranks(n)
    iqr = p75 - p25
    outliers = int(np.count_nonzero((x < p25 - 1.5 * iqr) | (x > p75 + 1.5 * iqr)))
    return {
        "reps": n,
        "t_us": float(median),
        "t_min_us": float(x[0]),
        "t_p25_us": float(p25),
        "t_mean_us": float(steady.mean()),
        "t_p75_us": float(p75),
        "t_p95_us": float(p95),
        "t_max_us": float(x[-1]),
        "t_std_us": float(steady.std(ddof=1)) if steady.size > 1 else 0.0,
        "ci_lo_us": float(x[lo]),
        "ci_hi_us": float(x[hi]),
        "outliers": outliers,
        "outlier_rule": OUTLIER_RULE,
        "transient": transient,
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
