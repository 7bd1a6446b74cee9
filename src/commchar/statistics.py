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

The test is computed as scipy's `mannwhitneyu` computes it (the exact
distribution of U when the cut-off prefix has at most 8 samples and no ties,
else the normal approximation with tie and continuity corrections; the same
p-values), in numpy: scipy's costs 1.4 ms a call and 1.5 s of importing
`scipy.stats`, and the runner summarizes every point while the job's ranks
wait for the CPU it takes.
"""

from __future__ import annotations

import math

import numpy as np

Z95 = 1.959963984540054
OUTLIER_RULE = "Tukey fences: outside [p25 - 1.5 IQR, p75 + 1.5 IQR]"
TRANSIENT_BATCH = 5  # samples per batch median of the transient's search
TRANSIENT_ALPHA = 1e-3  # the test's level: a cut-off prefix must be larger beyond this doubt
EXACT_UP_TO = 8  # a prefix this short, without ties, is tested on the exact distribution of U


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
    # each batch's median, from its sorted samples (np.median along an axis costs 25 times more)
    ordered = np.sort(x[:batches * TRANSIENT_BATCH].reshape(batches, TRANSIENT_BATCH), axis=1)
    mid = TRANSIENT_BATCH // 2
    medians = ordered[:, mid] if TRANSIENT_BATCH % 2 else 0.5 * (ordered[:, mid - 1] + ordered[:, mid])
    # MSER(d) for every cut d of the first half at once, from sums over each remainder
    rest = np.arange(batches, 0, -1, dtype=float)[:batches // 2 + 1]
    total = np.cumsum(medians[::-1])[::-1][:rest.size]
    squares = np.cumsum((medians - medians.mean())[::-1] ** 2)[::-1][:rest.size]
    shifted = total - rest * medians.mean()  # sums of the centred medians: no cancellation
    mser = np.maximum(squares - shifted ** 2 / rest, 0.0) / rest ** 2
    cut = int(np.flatnonzero(mser <= mser.min() * (1 + 1e-12) + 1e-300)[0]) * TRANSIENT_BATCH
    if cut == 0:
        return 0
    return cut if larger_p_value(x[:cut], x[cut:]) < TRANSIENT_ALPHA else 0


def larger_p_value(first: np.ndarray, rest: np.ndarray) -> float:
    """One-sided p-value of the Mann-Whitney U test that `first` is stochastically larger than
    `rest`, `rest` holding more than 8 samples (nan when every sample is equal: no evidence
    either way)."""
    n1, n2 = first.size, rest.size
    values, inverse, counts = np.unique(np.concatenate([first, rest]), return_inverse=True,
                                        return_counts=True)
    ranks = (np.cumsum(counts) - (counts - 1) / 2.0)[inverse]  # 1-based, ties averaged
    u = float(ranks[:n1].sum()) - n1 * (n1 + 1) / 2.0
    if n1 <= EXACT_UP_TO and values.size == n1 + n2:
        return _exact_upper_tail(round(u), n1, n2)
    n = n1 + n2
    ties = float(np.sum(counts.astype(float) ** 3 - counts))
    variance = n1 * n2 / 12.0 * ((n + 1) - ties / (n * (n - 1)))
    if variance <= 0.0:
        return math.nan
    z = (u - n1 * n2 / 2.0 - 0.5) / math.sqrt(variance)
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def _exact_upper_tail(u: int, n1: int, n2: int) -> float:
    """P(U >= u) with no ties: the count of arrangements with U = k is the coefficient of q^k in
    the Gaussian binomial [n1 + n2 choose n1]_q, the product over i = 1..n1 of
    (1 - q^(n2 + i)) / (1 - q^i)."""
    length = n1 * n2 + 1
    coef = np.zeros(length)
    coef[0] = 1.0
    for i in range(1, n1 + 1):
        shifted = np.zeros(length)
        shifted[n2 + i:] = coef[:length - n2 - i]
        coef = coef - shifted  # times (1 - q^(n2 + i))
        padded = np.zeros(-(-length // i) * i)
        padded[:length] = coef
        coef = np.cumsum(padded.reshape(-1, i), axis=0).reshape(-1)[:length]  # over (1 - q^i)
    return float(coef[max(u, 0):].sum() / coef.sum())


def sorted_percentiles(x: np.ndarray, qs: tuple[float, ...]) -> list[float]:
    """np.percentile's default ('linear') of an already sorted array, without its sort and
    dispatch: the runner summarizes every point as it arrives, and np.percentile took 120 us
    of a point's 170 while two ranks wanted the same two cores."""
    n = x.size
    out = []
    for q in qs:
        h = q / 100.0 * (n - 1)
        lo = math.floor(h)
        a = float(x[lo])
        if lo + 1 >= n:
            out.append(a)
            continue
        b, t = float(x[lo + 1]), h - lo
        # numpy's lerp: from the nearer end, so that t = 1 gives b exactly
        out.append(b - (b - a) * (1.0 - t) if t >= 0.5 else a + (b - a) * t)
    return out


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
    p25, median, p75, p95 = sorted_percentiles(x, (25, 50, 75, 95))
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
