"""Cold-start parameters from synthetic `coldstart` points (a run of slow first sends)."""

from __future__ import annotations

import numpy as np
import pytest

from commchar.errors import InputError
from commchar.models import fit_points
from commchar.models.coldstart import ColdStartModel, cold_run

SENDS = 192


def _durations(rng: np.random.Generator, cold: int, cold_us: float, warm_us: float) -> list[float]:
    warm = warm_us * np.exp(rng.normal(0, 0.05, SENDS))
    # a cold run alternates between two costs, as MPICH's cells do (half and 1.5 times)
    head = cold_us * np.where(np.arange(cold) % 20 < 10, 0.5, 1.5) * np.exp(rng.normal(0, 0.05, cold))
    return list(np.concatenate([warm_us + head, warm[cold:]]))


def _points(rng, cold: int, per_send, warm_us: float = 0.3, sizes=(8, 512, 2048, 8192),
            per_receive=lambda n: 0.0, way_us: float = 0.2) -> list[dict]:
    """Both ranks' sends; rank 0's round trips: its send, the way, rank 1's receive (cold or
    not), rank 1's send, the way back, its own receive."""
    points = []
    for n in sizes:
        sends = [np.array(_durations(rng, cold, per_send(n), warm_us)) for _ in (0, 1)]
        receive = np.where(np.arange(SENDS) < cold, per_receive(n), 0.0)
        rounds = sends[0] + sends[1] + 2 * (way_us + receive)
        points.append({"library": "lib", "op": "coldstart", "variant": "", "p": 2, "n_bytes": n,
                       "valid": True, "t_us": warm_us,
                       "extra": {"cold_send_us_rank0": list(sends[0]), "cold_send_us_rank1": list(sends[1]),
                                 "cold_round_us_rank0": list(rounds)}})
    return points


def _loggp_points(rng: np.random.Generator) -> list[dict]:
    """PRTT and rendezvous points of a LogGP library (L 0.6, o 0.25/0.3, g 0.4, G 8e-5 us/B,
    S 64 KiB): a complete loggp section for the cold start to sit in."""
    pts = []
    for n in [0] + [2**k for k in range(0, 21)]:
        gap = 0.4 + max(n - 1, 0) * 0.00008
        prtt1 = 2 * (0.25 + 0.6 + 0.3 + max(n - 1, 0) * 0.00008) * np.exp(rng.normal(0, 0.005))
        extra = {"prtt1_us": prtt1, "prttm_us": prtt1 + 7 * gap, "m": 8, "d_us": 2 * prtt1,
                 "o_s_us": 0.25, "o_r_us": 0.3, "gap_us": gap}
        extra["prttmd_us"] = prtt1 + 7 * (extra["d_us"] + extra["o_s_us"])
        pts.append({"library": "lib", "op": "loggp", "variant": "", "p": 2, "n_bytes": n,
                    "t_us": prtt1 / 2, "extra": extra})
        pts.append({"library": "lib", "op": "rndv", "variant": "", "p": 2, "n_bytes": n,
                    "t_us": 0.25 if n < 65536 else 2000.0, "extra": {"delay_us": 2000.0}})
    return pts


def test_a_run_of_slow_first_sends_is_found_with_its_cost_per_size():
    rng = np.random.default_rng(1)
    model = ColdStartModel().fit(_points(rng, 64, lambda n: 2.0 + 0.0005 * n))
    p = model.params_
    assert p["messages"] == 64
    assert p["o_s"] == pytest.approx(2.0, rel=0.1)
    assert p["O_s"] == pytest.approx(0.0005, rel=0.1)
    assert p["max_bytes"] == 8192


