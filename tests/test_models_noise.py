"""The node's detours while every rank works (commchar.models.noise), from synthetic
`noise` points, its model-file field and its validation."""

from __future__ import annotations

import pytest

from commchar.errors import InputError
from commchar.modelfile.model import ModelError
from commchar.modelfile.schema import validate_library
from commchar.models.noise import NoiseModel, lost_fraction, noise_section


def _point(p: int, bins: list[list[float]], seconds: float = 0.5, **over) -> dict:
    counts = sum(b[1] for b in bins if len(b) == 3)
    extra = {"noise_threshold_us": 1.0, "noise_detours_rank": [counts / p] * p,
             "noise_lost_us_rank": [sum(b[2] for b in bins if len(b) == 3) / p] * p,
             "noise_seconds_rank": [seconds] * p, "noise_bins": bins} | over
    return {"library": "lib", "op": "noise", "variant": "", "p": p, "n_bytes": 0, "valid": True,
            "t_us": 1.0, "extra": extra}


def test_each_bin_keeps_its_rate_per_rank_and_its_mean_length_so_the_time_lost_is_exact():
    # 2 ranks for 0.5 s each: 1 rank-second; 400 detours of 2-4 us (1000 us), 2 of 1-2 ms (3000 us)
    model = NoiseModel().fit([_point(2, [[2, 400, 1000.0], [1024, 2, 3000.0]])])
    (row,) = model.params_["by_p"]
    assert row["p"] == 2 and row["rank_seconds"] == 1.0
    assert row["bins"] == [[2.0, 400.0, 2.5], [1024.0, 2.0, 1500.0]]
    assert row["rate_per_s"] == 402.0
    assert row["fraction"] == pytest.approx(4000e-6)


def test_a_points_share_of_time_lost_is_its_bins_time_over_its_rank_seconds():
    # 1 rank-second; 1000 us + 3000 us lost
    assert lost_fraction(_point(2, [[2, 400, 1000.0], [1024, 2, 3000.0]])) == pytest.approx(4000e-6)
    assert lost_fraction(_point(2, [[2, 400, 1000.0]], noise_bins="x")) is None
    assert lost_fraction({**_point(2, []), "op": "pingpong"}) is None


def test_points_at_one_p_are_pooled_and_each_p_keeps_its_own_row():
    model = NoiseModel().fit([_point(4, [[16, 100, 2000.0]]), _point(4, [[16, 300, 6000.0]]),
                              _point(2, [[4, 10, 50.0]])])
    rows = model.params_["by_p"]
    assert [r["p"] for r in rows] == [2, 4]
    four = rows[1]
    assert four["rank_seconds"] == 4.0 and four["bins"] == [[16.0, 100.0, 20.0]]


def test_points_without_the_kernels_lists_are_left_out_and_none_is_an_error():
    bad = [_point(2, [[1, 5, 6.0]], noise_seconds_rank=[0.5]),  # a list not of p ranks
           _point(2, [[1, 5]]), _point(2, [[1, -5, 6.0]]),
           {**_point(2, [[1, 5, 6.0]]), "valid": False}]
    with pytest.raises(InputError, match="no noise point"):
        NoiseModel().fit(bad)
    skipped: list[str] = []
    assert noise_section(bad, skipped, "lib") is None and "lib noise" in skipped[0]


def test_the_model_file_validates_the_section():
    section = NoiseModel().fit([_point(2, [[2, 400, 1000.0]])]).params_
    validate_library("m", {"operations": {}, "loggp": {"L": 1, "o_s": 1, "o_r": 1, "g": 1, "G": 0.001, "noise": section}})
    for broken, where in (({"by_p": []}, "by_p"),
                          ({"by_p": [{"p": 4, "bins": []}, {"p": 2, "bins": []}]}, "p"),
                          ({"by_p": [{"p": 2, "bins": [[2, 1, 1], [1, 1, 1]]}]}, "lower_us"),
                          ({"by_p": [{"p": 2, "bins": [[2, -1, 1]]}]}, "rate_per_s")):
        with pytest.raises(ModelError, match=where):
            validate_library("m", {"operations": {}, "loggp": {"L": 1, "o_s": 1, "o_r": 1, "g": 1, "G": 0.001, "noise": broken}})


def test_the_report_names_the_share_of_a_busy_ranks_time_and_the_longest_kind():
    from commchar.report.adapters import ModelView
    from commchar.report.dataset import Entity
    from commchar.report.findings import thresholds

    section = NoiseModel().fit([_point(2, [[2, 400, 1000.0], [1024, 2, 3000.0]]),
                                _point(16, [[16, 1600, 40000.0]])]).params_
    view = ModelView("lib", {"operations": {}, "loggp_partial": {"noise": section}}, "test")
    (text,) = [f.text for f in thresholds(Entity("lib", "lib", {}, [], [], [], model=view)) if "detours" in f.text]
    # p = 16: 1600 detours of 25 us over 8 rank-seconds, 0.50%; the longest kind p = 2's 1.5 ms ones
    assert "loses 0.50% of its time" in text and "at p = 16 (200 a second" in text
    assert "the longest kind 1.5e+03 us, 2 a second" in text and "p = 2, 16" in text
