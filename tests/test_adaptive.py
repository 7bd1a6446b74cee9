"""The adaptive size rule (measure/adaptive.py) on synthetic series, the size rules'
plans, and one small adaptive run against a real library with its record in the
model file; explicit --sizes measure exactly what was asked."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest

from commchar.cli import main
from commchar.measure import adaptive
from commchar.measure.operations import OPERATIONS, parse_ops
from commchar.measure.plan import (ADAPTIVE, DENSE, GRID, Point, plan_argument, points_by_rule, rule_sizes,
                                   size_rule)
from commchar.measure.rules import loggp_overheads_below, planned_points
from commchar.measure.runner import SweepOptions
from commchar.models.assemble import fit_models
from commchar.provenance import build_identity
from commchar.store import Store

MiB = 1 << 20


def _hockney(n: np.ndarray) -> np.ndarray:
    return 1.0 + 2e-4 * n


def _jump(n: np.ndarray, at: int = 10_000) -> np.ndarray:
    """An eager regime, then a rendezvous that costs 4 us more to start."""
    return np.where(n < at, 1.0 + 2e-4 * n, 5.0 + 1e-4 * n)


def _point(op: str, n: int, t: float, noise: float = 0.004) -> dict:
    half = 1.959964 * noise * t
    return {"library": "lib", "op": op, "variant": "", "p": 2, "n_bytes": int(n), "t_us": float(t),
            "ci_lo_us": t - half, "ci_hi_us": t + half, "valid": True, "oversubscribed": False}


def test_rules_plan_their_sizes():
    assert rule_sizes(4 * MiB, ADAPTIVE) == [0, 1, 16, 256, 4096, 65536, MiB, 4 * MiB]
    assert rule_sizes(MiB, GRID) == [0] + [1 << k for k in range(21)]
    dense = rule_sizes(64, DENSE)
    assert dense == [0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]
    assert size_rule(None) == GRID and size_rule("dense") == DENSE and size_rule("0:4M") is None
    # operations with sizes of their own keep them under every rule; barrier measures 0 only
    ops = parse_ops("touch,barrier,bcast")
    for rule in (ADAPTIVE, DENSE):
        planned = points_by_rule(ops, rule, 2)
        # the adaptive rule starts the first-touch probe below its two largest sizes (it asks
        # for each while the cost per byte still moves)
        top = 4 if rule == ADAPTIVE else 6
        assert sorted({pt.n_bytes for pt in planned if pt.op == "touch"}) == [64 * 1024 * 4 ** k for k in range(top)]
        assert [pt.n_bytes for pt in planned if pt.op == "barrier"] == [0]
    assert [pt.n_bytes for pt in points_by_rule(ops, ADAPTIVE, 2) if pt.op == "bcast"] == rule_sizes(MiB, ADAPTIVE)


def test_the_coarse_grid_of_a_chosen_series_is_measured_looser():
    """Under adaptive, a series whose sizes the rule chooses starts at 5 x --precision (its
    added sizes are held to 3 x); the probes keep the run's; other rules plan no precision."""
    ops = parse_ops("bcast,rndv,loggp,touch")
    options = SweepOptions(precision=0.01)
    planned = planned_points(ops, ADAPTIVE, 2, options)
    assert [round(pt.precision, 9) for pt in planned if pt.op == "bcast"] == [0.05] * len(rule_sizes(MiB, ADAPTIVE))
    assert {pt.precision for pt in planned if pt.op != "bcast"} == {None}
    assert {pt.precision for pt in planned_points(ops, GRID, 2, options)} == {None}
    assert {pt.precision for pt in planned_points(ops, ADAPTIVE, 2, SweepOptions(precision=0.2))
            if pt.op == "bcast"} == {0.33}  # at most a CI of a third of the median
    # the same points as the rule plans, whatever their precision
    assert planned == points_by_rule(ops, ADAPTIVE, 2)


