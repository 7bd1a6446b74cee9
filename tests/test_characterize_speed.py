"""bench/characterize_speed.py's bound on a characterization's time: what an ideal stopping rule
would still measure, from the points a real run stored."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "characterize_speed.py"


def load_bench():
    spec = importlib.util.spec_from_file_location("characterize_speed", BENCH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def point(wall_s, warmup_s, ci_rel, target=0.01, met=1):
    return {"op": "pingpong", "wall_s": wall_s, "warmup_s": warmup_s, "ci_rel": ci_rel,
            "precision_target": target, "precision_met": met, "stop_reason": "precision"}


def test_an_ideal_stop_keeps_the_samples_a_point_needed_and_none_of_its_warmup():
    bench = load_bench()
    # beyond the target by half: a quarter of the samples would have done (1/sqrt(n))
    assert bench.ideal_stop_seconds([point(1.2, 0.2, 0.005)]) == pytest.approx(0.25)
    # short of it: every sample was needed and more
    assert bench.ideal_stop_seconds([point(1.2, 0.2, 0.02, met=0)]) == pytest.approx(1.0)
    # no precision reached (a failed point) or no warm-up recorded: the whole wall time
    assert bench.ideal_stop_seconds([point(0.5, None, None)]) == pytest.approx(0.5)
    assert bench.ideal_stop_seconds([point(1.2, 0.2, 0.01), point(0.5, None, None)]) == \
        pytest.approx(1.5)


@pytest.mark.mpi
def test_a_real_run_is_bounded_below_its_measuring_time(mpi_libraries):
    bench = load_bench()
    seconds, points = bench.commchar_time(mpi_libraries[0].name, "pingpong:send")
    assert points and all(p["op"] == "pingpong" for p in points)
    # the default sizes (grid) measure each point to the default 1%
    assert all(p["warmup_s"] is not None and p["precision_target"] == pytest.approx(0.01) for p in points)
    measuring = sum(p["wall_s"] - p["warmup_s"] for p in points)
    assert 0 < bench.ideal_stop_seconds(points) <= measuring < seconds
    line = bench.commchar_line(mpi_libraries[0].name, "commchar", seconds, points)
    assert f"{len(points)} points" in line and "an ideal stop would still measure" in line
