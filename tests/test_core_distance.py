"""The distance of ranks 0 and 1's cores (a cache line's round trip) and their speed (each
rank's L1 copy): the kernel and the validation programs measure both, the states of a host
that moves its vCPUs are told apart, the fit keeps one state, the report says so, and a
validation row says which state it ran in and leaves out launches on a slowed core."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest

from commchar.core_distance import Cores, copy_floor, copy_pair, in_recorded_main, rtt_pair, same_state, slowed, split
from commchar.models.core_distance_policy import MIN_KEPT, keep_one_state
from commchar.models.document_fit import fit_document
from commchar.validate.core import _distance_row
from _model_data import p2p_points

SIZES = [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536]


@pytest.mark.parametrize("extra, expected", [
    ({"core_rtt_ns": [85.0, 90.5]}, (85.0, 90.5)),
    ({"core_rtt_ns": [85, "x"]}, None),
    ({"core_rtt_ns": [85.0]}, None),
    ({"core_rtt_ns": [-1.0, 80.0]}, None),
    ({"core_rtt_ns": [math.nan, 80.0]}, None),
    ({"core_rtt_ns": None}, None),
    ({}, None),
    (None, None),
])
def test_a_round_trip_pair_is_read_or_refused(extra, expected) -> None:
    assert rtt_pair(extra) == expected


def test_one_state_is_not_split() -> None:
    pairs = [(75.0 + i * 2, 80.0 + i * 2) for i in range(45)]  # 75-170 ns: one state, 2.2-fold
    states = split(pairs)
    assert states is not None and not states.mixed and len(states.members[0]) == 45
    assert states.state_of((70.0, 200.0)) == 0
    assert split([]) is None


def test_states_are_split_and_a_change_during_a_measurement_is_counted() -> None:
    near = [(82.0 + i % 9, 84.0 + i % 5) for i in range(30)]
    apart = [(430.0 + i % 50, 470.0 + i % 30) for i in range(12)]
    further = [(820.0 + i % 40, 850.0) for i in range(5)]
    moved = [(90.0, 460.0)]
    states = split(near + apart + further + moved)
    assert states is not None and states.mixed and len(states.members) == 3
    assert [len(m) for m in states.members] == [30, 13, 5] and states.changed == 1
    assert 130 < states.bounds[0] < 430 and 520 < states.bounds[1] < 820
    assert states.main() == 0 and states.main_ns() == pytest.approx(86.0, abs=4)
    assert states.state_of((85.0, 88.0)) == 0 and states.state_of((450.0, 440.0)) == 1
    assert states.state_of((85.0, 450.0)) is None
    record = states.to_dict()
    assert record["mixed"] and record["main"] == 0 and [s["measurements"] for s in record["states"]] == [30, 13, 5]


def test_measurements_made_while_the_host_moved_do_not_bridge_two_states() -> None:
    """Moving measurements whose ends lie between the states (as a run of this machine held:
    122 to 265, 333 to 119, 220 to 116, 135 to 183 ns) would fill the step between near and
    apart with round trips, and the two states would read as one."""
    near = [(90.0 + i % 60, 95.0 + i % 55) for i in range(60)]
    apart = [(400.0 + i % 150, 410.0 + i % 140) for i in range(40)]
    moved = [(122.75, 265.375), (333.125, 119.0), (220.375, 116.5), (135.25, 182.875)]
    states = split(near + apart + moved)
    assert states is not None and len(states.members) == 2
    assert 183 < states.bounds[0] < 400 and states.changed >= 1
    # a moving measurement's end beyond every steady one is still a state of its own
    beyond = split(near + apart + [(460.0, 860.0)])
    assert beyond is not None and len(beyond.members) == 3 and beyond.state_of((460.0, 860.0)) is None


def test_a_measurement_is_in_the_main_state_of_a_reference_or_not() -> None:
    reference = [(430.0 + i % 50, 470.0 + i % 30) for i in range(40)] + [(85.0, 90.0)] * 3
    assert same_state(reference, (455.0, 470.0))
    assert not same_state(reference, (88.0, 92.0))       # nearer: the model's minority state
    assert not same_state(reference, (860.0, 850.0))     # further apart than anything measured
    assert not same_state(reference, (460.0, 860.0))     # moved during the loop
    assert same_state([], (88.0, 92.0))


def test_a_run_is_in_the_main_state_of_a_model_files_record_or_not() -> None:
    # as a fit records it (States.to_dict): most points near, a few far apart
    record = split([(65.0 + i % 5, 66.0) for i in range(300)] + [(320.0, 330.0)] * 6).to_dict()
    assert in_recorded_main(record, (66.0, 68.0))
    assert in_recorded_main(record, (80.0, 85.0))         # within the step of the main state's range
    assert not in_recorded_main(record, (325.0, 330.0))   # the minority state
    assert not in_recorded_main(record, (900.0, 880.0))   # beyond anything the model saw
    assert not in_recorded_main(record, (66.0, 330.0))    # moved during the run
    # one state recorded: a far run is another state
    alone = split([(65.0, 66.0)] * 20).to_dict()
    assert in_recorded_main(alone, (66.0, 70.0)) and not in_recorded_main(alone, (330.0, 320.0))
    # nothing to say: no record, no pair, a malformed record
    assert in_recorded_main(None, (66.0, 68.0)) is None
    assert in_recorded_main(record, None) is None
    assert in_recorded_main({"states": [{"rtt_ns": "x"}], "main": 0}, (66.0, 68.0)) is None
    assert in_recorded_main({"states": [], "main": 0}, (66.0, 68.0)) is None


def _with_distance(points: list[dict], rtt: float) -> list[dict]:
    return [pt | {"extra": {"core_rtt_ns": [rtt, rtt * 1.02]}} for pt in points]


def test_the_fit_keeps_the_main_state_and_says_what_it_left_out() -> None:
    regimes = [(8192, 1.0, 0.0004), (math.inf, 4.0, 0.0001)]
    near = _with_distance(p2p_points(regimes, SIZES, 0.01, seed=1), 90.0)
    # the same sizes measured again while the host held the ranks apart: four times slower
    far = _with_distance([pt | {"t_us": 4 * pt["t_us"]} for pt in p2p_points(regimes, SIZES[::3], 0.01, seed=2)],
                         460.0)
    # an operation measured only in the other state keeps its points: nothing else to fit it from
    only_far = _with_distance(p2p_points(regimes, SIZES[:MIN_KEPT + 2], 0.01, seed=3, variant="ssend"), 460.0)
    points = near + far + only_far
    kept, record = keep_one_state([pt | {"row": f"pt{i}"} for i, pt in enumerate(points)])
    assert len(kept) == len(near) + len(only_far)
    lib = record["lib"]
    assert lib["mixed"] and lib["main"] == 0 and lib["left_out"] == len(far)
    assert lib["left_out_by_operation"] == {"pingpong:send p=2": len(far)}

    model = fit_document(points).to_json()
    assert model["provenance"]["core_distance"]["lib"]["left_out"] == len(far)
    send = model["libraries"]["lib"]["operations"]["pingpong:send"]
    # fitted to the near state alone: its own points within the noise, none of the far ones scored
    assert send["errors"]["in_sample"]["points"] == len(SIZES)
    assert send["errors"]["in_sample"]["max"] < 0.05


def test_an_operation_mostly_measured_in_the_other_state_is_fitted_in_that_state() -> None:
    # the library's main state is near (the exchange's many points), but the ping-pong's first
    # job fell far apart and only its refinement of S near: fitted far, from all its sizes,
    # rather than from the few sizes around S
    regimes = [(8192, 1.0, 0.0004), (math.inf, 4.0, 0.0001)]
    exchange = _with_distance(p2p_points(regimes, SIZES * 3, 0.01, seed=1, variant="sendrecv", op="exchange"), 90.0)
    far = _with_distance([pt | {"t_us": 4 * pt["t_us"]} for pt in p2p_points(regimes, SIZES, 0.01, seed=2)], 460.0)
    refined = _with_distance(p2p_points(regimes, [8320, 8448, 8576, 8704, 8832, 8960], 0.01, seed=3), 90.0)
    points = [pt | {"row": f"pt{i}"} for i, pt in enumerate(exchange + far + refined)]
    kept, record = keep_one_state(points)
    lib = record["lib"]
    assert lib["main"] == 0 and lib["left_out_by_operation"] == {"pingpong:send p=2": len(refined)}
    assert lib["own_state_by_operation"] == {"pingpong:send p=2": {"state": 1, "rtt_ns": pytest.approx(469.2)}}
    assert sorted(pt["n_bytes"] for pt in kept if pt["op"] == "pingpong") == sorted(SIZES)
    send = fit_document(points).to_json()["libraries"]["lib"]["operations"]["pingpong:send"]
    assert send["n_range"] == [0, SIZES[-1]] and send["errors"]["in_sample"]["max"] < 0.05
    # half of its points in the main state: the main state it is (the others left out)
    half = far[: len(refined)]
    kept, record = keep_one_state([pt | {"row": f"pt{i}"} for i, pt in enumerate(exchange + half + refined)])
    assert record["lib"]["left_out_by_operation"] == {"pingpong:send p=2": len(half)}
    assert "own_state_by_operation" not in record["lib"]


def test_points_of_one_state_are_fitted_as_before() -> None:
    regimes = [(8192, 1.0, 0.0004), (math.inf, 4.0, 0.0001)]
    points = _with_distance(p2p_points(regimes, SIZES, 0.01, seed=1), 90.0)
    kept, record = keep_one_state([pt | {"row": f"pt{i}"} for i, pt in enumerate(points)])
    assert len(kept) == len(points) and not record["lib"]["mixed"]
    plain = p2p_points(regimes, SIZES, 0.01, seed=1)
    assert keep_one_state([pt | {"row": "x"} for pt in plain]) == ([pt | {"row": "x"} for pt in plain], {})


def test_a_validation_row_says_whether_its_loop_ran_in_the_models_state() -> None:
    model = [(88.0 + i % 7, 90.0) for i in range(30)]
    tried = [{"per_iteration_us": 6.1, "core_rtt_ns": [470.0, 480.0]},
             {"per_iteration_us": 1.7, "core_rtt_ns": [88.0, 91.0]}]
    row = _distance_row(tried, Cores(tuple(model)))
    assert row["match"] == "same" and row["runs"] == 2 and row["rtt_ns"] == [88.0, 91.0]
    assert row["model_rtt_ns"] == pytest.approx(90.0, abs=2)
    assert _distance_row(tried[:1], Cores(tuple(model)))["match"] == "differs"
    assert _distance_row(tried, Cores())["match"] == "unknown"
    assert _distance_row([{"per_iteration_us": 1.7, "core_rtt_ns": None}], Cores(tuple(model)))["match"] == "unknown"


def test_a_rows_measured_time_is_the_median_of_its_launches_in_the_models_state() -> None:
    model = [(88.0 + i % 7, 90.0) for i in range(30)]
    near, far = [88.0, 91.0], [470.0, 480.0]
    launches = [{"per_iteration_us": 1.9, "core_rtt_ns": near, "kept": True},
                {"per_iteration_us": 6.1, "core_rtt_ns": far},  # tried again: another state
                {"per_iteration_us": 1.7, "core_rtt_ns": near, "kept": True},
                {"per_iteration_us": 5.0, "core_rtt_ns": far, "kept": True},  # every attempt far
                {"per_iteration_us": 1.6, "core_rtt_ns": near, "kept": True}]
    row = _distance_row(launches, Cores(tuple(model)))
    assert row["launches_us"] == [1.9, 1.7, 5.0, 1.6] and row["runs"] == 5
    assert row["match"] == "same" and row["measured_us"] == pytest.approx(1.7)  # the far launch left out
    assert row["rtt_ns"] == near and row["slowed"] == 0
    apart = _distance_row([launches[3], {**launches[1], "kept": True}], Cores(tuple(model)))
    assert apart["match"] == "differs" and apart["measured_us"] == pytest.approx(5.55)  # all, in no state
    assert _distance_row(launches, Cores())["measured_us"] == pytest.approx(1.8)  # no states: every launch


@pytest.mark.parametrize("extra, expected", [
    ({"core_copy_ns": [42.1, 55.5]}, (42.1, 55.5)),
    ({"core_copy_ns": [42.1]}, None),
    ({"core_copy_ns": [0.0, 42.0]}, None),
    ({"core_copy_ns": [math.inf, 42.0]}, None),
    ({"core_rtt_ns": [70.0, 70.0]}, None),
    (None, None),
])
def test_a_copy_pair_is_read_only_when_both_ends_are_times(extra, expected) -> None:
    assert copy_pair(extra) == expected


def test_a_copy_beyond_a_tenth_over_the_sets_lower_decile_ran_on_a_slowed_core() -> None:
    # eighteen measurements at full speed, two slowed: the floor is the full speed's
    pairs = [(42.0 + 0.1 * (i % 5), 42.2) for i in range(18)] + [(55.0, 60.0), (48.0, 140.0)]
    floor = copy_floor(pairs)
    assert floor == pytest.approx(42.0, abs=0.2)
    assert not slowed((42.9, 44.0), floor)
    assert slowed((42.1, 47.0), floor) and slowed((55.0, 42.0), floor)
    assert not slowed(None, floor) and not slowed((99.0, 99.0), None)
    assert copy_floor([]) is None


def test_a_rows_measured_time_leaves_out_the_launches_on_a_slowed_core() -> None:
    model = [(68.0 + i % 3, 70.0) for i in range(30)]
    cores = Cores(tuple(model), 42.0)
    fast, slow = [42.1, 42.3], [42.1, 55.0]
    launches = [{"per_iteration_us": 1.2, "core_rtt_ns": [70.0, 70.0], "core_copy_ns": fast, "kept": True},
                {"per_iteration_us": 1.9, "core_rtt_ns": [70.0, 70.0], "core_copy_ns": slow, "kept": True},
                {"per_iteration_us": 1.3, "core_rtt_ns": [70.0, 70.0], "core_copy_ns": fast, "kept": True}]
    row = _distance_row(launches, cores)
    assert row["slowed"] == 1 and row["measured_us"] == pytest.approx(1.25)
    # every launch slowed: their median, as before the probe
    every = _distance_row([{**a, "core_copy_ns": slow} for a in launches], cores)
    assert every["slowed"] == 3 and every["measured_us"] == pytest.approx(1.3)
    # a model without copies (an older kernel's) leaves every launch in
    assert _distance_row(launches, Cores(tuple(model)))["measured_us"] == pytest.approx(1.3)


def test_the_cores_of_a_models_points_are_their_round_trips_and_their_copys_floor() -> None:
    points = [{"extra": {"core_rtt_ns": [70.0, 71.0], "core_copy_ns": [42.0 + i % 2, 42.5]}} for i in range(9)]
    points += [{"extra": {}}, {"extra": {"core_rtt_ns": [70.0, 70.0], "core_copy_ns": [60.0, 61.0]}}]
    cores = Cores.of(points)
    assert len(cores.pairs) == 10 and cores.floor_ns == pytest.approx(42.0)
    assert cores.same_state((69.0, 72.0)) and cores.same_state((480.0, 470.0)) is False
    assert cores.same_state(None) is None and Cores().same_state((70.0, 70.0)) is None
    assert cores.slowed((42.0, 60.0)) and not cores.slowed((42.0, 43.0))


@pytest.mark.mpi
def test_the_kernel_times_the_ranks_cores_before_and_after_every_point(mpi_libraries, tmp_path) -> None:
    from commchar.store import Store

    db = tmp_path / "d.db"
    for library in mpi_libraries:
        proc = subprocess.run([sys.executable, "-m", "commchar", "run", "--db", str(db), "--library", library.name,
                               "--np", "2", "--ops", "pingpong:send,barrier", "--sizes", "0,4K", "--no-refine",
                               "--precision", "0.05", "--max-time", "0.05"],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
    points = Store(db).points()
    assert points
    for pt in points:
        pair, copy = rtt_pair(pt.get("extra")), copy_pair(pt.get("extra"))
        # a cache line between two cores of one machine: more than a few ns, less than a millisecond
        assert pair is not None and all(5 < v < 1e6 for v in pair), (pt["op"], pt.get("extra"))
        # a copy of 4 KiB within L1: at least 16 bytes a cycle of a 5 GHz core, less than 0.1 ms
        assert copy is not None and all(50e-3 < v < 1e5 for v in copy), (pt["op"], pt.get("extra"))


@pytest.mark.mpi
def test_a_validation_program_times_the_cores_only_when_asked(built_apps) -> None:
    from commchar.measure.launch import LaunchSpec, program_command

    for library, folder in built_apps:
        for extra_args, present in (([], False), (["--core-distance"], True)):
            job = program_command(library, LaunchSpec(), 2, [str(folder / "ring_sendrecv"), "--bytes", "256",
                                                             "--iterations", "100", *extra_args])
            proc = subprocess.run(job.argv, capture_output=True, text=True, timeout=120,
                                  env={**os.environ, **job.env_added})
            assert proc.returncode == 0, proc.stderr
            result = json.loads(next(line for line in proc.stdout.splitlines() if '"result"' in line))
            assert (rtt_pair(result) is not None) == present, result


def test_the_report_says_the_cores_moved_and_scores_only_the_main_states_points() -> None:
    from commchar.report.adapters import model_views
    from commchar.report.dataset import Entity
    from commchar.report.findings import core_distance, model_misses

    segments = [{"n_min": 0, "n_max": None, "t_s": "1", "t_b": "0.001"}]
    model = {"format": "commchar-model", "version": 1, "units": {"time": "us", "size": "B"},
             "libraries": {"lib": {"operations": {"pingpong:send": {"kind": "p2p", "segments": segments}}}}}
    view = model_views(model, "test")[0]["lib"]

    def point(n: int, t: float, rtt: float) -> dict:
        return {"op": "pingpong", "variant": "send", "p": 2, "n_bytes": n, "t_us": t, "valid": True,
                "oversubscribed": False, "extra": {"core_rtt_ns": [rtt, rtt]}}

    near = [point(n, 1 + 0.001 * n, 90.0 + n % 7) for n in (0, 1000, 2000, 3000, 4000)]
    far = [point(n, 3 * (1 + 0.001 * n), 470.0) for n in (500, 1500)]  # three times slower: another machine
    entity = Entity("lib", "lib", {}, [], near + far, [], model=view)
    found = core_distance(entity)
    assert len(found) == 1 and found[0].category == "model"
    # 90 + n % 7 for n = 0, 1000, ..., 4000: 90, 96, 95, 94, 93 ns, median 94
    assert "5 with their cores 94 ns apart, 2 with their cores 470 ns apart" in found[0].text, found[0].text
    assert model_misses(entity) == []  # the far points are not scored
    assert core_distance(Entity("lib", "lib", {}, [], near, [], model=view)) == []
    assert len(model_misses(Entity("lib", "lib", {}, [], near + [far[0] | {"extra": {}}], [], model=view))) == 1
    # a model that says where its fit left such points out: those are not scored, the rest are
    for left_out, scored in (({"pingpong:send p=2": 2}, 0), ({}, 2)):
        record = {"lib": {"mixed": True, "left_out": sum(left_out.values()), "left_out_by_operation": left_out}}
        said = model_views(model | {"provenance": {"core_distance": record}}, "test")[0]["lib"]
        assert said.left_out == frozenset(left_out)
        misses = model_misses(Entity("lib", "lib", {}, [], near + far, [], model=said))
        assert len(misses) == (1 if scored else 0) and (not scored or "misses 2 of its 7" in misses[0].text), misses
    # an operation the fit took from the other state: its points of that state are scored (here
    # missed: the model is the near one), those of the main state not, and the finding says so
    record = {"lib": {"mixed": True, "left_out": 5, "left_out_by_operation": {"pingpong:send p=2": 5},
                      "own_state_by_operation": {"pingpong:send p=2": {"state": 1, "rtt_ns": 470.0}}}}
    said = model_views(model | {"provenance": {"core_distance": record}}, "test")[0]["lib"]
    assert said.fitted_state_ns == {"pingpong:send p=2": 470.0}
    entity = Entity("lib", "lib", {}, [], near + far, [], model=said)
    (missed,) = model_misses(entity)
    assert "misses 2 of its 2 measured" in missed.text, missed.text  # the 5 near points not scored
    assert "fitted in that state" in core_distance(entity)[0].text
    assert "470 ns: pingpong:send p=2" in core_distance(entity)[0].text


def test_the_rendezvous_probe_keeps_every_point_whatever_the_state() -> None:
    regimes = [(8192, 1.0, 0.0004), (math.inf, 4.0, 0.0001)]
    near = _with_distance(p2p_points(regimes, SIZES, 0.01, seed=1, op="rndv", variant=""), 90.0)
    far = _with_distance(p2p_points(regimes, [8200, 8210, 8220], 0.01, seed=2, op="rndv", variant=""), 460.0)
    kept, record = keep_one_state([pt | {"row": f"pt{i}"} for i, pt in enumerate(near + far)])
    assert len(kept) == len(near) + len(far) and record["lib"]["mixed"] and record["lib"]["left_out"] == 0


def test_the_report_says_how_many_points_a_slowed_core_measured() -> None:
    from commchar.report.dataset import Entity
    from commchar.report.findings import slowed_cores

    def point(n: int, copy: list[float] | None, valid: bool = True) -> dict:
        return {"op": "alltoall", "variant": "", "p": 2, "n_bytes": n, "t_us": 1.0, "valid": valid,
                "oversubscribed": False, "extra": {"core_copy_ns": copy} if copy else {}}

    full = [point(n, [42.0, 42.3]) for n in range(12)]
    slow = [point(100, [42.0, 57.0]), point(101, [140.0, 42.1]), point(102, [90.0, 90.0], valid=False)]
    (found,) = slowed_cores(Entity("lib", "lib", {}, [], full + slow + [point(5, None)], []))
    assert found.category == "variance"
    assert "during 2 of 14 points" in found.text and "took 42 ns" in found.text and "up to 140 ns" in found.text
    assert slowed_cores(Entity("lib", "lib", {}, [], full, [])) == []
    assert slowed_cores(Entity("lib", "lib", {}, [], [point(1, None)], [])) == []


def _with_copy(points: list[dict], copy: float) -> list[dict]:
    return [pt | {"extra": (pt.get("extra") or {}) | {"core_copy_ns": [42.0, copy]}} for pt in points]


def test_the_fit_leaves_out_what_a_slowed_core_measured_where_enough_full_speed_points_remain() -> None:
    regimes = [(8192, 1.0, 0.0004), (math.inf, 4.0, 0.0001)]
    full = _with_copy(_with_distance(p2p_points(regimes, SIZES, 0.01, seed=1), 70.0), 42.3)
    # the same sizes again while the host slowed a core: 1.2 times as long, the same round trip
    slow = _with_copy(_with_distance([pt | {"t_us": 1.2 * pt["t_us"]}
                                      for pt in p2p_points(regimes, SIZES[::2], 0.01, seed=2)], 70.0), 56.0)
    # an operation mostly measured on a slowed core keeps every point: too few to fit otherwise
    mostly = _with_copy(_with_distance(p2p_points(regimes, SIZES[:6], 0.01, seed=3, variant="ssend"), 70.0), 56.0)
    mostly += _with_copy(_with_distance(p2p_points(regimes, SIZES[6:8], 0.01, seed=4, variant="ssend"), 70.0), 42.1)
    points = full + slow + mostly
    kept, record = keep_one_state([pt | {"row": f"pt{i}"} for i, pt in enumerate(points)])
    assert len(kept) == len(full) + len(mostly)
    found = record["lib"]["slowed"]
    assert found["copy_floor_ns"] == pytest.approx(42.0) and found["points"] == len(slow) + 6
    assert found["left_out"] == len(slow) and found["left_out_by_operation"] == {"pingpong:send p=2": len(slow)}
    model = fit_document(points).to_json()
    send = model["libraries"]["lib"]["operations"]["pingpong:send"]
    assert send["errors"]["in_sample"]["points"] == len(SIZES) and send["errors"]["in_sample"]["max"] < 0.05
    # no copy slowed, or none measured: nothing said
    assert "slowed" not in keep_one_state(full)[1]["lib"]
    assert keep_one_state(p2p_points(regimes, SIZES, 0.01, seed=1))[1] == {}


def test_the_report_does_not_score_the_points_the_fit_left_out_as_slowed() -> None:
    from commchar.report.adapters import model_views
    from commchar.report.dataset import Entity
    from commchar.report.findings import model_misses

    segments = [{"n_min": 0, "n_max": None, "t_s": "1", "t_b": "0.001"}]

    def model(record: dict | None) -> object:
        doc = {"format": "commchar-model", "version": 1, "units": {"time": "us", "size": "B"},
               "libraries": {"lib": {"operations": {"pingpong:send": {"kind": "p2p", "segments": segments}}}}}
        if record is not None:
            doc["provenance"] = {"core_distance": {"lib": {"slowed": record}}}
        return model_views(doc, "test")[0]["lib"]

    def point(n: int, t: float, copy: float) -> dict:
        return {"op": "pingpong", "variant": "send", "p": 2, "n_bytes": n, "t_us": t, "valid": True,
                "oversubscribed": False, "extra": {"core_copy_ns": [42.0, copy]}}

    full = [point(n, 1 + 0.001 * n, 42.2) for n in (0, 1000, 2000, 3000, 4000)]
    slow = [point(n, 1.3 * (1 + 0.001 * n), 60.0) for n in (500, 1500)]
    said = model({"copy_floor_ns": 42.0, "points": 2, "left_out": 2, "left_out_by_operation": {"pingpong:send p=2": 2}})
    assert model_misses(Entity("lib", "lib", {}, [], full + slow, [], model=said)) == []
    # a model that kept them scores them
    assert len(model_misses(Entity("lib", "lib", {}, [], full + slow, [], model=model(None)))) == 1