def test_the_rules_larger_points_may_stop_with_fewer_samples():
    """Under adaptive, the points of 64 KiB or more, a chosen series' and a probe's, may stop
    with 6 samples (the plan's /6) while --min-reps is its default; the smaller sizes, another
    rule and a --min-reps of the user's own keep the run's floor."""
    ops = parse_ops("bcast,loggp,touch,rndv")
    planned = planned_points(ops, ADAPTIVE, 2, SweepOptions())
    for op in ("bcast", "loggp", "touch"):
        floors = {pt.n_bytes: pt.min_reps for pt in planned if pt.op == op}
        assert floors == {n: (6 if n >= adaptive.CHEAP_BYTES else None) for n in floors}, op
    # the rendezvous probe's repetitions last the receiver's delay at every size
    assert {pt.min_reps for pt in planned if pt.op == "rndv"} == {6}
    assert {pt.n_bytes for pt in planned if pt.op == "loggp" and pt.min_reps is None} == {0, 1, 16, 256, 4096}
    # the probe keeps the run's precision: only a chosen series' coarse grid is looser
    assert {pt.precision for pt in planned if pt.op != "bcast"} == {None}
    assert {pt.min_reps for pt in planned_points(ops, GRID, 2, SweepOptions())} == {None}
    assert {pt.min_reps for pt in planned_points(ops, ADAPTIVE, 2, SweepOptions(min_reps=20))} == {None}
    assert {pt.min_reps for pt in planned_points(ops, ADAPTIVE, 2, SweepOptions(min_reps=4))} == {None}
    assert adaptive.long_floor(10) == 6 and adaptive.long_floor(20) is None
    big = [pt for pt in planned if pt.op == "bcast" and pt.n_bytes >= MiB]
    assert plan_argument(big) == f"bcast@0.05/6={MiB}"
    # the sizes the rounds add are floored alike (16-fold gaps: each is checked)
    sizes = [0] + [2 ** k for k in range(0, 23, 4)]
    points = [_point("bcast", n, _jump(np.array([n]))[0]) for n in sizes]
    measured = {("lib", "bcast", "", 2, n) for n in sizes}
    todo, _ = adaptive.adaptive_proposer(0.01, long_reps=6)(points, measured, set())
    added = todo[("lib", 2)]
    assert added and all(pt.min_reps == (6 if pt.n_bytes >= adaptive.CHEAP_BYTES else None) for pt in added)
    assert any(pt.min_reps == 6 for pt in added) and any(pt.min_reps is None for pt in added)


def test_the_rules_loggp_probe_times_its_gap_alone_from_1_mib():
    """Under adaptive the kernel is asked for LogGP's o_s and o_r below 1 MiB only (the model's
    are below S); every other rule keeps the options' own, by default every size."""
    assert loggp_overheads_below(SweepOptions(), ADAPTIVE) == adaptive.LOGGP_OVERHEADS_BELOW == MiB
    assert loggp_overheads_below(SweepOptions(), GRID) == 0
    assert loggp_overheads_below(SweepOptions(loggp_overheads_below=4096), DENSE) == 4096


def _touch(per_byte_16m: float, noise_16m: float = 0.004) -> list[dict]:
    """The first-touch probe's points from 64 KiB to 16 MiB: resident 0.1 ns a byte, fresh
    0.25 ns a byte more up to 4 MiB, and per_byte_16m more at 16 MiB."""
    out = []
    for k in range(5):
        n = 64 * 1024 * 4 ** k
        extra = per_byte_16m if k == 4 else 2.5e-4
        for variant, t in (("resident", 1e-4 * n), ("fresh", (1e-4 + extra) * n)):
            out.append(_point("touch", n, t, noise_16m if k == 4 else 0.004) | {"variant": variant})
    return out


def test_the_first_touch_probe_grows_while_its_cost_per_byte_moves():
    assert adaptive.touch_extension(_touch(2.6e-4)) == {}  # settled: 4% from 4 to 16 MiB
    assert adaptive.touch_extension(_touch(4e-4)) == {"lib": 64 * MiB}  # 60% more: not settled
    # 60% more, but the 16 MiB points' own CIs are +-50%: no larger size would be known better
    assert adaptive.touch_extension(_touch(4e-4, noise_16m=0.25)) == {}
    # 20% more: beyond the run-to-run floor of a quiet host, within that of one whose series
    # scatter by 10% from size to size (a host that moves whole jobs by tens of percent)
    assert adaptive.touch_extension(_touch(3e-4)) == {"lib": 64 * MiB}
    assert adaptive.touch_extension(_touch(3e-4), {"lib": adaptive.MAX_FLOOR}) == {}
    assert adaptive.touch_extension(_touch(4e-4), {"lib": adaptive.MAX_FLOOR}) == {"lib": 64 * MiB}
    propose = adaptive.adaptive_proposer(0.01)
    points = _touch(4e-4)
    todo, _ = propose(points, {("lib", "touch", pt["variant"], 2, pt["n_bytes"]) for pt in points}, set())
    assert sorted((pt.variant, pt.n_bytes) for pt in todo[("lib", 2)]) == [("fresh", 64 * MiB),
                                                                            ("resident", 64 * MiB)]
    assert {pt.min_reps for pt in todo[("lib", 2)]} == {None}  # no floor of the rule's: the run's
    todo, _ = adaptive.adaptive_proposer(0.01, long_reps=6)(
        points, {("lib", "touch", pt["variant"], 2, pt["n_bytes"]) for pt in points}, set())
    assert {pt.min_reps for pt in todo[("lib", 2)]} == {6}
    # the largest of its sizes measured, nothing is larger to ask for
    every = points + [_point("touch", 64 * MiB, t) | {"variant": v} for v, t in (("resident", 7.0), ("fresh", 40.0))]
    assert adaptive.touch_extension(every) == {}


