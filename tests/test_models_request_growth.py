"""What a process pays the first time it holds k requests (commchar.models.request_growth),
from synthetic `coldstart` points, its model-file field and its validation."""

from __future__ import annotations

import numpy as np
import pytest

from commchar.errors import InputError
from commchar.modelfile.model import ModelError
from commchar.modelfile.schema import validate_library
from commchar.models import fit_points
from commchar.models.request_growth import RequestGrowthModel, request_growth_section

CALLS = 512


def _series(rng: np.random.Generator, growth: dict[int, float], warm_us: float = 0.15) -> list[float]:
    d = warm_us * np.exp(rng.normal(0, 0.2, CALLS))
    for count, us in growth.items():
        d[count - 1] += us
    return list(d)


def _points(rng, growth: dict[int, float], jobs: int = 4, stray: dict[int, float] | None = None) -> list[dict]:
    points = []
    for j in range(jobs):
        extra = {f"request_post_us_rank{r}": _series(rng, growth | (stray or {} if j == 0 and r == 0 else {}))
                 for r in (0, 1)}
        points.append({"library": "lib", "op": "coldstart", "variant": "", "p": 2, "n_bytes": 8 * 4**j,
                       "valid": True, "t_us": 0.3, "extra": extra})
    return points


def test_the_counts_every_job_pays_for_are_found_with_their_cost():
    rng = np.random.default_rng(3)
    model = RequestGrowthModel().fit(_points(rng, {9: 1000.0, 321: 500.0}))
    counts = dict(model.params_["counts"])
    assert sorted(counts) == [9, 321]
    assert counts[9] == pytest.approx(1000.0, rel=0.01) and counts[321] == pytest.approx(500.0, rel=0.01)
    assert model.params_["series"] == 8 and model.params_["max_requests"] == CALLS
    assert model.params_["warm_us"] == pytest.approx(0.15, rel=0.1)
    assert not model.notes_


def test_one_jobs_stray_delay_is_no_growth():
    rng = np.random.default_rng(4)
    model = RequestGrowthModel().fit(_points(rng, {9: 200.0}, stray={50: 3000.0}))
    assert [k for k, _ in model.params_["counts"]] == [9]


def test_a_library_that_never_grows_lists_nothing_and_a_growth_at_the_end_is_noted():
    rng = np.random.default_rng(5)
    assert RequestGrowthModel().fit(_points(rng, {})).params_["counts"] == []
    late = RequestGrowthModel().fit(_points(rng, {500: 40.0}))
    assert dict(late.params_["counts"]).keys() == {500}
    assert "more may follow" in late.notes_[0]


def test_points_without_request_durations_are_refused_in_one_line():
    skipped: list[str] = []
    assert request_growth_section([{"op": "coldstart", "valid": True, "extra": {}}], skipped, "lib") is None
    assert skipped and "request growth" in skipped[0]
    with pytest.raises(InputError, match="series"):
        RequestGrowthModel().fit([{"op": "coldstart", "valid": True,
                                   "extra": {"request_post_us_rank0": ["x"]}}])


def test_fit_puts_the_growth_in_the_loggp_section_and_the_schema_checks_it():
    from tests.test_models_coldstart import _loggp_points

    rng = np.random.default_rng(6)
    doc = fit_points(_loggp_points(rng) + _points(rng, {9: 800.0}))
    section = doc["libraries"]["lib"]["loggp"]
    assert [k for k, _ in section["request_growth"]["counts"]] == [9]
    validate_library("lib", doc["libraries"]["lib"])
    section["request_growth"]["counts"] = [[9, 1.0], [9, 2.0]]
    with pytest.raises(ModelError, match="request_growth.counts"):
        validate_library("lib", doc["libraries"]["lib"])
    section["request_growth"] = {"counts": [[9, -1.0]]}
    with pytest.raises(ModelError, match="request_growth.counts"):
        validate_library("lib", doc["libraries"]["lib"])
