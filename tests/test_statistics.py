import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from commchar.measure.statistics import median_ci_ranks, relative_ci_halfwidth, summarize


def test_summary_of_known_samples():
    s = summarize([5, 1, 4, 2, 3, 100])
    assert s["reps"] == 6 and s["t_us"] == 3.5 and s["t_min_us"] == 1 and s["t_max_us"] == 100
    assert s["outliers"] == 1  # 100 lies beyond the upper Tukey fence
    assert math.isclose(s["t_mean_us"], 115 / 6)


def test_median_ci_ranks_match_the_binomial_rule():
    # n = 100: 1.96*10 = 19.6 -> ranks floor(40.2) = 40 and ceil(60.8) = 61 (1-based)
    assert median_ci_ranks(100) == (39, 60)


def test_ci_covers_the_median_about_95_percent_of_the_time():
    rng = np.random.default_rng(7)
    hits = 0
    for _ in range(2000):
        s = summarize(rng.lognormal(0.0, 0.5, size=41))
        hits += s["ci_lo_us"] <= 1.0 <= s["ci_hi_us"]  # the true median of lognormal(0, s) is 1
    assert 0.93 <= hits / 2000 <= 0.985


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=300))
def test_summary_is_ordered(samples):
    s = summarize(samples)
    assert s["t_min_us"] <= s["t_p25_us"] <= s["t_us"] <= s["t_p75_us"] <= s["t_p95_us"] <= s["t_max_us"]
    assert s["ci_lo_us"] <= s["t_us"] <= s["ci_hi_us"]
    assert relative_ci_halfwidth(s) >= 0