def _analyse(sizes, curve, noise: float = 0.004, previous=None):
    n = np.array(sorted(sizes), dtype=float)
    return adaptive.analyse(n, curve(n), np.full(n.size, noise), 0.03, previous)


def test_a_straight_line_needs_nothing_once_its_gaps_are_checked():
    coarse = rule_sizes(4 * MiB, ADAPTIVE)
    state, _ = _analyse(coarse, _hockney)
    # every 16-fold gap from 1 B is checked at its log midpoint (1 MiB to 4 MiB is 4-fold), nothing else
    assert state.sizes == {4: "coarse gap", 64: "coarse gap", 1024: "coarse gap", 16384: "coarse gap",
                           262144: "coarse gap"}
    four_fold = sorted(set(coarse) | set(state.sizes))
    state, _ = _analyse(four_fold, _hockney)
    # up to 64 KiB, where a point costs a few milliseconds, 4-fold gaps are checked too
    assert state.sizes == {n: "coarse gap" for n in (2, 8, 32, 128, 512, 2048, 8192, 32768)}
    two_fold = sorted(set(four_fold) | set(state.sizes))
    state, _ = _analyse(two_fold, _hockney)
    assert state.sizes == {}
    assert all(s["ci_rel"] is None or s["ci_rel"] < 0.03 for s in state.segments)


def test_a_jump_is_bracketed_and_nothing_else_is_asked():
    sizes = [0] + [4 ** k for k in range(12)]  # 1 B .. 4 MiB by 4
    state, _ = _analyse(sizes, _jump)
    breaks = {n for n, why in state.sizes.items() if why == "breakpoint"}
    assert breaks and all(4096 < n < 16384 for n in breaks)
    # beside the jump, only the midpoints of the 4-fold gaps up to 64 KiB, where points are cheap
    assert {n: why for n, why in state.sizes.items() if n not in breaks} == {
        n: "coarse gap" for n in (2, 8, 32, 128, 512, 2048, 32768)}


def test_a_new_size_off_the_previous_model_splits_both_its_gaps():
    sizes = rule_sizes(4 * MiB, ADAPTIVE)  # 16-fold gaps: 64 KiB to 1 MiB among them
    _, previous = _analyse(sizes, _hockney)
    bumped = lambda n: _hockney(n) * np.where(n == 262144, 1.25, 1.0)  # noqa: E731
    state, _ = _analyse(sorted(sizes + [262144]), bumped, previous=previous)
    # both 4-fold gaps either side of the bump are split (a size may be asked first as a
    # breakpoint's: the bump is a segment of its own), where no 4-fold gap is split otherwise
    assert {131072, 524288} <= state.sizes.keys() and "deviates" in state.sizes.values()
    assert all(65536 < n < MiB for n in state.sizes if n > adaptive.CHEAP_BYTES)
    quiet, _ = _analyse(sorted(sizes + [262144]), _hockney, previous=previous)
    assert "deviates" not in quiet.sizes.values()
    assert all(n < adaptive.CHEAP_BYTES for n in quiet.sizes)


def test_a_segment_known_too_loosely_gets_a_size_in_its_widest_gap():
    sizes = [0] + [4 ** k for k in range(12)]
    state, _ = _analyse(sizes, _hockney, noise=0.05)
    assert "ci" in state.sizes.values()
    assert all(s["ci_rel"] > 0.03 for s in state.segments if s["ci_rel"] is not None)


def test_a_gap_where_the_model_leaves_the_band_of_its_ends_gets_a_size():
    # 1 B is a segment of its own (a step down after it): its slope is a guess, and its line,
    # extended from the nearer bound, puts 2 B to 8 B above the times at both 1 B and 16 B
    n = np.array([0, 1, 16, 256, 4096], dtype=float)
    t = np.array([0.5, 2.0, 1.0, 1.05, 1.8])
    _, model = adaptive.analyse(n, t, np.full(n.size, 0.004), 0.03)
    assert all(v is not None and v > 2.0 * 1.2 for v in adaptive.predicted_at(model, [4.0, 8.0], 0))
    # the model's own prediction in that gap is held between its ends' times (segment_gaps)
    inside = model.predict([4.0, 8.0])
    assert np.all((inside <= 2.0 + 1e-9) & (inside >= 1.0 - 1e-9))
    asked = adaptive.off_band(model, 1, 16, 2.0, 1.0, 0.004)
    assert asked is not None and 1 < asked < 16
    # inside a segment the line keeps to the band of its ends; a gap with no size inside has none
    assert adaptive.off_band(model, 256, 4096, 1.05, 1.8, 0.004) is None
    assert adaptive.off_band(model, 1, 2, 2.0, 1.0, 0.004) is None