def test_only_the_sizes_with_a_cold_run_set_its_length_cost_and_bounds():
    # MPICH on a grid: the smallest sizes fit the part of a cell touched at start and the
    # rendezvous sizes leave their bytes in place, so most sizes show no run at all
    rng = np.random.default_rng(8)
    small, cold, rendezvous = (0, 1, 8, 32, 64), (128, 512, 2048, 8192), (16384, 65536, 262144)
    points = (_points(rng, 0, lambda n: 0.0, sizes=small) + _points(rng, 64, lambda n: 2.0 + 0.0005 * n, sizes=cold)
              + _points(rng, 0, lambda n: 0.0, sizes=rendezvous))
    for pt in points:  # every first send pays the path's one-time cost: 9 us more
        for rank in (0, 1):
            pt["extra"][f"cold_send_us_rank{rank}"][0] += 9.0
    p = ColdStartModel().fit(points).params_
    assert p["messages"] == 64
    assert p["min_bytes"] == 64 and p["max_bytes"] == 8192
    assert p["o_s"] == pytest.approx(2.0, rel=0.1) and p["O_s"] == pytest.approx(0.0005, rel=0.1)
    # the first send of each run costs half the mean (the synthetic run opens on its cheaper
    # cost) and 9 us more: beyond a mean cold send, 9 - cost / 2
    first = np.median([9.0 - (2.0 + 0.0005 * n) / 2 for n in cold])
    assert p["first_us"] == pytest.approx(first, rel=0.1)


def test_a_cold_send_costs_the_mean_of_its_run_not_its_typical_value():
    # a run in which every fifth send costs 10 us more: a program pays them all
    rng = np.random.default_rng(9)
    points = _points(rng, 60, lambda n: 2.0, sizes=(512, 2048))
    for pt in points:
        for rank in (0, 1):
            d = pt["extra"][f"cold_send_us_rank{rank}"]
            for k in range(1, 60, 5):
                d[k] += 10.0
    assert ColdStartModel().fit(points).params_["o_s"] == pytest.approx(4.0, rel=0.1)


def test_one_ranks_short_run_at_one_size_is_not_charged():
    rng = np.random.default_rng(10)
    points = _points(rng, 0, lambda n: 0.0)
    d = points[1]["extra"]["cold_send_us_rank0"]
    for k in range(6):
        d[k] += 5.0
    model = ColdStartModel().fit(points)
    assert model.params_ is None and "not charged" in model.notes_[0]


def test_the_receivers_part_comes_from_the_round_trips():
    rng = np.random.default_rng(6)
    model = ColdStartModel().fit(_points(rng, 64, lambda n: 3.0, per_receive=lambda n: 1.0 + 0.0002 * n))
    p = model.params_
    assert p["o_r"] == pytest.approx(1.0, rel=0.1) and p["O_r"] == pytest.approx(0.0002, rel=0.1)
    assert p["o_s"] == pytest.approx(3.0, rel=0.1)


def test_warm_first_sends_give_no_cold_start():
    rng = np.random.default_rng(2)
    model = ColdStartModel().fit(_points(rng, 0, lambda n: 0.0))
    assert model.params_ is None
    assert "no cold start" in model.notes_[0]


def test_one_stall_neither_makes_a_cold_run_nor_sets_its_cost():
    rng = np.random.default_rng(3)
    d = np.array(_durations(rng, 0, 0.0, 0.3))
    d[0] = 4000.0  # one first send caught by a page fault or a timer interrupt
    c, warm = cold_run(d)
    assert c <= 1 and warm == pytest.approx(0.3, rel=0.1)
    points = _points(rng, 60, lambda n: 5.0)
    points[0]["extra"]["cold_send_us_rank0"][0] = 4000.0
    assert ColdStartModel().fit(points).params_["o_s"] == pytest.approx(5.0, rel=0.1)


