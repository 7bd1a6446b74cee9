import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commchar.statistics import (larger_p_value, median_ci_ranks, relative_ci_halfwidth, sorted_percentiles, summarize,
                                 transient_length)


def test_summary_of_known_samples():
    s = summarize([5, 1, 4, 2, 3, 100])
    assert s["reps"] == 6 and s["t_us"] == 3.5 and s["t_min_us"] == 1 and s["t_max_us"] == 100
    assert s["outliers"] == 1  # 100 lies beyond the upper Tukey fence
    assert math.isclose(s["t_mean_us"], 115 / 6)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=200),
       st.lists(st.floats(0, 100), min_size=1, max_size=6))
def test_percentiles_of_sorted_samples_are_numpys_to_the_bit(samples, qs):
    x = np.sort(np.asarray(samples, dtype=float))
    assert sorted_percentiles(x, tuple(qs)) == np.percentile(x, qs).tolist()


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


def test_the_kernels_ci_ranks_are_pythons(tmp_path):
    """The kernel decides "precision met" with its own ranks (kernels/core/cc_stats.c): compiled
    as it is and asked for every n up to 200000, it must give Python's ranks."""
    import subprocess
    from pathlib import Path

    from _c_drivers import build, compiler

    core = Path(__file__).resolve().parents[1] / "kernels" / "core"
    driver = ("#include <stdio.h>\n#include <stdlib.h>\n#include \"cc_stats.h\"\n"
              "int main(int argc, char **argv) {\n"
              "    (void)argc;\n"
              "    size_t top = (size_t)strtoul(argv[1], NULL, 10), lo, hi;\n"
              "    for (size_t n = 1; n <= top; n++) { cc_ci_ranks(n, &lo, &hi); printf(\"%zu %zu\\n\", lo, hi); }\n"
              "    return 0;\n}\n")
    binary = build(tmp_path, "ranks", driver, core, [core / "cc_stats.c"], compiler("cc", "gcc"), ("-lm",))
    top = 200000
    lines = subprocess.run([str(binary), str(top)], check=True, capture_output=True, text=True).stdout.split("\n")
    differ = [n for n in range(1, top + 1)
              if tuple(int(r) - 1 for r in lines[n - 1].split()) != median_ci_ranks(n)]
    assert differ == [], f"{len(differ)} sample counts differ, the first {differ[:5]}"


def test_no_ci_is_narrower_than_half_a_timer_tick():
    # samples that agree to the tick: the order statistics give a CI of no width
    s = summarize([7.77] * 500 + [7.79] * 10)
    assert relative_ci_halfwidth(s) == 0
    assert relative_ci_halfwidth(s, tick_us=0.02) == pytest.approx(0.01 / 7.77)
    # a wider CI is not touched by a small tick
    wide = summarize([1.0, 2.0, 3.0, 4.0, 5.0] * 20)
    assert relative_ci_halfwidth(wide, tick_us=0.02) == relative_ci_halfwidth(wide)


def test_a_warm_up_transient_is_left_out_of_the_mean_and_kept_in_the_median():
    rng = np.random.default_rng(3)
    steady = rng.lognormal(0.0, 0.05, size=160)
    samples = np.concatenate([5.0 * rng.lognormal(0.0, 0.2, size=37), steady])
    assert 35 <= transient_length(samples) <= 45
    s = summarize(samples)
    assert s["transient"] == transient_length(samples)
    assert math.isclose(s["t_mean_us"], float(samples[s["transient"]:].mean()))
    assert s["t_mean_us"] < 1.2 < float(samples.mean())
    assert math.isclose(s["t_us"], float(np.median(samples)))  # the median keeps every sample
    assert s["reps"] == samples.size


def test_a_series_without_a_transient_keeps_every_sample_in_its_mean():
    rng = np.random.default_rng(5)
    cut = 0
    for _ in range(200):
        # heavy-tailed and stationary: 2% spikes of 3 to 9 times, anywhere, early ones too
        x = rng.lognormal(0.0, 0.05, size=180)
        spikes = rng.random(180) < 0.02
        x[spikes] *= rng.uniform(3, 9, size=int(spikes.sum()))
        cut += transient_length(x) > 0
    assert cut <= 2
    lone = np.concatenate([[40.0], np.ones(99)])  # one stall at the start is the tail, not a transient
    assert transient_length(lone) == 0
    assert transient_length(np.ones(50)) == 0  # equal samples: nothing to test
    assert transient_length([math.nan] + [1.0] * 49) == 0  # an unreadable sample: no cut
    assert transient_length([9.0, 9.0, 9.0, 1.0, 1.0, 1.0, 1.0]) == 0  # too few batches to tell


def test_the_means_noise_counts_only_the_samples_the_mean_is_of():
    from commchar.models.inputs import normalise

    stored = {"op": "pingpong", "p": 2, "n_bytes": 8, "t_us": 1.0, "t_mean_us": 1.1, "t_std_us": 0.2,
              "reps": 104, "ci_lo_us": 0.99, "ci_hi_us": 1.01}
    whole = normalise(stored, "row 1")
    cut = normalise({**stored, "extra": {"transient_samples": 4}}, "row 2")
    assert math.isclose(whole["mean_noise"], 0.2 / math.sqrt(104) / 1.1)
    assert math.isclose(cut["mean_noise"], 0.2 / math.sqrt(100) / 1.1)


@pytest.mark.parametrize("seed", range(4))
def test_the_transient_test_is_scipys_mann_whitney(seed):
    """The rank-sum test the transient search makes (exact for a short prefix without ties, the
    normal approximation otherwise) gives scipy's one-sided p-values, ties and spikes included."""
    from scipy.stats import mannwhitneyu

    rng = np.random.default_rng(seed)
    for trial in range(150):
        n = int(rng.integers(20, 2000))
        cut = int(rng.integers(1, 9)) if trial % 2 else int(rng.integers(9, n // 2 + 1))
        x = rng.lognormal(0.0, 0.2, n)
        if trial % 3 == 0:
            x = np.round(x, 1)  # ties
        if trial % 4 == 0:
            x[:cut] *= 1.0 + 0.1 * (trial % 7)  # a transient of some height
        expected = float(mannwhitneyu(x[:cut], x[cut:], alternative="greater").pvalue)
        assert larger_p_value(x[:cut], x[cut:]) == pytest.approx(expected, rel=1e-4, abs=1e-300)
    assert np.isnan(larger_p_value(np.ones(5), np.ones(20)))