def test_rounds_pin_a_regime_change_and_the_model_predicts_the_dense_sizes():
    """The proposer's rounds against an oracle: the model of what they measured predicts every
    size of the dense grid within 3%, having measured fewer than half of its sizes."""
    propose = adaptive.adaptive_proposer(0.01)
    points = [_point("pingpong", n, _jump(np.array([n]))[0]) for n in rule_sizes(4 * MiB, ADAPTIVE)]
    for _ in range(adaptive.MAX_ROUNDS):
        measured = {("lib", pt["op"], "", 2, pt["n_bytes"]) for pt in points}
        todo, _ = propose(points, measured, set())
        if not todo:
            break
        points += [_point(p.op, p.n_bytes, _jump(np.array([p.n_bytes]))[0]) for p in todo[("lib", 2)]]
    fitted = fit_models([pt | {"variant": "send", "op": "pingpong"} for pt in points])["lib"]["pingpong:send"]
    dense = np.array(rule_sizes(4 * MiB, DENSE), dtype=float)
    errors = np.abs(fitted.predict(dense, 2) / _jump(dense) - 1)
    assert len(points) < dense.size / 2
    assert np.max(errors) < 0.03, dict(zip(dense[errors >= 0.03], errors[errors >= 0.03]))


def _rounds(points_of, rounds: int = adaptive.MAX_ROUNDS):
    """The proposer's rounds from the coarse grid, each size measured by points_of(n, round):
    what was asked in all, the record, and the points."""
    record = adaptive.Record()
    propose = adaptive.adaptive_proposer(0.01, record)
    points = [points_of(n, 0) for n in rule_sizes(4 * MiB, ADAPTIVE)]
    asked = 0
    for k in range(1, rounds + 1):
        measured = {("lib", pt["op"], "", 2, pt["n_bytes"]) for pt in points}
        todo, _ = propose(points, measured, set())
        if not todo:
            break
        asked += len(todo[("lib", 2)])
        points += [points_of(p.n_bytes, k) for p in todo[("lib", 2)]]
    return asked, record, points


NEAR = {"core_rtt_ns": [120.0, 125.0]}
FAR = {"core_rtt_ns": [480.0, 470.0]}


def test_points_measured_in_another_state_of_the_cores_are_not_chased(monkeypatch):
    """A host that moved the ranks' cores apart for some of the coarse grid (each such point
    2.5 times slower): each state is a line of its own, where a rule blind to the states would
    model the moves with segments and ask for more sizes to pin them."""
    far = {16, 4096, 65536}

    def moved(n, _round):
        if n not in far:
            return _point("pingpong", n, _hockney(np.array([n]))[0]) | {"extra": NEAR}
        return _point("pingpong", n, 2.5 * _hockney(np.array([n]))[0]) | {"extra": FAR}

    asked, record, _ = _rounds(moved)
    (state,) = record.final.values()
    assert len(state.segments) == 1
    assert state.segments[0]["t_s"] == pytest.approx(1.0, rel=0.005)
    assert state.segments[0]["t_b"] == pytest.approx(2e-4, rel=0.005)
    # blind to the states, the rule asks for more sizes, and its model either cuts the line into
    # segments at the moved points or is pulled off the near state's line by them
    monkeypatch.setattr(adaptive, "rtt_pair", lambda extra: None)
    chased, blind, _ = _rounds(moved)
    (state,) = blind.final.values()
    assert chased > asked
    assert len(state.segments) > 1 or abs(state.segments[0]["t_s"] - 1.0) > 0.02


def test_sizes_measured_while_the_cores_moved_still_bound_the_series():
    """The coarse grid near, but the host moved the cores during the points of 1 MiB and 4 MiB
    (their round trips before and after in different states) and during 64 KiB's: the rule
    cannot use them, yet they are the series' extent, so the gaps from 4 KiB out to them are
    split at their log midpoints: the rule sees no time there to tell a breakpoint by, so
    down to 2-fold, where a gap between usable sizes is checked only beyond 4-fold."""
    moved = {65536: [125.0, 470.0], MiB: [480.0, 120.0], 4 * MiB: [120.0, 475.0]}
    sizes = rule_sizes(4 * MiB, ADAPTIVE)
    points = [_point("pingpong", n, _hockney(np.array([n]))[0])
              | {"extra": {"core_rtt_ns": moved.get(n, [120.0 + i, 122.0 + i])}} for i, n in enumerate(sizes)]
    (found,) = adaptive.series(points).values()
    assert found.n.max() == 4096 and found.left_out.tolist() == [65536, MiB, 4 * MiB]
    keys = {(p["library"], p["op"], p["variant"], p["p"], p["n_bytes"]) for p in points}
    todo, _ = adaptive.adaptive_proposer(0.01)(points, keys, set())
    asked = sorted(pt.n_bytes for pt in todo[("lib", 2)])
    assert {16384, 262144, 2 * MiB} <= set(asked)
    # without them the rule would stop at 4 KiB, the largest size it can use
    blind = adaptive.analyse(found.n, found.t, found.noise, 0.03, state=found.state)[0].sizes
    assert max(blind) < 4096