def test_a_first_message_alone_is_noted_but_not_charged():
    rng = np.random.default_rng(7)
    points = _points(rng, 0, lambda n: 0.0)
    for pt in points:  # Open MPI's probe: one slow first send a rank, its cost varying by size
        for rank in (0, 1):
            pt["extra"][f"cold_send_us_rank{rank}"][0] = 10.0 + pt["n_bytes"] * 0.03
    model = ColdStartModel().fit(points)
    assert model.params_ is None
    assert "only the first 1 send(s)" in model.notes_[0] and "not charged" in model.notes_[0]


def test_a_cold_run_as_long_as_the_probe_is_flagged():
    rng = np.random.default_rng(4)
    model = ColdStartModel().fit(_points(rng, 150, lambda n: 3.0))
    assert model.params_["messages"] >= 140
    assert "may be longer" in model.notes_[0]


def test_points_without_their_send_durations_are_refused():
    with pytest.raises(InputError, match="coldstart"):
        ColdStartModel().fit([{"op": "coldstart", "n_bytes": 8, "valid": True, "extra": {}}])


def test_fit_puts_the_cold_start_in_the_loggp_section():
    rng = np.random.default_rng(5)
    doc = fit_points(_loggp_points(rng) + _points(rng, 64, lambda n: 2.0 + 0.0005 * n))
    cold = doc["libraries"]["lib"]["loggp"]["cold_start"]
    assert cold["messages"] == 64 and cold["o_s"] == pytest.approx(2.0, rel=0.1)


def test_the_pairs_first_rendezvous_sends_are_charged_even_without_a_cold_run():
    # Open MPI-like eager sends (no run), and a first rendezvous send each way that costs
    # 100 us (rank 0's) and 30 us (rank 1's) beyond the later ones
    rng = np.random.default_rng(11)
    points = _points(rng, 0, lambda n: 0.0)
    for pt in points:
        pt["extra"]["rendezvous_send_us_rank0"] = [107.0, 8.0, 7.0]
        pt["extra"]["rendezvous_send_us_rank1"] = [37.0, 7.5, 7.0]
    model = ColdStartModel().fit(points)
    assert model.params_ is None
    assert model.rendezvous_ == {"rendezvous_first_us": 100.0, "rendezvous_reverse_us": 30.0}
    doc = fit_points(_loggp_points(rng) + points)
    cold = doc["libraries"]["lib"]["loggp"]["cold_start"]
    assert cold["messages"] == 0 and cold["rendezvous_first_us"] == 100.0


def test_points_without_rendezvous_timings_give_none():
    rng = np.random.default_rng(12)
    assert ColdStartModel().fit(_points(rng, 64, lambda n: 2.0)).rendezvous_ is None


def test_the_report_names_the_cold_run_its_bounds_and_the_pairs_first_rendezvous():
    from commchar.report.adapters import ModelView
    from commchar.report.dataset import Entity
    from commchar.report.findings import thresholds

    def texts(cold: dict) -> list[str]:
        view = ModelView("lib", {"operations": {}, "loggp_partial": {"cold_start": cold}}, "test")
        return [f.text for f in thresholds(Entity("lib", "lib", {}, [], [], [], model=view))]

    mpich = {"messages": 64, "o_s": 2.0, "O_s": 0.0005, "o_r": 0.3, "O_r": 0.0002, "first_us": 9.0,
             "min_bytes": 64, "max_bytes": 8192, "rendezvous_first_us": 120.0, "rendezvous_reverse_us": 40.0}
    (run,) = [t for t in texts(mpich) if "eager messages" in t]
    assert "first 64 eager messages" in run and "none of 64 B or less" in run and "9 us more" in run
    (pair,) = [t for t in texts(mpich) if "rendezvous message" in t]
    assert "costs 120 us more, the first back 40 us" in pair
    # Open MPI: no cold run, only the pair's first rendezvous
    ompi = texts({"messages": 0, "rendezvous_first_us": 5.0, "rendezvous_reverse_us": 12.5})
    assert not [t for t in ompi if "eager messages" in t]
    assert [t for t in ompi if "costs 5 us more, the first back 12.5 us" in t]