def test_a_series_that_gained_no_point_is_not_analysed_again(monkeypatch):
    """The library's states are split again from all its points each round, so a state's typical
    round trip moves whenever any series gains a point; a series whose own points did not change
    keeps its analysis (the same sizes asked, and none of its work again)."""
    analysed: list[int] = []
    real = adaptive.analyse

    def counted(n, *args, **kwargs):
        analysed.append(len(n))
        return real(n, *args, **kwargs)

    monkeypatch.setattr(adaptive, "analyse", counted)
    sizes = rule_sizes(MiB, ADAPTIVE)
    near = lambda ns: {"extra": {"core_rtt_ns": [ns, ns]}}  # noqa: E731
    steady = [_point("bcast", n, 1.0 + 2e-4 * n) | near(110.0 + 2 * i) for i, n in enumerate(sizes)]
    growing = [_point("reduce", n, 2.0 + 3e-4 * n) | near(111.0 + 2 * i) for i, n in enumerate(sizes)]
    propose = adaptive.adaptive_proposer(0.01)
    keys = lambda pts: {(p["library"], p["op"], p["variant"], p["p"], p["n_bytes"]) for p in pts}  # noqa: E731
    first, _ = propose(steady + growing, keys(steady + growing), set())
    assert len(analysed) == 2
    # reduce gains a size whose cores were slower to reach (the state's typical round trip moves)
    added = _point("reduce", 3000, 2.0 + 3e-4 * 3000) | near(140.0)
    points = steady + growing + [added]
    second, _ = propose(points, keys(points), set())
    assert analysed[2:] == [len(sizes) + 1]
    assert [pt for pt in second.get(("lib", 2), []) if pt.op == "bcast"] == [
        pt for pt in first.get(("lib", 2), []) if pt.op == "bcast"]


def test_a_round_in_the_other_state_still_pins_the_breakpoint():
    """The coarse grid with the cores near, the first round's sizes with them apart (2.5 times
    slower), the rest near again: the rounds bracket the jump at 10 kB, and stop."""
    def host(n, round_no):
        t = _jump(np.array([n]))[0]
        return (_point("pingpong", n, 2.5 * t) | {"extra": FAR} if round_no == 1
                else _point("pingpong", n, t) | {"extra": NEAR})

    asked, record, points = _rounds(host, rounds=6)
    assert not record.still_open and len(points) < len(rule_sizes(4 * MiB, DENSE))
    # the breakpoint lies in a gap of 1.5-fold at most around the jump, pinned by the far round's
    # sizes: a rule that kept one state would have lost them, and asked for them again
    (state,) = record.final.values()
    below = max(s["n_max"] for s in state.segments if s["n_max"] < 10_000)
    above = min(s["n_min"] for s in state.segments if s["n_min"] >= 10_000)
    far = sorted(pt["n_bytes"] for pt in points if pt["extra"] is FAR)
    assert above / below <= 2.05 and any(below <= n <= above for n in far)


def test_a_series_scattered_beyond_its_cis_is_not_split_into_segments():
    """Times that scatter 8% from size to size while each point's CI says 0.4% (a host that
    moves the cores within one state): the rule takes the scatter as the series' noise and
    models one line, where the points' own CIs would cut it into segments."""
    rng = np.random.default_rng(7)
    n = np.array([0] + [2 ** k for k in range(0, 23, 1)], dtype=float)
    t = _hockney(n) * np.exp(rng.normal(0.0, 0.08, n.size))
    assert adaptive.scatter(n, t, np.zeros(n.size, dtype=int)) == pytest.approx(0.08, rel=0.5)
    state, model = adaptive.analyse(n, t, np.full(n.size, 0.004), 0.03)
    assert len(model.segments_) <= 2 and "breakpoint" not in state.sizes.values()
    assert adaptive.scatter(n[:7], t[:7], np.zeros(7, dtype=int)) is None  # too few sizes to tell


def test_a_scattered_series_asks_its_sizes_at_half_its_noise_floor():
    """A series that scatters 12% from size to size (its floor, at most 10%): a CI of 3% on its
    added points buys the model nothing the floor does not take back, so they are asked for at
    5%; a quiet series's at the CI target, which the plan then leaves to the run's precision."""
    assert adaptive.point_precision(0.03, None) == 0.03
    assert adaptive.point_precision(0.03, adaptive.DEFAULT_NOISE_FLOOR) == 0.03
    assert adaptive.point_precision(0.03, 0.08) == pytest.approx(0.04)
    rng = np.random.default_rng(1)
    sizes = [0] + [2 ** k for k in range(0, 23, 2)]
    scattered = np.exp(rng.normal(0.0, 0.12, len(sizes)))
    points = [_point("bcast", n, _jump(np.array([n]))[0] * s) for n, s in zip(sizes, scattered)]
    points += [_point("pingpong", n, _jump(np.array([n]))[0]) for n in sizes]
    measured = {("lib", pt["op"], "", 2, pt["n_bytes"]) for pt in points}
    todo, _ = adaptive.adaptive_proposer(0.01)(points, measured, set())
    asked = {op: {pt.precision for pt in todo[("lib", 2)] if pt.op == op} for op in ("bcast", "pingpong")}
    assert asked["pingpong"] == {None}
    (loose,) = asked["bcast"]
    assert loose == pytest.approx(adaptive.MAX_FLOOR / 2)
    assert plan_argument([Point("bcast", "", 64, loose), Point("bcast", "", 128, loose), Point("pingpong", "send", 8)]
                         ) == f"bcast@{loose:.6g}=64,128;pingpong:send=8"


@pytest.fixture(scope="module")
def adaptive_run(tmp_path_factory, mpi_libraries):
    library = mpi_libraries[0].name
    db = tmp_path_factory.mktemp("adaptive") / "a.db"
    assert main(["run", "--db", str(db), "--library", library, "--ops", "bcast,rndv,coldstart", "--np", "2",
                 "--sizes", "adaptive", "--max-time", "0.2"]) == 0
    return library, db


def test_an_adaptive_run_measures_the_coarse_grid_then_rounds_and_records_them(adaptive_run, tmp_path):
    library, db = adaptive_run
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT op, n_bytes, refined, precision_target FROM points").fetchall()
    coarse = {n for op, n, refined, _ in rows if op == "bcast" and not refined}
    assert coarse == set(rule_sizes(MiB, ADAPTIVE))
    # the coarse grid of a series whose sizes the rule chooses at 5 x the default 1%, the probes' at 3 x
    assert {target for op, _, refined, target in rows if not refined and op == "bcast"} == {0.05}
    assert {target for op, _, refined, target in rows if not refined and op != "bcast"} == {0.03}
    # an added size at most at half the floor
    assert all(0.03 <= target <= adaptive.MAX_FLOOR / 2 for *_, target in rows)
    # LogGP's probe times its gap alone from the rule's bound on (the kernel's option, every job)
    with sqlite3.connect(db) as con:
        bounds = {json.loads(o)["loggp_overheads_below"] for (o,) in con.execute(
            "SELECT kernel_options_json FROM jobs")}
    assert bounds == {adaptive.LOGGP_OVERHEADS_BELOW}
    # the rule's points of 64 KiB or more could stop with 6 samples, the rest with the run's 10
    with sqlite3.connect(db) as con:
        floors = con.execute("SELECT op, n_bytes, reps, json_extract(extra_json, '$.min_reps') FROM points").fetchall()
    assert {(op, n >= adaptive.CHEAP_BYTES) for op, n, _, floor in floors if floor == 6} == {
        ("bcast", True), ("rndv", True), ("rndv", False)}
    # the rendezvous probe's points of every size, its rounds' too: a repetition lasts the delay
    assert all(floor == 6 for op, _, _, floor in floors if op == "rndv")
    assert all(reps >= (floor or 10) for _, _, reps, floor in floors)
    assert all(floor == 6 for op, n, _, floor in floors if op == "bcast" and n >= adaptive.CHEAP_BYTES)
    # the rndv threshold is bracketed in the same rounds (S to the byte or within the rounds left)
    assert any(refined for op, _, refined, _ in rows if op == "rndv")
    out = tmp_path / "m.json"
    assert main(["fit", "--db", str(db), "-o", str(out)]) == 0
    choice = json.loads(out.read_text())["provenance"]["size_choice"]["runs"][0]
    assert choice["rule"] == "adaptive" and choice["ci_target"] == pytest.approx(0.03)
    assert choice["min_reps"] == 10 and choice["min_reps_from"] == {
        "bytes": adaptive.CHEAP_BYTES, "min_reps": 6, "every_size": ["rndv"]}
    (bcast,) = [s for s in choice["series"] if s["op"] == "bcast"]
    assert bcast["rounds"][0]["sizes"] == rule_sizes(MiB, ADAPTIVE)
    assert bcast["sizes"] == sum(len(r["sizes"]) for r in bcast["rounds"])
    assert all({"t_s", "t_b"} <= s["ci95"].keys() for s in bcast["segments"])
    # the floor the rule's checks took: the run-to-run floor, raised to the series' scatter, at most 10%
    assert adaptive.DEFAULT_NOISE_FLOOR <= bcast["noise_floor"] <= adaptive.MAX_FLOOR
    assert bcast["scatter"] is None or bcast["noise_floor"] == pytest.approx(
        min(max(bcast["scatter"], adaptive.DEFAULT_NOISE_FLOOR), adaptive.MAX_FLOOR))
    page = tmp_path / "r.html"
    assert main(["report", "--db", str(db), "-o", str(page)]) == 0
    assert "Sizes of run 1: adaptive, a coarse grid" in page.read_text()
    assert ("noise floor at most 10%" in page.read_text()) == (bcast["scatter"] is not None)


def test_the_cold_start_probe_leads_the_rounds_jobs(adaptive_run):
    """Each cold-start size is the first traffic of its processes, as in a job of its own,
    but leads the coarse grid's job and then the rounds' (unrefined): only what the rounds
    leave gets a launch of its own. A point the host made the run measure again (its cores
    moved) is read in the job that first measured it, which its `extra.superseded` names."""
    _, db = adaptive_run
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT id, job_id, op, refined, extra_json FROM points").fetchall()
    placed = []  # (first job, the point's first id, op, refined)
    for point_id, job, op, refined, extra in rows:
        first = json.loads(extra).get("superseded")
        placed.append((first["job_id"], first["point_id"], op, refined) if first else (job, point_id, op, refined))
    jobs: dict[int, list] = {}
    for job, _, op, refined in sorted(placed):
        jobs.setdefault(job, []).append((op, refined))
    cold = [job for job, ops in jobs.items() for op, _ in ops if op == "coldstart"]
    rounds = len({job for job, ops in jobs.items() if any(refined for _, refined in ops)})
    assert len(cold) == len(set(cold)) == len(OPERATIONS["coldstart"].sizes)
    assert all(jobs[job][0] == ("coldstart", 0) for job in cold)
    assert rounds >= 1
    assert sum(len(jobs[job]) == 1 for job in cold) == max(0, len(cold) - 1 - rounds)
    assert len(jobs) == max(len(cold), 1 + rounds)


def test_explicit_sizes_are_measured_as_given(mpi_libraries, tmp_path):
    db = tmp_path / "e.db"
    assert main(["run", "--db", str(db), "--library", mpi_libraries[0].name, "--ops", "bcast", "--np", "2",
                 "--sizes", "0,64,4K", "--precision", "0.05"]) == 0
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT n_bytes, refined, precision_target FROM points").fetchall()
    assert sorted(rows) == [(0, 0, 0.05), (64, 0, 0.05), (4096, 0, 0.05)]
    out = tmp_path / "m.json"
    assert main(["fit", "--db", str(db), "-o", str(out)]) == 0
    (choice,) = json.loads(out.read_text())["provenance"]["size_choice"]["runs"]
    assert choice["rule"] == "list" and "ci_target" not in choice and "min_reps_from" not in choice
    # a run of applications beside it (its sizes are a list of N, no points) leaves the choice alone
    with Store(db) as store:
        store.create_run(build_identity(), {}, {"app": "jacobi", "sizes": [768], "np": [4]})
    assert main(["fit", "--db", str(db), "-o", str(out)]) == 0
    assert [r["run_id"] for r in json.loads(out.read_text())["provenance"]["size_choice"]["runs"]] == [1]
    assert choice["series"][0]["rounds"] == [{"round": 0, "sizes": [0, 64, 4096], "precision": 0.05}]


def test_a_scattered_series_gets_the_midpoints_of_its_cheap_gaps_and_a_straight_one_none():
    n = np.array([0] + [2.0 ** k for k in range(0, 23)])
    line = 0.3 + 0.0001 * n
    # every other size 15% up: no few straight lines (its scatter far above SCATTERED)
    jagged = line * np.where(np.arange(n.size) % 2 == 0, 1.0, 1.15)
    state, _ = adaptive.analyse(n, jagged, np.full(n.size, 0.004), 0.03)
    assert state.scatter is not None and state.scatter > adaptive.SCATTERED
    scattered = sorted(k for k, why in state.sizes.items() if why == "scattered")
    assert scattered, state.sizes
    assert all(k <= adaptive.CHEAP_BYTES for k in scattered)
    # one midpoint of each 2-fold gap between 1 B and 64 KiB that no other reason asked for first
    assert all(any(a < k < 2 * a for a in n[1:]) for k in scattered)
    state, _ = adaptive.analyse(n, line, np.full(n.size, 0.004), 0.03)
    assert "scattered" not in state.sizes.values()


def test_a_series_is_scattered_beyond_what_its_librarys_series_typically_show():
    """A host that moves every series by 10% from size to size raises the threshold to 1.5
    times their typical scatter: a series at its library's typical scatter asks no midpoints,
    one with steps of its own far beyond it does; a quiet library keeps SCATTERED."""
    n = np.array([2.0 ** k for k in range(0, 17)])
    rng = np.random.default_rng(7)
    ops = ("bcast", "reduce", "gather", "scatter", "allgather")
    noisy = [_point(op, size, float(t)) for op in ops
             for size, t in zip(n, _hockney(n) * np.exp(rng.normal(0.0, 0.10, n.size)))]
    quiet = [{**_point(op, size, float(t)), "library": "quiet"} for op in ops for size, t in zip(n, _hockney(n))]
    every = adaptive.series(noisy + quiet)
    above = adaptive.scattered_thresholds(every)
    typical = [adaptive.scatter(f.n, f.t, f.state) for key, f in every.items() if key[0] == "lib"]
    assert above["lib"] == pytest.approx(adaptive.TYPICAL_FACTOR * float(np.median(typical)))
    assert above["lib"] > adaptive.SCATTERED and above["quiet"] == adaptive.SCATTERED
    one = min((f for key, f in every.items() if key[0] == "lib"), key=lambda f: abs(
        adaptive.scatter(f.n, f.t, f.state) - float(np.median(typical))))
    assert adaptive.SCATTERED < adaptive.scatter(one.n, one.t, one.state) < above["lib"]
    for threshold, asks in ((adaptive.SCATTERED, True), (above["lib"], False)):
        state, _ = adaptive.analyse(one.n, one.t, one.noise, 0.03, scattered_above=threshold)
        assert ("scattered" in state.sizes.values()) is asks
    # steps of its own, every other size 40% up, stay scattered at the raised threshold
    jagged = _hockney(n) * np.where(np.arange(n.size) % 2 == 0, 1.0, 1.4)
    state, _ = adaptive.analyse(n, jagged, np.full(n.size, 0.004), 0.03, scattered_above=above["lib"])
    assert "scattered" in state.sizes.values()


def test_a_staircase_that_a_size_between_two_shows_gets_the_midpoints_of_its_cheap_gaps_near_it():
    # the powers of two lie on one line; the time doubles just past each of them, so a size
    # between two lies well below the line (Open MPI's allreduce: 2.10 us at 3072 B, 3.38 at 4096)
    powers = np.array([0] + [2.0 ** k for k in range(0, 23)])
    line = 0.3 + 0.0001 * powers
    _, previous = adaptive.analyse(powers, line, np.full(powers.size, 0.004), 0.03)
    assert previous is not None
    at = 1536.0
    for below, stepped in ((0.8, True), (1.0, False)):
        n = np.append(powers, at)
        t = np.append(line, below * (0.3 + 0.0001 * at))
        order = np.argsort(n, kind="stable")
        state, _ = adaptive.analyse(n[order], t[order], np.full(n.size, 0.004), 0.03, previous)
        asked = sorted(k for k, why in state.sizes.items() if why == "stepped")
        if not stepped:
            assert not asked, state.sizes
            continue
        # a midpoint of every 2-fold gap within STEPPED_REACH of the size, none beyond
        reach = adaptive.STEPPED_REACH
        assert asked == [adaptive.log_mid(a, 2 * a) for a in powers[1:]
                         if at / reach <= a and 2 * a <= at * reach and not a < at < 2 * a], state.sizes


def test_a_two_fold_gap_between_segments_that_differ_by_a_few_percent_is_split():
    # flat up to 64 KiB, then steep from 128 KiB on: the two lines differ by 6% at the 2-fold
    # gap's log midpoint, where the prediction held between their ends' times may miss a curve
    # that bends from one to the other by far more
    def knee(n: np.ndarray) -> np.ndarray:
        return np.where(n <= 65536, 10.0, 10.6 + (n - 92682.0) * 5e-5)

    sizes = [2 ** k for k in range(10, 21)]  # 1 KiB .. 1 MiB, 2-fold gaps
    state, _ = _analyse(sizes, knee)
    assert {n: why for n, why in state.sizes.items()} == {92682: "breakpoint"}
    # the same gap between lines that differ by less than BREAK_TOLERANCE is left alone
    gentle = lambda n: np.where(n <= 65536, 10.0, 10.2 + (n - 92682.0) * 5e-5)  # noqa: E731
    state, _ = _analyse(sizes, gentle)
    assert "breakpoint" not in state.sizes.values()
